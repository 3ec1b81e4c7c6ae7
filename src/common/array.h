/* SPDX-License-Identifier: GPL-2.0-only */
/* array.h — growth of the plain dynamic arrays used across memtrack (pointer, count, capacity). */
#ifndef MEMTRACK_ARRAY_H
#define MEMTRACK_ARRAY_H

#include <stddef.h>

/* Makes room for element n of *v (capacity *cap, elements of elem bytes), doubling. 0 or -ENOMEM. */
int mt_array__grow(void **v, size_t *cap, size_t n, size_t elem);

/* qsort that takes an empty array (v may then be NULL, which qsort does not allow). */
void mt_array__sort(void *v, size_t n, size_t elem, int (*cmp)(const void *, const void *));

#endif /* MEMTRACK_ARRAY_H */
