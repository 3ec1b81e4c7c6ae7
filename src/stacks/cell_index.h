/* SPDX-License-Identifier: GPL-2.0-only */
/* cell_index.h — a hash table of 32-bit indexes into an array of records that hold their own 32-bit keys. */
#ifndef MEMTRACK_CELL_INDEX_H
#define MEMTRACK_CELL_INDEX_H

#include <stddef.h>
#include <stdint.h>

/*
 * Where the keys are: record i's key is the uint32_t at (const char *)base + i * stride. The array may move
 * between calls, so each call that reads keys is given them.
 */
struct mt_cell_keys {
	const void *base;
	size_t stride;
};

/*
 * key → index, 4 bytes a slot (a u64 map of the same takes 16): the slots hold indexes + 1, and a lookup compares
 * the key in the record. The slots are the ones mt_u64map would use for the same keys put in the same order (the
 * same hash, probing and growth, key 0 beside the table), so a walk visits them in its order. Zeroed is empty; there
 * is no removal.
 */
struct mt_cell_index {
	uint32_t *slots;		/* index + 1 (0: free); NULL while empty */
	size_t mask;			/* capacity - 1, a power of two */
	size_t count;			/* entries, key 0's included */
	uint32_t zero;			/* key 0's index + 1 (0: none) */
};

/* key's index + 1, 0 when absent. */
uint32_t mt_cell_index__find(const struct mt_cell_index *x, uint32_t key, struct mt_cell_keys k);
/* key, absent so far, → idx (below UINT32_MAX). 0 or -ENOMEM. */
int mt_cell_index__add(struct mt_cell_index *x, uint32_t key, uint32_t idx, struct mt_cell_keys k);
/* Visits every index, key 0's first; fn may change the records' array but not x. */
void mt_cell_index__for_each(const struct mt_cell_index *x, void (*fn)(uint32_t idx, void *ctx), void *ctx);
void mt_cell_index__release(struct mt_cell_index *x);

#endif /* MEMTRACK_CELL_INDEX_H */
