// SPDX-License-Identifier: GPL-2.0-only
/* hold.c — benchmark workload: N blocks allocated and held together, then freed: the live-block tables' cost. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

/*
 * hold N [SIZE] [--pairs]: N blocks of SIZE bytes (default 32), all live at once, then freed in order; --pairs
 * frees each right after its allocation, so the same calls leave at most one block live: the baseline with the
 * same events and no live blocks.
 */
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 4000000, i;
	size_t size = argc > 2 ? (size_t)atol(argv[2]) : 32;
	int pairs = argc > 3 && !strcmp(argv[3], "--pairs");
	void **held = n > 0 ? calloc((size_t)n, sizeof(*held)) : NULL;

	if (n > 0 && !held) {
		fprintf(stderr, "hold: out of memory\n");
		return 1;
	}
	for (i = 0; i < n; i++) {
		held[i] = v_malloc(size);
		if (pairs)
			v_free(held[i]);
	}
	for (i = 0; i < n && !pairs; i++)
		v_free(held[i]);
	free(held);
	return 0;
}
