/* SPDX-License-Identifier: GPL-2.0-only */
/* strmap.h — strings interned: each distinct one kept once, numbered 0, 1, ... in the order first seen. */
#ifndef MEMTRACK_STRMAP_H
#define MEMTRACK_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/u64map.h"

/* Zero-initialised is an empty map. */
struct mt_strmap {
	char **strs;			/* by number: a copy of each key */
	size_t count;
	size_t cap;
	struct mt_u64map by_hash;	/* FNV-1a of a key (the next value after a collision) → its number */
};

/* The number of s, a copy added when it is new (then *added is true, when added is not NULL). -ENOMEM. */
int64_t mt_strmap__intern(struct mt_strmap *m, const char *s, bool *added);
/* The number of s, or -ENOENT. */
int64_t mt_strmap__find(const struct mt_strmap *m, const char *s);
/* The same for a key of n parts, each a string or NULL (NULL is not ""), in a map whose keys all have parts. */
int64_t mt_strmap__intern_parts(struct mt_strmap *m, const char *const *parts, size_t n, bool *added);
/* Part k of key i of mt_strmap__intern_parts (NULL for a NULL part). */
const char *mt_strmap__part(const struct mt_strmap *m, size_t i, size_t k);

/* Key i of mt_strmap__intern. */
static inline const char *mt_strmap__str(const struct mt_strmap *m, size_t i)
{
	return m->strs[i];
}

/* The strings by number, now the caller's to free (each, then the array; NULL when there are none); m is emptied. */
char **mt_strmap__take(struct mt_strmap *m, size_t *count);
void mt_strmap__release(struct mt_strmap *m);

#endif /* MEMTRACK_STRMAP_H */
