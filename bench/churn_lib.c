// SPDX-License-Identifier: GPL-2.0-only
/* churn_lib.c — libchurn_lib.so for churn_omit: two library frames without frame pointers around each malloc/free. */
#include <stddef.h>
#include <stdlib.h>
void *(*volatile v_lib_malloc)(size_t) = malloc;
void (*volatile v_lib_free)(void *) = free;

__attribute__((noinline)) void *churn_lib_inner(void *old, size_t n)
{
	void *p;

	v_lib_free(old);
	p = v_lib_malloc(n);
	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) void *churn_lib_step(void *old, size_t n)
{
	void *p = churn_lib_inner(old, n);

	__asm__ volatile("" ::: "memory");
	return p;
}
