#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# startup.sh — memtrack's start-up and tear-down: the wall of `record -q -- /bin/true` for this build and a baseline
# build (another worktree's build/memtrack, e.g. main's) in the same run, interleaved, medians and their ratio; the
# same with --stacks; this build cold (MEMTRACK_WARM=0) and with its cold BPF load forced each way (MEMTRACK_LOAD);
# then the steps of this build's start-up as -vv prints them, cold and warm. FIFO=1 runs every recording at SCHED_FIFO priority 50 (chrt): on a shared machine the
# others' work then does not take memtrack's CPUs, as on a quiet one (the default load mode still sees them runnable).
# SPLIT=1 adds where both builds' time goes, one load each (MEMTRACK_LOAD=serial), from `perf trace` of their bpf
# calls: exec to the kernel's BTF parsed (the first BTF_LOAD after it), the maps and relocations, the verifier (the
# programs' loads), to the command's exec, the command, the tear-down; medians of RUNS interleaved runs.
# "this" is this build's default, the warm start (tracer/bpf_warm.c): the programs kept by a first run taken back;
# this_in_a_row is RUNS more of it one after another, as a harness runs them. /sys/fs/bpf/memtrack is removed before
# and after. The baseline is expected to be a build without the warm start (main a27095d and earlier): one with it
# would keep sets of its own, which this build's runs would sweep, and the other way round.
#
# Usage: [FIFO=1] [SPLIT=1] bash bench/startup.sh BASELINE_MEMTRACK [RUNS]   (as root, after `cmake --build build`;
# 21 runs)
set -euo pipefail
BENCH_NAME=startup
BUILD_DIR=${BUILD_DIR:-build}
. "$(dirname "$0")/lib.sh"
bench_setup
BASE=${1:?usage: bash bench/startup.sh BASELINE_MEMTRACK [RUNS]}
RUNS=${2:-21}
[[ -x $BASE ]] || die "$BASE is not an executable memtrack"
declare -A ms
PRE=()
[[ ${FIFO:-0} == 1 ]] && PRE=(chrt -f 50)
CONFIGS=(base this base_stacks this_stacks this_cold this_parallel this_serial this_stacks_parallel)
PINS=/sys/fs/bpf/memtrack

# The wall of one recording of /bin/true, in ms (bash's clock: no process of its own around it).
wall_ms() {
	local t0 t1
	rm -rf "$TMP/a"
	t0=$EPOCHREALTIME
	"${PRE[@]}" "$@" >/dev/null 2>&1 || note "$* failed: $?"
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) * 1000 }'
}

one() {
	case $1 in
	base) wall_ms "$BASE" record -q -o "$TMP/a" -- /bin/true ;;
	this) wall_ms "$MEMTRACK" record -q -o "$TMP/a" -- /bin/true ;;
	base_stacks) wall_ms "$BASE" record -q --stacks -o "$TMP/a" -- /bin/true ;;
	this_stacks) wall_ms "$MEMTRACK" record -q --stacks -o "$TMP/a" -- /bin/true ;;
	this_cold) wall_ms env MEMTRACK_WARM=0 "$MEMTRACK" record -q -o "$TMP/a" -- /bin/true ;;
	this_parallel) wall_ms env MEMTRACK_WARM=0 MEMTRACK_LOAD=parallel "$MEMTRACK" record -q -o "$TMP/a" -- /bin/true ;;
	this_serial) wall_ms env MEMTRACK_WARM=0 MEMTRACK_LOAD=serial "$MEMTRACK" record -q -o "$TMP/a" -- /bin/true ;;
	this_stacks_parallel) wall_ms env MEMTRACK_LOAD=parallel "$MEMTRACK" record -q --stacks -o "$TMP/a" -- /bin/true ;;
	esac
}

med() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
LOAD_START=$(load_now)
rm -rf "$PINS"
one this >/dev/null	# the cold load that keeps the programs
# Each round starts one configuration later: a run may wait for the links the last one's closer still detaches,
# so each configuration follows each other one as often.
for ((i = 0; i < RUNS; i++)); do
	for ((j = 0; j < ${#CONFIGS[@]}; j++)); do
		c=${CONFIGS[(i + j) % ${#CONFIGS[@]}]}
		ms[$c]+="$(one "$c") "
	done
done
# A harness's pattern: the default, run after run (while the last run's closer still holds one set, the other is
# taken).
for ((i = 0; i < RUNS; i++)); do
	ms[this_in_a_row]+="$(one this) "
done
# The steps: "start-up: WHAT at N ms" lines of -vv (libbpf's debug lines are printed too, and cost a little).
for ((i = 0; i < RUNS; i++)); do
	rm -rf "$TMP/a"
	MEMTRACK_WARM=0 "${PRE[@]}" "$MEMTRACK" record -vv -o "$TMP/a" -- /bin/true 2>&1 >/dev/null |
		sed -n 's/^memtrack: start-up: \(.* at [0-9.]* ms\)$/\1/p' >>"$TMP/steps"
	rm -rf "$TMP/a"
	"${PRE[@]}" "$MEMTRACK" record -vv -o "$TMP/a" -- /bin/true 2>"$TMP/warm_err" >/dev/null || true
	sed -n 's/^memtrack: start-up: \(.* at [0-9.]* ms\)$/\1/p' "$TMP/warm_err" >>"$TMP/warm_steps"
	grep -c 'warm start: the programs kept by a past run taken' "$TMP/warm_err" >>"$TMP/warm_taken" || true
done
rm -rf "$PINS"

# One perf trace's phases, in ms: exec-to-BTF, maps+relocations, verifier, to the command's exec, command, tear-down,
# total. The main thread is the one that exec'd memtrack; a program's load is a PROG_LOAD over 0.7 ms (the probes'
# are shorter).
split_one() {
	awk '
	function ms(s) { gsub(/[^0-9.]/, "", s); return s + 0 }	# "( 1.2 ms)" -> 1.2
	/execve\(/ && $0 ~ /memtrack\// && !pid { split($0, a, "memtrack/"); split(a[2], b, " "); pid = b[1]; t0 = $1 }
	!pid { next }
	{ t = $1; d = match($0, /\( *[0-9.]+ ms\)/) ? ms(substr($0, RSTART, RLENGTH)) : 0 }
	$0 ~ ("memtrack/" pid " ") && /cmd: BTF_LOAD/ && !btf { btf = t }
	$0 ~ ("memtrack/" pid " ") && /cmd: PROG_LOAD/ && d > 0.7 { if (!p0) p0 = t; pend = t + d }
	/ true\// && /execve\(/ && !tex { tex = t }
	/ true\// && /exit_group\(/ && !tend { tend = t }
	$0 ~ ("memtrack/" pid " ") && /exit_group\(/ { mend = t }
	END { printf "%.1f %.1f %.1f %.1f %.1f %.1f %.1f\n", btf - t0, p0 - btf, pend - p0, tex - pend, tend - tex,
	      mend - tend, mend - t0 }' "$1"
}

split_all() {
	local b n i c out
	declare -A rows
	for ((i = 0; i < RUNS; i++)); do
		for c in base this; do
			b=$MEMTRACK
			[[ $c == base ]] && b=$BASE
			rm -rf "$TMP/a"
			MEMTRACK_WARM=0 MEMTRACK_LOAD=serial perf trace -e bpf,execve,exit_group -o "$TMP/trace" -- "${PRE[@]}" "$b" record -q \
				-o "$TMP/a" -- /bin/true >/dev/null 2>&1 || note "perf trace of $b failed"
			rows[$c]+="$(split_one "$TMP/trace")"$'\n'
		done
	done
	echo
	echo "Where it goes, one load each (perf trace, median ms of $RUNS interleaved runs):"
	echo
	echo "| build | exec to BTF parsed | maps + relocations | verifier | to the command's exec | command | tear-down | total |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	for c in base this; do
		out="| $c |"
		for n in 1 2 3 4 5 6 7; do
			out+=" $(awk -v n=$n 'NF { print $n }' <<<"${rows[$c]}" | sort -g |
				awk '{ v[NR] = $1 } END { printf "%.1f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }') |"
		done
		echo "$out"
	done
}
[[ ${SPLIT:-0} == 1 ]] && { command -v perf >/dev/null || die "SPLIT=1 needs perf (Debian package linux-perf)"; }
[[ ${SPLIT:-0} == 1 ]] && SPLIT_TABLE=$(split_all)
LOAD_END=$(load_now)

echo "# bench/startup: $(date -u +%Y-%m-%dT%H:%MZ), $RUNS runs interleaved; this build $VERSION, baseline $BASE"
echo "# load average (1, 5, 15 min) at the start $LOAD_START, at the end $LOAD_END; $(nproc) CPUs${PRE:+; under ${PRE[*]}}"
echo
echo "| \`record -q -- /bin/true\` | median ms | min ms | ÷ baseline |"
echo "|---|---:|---:|---:|"
b=$(med "${ms[base]}")
bs=$(med "${ms[base_stacks]}")
for c in "${CONFIGS[@]}" this_in_a_row; do
	m=$(med "${ms[$c]}")
	ref=$b
	[[ $c == *stacks* ]] && ref=$bs
	printf '| %s | %s | %s | %.2f |\n' "$c" "$m" "$(tr ' ' '\n' <<<"${ms[$c]}" | grep . | sort -g | head -1)" \
		"$(echo "$m / $ref" | bc -l)"
done
# The median of each "start-up: WHAT at N ms" step in file $1.
steps() {
	awk '{ sub(/ ms$/, ""); n = $NF; $NF = ""; sub(/ at $/, ""); k[$0] = k[$0] " " n; if (!($0 in o)) o[$0] = ++c }
		END { for (s in o) print o[s] "\t" s "\t" k[s] }' "$1" | sort -n | while IFS=$'\t' read -r _ step vals; do
		printf -- '- %s: %s\n' "$step" "$(med "$vals")"
	done
}
echo
echo "This build's steps, cold (MEMTRACK_WARM=0; -vv, median ms since memtrack's record started):"
echo
steps "$TMP/steps"
echo
echo "The same warm, the default ($(awk '{ n += $1 } END { print n + 0 }' "$TMP/warm_taken") of $RUNS runs took the kept programs):"
echo
steps "$TMP/warm_steps"
[[ -z ${SPLIT_TABLE:-} ]] || echo "$SPLIT_TABLE"
