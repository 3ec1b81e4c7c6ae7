// SPDX-License-Identifier: GPL-2.0-only
/* array.c — doubling growth for dynamic arrays. */
#include <errno.h>
#include <stdlib.h>

#include "common/array.h"

int mt_array__grow(void **v, size_t *cap, size_t n, size_t elem)
{
	size_t ncap = *cap ? *cap * 2 : 16;
	void *nv;

	if (n < *cap)
		return 0;
	nv = realloc(*v, ncap * elem);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

void mt_array__sort(void *v, size_t n, size_t elem, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(v, n, elem, cmp);
}
