// SPDX-License-Identifier: GPL-2.0-only
/* fake_alloc.c — a test library that exports one allocator's trigger symbols (FAKE_PREFIX: mi_ or tc_) on top of
 * glibc, so tests can dlopen allocators that Debian cannot dlopen (jemalloc needs static TLS). */
#include <stdlib.h>
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

void *CAT(FAKE_PREFIX, malloc)(size_t size)
{
	return malloc(size);
}

void CAT(FAKE_PREFIX, free)(void *p)
{
	free(p);
}
