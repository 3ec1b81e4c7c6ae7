#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# legacy.sh — what the per-probe attach mode (kernels without uprobe_multi; MEMTRACK_ATTACH=legacy) costs against
# the default uprobe_multi links, in one run: per process (spawn N fork: each child gets its links, then gives them
# up) and per event (churn N --cpu: the workload's own CPU time). Interleaved rounds, medians, per-round ratios.
# usage: bash bench/legacy.sh [--runs R] [--build-dir DIR] [--children N] [--pairs N]
BENCH_NAME=legacy
BUILD_DIR=build
RUNS=7
CHILDREN=200
PAIRS=1500000
while (($#)); do
	case $1 in
	--runs) RUNS=$2; shift 2 ;;
	--build-dir) BUILD_DIR=$2; shift 2 ;;
	--children) CHILDREN=$2; shift 2 ;;
	--pairs) PAIRS=$2; shift 2 ;;
	*) echo "usage: bash bench/legacy.sh [--runs R] [--build-dir DIR] [--children N] [--pairs N]" >&2; exit 2 ;;
	esac
done
source "$(dirname "$0")/lib.sh"
bench_setup spawn churn

now_ms() { date +%s%3N; }
# One traced run of the command in mode $1 ("" for untraced): its wall time in ms (memtrack's exit included).
wall() {
	local mode=$1 t0
	shift
	t0=$(now_ms)
	if [[ -n $mode ]]; then
		MEMTRACK_ATTACH=$mode "$MEMTRACK" record -q -o "$TMP/run" -- "$@" >/dev/null
	else
		"$@" >/dev/null
	fi
	echo $(($(now_ms) - t0))
	rm -rf "$TMP/run"
}
cpu() {
	local mode=$1
	shift
	if [[ -n $mode ]]; then
		MEMTRACK_ATTACH=$mode "$MEMTRACK" record -q -o "$TMP/run" -- "$@" | awk '/^cpu_ms/ { print $2 }'
	else
		"$@" | awk '/^cpu_ms/ { print $2 }'
	fi
	rm -rf "$TMP/run"
}
for ((rep = 1; rep <= RUNS; rep++)); do
	note "round $rep/$RUNS"
	for cfg in untraced multi legacy; do
		mode=$cfg
		[[ $cfg == untraced ]] && mode=
		record "cfg=$cfg rep=$rep spawn_ms=$(wall "$mode" "$BENCH/spawn" "$CHILDREN" fork)" \
			"churn_cpu_ms=$(cpu "$mode" "$BENCH/churn" "$PAIRS" --cpu)"
	done
done
echo "## Attach modes: per-probe perf-event links (legacy) against uprobe_multi links ($VERSION, $(uname -r))"
echo
echo "median (min–max) of $RUNS interleaved rounds; ratios are each round's own legacy/multi"
echo
echo "| measure | untraced | multi | legacy | legacy/multi |"
echo "|---|---|---|---|---|"
for k in spawn_ms churn_cpu_ms; do
	case $k in
	spawn_ms) what="spawn $CHILDREN fork, wall ms (per process: ÷ $CHILDREN)" ;;
	churn_cpu_ms) what="churn $PAIRS pairs, workload CPU ms (per event: ÷ $((2 * PAIRS)))" ;;
	esac
	printf '| %s | %s | %s | %s | %s |\n' "$what" "$(values cfg=untraced $k | fmt_spread %.0f)" \
		"$(values cfg=multi $k | fmt_spread %.0f)" "$(values cfg=legacy $k | fmt_spread %.0f)" \
		"$(ratios "" $k legacy multi | fmt_spread %.2f)"
done
