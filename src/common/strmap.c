// SPDX-License-Identifier: GPL-2.0-only
/* strmap.c — string interning over a u64map of FNV-1a hashes, a collision taking the next hash value. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/strmap.h"

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

/* A key of parts is kept as each part's tag (1: a string, then it and its NUL; 2: NULL), then a NUL. */
enum { PART_STRING = 1, PART_NULL = 2 };

/* What is looked up: a string, or parts when parts is not NULL. */
struct key {
	const char *s;
	const char *const *parts;
	size_t n;
};

static uint64_t fnv1a(uint64_t h, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * FNV_PRIME;
	return h;
}

/* The hash of the key as it is kept. */
static uint64_t key_hash(const struct key *k)
{
	uint64_t h = FNV_OFFSET;
	size_t i;

	if (!k->parts)
		return fnv1a(h, k->s, strlen(k->s));
	for (i = 0; i < k->n; i++) {
		h = (h ^ (k->parts[i] ? PART_STRING : PART_NULL)) * FNV_PRIME;
		if (k->parts[i])
			h = fnv1a(h, k->parts[i], strlen(k->parts[i]) + 1);
	}
	return h;
}

static bool key_is(const char *kept, const struct key *k)
{
	size_t i;

	if (!k->parts)
		return !strcmp(kept, k->s);
	for (i = 0; i < k->n; i++) {
		if (*kept++ != (k->parts[i] ? PART_STRING : PART_NULL))
			return false;
		if (!k->parts[i])
			continue;
		if (strcmp(kept, k->parts[i]))
			return false;
		kept += strlen(kept) + 1;
	}
	return !*kept;
}

/* The key as it is kept; NULL on ENOMEM. */
static char *key_copy(const struct key *k)
{
	size_t i, len = 1;
	char *copy, *p;

	if (!k->parts)
		return strdup(k->s);
	for (i = 0; i < k->n; i++)
		len += 1 + (k->parts[i] ? strlen(k->parts[i]) + 1 : 0);
	copy = p = malloc(len);
	if (!copy)
		return NULL;
	for (i = 0; i < k->n; i++) {
		*p++ = k->parts[i] ? PART_STRING : PART_NULL;
		if (k->parts[i])
			p = stpcpy(p, k->parts[i]) + 1;
	}
	*p = '\0';
	return copy;
}

/* The number of k, or -ENOENT with *h the hash value to file it under. */
static int64_t key_find(const struct mt_strmap *m, const struct key *k, uint64_t *h)
{
	uint64_t *idx;

	for (*h = key_hash(k); (idx = mt_u64map__find(&m->by_hash, *h)); (*h)++)
		if (key_is(m->strs[*idx], k))
			return (int64_t)*idx;
	return -ENOENT;
}

static int64_t key_intern(struct mt_strmap *m, const struct key *k, bool *added)
{
	int64_t idx;
	uint64_t h;
	char *copy;

	if (added)
		*added = false;
	idx = key_find(m, k, &h);
	if (idx >= 0)
		return idx;
	copy = key_copy(k);
	if (!copy || mt_array__grow((void **)&m->strs, &m->cap, m->count, sizeof(*m->strs)) ||
	    mt_u64map__put(&m->by_hash, h, m->count, NULL) < 0) {
		free(copy);
		return -ENOMEM;
	}
	m->strs[m->count] = copy;
	if (added)
		*added = true;
	return (int64_t)m->count++;
}

int64_t mt_strmap__intern(struct mt_strmap *m, const char *s, bool *added)
{
	return key_intern(m, &(struct key){ .s = s }, added);
}

int64_t mt_strmap__find(const struct mt_strmap *m, const char *s)
{
	uint64_t h;

	return key_find(m, &(struct key){ .s = s }, &h);
}

int64_t mt_strmap__intern_parts(struct mt_strmap *m, const char *const *parts, size_t n, bool *added)
{
	return key_intern(m, &(struct key){ .parts = parts, .n = n }, added);
}

const char *mt_strmap__part(const struct mt_strmap *m, size_t i, size_t k)
{
	const char *p = m->strs[i];

	for (; k; k--)
		p += *p == PART_STRING ? strlen(p + 1) + 2 : 1;
	return *p == PART_STRING ? p + 1 : NULL;
}

char **mt_strmap__take(struct mt_strmap *m, size_t *count)
{
	char **strs = m->strs;

	*count = m->count;
	mt_u64map__release(&m->by_hash);
	*m = (struct mt_strmap){ 0 };
	return strs;
}

void mt_strmap__release(struct mt_strmap *m)
{
	size_t i;

	for (i = 0; i < m->count; i++)
		free(m->strs[i]);
	free(m->strs);
	mt_u64map__release(&m->by_hash);
	*m = (struct mt_strmap){ 0 };
}
