#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# replay.sh — `report --json` of one churn artifact by this build and by another, alternating: wall, CPU, ratios.
set -euo pipefail
BENCH_NAME=replay
# shellcheck source=bench/lib.sh
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
binary, the wall and CPU (user + sys) seconds of each run, the CPU seconds of the caller's thread (the critical path:
the wall time on an idle machine), their medians, and the per-round ratios this / other.
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

# The CPU ticks of pid's threads other than its first, as last seen, summed into OTHERS_SEEN (per tid in SEEN).
declare -A SEEN
threads_seen() {
	local t f
	for t in /proc/"$1"/task/*; do
		[[ ${t##*/} == "$1" ]] && continue
		{ read -ra f <"$t/stat"; } 2>/dev/null || continue
		SEEN[${t##*/}]=$((f[13] + f[14]))
	done
}

# One run of binary $1: "wall=S cpu=S main=S" (GNU time's elapsed and user + sys; main: the CPU of the caller's
# thread, the critical path, as the total less what the decoding thread was last seen to use, sampled every 20 ms).
run_once() {
	local wall user sys tpid pid= others=0 t
	SEEN=()
	/usr/bin/time -f '%e %U %S' -o "$TMP/time" "$1" report --json "$ART" >/dev/null &
	tpid=$!
	while kill -0 "$tpid" 2>/dev/null; do
		[[ -n $pid ]] || pid=$(pgrep -P "$tpid" || true)
		[[ -z $pid ]] || threads_seen "$pid"
		sleep 0.02
	done
	wait "$tpid"
	read -r wall user sys <"$TMP/time"
	for t in "${!SEEN[@]}"; do others=$((others + SEEN[$t])); done
	awk -v w="$wall" -v u="$user" -v s="$sys" -v o="$others" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "wall=%s cpu=%.2f main=%.2f\n", w, u + s, u + s - o / hz }'
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
printf '%-6s %-22s %-22s %-22s %s\n' binary "wall s per run" "CPU s per run" "caller's thread s" \
	"median wall / CPU / caller's thread"
for which in this other; do
	printf '%-6s %-22s %-22s %-22s %s / %s / %s\n' "$which" "$(values "cfg=$which" wall | paste -sd' ')" \
		"$(values "cfg=$which" cpu | paste -sd' ')" "$(values "cfg=$which" main | paste -sd' ')" \
		"$(values "cfg=$which" wall | fmt_spread %.2f)" "$(values "cfg=$which" cpu | fmt_spread %.2f)" \
		"$(values "cfg=$which" main | fmt_spread %.2f)"
done
echo "this / other, per round: wall $(ratios "" wall this other | fmt_spread %.2f), CPU $(ratios "" cpu this other |
	fmt_spread %.2f), caller's thread $(ratios "" main this other | fmt_spread %.2f)"
