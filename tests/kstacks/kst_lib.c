// SPDX-License-Identifier: GPL-2.0-only
/* kst_lib.c — libkst.so for test_kstacks: the allocating leaf, with a frame larger than 128 bytes, and two frames
 * on the way to it; built -O2 -fomit-frame-pointer. */
#include <stdlib.h>
#include <string.h>
/* 384 bytes of locals that change with every call: no frame pointer, a CFA far above sp. */
__attribute__((noinline)) void *kst_leaf(size_t n, unsigned salt)
{
	volatile unsigned char buf[384];
	void *p;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(salt + i);
	p = malloc(n);
	if (p)
		memset(p, buf[salt % sizeof(buf)], n);
	return p;
}

__attribute__((noinline)) void *kst_lib_inner(size_t n, unsigned salt)
{
	void *p = kst_leaf(n, salt);

	__asm__ volatile("" ::: "memory");	/* no tail call: the frame stays */
	return p;
}

/* The library's entry: two no-FP library frames above the leaf. */
__attribute__((noinline)) void *kst_lib_alloc(size_t n, unsigned salt)
{
	void *p = kst_lib_inner(n, salt);

	__asm__ volatile("" ::: "memory");
	return p;
}
