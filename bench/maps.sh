#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# maps.sh — what tracking mappings costs: `maps ROUNDS --cpu` (mmap, one page touched, mremap, munmap: no allocator
# call) untraced, under the floor with its sys_exit hook (the bare cost of the hook memtrack's mapping records ride
# on), and under memtrack (records, books), interleaved; the workload's own CPU time, medians; µs added per round.
#
# Usage: bash bench/maps.sh [ROUNDS [RUNS]]   (as root, after `cmake --build build`; default 100000 rounds, 5 runs)
set -euo pipefail
BENCH_NAME=maps
BUILD_DIR=${BUILD_DIR:-build}
. "$(dirname "$0")/lib.sh"
bench_setup maps floor
rounds=${1:-100000}
runs=${2:-5}
declare -A ms

cpu_of() { awk '/^cpu_ms/ { print $2 }' "$1"; }
for ((i = 0; i < runs; i++)); do
	"$BENCH/maps" "$rounds" --cpu >"$TMP/out"
	ms[untraced]+="$(cpu_of "$TMP/out") "
	"$BENCH/floor" -s -- "$BENCH/maps" "$rounds" --cpu >"$TMP/out" 2>/dev/null
	ms[floor]+="$(cpu_of "$TMP/out") "
	rm -rf "$TMP/a"
	"$MEMTRACK" record -q -o "$TMP/a" -- "$BENCH/maps" "$rounds" --cpu >"$TMP/out"
	ms[memtrack]+="$(cpu_of "$TMP/out") "
done
med() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
u=$(med "${ms[untraced]}")
echo "# bench/maps $rounds rounds (mmap + mremap + munmap), $runs runs: $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1 /proc/loadavg)"
echo
echo "| configuration | CPU ms, runs | median | µs added per round | ÷ untraced |"
echo "|---|---|---:|---:|---:|"
for c in untraced floor memtrack; do
	m=$(med "${ms[$c]}")
	printf '| %s | %s | %s | %.2f | %.2f |\n' "$c" "${ms[$c]% }" "$m" "$(echo "($m - $u) * 1000 / $rounds" | bc -l)" \
		"$(echo "$m / $u" | bc -l)"
done
