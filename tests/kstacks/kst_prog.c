// SPDX-License-Identifier: GPL-2.0-only
/* kst_prog.c — call paths for the in-kernel unwinder (test_kstacks), built -O2 -fomit-frame-pointer (kst_omit) and
 * with frame pointers (kst_fp). Modes: chains (8 callers into one leaf of libkst.so: chain k allocates 100 + 10k
 * blocks of 24 + 8k bytes), deep (a 200-frame recursion into malloc(4242)), locals (one path, 100,000 times,
 * malloc(3131), locals changing), nocfi (7 blocks of 5151 bytes through libkst_nocfi.so, which has no CFI), paths
 * (PATHS_N distinct call paths, the decimal digits of i through ten functions a level, each path twice: one
 * malloc(64) freed at its end). Every block is freed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
void *kst_lib_alloc(size_t n, unsigned salt);
void *kst_nocfi_alloc(size_t n);

#define CHAINS 8
#define DEPTH 200
#define LOCALS_N 100000
#define PATHS_N 100000
#define PATHS_DEPTH 5

static __attribute__((noinline)) void chain_run(int k)
{
	for (int i = 0; i < 100 + 10 * k; i++)
		free(kst_lib_alloc(24 + 8 * k, i));
	__asm__ volatile("" ::: "memory");
}

/* Eight callers, each its own function: eight call paths into one leaf. */
#define CHAIN(k) \
	__attribute__((noinline)) void chain##k(void) { chain_run(k); __asm__ volatile("" ::: "memory"); }
CHAIN(0) CHAIN(1) CHAIN(2) CHAIN(3) CHAIN(4) CHAIN(5) CHAIN(6) CHAIN(7)

__attribute__((noinline)) int recurse(int d)
{
	volatile char pad[48];
	int r;

	pad[d % sizeof(pad)] = (char)d;
	if (!d) {
		free(malloc(4242));
		return pad[0];
	}
	r = recurse(d - 1);
	__asm__ volatile("" ::: "memory");
	return r + pad[d % sizeof(pad)];
}

__attribute__((noinline)) void locals_once(unsigned i)
{
	volatile unsigned v[64];
	void *p;

	for (unsigned j = 0; j < 64; j++)
		v[j] = i * 2654435761u + j;
	p = malloc(3131);
	free(p);
	__asm__ volatile("" ::: "memory");
	(void)v[i % 64];
}

__attribute__((noinline)) void nocfi_caller(void)
{
	for (int i = 0; i < 7; i++)
		free(kst_nocfi_alloc(5151));
	__asm__ volatile("" ::: "memory");
}

static long descend(long code, int level);

/* One function per digit: a path's return addresses are its digits. */
#define LEVEL(k) \
	static __attribute__((noinline)) long level_##k(long code, int level) \
	{ long r = descend(code, level); __asm__ volatile("" ::: "memory"); return r + k; }
LEVEL(0) LEVEL(1) LEVEL(2) LEVEL(3) LEVEL(4) LEVEL(5) LEVEL(6) LEVEL(7) LEVEL(8) LEVEL(9)

static long (*const levels[10])(long, int) = { level_0, level_1, level_2, level_3, level_4,
					       level_5, level_6, level_7, level_8, level_9 };

static __attribute__((noinline)) long descend(long code, int level)
{
	if (!level) {
		free(malloc(64));
		return 1;
	}
	return levels[code % 10](code / 10, level - 1) + 1;
}

/* Every path once, from one call site whichever round. */
static __attribute__((noinline)) void paths_round(void)
{
	for (long i = 0; i < PATHS_N; i++)
		descend(i, PATHS_DEPTH);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "chains")) {
		chain0(); chain1(); chain2(); chain3(); chain4(); chain5(); chain6(); chain7();
	} else if (!strcmp(mode, "deep")) {
		recurse(DEPTH - 1);
	} else if (!strcmp(mode, "nocfi")) {
		nocfi_caller();
	} else if (!strcmp(mode, "locals")) {
		for (unsigned i = 0; i < LOCALS_N; i++)
			locals_once(i);
	} else if (!strcmp(mode, "paths")) {
		for (volatile int r = 0; r < 2; r++)	/* volatile: one call site, not unrolled into two */
			paths_round();
	} else {
		fprintf(stderr, "usage: %s chains|deep|locals|nocfi|paths\n", argv[0]);
		return 2;
	}
	return 0;
}
