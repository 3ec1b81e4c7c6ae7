#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# startup.sh — memtrack's start-up and tear-down: the wall of `record -q -- /bin/true` for this build and a baseline
# build (another worktree's build/memtrack, e.g. main's) in the same run, interleaved, medians and their ratio; the
# same with --stacks; this build with its BPF load forced each way (MEMTRACK_LOAD); then the steps of this build's
# start-up as -vv prints them. FIFO=1 runs every recording at SCHED_FIFO priority 50 (chrt): on a shared machine the
# others' work then does not take memtrack's CPUs, as on a quiet one (the default load mode still sees them runnable).
#
# Usage: [FIFO=1] bash bench/startup.sh BASELINE_MEMTRACK [RUNS]   (as root, after `cmake --build build`; 21 runs)
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
CONFIGS=(base this base_stacks this_stacks this_parallel this_serial this_stacks_parallel)

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
	this_parallel) wall_ms env MEMTRACK_LOAD=parallel "$MEMTRACK" record -q -o "$TMP/a" -- /bin/true ;;
	this_serial) wall_ms env MEMTRACK_LOAD=serial "$MEMTRACK" record -q -o "$TMP/a" -- /bin/true ;;
	this_stacks_parallel) wall_ms env MEMTRACK_LOAD=parallel "$MEMTRACK" record -q --stacks -o "$TMP/a" -- /bin/true ;;
	esac
}

med() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
LOAD_START=$(load_now)
# Each round starts one configuration later: a run may wait for the links the last one's closer still detaches,
# so each configuration follows each other one as often.
for ((i = 0; i < RUNS; i++)); do
	for ((j = 0; j < ${#CONFIGS[@]}; j++)); do
		c=${CONFIGS[(i + j) % ${#CONFIGS[@]}]}
		ms[$c]+="$(one "$c") "
	done
done
# The steps: "start-up: WHAT at N ms" lines of -vv (libbpf's debug lines are printed too, and cost a little).
for ((i = 0; i < RUNS; i++)); do
	rm -rf "$TMP/a"
	"${PRE[@]}" "$MEMTRACK" record -vv -o "$TMP/a" -- /bin/true 2>&1 >/dev/null |
		sed -n 's/^memtrack: start-up: \(.* at [0-9.]* ms\)$/\1/p' >>"$TMP/steps"
done
LOAD_END=$(load_now)

echo "# bench/startup: $(date -u +%Y-%m-%dT%H:%MZ), $RUNS runs interleaved; this build $VERSION, baseline $BASE"
echo "# load average (1, 5, 15 min) at the start $LOAD_START, at the end $LOAD_END; $(nproc) CPUs${PRE:+; under ${PRE[*]}}"
echo
echo "| \`record -q -- /bin/true\` | median ms | min ms | ÷ baseline |"
echo "|---|---:|---:|---:|"
b=$(med "${ms[base]}")
bs=$(med "${ms[base_stacks]}")
for c in "${CONFIGS[@]}"; do
	m=$(med "${ms[$c]}")
	ref=$b
	[[ $c == *stacks* ]] && ref=$bs
	printf '| %s | %s | %s | %.2f |\n' "$c" "$m" "$(tr ' ' '\n' <<<"${ms[$c]}" | grep . | sort -g | head -1)" \
		"$(echo "$m / $ref" | bc -l)"
done
echo
echo "This build's steps (-vv, median ms since memtrack's record started):"
echo
awk '{ sub(/ ms$/, ""); n = $NF; $NF = ""; sub(/ at $/, ""); k[$0] = k[$0] " " n; if (!($0 in o)) o[$0] = ++c }
	END { for (s in o) print o[s] "\t" s "\t" k[s] }' "$TMP/steps" | sort -n | while IFS=$'\t' read -r _ step vals; do
	printf -- '- %s: %s\n' "$step" "$(med "$vals")"
done
