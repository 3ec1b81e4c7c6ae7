// SPDX-License-Identifier: GPL-2.0-only
/* size_stats.c — the allocations by power-of-two size class, and the largest ones in size then time order. */
#include <stddef.h>

#include "stacks/size_stats.h"

static unsigned int size_class(uint64_t size)
{
	return size ? 64 - __builtin_clzll(size) : 0;
}

void mt_size_stats__note(struct mt_size_stats *z, uint64_t size, uint32_t stack, uint32_t pid, uint64_t ts)
{
	unsigned int k = size_class(size);
	size_t i;

	z->allocations[k]++;
	z->bytes[k] += size;
	if (z->nlargest == MT_LARGEST_MAX && size <= z->largest[MT_LARGEST_MAX - 1].size)
		return;
	/* after the equal ones: the first of equal sizes stays */
	for (i = z->nlargest; i > 0 && z->largest[i - 1].size < size; i--)
		if (i < MT_LARGEST_MAX)
			z->largest[i] = z->largest[i - 1];
	z->largest[i] = (struct mt_big_alloc){ size, stack, pid, ts };
	if (z->nlargest < MT_LARGEST_MAX)
		z->nlargest++;
}
