#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# stacks.sh — what --stacks costs: slowdown against no stacks, definitions per distinct path, offline unwinding rate.
#
# Usage: bash bench/stacks.sh [--runs N] [--quick]   (as root, after `cmake --build build`)
# Prints one table; bench/README.md explains it and keeps the latest one.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
mt=$root/build/memtrack
runs=5
scale=1
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=$2; shift 2 ;;
	--quick) runs=3; scale=10; shift ;;
	*) echo "stacks.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ -x "$mt" ] || { echo "stacks.sh: $mt is missing: build first (cmake -S . -B build && cmake --build build)" >&2; exit 2; }
tmp=$(mktemp -d /tmp/memtrack-stacks-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# One timed run of a configuration: prints wall seconds.
run_one() {
	local conf=$1; shift
	local t0 t1
	t0=$(now)
	case $conf in
	untraced) "$@" >/dev/null ;;
	nostacks) rm -rf "$tmp/ns"; "$mt" record -q -o "$tmp/ns" -- "$@" >/dev/null ;;
	stacks) rm -rf "$tmp/st"; "$mt" record -q --stacks -o "$tmp/st" -- "$@" >/dev/null ;;
	esac
	t1=$(now)
	echo "$t1 - $t0" | bc -l
}

# Interleaved: each repetition runs every configuration once, so drift hits all alike.
measure() {
	local name=$1; shift
	local -A times=()
	local conf i
	for i in $(seq "$runs"); do
		for conf in untraced nostacks stacks; do
			times[$conf]+="$(run_one $conf "$@") "
		done
	done
	local u n s
	u=$(tr ' ' '\n' <<<"${times[untraced]}" | grep . | median)
	n=$(tr ' ' '\n' <<<"${times[nostacks]}" | grep . | median)
	s=$(tr ' ' '\n' <<<"${times[stacks]}" | grep . | median)
	local defs paths
	defs=$("$mt" dump "$tmp/st" | grep -c '"event":"stack"' || true)
	paths=$("$mt" dump "$tmp/st" | grep '"event":"stack"' | grep -o '"hash":[0-9]*' | sort -u | wc -l)
	printf '| %s | %.3f | %.3f | %.3f | %.2f | %.2f | %s | %s | %.2f |\n' "$name" "$u" "$n" "$s" \
		"$(echo "$n / $u" | bc -l)" "$(echo "$s / $u" | bc -l)" "$defs" "$paths" \
		"$(echo "($s - $u) / ($n - $u)" | bc -l)"
}

echo "# --stacks: $(date -u +%Y-%m-%d), $(nproc) cores, kernel $(uname -r), median of $runs interleaved runs"
echo
echo "| workload | untraced s | no stacks s | --stacks s | no stacks × | --stacks × | definitions | distinct paths | stacks added / no-stacks added |"
echo "|---|---|---|---|---|---|---|---|---|"
measure "churn $((2000000 / scale))" "$root/build/bench/churn" $((2000000 / scale))
measure "churn -fomit-frame-pointer, 2 no-FP lib frames $((2000000 / scale))" "$root/build/bench/churn_omit" \
	$((2000000 / scale))
measure "deep tree $((200000 / scale))" "$root/build/bench/deep" $((200000 / scale))
measure "64 callers" "$root/build/tests/progs/stack_chain" callers

# The in-kernel unwinder's tables: built at attach time, from each module's .eh_frame (record -v logs it).
echo
echo "in-kernel unwind tables (record -v):"
"$mt" record -v --stacks -o "$tmp/tb" -- "$root/build/bench/churn_omit" 1000 2>&1 >/dev/null | grep 'unwind tables' || true
if command -v python3 >/dev/null; then
	"$mt" record -v --stacks -o "$tmp/tp" -- python3 -c 'import json, decimal' 2>&1 >/dev/null |
		grep 'unwind tables' || true
fi

# Unwinding rate: a real program with many distinct stacks (python starting up and importing), one core.
echo
py=$(command -v python3 || true)
if [ -n "$py" ]; then
	"$mt" record -q --stacks -o "$tmp/py" -- "$py" -c 'import json, re, decimal, email.parser; json.dumps({"a": [1, 2]})' >/dev/null
	echo "unwinding (taskset -c 0, module tables cached):"
	taskset -c 0 "$mt" unwind --stats "$tmp/py" 2>&1 | grep -E 'rate:|stacks unwound'
	taskset -c 0 "$mt" unwind --stats --repeat 5 "$tmp/py" 2>&1 | grep -E 'rate:'
fi
