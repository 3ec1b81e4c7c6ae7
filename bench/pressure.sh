#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# pressure.sh — the ring's back-pressure (bpf/pressure.bpf.h): drops and wall time against a build without it.
set -euo pipefail
BENCH_NAME=pressure
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	cat <<'USAGE'
usage: bash bench/pressure.sh --other BIN [--runs N] [--runs-1m N] [--only "CONF..."] [--build-dir DIR]
  --other BIN      the memtrack binary to compare with: a build without back-pressure (main at 2738dde)
  --runs N         rounds; each round runs both binaries on each configuration, alternating (default 3)
  --runs-1m N      rounds of the 10^6-path configuration, the slow one (default: --runs)
  --only LIST      configurations to run, of: paths_1e5 paths_1e6 paths_1e5_all threads_64 (default: all)
  --build-dir DIR  this build (default: build, relative to the repository)
Configurations: paths_1e5 and paths_1e6 are `bench/paths N 2` (N distinct call paths, each taken twice) under
`record --stacks` with the default settings; paths_1e5_all the same at 10^5 with `--stack-sample 1` (every
definition with its raw bytes); threads_64 is `bench/churn_threads 2000000 64` (2,000,000 malloc/free pairs over 64
threads) with `--ring-size 1`, no stacks. Each run is `record -vv`.
Prints one row per configuration and binary: the dropped events of each run (`memtrack dump DIR`'s end record,
"dropped_events"), the wall seconds of each run (record's, the dump not counted), and the times threads were held
for the reader (record -vv's "threads waited for the reader N times"; 0 when it does not print the line, "-" for a
binary that never prints it), then the median wall ratio this ÷ other per configuration. Needs root and jq.
USAGE
}

RUNS=3 RUNS_1M='' BUILD_DIR=build OTHER='' ONLY="paths_1e5 paths_1e6 paths_1e5_all threads_64"
while (($#)); do
	case $1 in
	--other) OTHER=${2:?--other needs a binary} && shift 2 ;;
	--runs) RUNS=${2:?--runs needs a number} && shift 2 ;;
	--runs-1m) RUNS_1M=${2:?--runs-1m needs a number} && shift 2 ;;
	--only) ONLY=${2:?--only needs a list} && shift 2 ;;
	--build-dir) BUILD_DIR=${2:?--build-dir needs a directory} && shift 2 ;;
	-h | --help) usage && exit 0 ;;
	*) usage >&2 && die "unknown option '$1'" ;;
	esac
done
[[ -x $OTHER ]] || die "--other BIN is required and must be executable"
RUNS_1M=${RUNS_1M:-$RUNS}
bench_setup paths churn_threads

# The record options and the command of configuration $1.
conf_args() {
	case $1 in
	paths_1e5) echo "--stacks -- $BENCH/paths 100000 2" ;;
	paths_1e6) echo "--stacks -- $BENCH/paths 1000000 2" ;;
	paths_1e5_all) echo "--stacks --stack-sample 1 -- $BENCH/paths 100000 2" ;;
	threads_64) echo "--ring-size 1 -- $BENCH/churn_threads 2000000 64" ;;
	*) die "unknown configuration '$1'" ;;
	esac
}

# Results are "cfg=this|other conf=CONF rep=R ...": cfg is the binary, as lib.sh's ratios() wants it.
# One run of binary $1 on configuration $2: "drops=D wall=S holds=H".
run_once() {
	local bin=$1 conf=$2 t0 t1 drops holds
	rm -rf "$TMP/art"
	t0=$(date +%s.%N)
	# shellcheck disable=SC2046 # conf_args is words by design
	"$bin" record -vv -o "$TMP/art" $(conf_args "$conf") >/dev/null 2>"$TMP/err" ||
		die "$bin failed: $(tail -3 "$TMP/err")"
	t1=$(date +%s.%N)
	drops=$("$MEMTRACK" dump "$TMP/art" | grep -o '"dropped_events":[0-9]*' | tail -1 | cut -d: -f2)
	holds=$(sed -n 's/.*threads waited for the reader \([0-9]*\) times.*/\1/p' "$TMP/err" | tail -1)
	echo "drops=${drops:--1} wall=$(printf '%.2f' "$(echo "$t1 - $t0" | bc)") holds=${holds:-0}"
}

for ((r = 1; r <= RUNS; r++)); do
	for conf in $ONLY; do
		[[ $conf == paths_1e6 ]] && ((r > RUNS_1M)) && continue
		for which in other this; do
			bin=$MEMTRACK
			[[ $which == other ]] && bin=$OTHER
			record "cfg=$which conf=$conf rep=$r $(run_once "$bin" "$conf")"
		done
	done
done

echo "# $VERSION against $OTHER: $(date -u '+%Y-%m-%d %H:%M') UTC, $(nproc) CPUs, load $(load_now)"
printf '%-14s %-6s %-32s %-32s %s\n' configuration binary "dropped events per run" "wall s per run" "holds per run"
for conf in $ONLY; do
	for which in other this; do
		holds="$(values "cfg=$which conf=$conf" holds | paste -sd' ')"
		[[ $which == other ]] && holds=-
		printf '%-14s %-6s %-32s %-32s %s\n' "$conf" "$which" \
			"$(values "cfg=$which conf=$conf" drops | paste -sd' ')" \
			"$(values "cfg=$which conf=$conf" wall | paste -sd' ')" "$holds"
	done
done
echo
echo "wall this ÷ other, median (min–max) of the rounds:"
for conf in $ONLY; do
	printf '%-14s %s\n' "$conf" "$(ratios "conf=$conf" wall this other | fmt_spread '%.2f')"
done
