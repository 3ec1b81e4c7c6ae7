// SPDX-License-Identifier: GPL-2.0-only
/* paths.c — benchmark workload: malloc/free pairs from N distinct call paths, each path taken R times. */
#include <stdio.h>
#include <stdlib.h>
/*
 * Path i is the decimal digits of i, lowest first: at each of DEPTH levels, descend() calls level_<digit>, which
 * calls descend() one level down; at the bottom, one malloc/free pair. Ten distinct functions, so that the return
 * addresses differ whatever the compiler makes of the switch, and work after each call, so that no call becomes a
 * jump (the build adds -fno-optimize-sibling-calls and frame pointers too): N < 10^DEPTH paths, all distinct, all
 * DEPTH * 2 + 2 frames deep.
 */
#define DEPTH 6

void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;
volatile long sink;

static long descend(long code, int level);

#define LEVEL(k)                                                   \
	__attribute__((noinline)) static long level_##k(long code, int level) \
	{                                                          \
		long r = descend(code, level);                     \
		__asm__ volatile("" ::: "memory");                 \
		return r + k;                                      \
	}
LEVEL(0) LEVEL(1) LEVEL(2) LEVEL(3) LEVEL(4) LEVEL(5) LEVEL(6) LEVEL(7) LEVEL(8) LEVEL(9)

__attribute__((noinline)) static long descend(long code, int level)
{
	void *p;

	if (!level) {
		p = v_malloc(16 + code % 512);
		v_free(p);
		return p != NULL;
	}
	switch (code % 10) {
	case 0: return level_0(code / 10, level - 1) + 1;
	case 1: return level_1(code / 10, level - 1) + 1;
	case 2: return level_2(code / 10, level - 1) + 1;
	case 3: return level_3(code / 10, level - 1) + 1;
	case 4: return level_4(code / 10, level - 1) + 1;
	case 5: return level_5(code / 10, level - 1) + 1;
	case 6: return level_6(code / 10, level - 1) + 1;
	case 7: return level_7(code / 10, level - 1) + 1;
	case 8: return level_8(code / 10, level - 1) + 1;
	default: return level_9(code / 10, level - 1) + 1;
	}
}

/* argv: distinct paths N (at most 10^DEPTH), repetitions R: N * R malloc/free pairs, in rounds of N. */
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	long r = argc > 2 ? atol(argv[2]) : 2;

	if (n < 1 || n > 1000000 || r < 1) {
		fprintf(stderr, "usage: paths N [R]   (1 <= N <= 1000000 distinct call paths, R rounds)\n");
		return EXIT_FAILURE;
	}
	for (long k = 0; k < r; k++)
		for (long i = 0; i < n; i++)
			sink += descend(i, DEPTH);
	return EXIT_SUCCESS;
}
