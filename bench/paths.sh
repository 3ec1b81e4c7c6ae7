#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# paths.sh — many distinct call paths under --stacks: brief definitions (the default) against every definition with
# its raw bytes (--stack-sample 1), in one run: record wall and RSS, drops, definitions, artifact size, report.
#
# Usage: bash bench/paths.sh [N...]   (as root, after `cmake --build build`; default N: 100000 1000000)
# Prints one table; bench/README.md explains it and keeps the latest one.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
mt=$root/build/memtrack
[ -x "$mt" ] || { echo "paths.sh: $mt is missing: build first" >&2; exit 2; }
[ $# -gt 0 ] || set -- 100000 1000000
tmp=$(mktemp -d /tmp/memtrack-paths-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# "wall_s max_rss_kib" of a command, by GNU time -v.
timed() {
	/usr/bin/time -v -o "$tmp/time" "$@" >/dev/null 2>&1 || true
	awk -F': ' '/Elapsed/ { n = split($2, t, ":"); w = t[n] + (n > 1 ? t[n - 1] * 60 : 0) }
		/Maximum resident/ { r = $2 } END { printf "%.2f %d\n", w, r }' "$tmp/time"
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
		read -r rw rr < <(timed "$mt" record -q --stacks "${opt[@]}" -o "$tmp/a" -- "$root/build/bench/paths" "$n" 2)
		"$mt" dump "$tmp/a" >"$tmp/dump"
		defs=$(grep -c '"event":"stack"' "$tmp/dump" || true)
		brief=$(grep '"event":"stack"' "$tmp/dump" | grep -c '"bytes":0,' || true)
		drops=$(grep -o '"dropped_events":[0-9]*' "$tmp/dump" | cut -d: -f2)
		bytes=$(stat -c %s "$tmp/a/events.mtz")
		read -r pw pr < <(timed "$mt" report "$tmp/a")
		printf '| %s | %s | %s | %.1f | %s | %s | %s | %.1f | %d | %s | %.1f |\n' "$n" \
			"$([ "$conf" = all ] && echo "all (--stack-sample 1)" || echo "first 1000, 1 in 100")" "$rw" \
			"$(echo "$rr / 1024" | bc -l)" "$drops" "$defs" "$brief" "$(echo "$bytes / 1048576" | bc -l)" \
			"$((bytes / n))" "$pw" "$(echo "$pr / 1024" | bc -l)"
	done
done
