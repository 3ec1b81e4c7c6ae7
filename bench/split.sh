#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# split.sh — where memtrack's time above the floor goes on churn: the workload's own CPU time, configurations interleaved.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bash bench/split.sh [--runs N] [--n PAIRS] [--build-dir DIR] [--preload LIB] [--also LABEL=MEMTRACK]...
  Runs `churn PAIRS` pinned to CPU 1 under each configuration (untraced, floor, floor -s, memtrack,
  memtrack --syscall-tracepoints, and each --also binary, e.g. a build with an experimental BPF change),
  round-robin, N times, and prints per configuration the median CPU time the workload used (churn --cpu
  reports its own getrusage: the probes' cost is charged to it, the tracer's threads are not), the
  microseconds added per malloc/free pair and the ratio to the floor's, and
  the median and quartiles of each round's own ratio (its configurations run back to back).
  --runs N     repetitions (default 15)      --n PAIRS   churn's malloc/free pairs (default 400000)
  --preload LIB  churn runs with LD_PRELOAD=LIB (e.g. libjemalloc.so.2), and the floor probes LIB too
Needs root and a build: cmake -S . -B build && cmake --build build -j2
EOF
}

die() {
	echo "split: $*" >&2
	exit 1
}

RUNS=15
PAIRS=400000
BUILD_DIR=build
PRELOAD=
declare -a LABELS=(untraced floor "floor + sys_exit" memtrack "memtrack --syscall-tracepoints")
declare -A BIN
while (($#)); do
	case $1 in
	--runs | --n | --build-dir | --preload | --also) (($# >= 2)) || die "$1 needs a value" ;;&
	--preload) PRELOAD=$2 && shift 2 ;;
	--runs) RUNS=$2 && shift 2 ;;
	--n) PAIRS=$2 && shift 2 ;;
	--build-dir) BUILD_DIR=$2 && shift 2 ;;
	--also)
		[[ $2 == ?*=?* ]] || die "--also takes LABEL=PATH"
		LABELS+=("${2%%=*}") && BIN[${2%%=*}]=${2#*=} && shift 2
		;;
	-h | --help) usage && exit 0 ;;
	*) usage >&2 && die "unknown option '$1'" ;;
	esac
done
[[ $RUNS =~ ^[1-9][0-9]*$ && $PAIRS =~ ^[1-9][0-9]*$ ]] || die "--runs and --n take positive integers"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ $BUILD_DIR == /* ]] || BUILD_DIR=$ROOT/$BUILD_DIR
MEMTRACK=$BUILD_DIR/memtrack
CHURN=$BUILD_DIR/bench/churn
FLOOR=$BUILD_DIR/bench/floor
for b in "$MEMTRACK" "$CHURN" "$FLOOR" "${BIN[@]}"; do
	[[ -x $b ]] || die "$b is missing; build first"
done
(($(id -u) == 0)) || die "must run as root"

TMP=$(mktemp -d /tmp/memtrack-split.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
FF=()	# the files memtrack would probe: churn and the libraries it loads (the floor skips those without an allocator)
for f in "$CHURN" $(ldd "$CHURN" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }') $PRELOAD; do FF+=(-f "$f"); done
# churn reports its own CPU time: a measuring wrapper (perf stat) would be traced too, and its process's probes on the
# same libc functions would make a second consumer run at each of churn's hits.
WORK=(taskset -c 1 env "LD_PRELOAD=$PRELOAD" "$CHURN" "$PAIRS" --cpu)

# The workload's CPU time in ms under configuration $1.
run_one() {
	rm -rf "$TMP/art"
	case $1 in
	untraced) "${WORK[@]}" ;;
	floor) "$FLOOR" "${FF[@]}" -- "${WORK[@]}" ;;
	"floor + sys_exit") "$FLOOR" -s "${FF[@]}" -- "${WORK[@]}" ;;
	memtrack) "$MEMTRACK" record -q -o "$TMP/art" -- "${WORK[@]}" ;;
	"memtrack --syscall-tracepoints") "$MEMTRACK" record -q --syscall-tracepoints -o "$TMP/art" -- "${WORK[@]}" ;;
	*) "${BIN[$1]}" record -q -o "$TMP/art" -- "${WORK[@]}" ;;
	esac >"$TMP/out" 2>/dev/null || die "$1 failed"
	awk '$1 == "cpu_ms" { print $2 }' "$TMP/out"
}

declare -A MS
for ((r = 1; r <= RUNS; r++)); do
	for l in "${LABELS[@]}"; do
		echo "split: run $r/$RUNS: $l" >&2
		MS[$l]+="$(run_one "$l") "
	done
done

median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
base=$(median <<<"${MS[untraced]}")
floor=$(median <<<"${MS[floor]}")
echo "churn $PAIRS pairs on CPU 1${PRELOAD:+ with LD_PRELOAD=$PRELOAD}, median of $RUNS runs; workload CPU untraced $base ms"
echo
# Each round's own ratio, its configurations run back to back, cancels the machine's slower drifts; the quartiles
# of those ratios say how far one run can be trusted.
round_ratios() {
	awk -v m="$1" -v b="${MS[untraced]}" -v f="${MS[floor]}" 'BEGIN {
		n = split(m, mm, " "); split(b, bb, " "); split(f, ff, " ")
		for (i = 1; i <= n; i++) print (mm[i] - bb[i]) / (ff[i] - bb[i])
	}' | sort -g
}
quartiles() { awk '{ v[NR] = $1 } END { q1 = int((NR + 3) / 4); q3 = int((3 * NR + 3) / 4); printf "%.2f (%.2f–%.2f)", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[q1], v[q3] }'; }
echo "| configuration | workload CPU ms | added µs / pair | ÷ floor's | ÷ floor's, per round: median (quartiles) |"
echo "|---|---:|---:|---:|---:|"
for l in "${LABELS[@]}"; do
	[[ $l == untraced ]] && continue
	m=$(median <<<"${MS[$l]}")
	q=$(round_ratios "${MS[$l]}" | quartiles)
	awk -v l="$l" -v m="$m" -v b="$base" -v f="$floor" -v n="$PAIRS" -v q="$q" \
		'BEGIN { printf "| %s | %.0f | %.2f | %.2f | %s |\n", l, m, (m - b) * 1e3 / n, (m - b) / (f - b), q }'
done
