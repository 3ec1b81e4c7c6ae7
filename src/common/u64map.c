// SPDX-License-Identifier: GPL-2.0-only
/* u64map.c — open addressing with linear probing and backward-shift deletion (no tombstones). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/u64map.h"

#define MAP_MIN_CAP 16

static size_t map_home(const struct mt_u64map *m, uint64_t key)
{
	return mt_u64map__mix(key) & m->mask;
}

static size_t map_slot(const struct mt_u64map *m, uint64_t key)
{
	size_t i = map_home(m, key);

	while (m->ents[i].key && m->ents[i].key != key)
		i = (i + 1) & m->mask;
	return i;
}

static int map_resize(struct mt_u64map *m, size_t cap)
{
	struct mt_u64map old = *m;
	size_t i;

	m->ents = calloc(cap, sizeof(*m->ents));
	if (!m->ents) {
		*m = old;
		return -ENOMEM;
	}
	m->mask = cap - 1;
	for (i = 0; old.ents && i <= old.mask; i++)
		if (old.ents[i].key)
			m->ents[map_slot(m, old.ents[i].key)] = old.ents[i];
	free(old.ents);
	return 0;
}

uint64_t *mt_u64map__find(const struct mt_u64map *m, uint64_t key)
{
	size_t i;

	if (!key)
		return m->has_zero ? (uint64_t *)&m->zero_val : NULL;
	if (!m->ents)
		return NULL;
	i = map_slot(m, key);
	return m->ents[i].key ? &m->ents[i].val : NULL;
}

int mt_u64map__put(struct mt_u64map *m, uint64_t key, uint64_t val, uint64_t *old)
{
	size_t cap = m->ents ? m->mask + 1 : 0;
	struct mt_u64map_ent *e;
	uint64_t *v;
	int err;

	v = mt_u64map__find(m, key);
	if (v) {
		if (old)
			*old = *v;
		*v = val;
		return 1;
	}
	if (!key) {
		m->has_zero = true;
		m->zero_val = val;
		m->count++;
		return 0;
	}
	if ((m->count + 1) * 10 > cap * 7) {
		err = map_resize(m, cap ? cap * 2 : MAP_MIN_CAP);
		if (err)
			return err;
	}
	e = &m->ents[map_slot(m, key)];
	e->key = key;
	e->val = val;
	m->count++;
	return 0;
}

bool mt_u64map__del(struct mt_u64map *m, uint64_t key, uint64_t *val)
{
	size_t i, j, k;

	if (!key) {
		if (!m->has_zero)
			return false;
		if (val)
			*val = m->zero_val;
		m->has_zero = false;
		m->count--;
		return true;
	}
	if (!m->ents)
		return false;
	i = map_slot(m, key);
	if (!m->ents[i].key)
		return false;
	if (val)
		*val = m->ents[i].val;
	for (j = i;;) {
		j = (j + 1) & m->mask;
		if (!m->ents[j].key)
			break;
		k = map_home(m, m->ents[j].key);
		/* the entry at j may stay when its home lies cyclically in (i, j] */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		m->ents[i] = m->ents[j];
		i = j;
	}
	m->ents[i].key = 0;
	m->count--;
	return true;
}

void mt_u64map__for_each(const struct mt_u64map *m, void (*fn)(uint64_t key, uint64_t val, void *ctx), void *ctx)
{
	size_t i;

	if (m->has_zero)
		fn(0, m->zero_val, ctx);
	for (i = 0; m->ents && i <= m->mask; i++)
		if (m->ents[i].key)
			fn(m->ents[i].key, m->ents[i].val, ctx);
}

int mt_u64map__copy(struct mt_u64map *dst, const struct mt_u64map *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->has_zero = src->has_zero;
	dst->zero_val = src->zero_val;
	dst->count = src->count;
	if (!src->ents)
		return 0;
	dst->ents = malloc((src->mask + 1) * sizeof(*dst->ents));
	if (!dst->ents)
		return -ENOMEM;
	memcpy(dst->ents, src->ents, (src->mask + 1) * sizeof(*dst->ents));
	dst->mask = src->mask;
	return 0;
}

void mt_u64map__release(struct mt_u64map *m)
{
	free(m->ents);
	memset(m, 0, sizeof(*m));
}
