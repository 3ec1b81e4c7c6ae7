#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# replay.sh — `report --json` of one churn artifact by this build and by another, alternating: wall, CPU, ratios.
set -euo pipefail
BENCH_NAME=replay
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	cat <<'USAGE'
usage: bash bench/replay.sh --other BIN [--runs N] [--pairs N | --artifact DIR] [--build-dir DIR]
  --other BIN      the memtrack binary to compare with (say a build of main)
  --runs N         rounds; each runs both binaries on the same artifact, alternating (default 3)
  --pairs N        record churn N (2N events) with this build first (default 5000000: 10^7 events)
  --artifact DIR   report this artifact instead of recording one (kept)
  --build-dir DIR  this build (default: build, relative to the repository)
Checks that both binaries print the same bytes for `report --json`, `report` and `report --leaks`, then prints, per
binary, the wall and CPU (user + sys) seconds of each run, their medians, and the per-round ratios this / other.
Needs root (to record), jq and GNU time (Debian package time).
USAGE
}

RUNS=3 PAIRS=5000000 ART= BUILD_DIR=build OTHER=
while (($#)); do
	case $1 in
	--other) OTHER=${2:?--other needs a binary} && shift 2 ;;
	--runs) RUNS=${2:?--runs needs a number} && shift 2 ;;
	--pairs) PAIRS=${2:?--pairs needs a number} && shift 2 ;;
	--artifact) ART=${2:?--artifact needs a directory} && shift 2 ;;
	--build-dir) BUILD_DIR=${2:?--build-dir needs a directory} && shift 2 ;;
	-h | --help) usage && exit 0 ;;
	*) usage >&2 && die "unknown option '$1'" ;;
	esac
done
[[ -x $OTHER ]] || die "--other BIN is required and must be executable"
bench_setup churn
if [[ -z $ART ]]; then
	ART=$TMP/art
	"$MEMTRACK" record -q -o "$ART" -- "$BENCH/churn" "$PAIRS" >/dev/null 2>"$TMP/err" ||
		die "record failed: $(tail -3 "$TMP/err")"
fi
EVENTS=$("$MEMTRACK" report --json "$ART" | jq '.totals.allocations + .totals.frees')

for args in --json "" --leaks; do
	# shellcheck disable=SC2086 # $args is one option or none
	"$MEMTRACK" report $args "$ART" >"$TMP/this.out" 2>&1 || true
	# shellcheck disable=SC2086
	"$OTHER" report $args "$ART" >"$TMP/other.out" 2>&1 || true
	cmp -s "$TMP/this.out" "$TMP/other.out" || die "report $args: the outputs differ"
done

# One run of binary $1: "wall=S cpu=S" (GNU time's: elapsed, user + sys).
run_once() {
	local wall user sys
	/usr/bin/time -f '%e %U %S' -o "$TMP/time" "$1" report --json "$ART" >/dev/null
	read -r wall user sys <"$TMP/time"
	echo "wall=$wall cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')"
}

for ((r = 1; r <= RUNS; r++)); do
	for which in this other; do
		bin=$MEMTRACK
		[[ $which == other ]] && bin=$OTHER
		record "cfg=$which rep=$r $(run_once "$bin")"
	done
done
echo "# $VERSION, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $EVENTS events, $RUNS rounds"
echo "# the outputs of report --json, report and report --leaks are the same bytes"
printf '%-6s %-28s %-28s %s\n' binary "wall s per run" "CPU s per run" "median wall / CPU"
for which in this other; do
	printf '%-6s %-28s %-28s %s / %s\n' "$which" "$(values "cfg=$which" wall | paste -sd' ')" \
		"$(values "cfg=$which" cpu | paste -sd' ')" "$(values "cfg=$which" wall | fmt_spread %.2f)" \
		"$(values "cfg=$which" cpu | fmt_spread %.2f)"
done
echo "this / other, per round: wall $(ratios "" wall this other | fmt_spread %.2f), CPU $(ratios "" cpu this other |
	fmt_spread %.2f)"
