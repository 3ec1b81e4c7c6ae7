#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# cmds.sh — the shell workload: N short commands (default 500), a fixed mix of coreutils, pipes and substitutions.
n=${1:-500}
t=$(mktemp -d)
for ((i = 0; i < n; i += 10)); do
	echo "$i" >"$t/f$((i % 7))"
	cat "$t/f$((i % 7))" >/dev/null
	x=$(expr "$i" + 1)
	basename "$t/f$x" >/dev/null
	date +%s >/dev/null
	printf '%s\n' c b a | sort >/dev/null
	wc -c "$t/f$((i % 7))" >/dev/null
	true
	ls "$t" >/dev/null
done
rm -rf "$t"
