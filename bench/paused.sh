#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# paused.sh — what record --paused costs while recording is off: churn untraced, paused, recording, and the floor.
set -euo pipefail

usage() {
	cat <<'USAGE'
usage: bash bench/paused.sh [--runs N] [--pairs N] [--build-dir DIR]
  --runs N         repetitions per configuration; the table shows medians (default 3)
  --pairs N        churn's malloc/free pairs (default 1500000)
  --build-dir DIR  where memtrack and bench/ were built (default: build, relative to the repository)
Configurations: untraced; `memtrack record --paused` (churn never writes start: every call finds recording
off); `memtrack record`; the floor with sys_exit (empty BPF programs at the same probe sites). Columns: churn's
own CPU time (user + system, where the uprobe traps are paid), its wall time under the configuration (memtrack's
start-up and tear-down included), and the CPU time added per allocator call (two calls a pair) against untraced.
Needs root. Build first: cmake -S . -B build && cmake --build build -j2
USAGE
}

die() {
	echo "paused: $*" >&2
	exit 1
}

RUNS=3 PAIRS=1500000 BUILD_DIR=build
while (($#)); do
	case $1 in
	--runs) RUNS=${2:?--runs needs a number} && shift 2 ;;
	--pairs) PAIRS=${2:?--pairs needs a number} && shift 2 ;;
	--build-dir) BUILD_DIR=${2:?--build-dir needs a directory} && shift 2 ;;
	-h | --help) usage && exit 0 ;;
	*) usage >&2 && die "unknown option '$1'" ;;
	esac
done
[[ $RUNS =~ ^[1-9][0-9]*$ && $PAIRS =~ ^[1-9][0-9]*$ ]] || die "--runs and --pairs take positive integers"
(($(id -u) == 0)) || die "must run as root: memtrack and the floor load BPF programs and uprobes"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ $BUILD_DIR == /* ]] || BUILD_DIR=$ROOT/$BUILD_DIR
MEMTRACK=$BUILD_DIR/memtrack BENCH=$BUILD_DIR/bench
for b in "$MEMTRACK" "$BENCH/churn" "$BENCH/floor" "$BENCH/rss"; do
	[[ -x $b ]] || die "$b is missing; build first"
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

CONFIGS=(untraced paused memtrack floorsys)
declare -A LABEL=([untraced]=untraced [paused]="memtrack --paused" [memtrack]=memtrack [floorsys]="floor + sys_exit")

# One run: churn's cpu_ms (it prints it) and the wall time rss measured, in ms.
run_once() {
	local cfg=$1 churn=("$BENCH/churn" "$PAIRS" --cpu) cmd
	case $cfg in
	untraced) cmd=("${churn[@]}") ;;
	paused) cmd=("$MEMTRACK" record -q --paused -o "$TMP/a" -- "${churn[@]}") ;;
	memtrack) cmd=("$MEMTRACK" record -q -o "$TMP/a" -- "${churn[@]}") ;;
	floorsys) cmd=("$BENCH/floor" -s -- "${churn[@]}") ;;
	esac
	rm -rf "$TMP/a"
	"$BENCH/rss" -o "$TMP/rss" -- "${cmd[@]}" >"$TMP/out" 2>"$TMP/err" || die "$cfg failed: $(tail -3 "$TMP/err")"
	awk '/^cpu_ms/ { c = $2 } END { printf "%s ", c }' "$TMP/out"
	sed -n 's/.*wall_ns=\([0-9]*\).*/\1/p' "$TMP/rss" | awk '{ printf "%.1f\n", $1 / 1e6 }'
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

declare -A CPU WALL
for cfg in "${CONFIGS[@]}"; do
	: >"$TMP/$cfg"
	for ((i = 0; i < RUNS; i++)); do
		run_once "$cfg" >>"$TMP/$cfg"
	done
	CPU[$cfg]=$(cut -d' ' -f1 "$TMP/$cfg" | median)
	WALL[$cfg]=$(cut -d' ' -f2 "$TMP/$cfg" | median)
done

echo "churn, $PAIRS malloc/free pairs ($((2 * PAIRS)) allocator calls), median of $RUNS run(s), $(nproc) CPUs, kernel $(uname -r)"
echo
echo "| configuration | churn CPU ms | wall ms | CPU ns added / call |"
echo "|---|---:|---:|---:|"
for cfg in "${CONFIGS[@]}"; do
	awk -v l="${LABEL[$cfg]}" -v c="${CPU[$cfg]}" -v w="${WALL[$cfg]}" -v u="${CPU[untraced]}" -v n="$PAIRS" \
		'BEGIN { printf "| %s | %.0f | %.0f | %s |\n", l, c, w, l == "untraced" ? "—" : sprintf("%.0f", (c - u) * 1e6 / (2 * n)) }'
done
