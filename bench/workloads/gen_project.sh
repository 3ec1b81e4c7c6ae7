#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# gen_project.sh — writes a deterministic C project into DIR: FILES source files (default 20) of about LINES lines
# (default 300) each (gen_c.sh's functions, renamed per file), a main and a Makefile, for `make -j2`.
set -euo pipefail
dir=$1
files=${2:-20}
lines=${3:-300}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$dir"
: >"$dir/decls.h"
for ((i = 0; i < files; i++)); do
	bash "$here/gen_c.sh" "$lines" | sed "s/\bfn_/m${i}_fn_/g; s/\bentry\b/entry_$i/; s/\bpool\b/pool_$i/g" >"$dir/m$i.c"
	echo "int entry_$i(int k);" >>"$dir/decls.h"
done
{
	echo '#include <stdio.h>'
	echo '#include "decls.h"'
	echo 'int main(void) { long s = 0;'
	for ((i = 0; i < files; i++)); do echo "	s += entry_$i(3);"; done
	echo '	printf("%ld\n", s); return 0; }'
} >"$dir/main.c"
{
	echo "OBJS = main.o $(for ((i = 0; i < files; i++)); do printf 'm%d.o ' "$i"; done)"
	echo 'CFLAGS = -O2'
	echo 'prog: $(OBJS)'
	printf '\t$(CC) -o $@ $(OBJS)\n'
	echo '%.o: %.c decls.h'
	printf '\t$(CC) $(CFLAGS) -c -o $@ $<\n'
	echo 'clean:'
	printf '\trm -f prog $(OBJS)\n'
} >"$dir/Makefile"
