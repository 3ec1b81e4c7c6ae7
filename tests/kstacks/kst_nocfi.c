// SPDX-License-Identifier: GPL-2.0-only
/* kst_nocfi.c — libkst_nocfi.so for test_kstacks: code without CFI (no .eh_frame entries) but with frame pointers,
 * which the in-kernel unwinder walks by frame pointer. */
#include <stdlib.h>
__attribute__((noinline)) void *kst_nocfi_inner(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) void *kst_nocfi_alloc(size_t n)
{
	void *p = kst_nocfi_inner(n);

	__asm__ volatile("" ::: "memory");
	return p;
}
