#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# gen_data.sh — writes MIB mebibytes (default 20) of deterministic text to stdout for `xz -9`: log-like lines of
# words drawn by a fixed linear congruential generator (exact in awk's doubles), three in four of them a repeat of
# one of the last 256 new lines, so it compresses like a log (~26:1), neither like zeros nor like noise.
set -euo pipefail
mib=${1:-20}
awk -v bytes=$((mib * 1048576)) '
# Prints line s, cut so that the output ends at exactly `bytes` bytes.
function emit(s) {
	if (out + length(s) + 1 >= bytes) {
		printf "%s", substr(s "\n", 1, bytes - out)
		out = bytes
		exit
	}
	print s
	out += length(s) + 1
}
BEGIN {
	split("the of and memory heap page alloc free block tree node trace probe ring event stack frame map " \
	      "index table value record count size time kernel user thread process file", w, " ")
	x = 12345; out = 0; line = ""; nl = 0
	while (out < bytes) {
		x = (x * 69069 + 1) % 4294967296
		if (nl >= 256 && int(x / 256) % 4 != 0) {
			emit(old[int(x / 65536) % 256])
			continue
		}
		word = w[1 + int(x / 16777216) % 32]
		if (int(x / 256) % 7 == 0)
			word = word int(x / 4096) % 1000
		line = line word " "
		if (length(line) > 72) {
			emit(line)
			old[nl % 256] = line
			nl++
			line = ""
		}
	}
}'
