#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# paths.sh — many distinct call paths under --stacks: brief definitions (the default) against every definition with
# its raw bytes (--stack-sample 1), in one run: record wall and RSS, drops, definitions, artifact size, report.
#
# Usage: bash bench/paths.sh [--report-with BIN] [N...]   (as root, after `cmake --build build`; default N: 100000
# 1000000). --report-with BIN: the reports of the same artifacts by another memtrack too (e.g. a build of the
# baseline), for before/after ratios in one run.
# Prints two tables; bench/README.md explains them and keeps the latest ones.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
mt=$root/build/memtrack
other=
if [ "${1:-}" = --report-with ]; then
	other=$2
	shift 2
	[ -x "$other" ] || { echo "paths.sh: $other is not an executable" >&2; exit 2; }
fi
[ -x "$mt" ] || { echo "paths.sh: $mt is missing: build first" >&2; exit 2; }
[ $# -gt 0 ] || set -- 100000 1000000
tmp=$(mktemp -d /tmp/memtrack-paths-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# "wall_s max_rss_kib cpu_s" of a command, by GNU time -v (CPU: user + system, steadier on a shared machine).
timed() {
	/usr/bin/time -v -o "$tmp/time" "$@" >/dev/null 2>&1 || true
	awk -F': ' '/Elapsed/ { n = split($2, t, ":"); w = t[n] + (n > 1 ? t[n - 1] * 60 : 0) }
		/Maximum resident/ { r = $2 } /User time|System time/ { c += $2 }
		END { printf "%.2f %d %.2f\n", w, r, c }' "$tmp/time"
}

# One report row of binary $1 (label $2) on artifact $3: its first report (which unwinds and writes unwind.mtz),
# a second one (reads it), then report --json; each on a fresh copy's first use for the first.
report_row() {
	local bin=$1 label=$2 art=$3 fw fr fc w r c jw jr jc
	rm -rf "$tmp/r"
	cp -r "$art" "$tmp/r"
	rm -f "$tmp/r/unwind.mtz"
	read -r fw fr fc < <(timed "$bin" report "$tmp/r")
	read -r w r c < <(timed "$bin" report "$tmp/r")
	read -r jw jr jc < <(timed "$bin" report --json "$tmp/r")
	printf '| %s | %s | %s | %s | %s | %.1f | %s | %s | %.1f | %s | %s | %.1f |\n' "$n" "$conf_text" "$label" \
		"$fw" "$fc" "$(echo "$fr / 1024" | bc -l)" "$w" "$c" "$(echo "$r / 1024" | bc -l)" "$jw" "$jc" \
		"$(echo "$jr / 1024" | bc -l)" >>"$tmp/reports"
}

echo "# bench/paths N 2 under --stacks: $(date -u +%Y-%m-%d), $(nproc) cores, kernel $(uname -r), load $(cut -d' ' -f1 /proc/loadavg)"
echo
echo "| paths | raw bytes kept | record s | tracer RSS MiB | drops | definitions | brief | artifact MiB | bytes / path | report s | report RSS MiB |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in "$@"; do
	for conf in sample all; do
		rm -rf "$tmp/a"
		opt=()
		[ "$conf" = all ] && opt=(--stack-sample 1)
		read -r rw rr _ < <(timed "$mt" record -q --stacks "${opt[@]}" -o "$tmp/a" -- "$root/build/bench/paths" "$n" 2)
		"$mt" dump "$tmp/a" >"$tmp/dump"
		defs=$(grep -c '"event":"stack"' "$tmp/dump" || true)
		brief=$(grep '"event":"stack"' "$tmp/dump" | grep -c '"bytes":0,' || true)
		drops=$(grep -o '"dropped_events":[0-9]*' "$tmp/dump" | cut -d: -f2)
		bytes=$(stat -c %s "$tmp/a/events.mtz")
		conf_text=$([ "$conf" = all ] && echo "all (--stack-sample 1)" || echo "first 1000, 1 in 100")
		[ -z "$other" ] || report_row "$other" "$(basename "$other")" "$tmp/a"
		report_row "$mt" "build/memtrack" "$tmp/a"
		read -r pw pr _ < <(timed "$mt" report "$tmp/a")
		printf '| %s | %s | %s | %.1f | %s | %s | %s | %.1f | %d | %s | %.1f |\n' "$n" "$conf_text" "$rw" \
			"$(echo "$rr / 1024" | bc -l)" "$drops" "$defs" "$brief" "$(echo "$bytes / 1048576" | bc -l)" \
			"$((bytes / n))" "$pw" "$(echo "$pr / 1024" | bc -l)"
	done
done
echo
echo "Reports of the same artifacts (first: on a copy without unwind.mtz, which it writes; then report again and"
echo "report --json; CPU = user + system):"
echo
echo "| paths | raw bytes kept | memtrack | first report s | CPU s | RSS MiB | report s | CPU s | RSS MiB | --json s | CPU s | RSS MiB |"
echo "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
cat "$tmp/reports"
