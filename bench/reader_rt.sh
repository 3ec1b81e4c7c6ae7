#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# reader_rt.sh — drops with many threads: this build's memtrack against another build's, side by side on churn_threads.
set -euo pipefail
BENCH_NAME=reader_rt
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	cat <<'USAGE'
usage: bash bench/reader_rt.sh --other BIN [--runs N] [--pairs N] [--threads "16 64"] [--build-dir DIR]
  --other BIN      the memtrack binary to compare with (say a build of the commit before a change)
  --runs N         rounds; each round runs both binaries at each thread count, alternating (default 3)
  --pairs N        churn_threads' malloc/free pairs over all its threads (default 2000000)
  --threads LIST   thread counts (default "16 64")
  --build-dir DIR  this build (default: build, relative to the repository)
Prints, per binary and thread count, the dropped events of each run (report --json's dropped_events) and the wall
seconds. Needs root and jq.
USAGE
}

RUNS=3 PAIRS=2000000 THREADS="16 64" BUILD_DIR=build OTHER=
while (($#)); do
	case $1 in
	--other) OTHER=${2:?--other needs a binary} && shift 2 ;;
	--runs) RUNS=${2:?--runs needs a number} && shift 2 ;;
	--pairs) PAIRS=${2:?--pairs needs a number} && shift 2 ;;
	--threads) THREADS=${2:?--threads needs a list} && shift 2 ;;
	--build-dir) BUILD_DIR=${2:?--build-dir needs a directory} && shift 2 ;;
	-h | --help) usage && exit 0 ;;
	*) usage >&2 && die "unknown option '$1'" ;;
	esac
done
[[ -x $OTHER ]] || die "--other BIN is required and must be executable"
bench_setup churn_threads

# One run: "drops=D wall=S" of binary $1 at $2 threads.
run_once() {
	local bin=$1 t=$2 t0 t1
	rm -rf "$TMP/art"
	t0=$(date +%s.%N)
	"$bin" record -q -o "$TMP/art" -- "$BENCH/churn_threads" "$PAIRS" "$t" >/dev/null 2>"$TMP/err" ||
		die "$bin failed: $(tail -3 "$TMP/err")"
	t1=$(date +%s.%N)
	echo "drops=$("$MEMTRACK" report --json "$TMP/art" | jq '.totals.dropped_events') wall=$(echo "$t1 - $t0" | bc)"
}

for ((r = 1; r <= RUNS; r++)); do
	for t in $THREADS; do
		for which in this other; do
			bin=$MEMTRACK
			[[ $which == other ]] && bin=$OTHER
			record "bin=$which threads=$t $(run_once "$bin" "$t")"
		done
	done
done
echo "# $VERSION, $(nproc) CPUs, churn_threads $PAIRS pairs, $RUNS rounds"
printf '%-6s %8s  %-40s %s\n' binary threads "dropped events per run" "wall s per run"
for t in $THREADS; do
	for which in this other; do
		printf '%-6s %8s  %-40s %s\n' "$which" "$t" "$(values "bin=$which threads=$t" drops | paste -sd' ')" \
			"$(values "bin=$which threads=$t" wall | paste -sd' ')"
	done
done
