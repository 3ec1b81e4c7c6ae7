#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# cxx.sh — what a C++ new/delete pair costs traced against a malloc/free pair: churn_new vs churn, interleaved.
set -euo pipefail

usage() {
	cat <<'EOF2'
usage: bash bench/cxx.sh [--runs N] [--n PAIRS] [--build-dir DIR] [--preload LIB] [--kind KIND]
                         [--also 'LABEL=MEMTRACK [RECORD OPTIONS]']...
  Runs `churn PAIRS` and `churn_new PAIRS` (KIND: sized, the default: new and sized delete; plain: unsized delete;
  array: new[] and delete[]) pinned to CPU 1, untraced, under the floor and under memtrack (and each --also
  binary, with its record options: --also 'fast=build/memtrack --fast-cxx'), round-robin, N times. Prints per configuration the median CPU time each workload used (its own
  getrusage: the probes' cost is charged to it) and µs per pair, then the ratio of a new/delete pair to a
  malloc/free pair, traced and added (minus the untraced cost), with the median and quartiles of each round's
  own ratio.
  --runs N       repetitions (default 9)       --n PAIRS   pairs per workload (default 200000)
  --preload LIB  both run with LD_PRELOAD=LIB (libjemalloc.so.2, libtcmalloc.so.4, libmimalloc.so.2: their own
                 operator new/delete), and the floor probes LIB too
Needs root and a build: cmake -S . -B build && cmake --build build -j2
EOF2
}

die() {
	echo "cxx: $*" >&2
	exit 1
}

RUNS=9
PAIRS=200000
BUILD_DIR=build
PRELOAD=
KIND=sized
declare -a LABELS=(untraced floor memtrack)
declare -A BIN
while (($#)); do
	case $1 in
	--runs | --n | --build-dir | --preload | --kind | --also) (($# >= 2)) || die "$1 needs a value" ;;&
	--preload) PRELOAD=$2 && shift 2 ;;
	--runs) RUNS=$2 && shift 2 ;;
	--n) PAIRS=$2 && shift 2 ;;
	--kind) KIND=$2 && shift 2 ;;
	--build-dir) BUILD_DIR=$2 && shift 2 ;;
	--also)
		[[ $2 == ?*=?* ]] || die "--also takes LABEL=PATH [OPTIONS]"
		LABELS+=("${2%%=*}") && BIN[${2%%=*}]=${2#*=} && shift 2
		;;
	-h | --help) usage && exit 0 ;;
	*) usage >&2 && die "unknown option '$1'" ;;
	esac
done
[[ $RUNS =~ ^[1-9][0-9]*$ && $PAIRS =~ ^[1-9][0-9]*$ ]] || die "--runs and --n take positive integers"
[[ $KIND == sized || $KIND == plain || $KIND == array ]] || die "--kind is sized, plain or array"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ $BUILD_DIR == /* ]] || BUILD_DIR=$ROOT/$BUILD_DIR
MEMTRACK=$BUILD_DIR/memtrack
FLOOR=$BUILD_DIR/bench/floor
for b in "$MEMTRACK" "$FLOOR" "$BUILD_DIR/bench/churn" "$BUILD_DIR/bench/churn_new" "${BIN[@]%% *}"; do
	[[ -x $b ]] || die "$b is missing; build first"
done
(($(id -u) == 0)) || die "must run as root"

TMP=$(mktemp -d /tmp/memtrack-cxx.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
declare -A WORK FF
WORK[churn]="$BUILD_DIR/bench/churn $PAIRS --cpu"
WORK[churn_new]="$BUILD_DIR/bench/churn_new $PAIRS --cpu"
[[ $KIND == sized ]] || WORK[churn_new]+=" --$KIND"
# The files memtrack would probe: the workload and the libraries it loads (the floor skips those without one).
for w in churn churn_new; do
	exe=$BUILD_DIR/bench/$w
	for f in "$exe" $(ldd "$exe" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }') $PRELOAD; do FF[$w]+="-f $f "; done
done

# The workload's CPU time in ms: workload $1 under configuration $2.
run_one() {
	local -a work also
	read -ra work <<<"${WORK[$1]}"
	work=(taskset -c 1 env "LD_PRELOAD=$PRELOAD" "${work[@]}")
	rm -rf "$TMP/art"
	case $2 in
	untraced) "${work[@]}" ;;
	# shellcheck disable=SC2086
	floor) "$FLOOR" ${FF[$1]} -- "${work[@]}" ;;
	memtrack) "$MEMTRACK" record -q -o "$TMP/art" -- "${work[@]}" ;;
	*) read -ra also <<<"${BIN[$2]}" && "${also[0]}" record "${also[@]:1}" -q -o "$TMP/art" -- "${work[@]}" ;;
	esac >"$TMP/out" 2>/dev/null || die "$1 under $2 failed"
	awk '$1 == "cpu_ms" { print $2 }' "$TMP/out"
}

declare -A MS
for ((r = 1; r <= RUNS; r++)); do
	for l in "${LABELS[@]}"; do
		for w in churn churn_new; do
			echo "cxx: run $r/$RUNS: $w, $l" >&2
			MS[$w,$l]+="$(run_one "$w" "$l") "
		done
	done
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
quartiles() { sort -g | awk '{ v[NR] = $1 } END { q1 = int((NR + 3) / 4); q3 = int((3 * NR + 3) / 4); printf "%.2f (%.2f–%.2f)", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[q1], v[q3] }'; }
# Each round's ratio of churn_new to churn under configuration $1: traced ($2 = 0) or less the round's untraced ($2 = 1).
round_ratios() {
	awk -v n="${MS[churn_new,$1]}" -v c="${MS[churn,$1]}" -v un="${MS[churn_new,untraced]}" \
		-v uc="${MS[churn,untraced]}" -v added="$2" 'BEGIN {
		k = split(n, nn, " "); split(c, cc, " "); split(un, uu, " "); split(uc, vv, " ")
		for (i = 1; i <= k; i++) print added ? (nn[i] - uu[i]) / (cc[i] - vv[i]) : nn[i] / cc[i]
	}'
}
echo "churn vs churn_new ($KIND) on CPU 1, $PAIRS pairs${PRELOAD:+, LD_PRELOAD=$PRELOAD}, median of $RUNS rounds"
echo
echo "| configuration | malloc/free µs a pair | new/delete µs a pair | new ÷ malloc | per round: median (quartiles) | added: new ÷ malloc, per round |"
echo "|---|---:|---:|---:|---:|---:|"
for l in "${LABELS[@]}"; do
	c=$(median <<<"${MS[churn,$l]}")
	n=$(median <<<"${MS[churn_new,$l]}")
	q=$(round_ratios "$l" 0 | quartiles)
	a=-
	[[ $l == untraced ]] || a=$(round_ratios "$l" 1 | quartiles)
	awk -v l="$l" -v c="$c" -v n="$n" -v p="$PAIRS" -v q="$q" -v a="$a" \
		'BEGIN { printf "| %s | %.2f | %.2f | %.2f | %s | %s |\n", l, c * 1e3 / p, n * 1e3 / p, n / c, q, a }'
done
