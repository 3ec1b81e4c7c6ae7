// SPDX-License-Identifier: GPL-2.0-only
/* kst_prog.c — call paths for the in-kernel unwinder (test_kstacks), built -O2 -fomit-frame-pointer (kst_omit) and
 * with frame pointers (kst_fp). Modes: chains (8 callers into one leaf of libkst.so: chain k allocates 100 + 10k
 * blocks of 24 + 8k bytes), deep (a 200-frame recursion into malloc(4242)), locals (one path, 100,000 times,
 * malloc(3131), locals changing), nocfi (7 blocks of 5151 bytes through libkst_nocfi.so, which has no CFI). Every
 * block is freed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
void *kst_lib_alloc(size_t n, unsigned salt);
void *kst_nocfi_alloc(size_t n);

#define CHAINS 8
#define DEPTH 200
#define LOCALS_N 100000

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
	} else {
		fprintf(stderr, "usage: %s chains|deep|locals|nocfi\n", argv[0]);
		return 2;
	}
	return 0;
}
