// SPDX-License-Identifier: GPL-2.0-only
/* cell_index.c — 32-bit indexes by a key read from the records, open addressing with linear probing. */
#include <errno.h>
#include <stdlib.h>

#include "common/u64map.h"
#include "stacks/cell_index.h"

#define INDEX_MIN_CAP 16

static uint32_t key_of(struct mt_cell_keys k, uint32_t idx)
{
	return *(const uint32_t *)((const char *)k.base + (size_t)idx * k.stride);
}

/* mt_u64map's home slot: the same slots as it for the same keys, so cells are visited in its order. */
static size_t index_home(const struct mt_cell_index *x, uint64_t key)
{
	return mt_u64map__mix(key) & x->mask;
}

/* key's slot, or the free one where it goes. */
static size_t index_slot(const struct mt_cell_index *x, uint32_t key, struct mt_cell_keys k)
{
	size_t i = index_home(x, key);

	while (x->slots[i] && key_of(k, x->slots[i] - 1) != key)
		i = (i + 1) & x->mask;
	return i;
}

static int index_resize(struct mt_cell_index *x, size_t cap, struct mt_cell_keys k)
{
	uint32_t *old = x->slots;
	size_t old_mask = x->mask, i;

	x->slots = calloc(cap, sizeof(*x->slots));
	if (!x->slots) {
		x->slots = old;
		return -ENOMEM;
	}
	x->mask = cap - 1;
	for (i = 0; old && i <= old_mask; i++)
		if (old[i])
			x->slots[index_slot(x, key_of(k, old[i] - 1), k)] = old[i];
	free(old);
	return 0;
}

uint32_t mt_cell_index__find(const struct mt_cell_index *x, uint32_t key, struct mt_cell_keys k)
{
	if (!key)
		return x->zero;
	return x->slots ? x->slots[index_slot(x, key, k)] : 0;
}

int mt_cell_index__add(struct mt_cell_index *x, uint32_t key, uint32_t idx, struct mt_cell_keys k)
{
	size_t cap = x->slots ? x->mask + 1 : 0;

	if (idx == UINT32_MAX)
		return -ENOMEM;
	if (!key) {
		x->zero = idx + 1;
		x->count++;
		return 0;
	}
	if ((x->count + 1) * 10 > cap * 7 && index_resize(x, cap ? cap * 2 : INDEX_MIN_CAP, k))
		return -ENOMEM;
	x->slots[index_slot(x, key, k)] = idx + 1;
	x->count++;
	return 0;
}

void mt_cell_index__for_each(const struct mt_cell_index *x, void (*fn)(uint32_t idx, void *ctx), void *ctx)
{
	size_t i;

	if (x->zero)
		fn(x->zero - 1, ctx);
	for (i = 0; x->slots && i <= x->mask; i++)
		if (x->slots[i])
			fn(x->slots[i] - 1, ctx);
}

void mt_cell_index__release(struct mt_cell_index *x)
{
	free(x->slots);
	*x = (struct mt_cell_index){ 0 };
}
