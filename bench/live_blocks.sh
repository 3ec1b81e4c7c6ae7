#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# live_blocks.sh — bytes per live block of the tracer and of report: `hold N` against `hold 0`, two builds side by side.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bash bench/live_blocks.sh [--n N] [--runs R] [--build-dir DIR] [--base MEMTRACK]
  Records `hold N` (N 32-byte blocks live at once, then freed) and `hold N 32 --pairs` (the same calls, each
  block freed at once: no live blocks), without and with --stacks, under this build's memtrack and under --base
  (another build's, e.g. main's), round-robin, R times; reports each artifact (`report`). Prints per
  configuration the tracer's and report's peak RSS (bench/rss: VmHWM of the process alone; the minimum over
  rounds) and the bytes per live block: (RSS holding N - RSS holding none) / N.
  --n N           blocks held (default 4000000)      --runs R   rounds (default 1)
  --build-dir DIR this build (default: build)        --base M   the baseline memtrack binary (default: none)
Needs root.
EOF
}

BENCH_NAME=live_blocks
N=4000000
RUNS=1
BUILD_DIR=build
BASE=
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
while (($#)); do
	case $1 in
	--n) N=${2:?--n needs a number} && shift 2 ;;
	--runs) RUNS=${2:?--runs needs a number} && shift 2 ;;
	--build-dir) BUILD_DIR=${2:?--build-dir needs a directory} && shift 2 ;;
	--base) BASE=${2:?--base needs a memtrack binary} && shift 2 ;;
	-h | --help) usage && exit 0 ;;
	*) usage >&2 && die "unknown option '$1'" ;;
	esac
done
bench_setup hold rss
[[ -z $BASE || -x $BASE ]] || die "$BASE is not an executable"

# Peak RSS (KiB) of one command under bench/rss: the process alone.
peak_kb() {
	"$BENCH/rss" -o "$TMP/rss" -- "$@" >/dev/null 2>"$TMP/err" </dev/null || {
		cat "$TMP/err" >&2
		die "failed: $*"
	}
	kv self_kb "$(cat "$TMP/rss")"
}

declare -A BIN=([this]=$MEMTRACK)
CFGS=(this)
[[ -n $BASE ]] && BIN[base]=$BASE && CFGS=(base this)
for ((rep = 1; rep <= RUNS; rep++)); do
	for cfg in "${CFGS[@]}"; do
		for mode in plain stacks; do
			opt=()
			[[ $mode == stacks ]] && opt=(--stacks)
			for live in none all; do
				args=("$N" 32)
				[[ $live == none ]] && args+=(--pairs)
				note "round $rep: $cfg $mode hold ${args[*]}"
				rm -rf "$TMP/art"
				rec=$(peak_kb "${BIN[$cfg]}" record -q "${opt[@]}" -o "$TMP/art" -- "$BENCH/hold" "${args[@]}")
				rep_kb=$(peak_kb "${BIN[$cfg]}" report "$TMP/art")
				record "rep=$rep cfg=$cfg mode=$mode live=$live tracer_kb=$rec report_kb=$rep_kb"
			done
		done
	done
done

# The minimum over rounds (others' load only adds), and bytes per block from the two.
echo "| build | record | tracer RSS MiB, none live | $N live | tracer bytes / live block | report RSS MiB, none live | $N live | report bytes / live block |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for cfg in "${CFGS[@]}"; do
	for mode in plain stacks; do
		t0=$(values "cfg=$cfg mode=$mode live=none" tracer_kb | sort -g | head -1)
		t1=$(values "cfg=$cfg mode=$mode live=all" tracer_kb | sort -g | head -1)
		r0=$(values "cfg=$cfg mode=$mode live=none" report_kb | sort -g | head -1)
		r1=$(values "cfg=$cfg mode=$mode live=all" report_kb | sort -g | head -1)
		awk -v c="$cfg" -v m="$mode" -v n="$N" -v t0="$t0" -v t1="$t1" -v r0="$r0" -v r1="$r1" 'BEGIN {
			printf "| %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", c, m == "stacks" ? "--stacks" : "plain",
				t0 / 1024, t1 / 1024, (t1 - t0) * 1024 / n, r0 / 1024, r1 / 1024, (r1 - r0) * 1024 / n }'
	done
done
