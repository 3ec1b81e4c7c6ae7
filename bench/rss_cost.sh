#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# rss_cost.sh — what the RSS records cost: pages (page faults) and churn, untraced, memtrack --no-rss and memtrack.
set -euo pipefail

usage() {
	cat <<'USAGE'
usage: bash bench/rss_cost.sh [--runs N] [--rounds N] [--pairs N] [--build-dir DIR]
  --runs N         repetitions; the table shows medians (default 5)
  --rounds N       pages' rounds of 64 MiB mapped, touched page by page and unmapped (default 10)
  --pairs N        churn's malloc/free pairs (default 500000)
  --build-dir DIR  where memtrack and bench/ were built (default: build, relative to the repository)
Configurations: untraced; `memtrack record --no-rss` (no rss_stat program); `memtrack record`. Each repetition runs
every configuration of a workload one after another, so that all see the same machine. Columns: the workload's own
CPU time (user + system: the rss_stat program runs in its page faults), its wall time under the configuration
(memtrack's start-up and tear-down included), the CPU time added against untraced per page fault (pages) or per
allocator call (churn), and the RSS records written. Needs root. Build first: cmake -S . -B build && cmake --build build
USAGE
}

die() {
	echo "rss_cost: $*" >&2
	exit 1
}

RUNS=5 ROUNDS=10 PAIRS=500000 BUILD_DIR=build
while (($#)); do
	case $1 in
	--runs) RUNS=${2:?--runs needs a number} && shift 2 ;;
	--rounds) ROUNDS=${2:?--rounds needs a number} && shift 2 ;;
	--pairs) PAIRS=${2:?--pairs needs a number} && shift 2 ;;
	--build-dir) BUILD_DIR=${2:?--build-dir needs a directory} && shift 2 ;;
	-h | --help) usage && exit 0 ;;
	*) usage >&2 && die "unknown option '$1'" ;;
	esac
done
[[ $RUNS =~ ^[1-9][0-9]*$ && $ROUNDS =~ ^[1-9][0-9]*$ && $PAIRS =~ ^[1-9][0-9]*$ ]] ||
	die "--runs, --rounds and --pairs take positive integers"
(($(id -u) == 0)) || die "must run as root: memtrack loads BPF programs"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ $BUILD_DIR == /* ]] || BUILD_DIR=$ROOT/$BUILD_DIR
MEMTRACK=$BUILD_DIR/memtrack BENCH=$BUILD_DIR/bench
for b in "$MEMTRACK" "$BENCH/pages" "$BENCH/churn" "$BENCH/rss"; do
	[[ -x $b ]] || die "$b is missing; build first"
done
TMP=$(mktemp -d)
STATS_WAS=
trap 'rm -rf "$TMP"; [[ -z $STATS_WAS ]] || sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS"' EXIT

CONFIGS=(untraced norss memtrack)
declare -A LABEL=([untraced]=untraced [norss]="memtrack --no-rss" [memtrack]=memtrack)

# One run: the workload's cpu_ms, the wall ms rss measured, and the RSS records of the artifact (0 untraced).
run_once() {
	local cfg=$1 work=$2 cmd wl
	if [[ $work == pages ]]; then wl=("$BENCH/pages" "$ROUNDS" 64 --cpu); else wl=("$BENCH/churn" "$PAIRS" --cpu); fi
	case $cfg in
	untraced) cmd=("${wl[@]}") ;;
	norss) cmd=("$MEMTRACK" record -q --no-rss -o "$TMP/a" -- "${wl[@]}") ;;
	memtrack) cmd=("$MEMTRACK" record -q -o "$TMP/a" -- "${wl[@]}") ;;
	esac
	rm -rf "$TMP/a"
	"$BENCH/rss" -o "$TMP/rss" -- "${cmd[@]}" >"$TMP/out" 2>"$TMP/err" || die "$cfg failed: $(tail -3 "$TMP/err")"
	awk '/^cpu_ms/ { c = $2 } END { printf "%s ", c }' "$TMP/out"
	sed -n 's/.*wall_ns=\([0-9]*\).*/\1/p' "$TMP/rss" | awk '{ printf "%.1f ", $1 / 1e6 }'
	if [[ -d $TMP/a ]]; then
		"$MEMTRACK" report --json "$TMP/a" | awk -F': ' '/"rss_records"/ { n = $2 + 0; exit } END { print n + 0 }'
	else
		echo 0
	fi
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

table() {
	local work=$1 per=$2 unit=$3 cfg cpu wall recs ucpu
	for ((i = 0; i < RUNS; i++)); do
		for cfg in "${CONFIGS[@]}"; do
			run_once "$cfg" "$work" >>"$TMP/$work.$cfg"
		done
	done
	ucpu=$(cut -d' ' -f1 "$TMP/$work.untraced" | median)
	echo "| configuration | CPU ms | wall ms | CPU ns added / $unit | RSS records |"
	echo "|---|---:|---:|---:|---:|"
	for cfg in "${CONFIGS[@]}"; do
		cpu=$(cut -d' ' -f1 "$TMP/$work.$cfg" | median)
		wall=$(cut -d' ' -f2 "$TMP/$work.$cfg" | median)
		recs=$(cut -d' ' -f3 "$TMP/$work.$cfg" | median)
		awk -v l="${LABEL[$cfg]}" -v c="$cpu" -v w="$wall" -v u="$ucpu" -v n="$per" -v r="$recs" \
			'BEGIN { printf "| %s | %.0f | %.0f | %s | %.0f |\n", l, c, w,
				 l == "untraced" ? "—" : sprintf("%.0f", (c - u) * 1e6 / n), r }'
	done
}

# The rss_stat program's own cost per run (kernel.bpf_stats_enabled times each run, adding two clock reads of its
# own): one pages run under memtrack, the statistics sampled until it ends. Its runs are the machine's, every mm.
bpf_stats() {
	local pid
	command -v bpftool >/dev/null && command -v jq >/dev/null && STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled) ||
		return 0
	sysctl -qw kernel.bpf_stats_enabled=1
	"$MEMTRACK" record -q -o "$TMP/b" -- "$BENCH/pages" "$ROUNDS" 64 >/dev/null 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		bpftool prog show -j 2>/dev/null | jq -r '.[] | select(.name == "rss_stat" and .run_cnt != null) |
			"\(.run_cnt) \(.run_time_ns)"' >"$TMP/stats.tmp" 2>/dev/null || true
		[[ -s $TMP/stats.tmp ]] && mv "$TMP/stats.tmp" "$TMP/stats"
		sleep 0.2
	done
	wait "$pid" || true
	sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS"
	STATS_WAS=
	[[ -s $TMP/stats ]] && awk '{ printf "rss_stat with the BPF statistics on (pages under memtrack): %d runs, %.0f ns a run\n",
		$1, $2 / $1 }' "$TMP/stats"
}

echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, kernel $(uname -r), median of $RUNS run(s) side by side," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
echo
echo "pages: $ROUNDS rounds of 64 MiB touched page by page ($((ROUNDS * 16384)) page faults)"
echo
table pages $((ROUNDS * 16384)) fault
echo
echo "churn: $PAIRS malloc/free pairs ($((2 * PAIRS)) allocator calls)"
echo
table churn $((2 * PAIRS)) call
echo
bpf_stats
