/* SPDX-License-Identifier: GPL-2.0-only */
/* block_table.h — the live-block table: address → 64-bit word, ≤ 23 bytes an entry, grown in place. */
#ifndef MEMTRACK_BLOCK_TABLE_H
#define MEMTRACK_BLOCK_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The table of the model's blocks (model/blocks.c) and of the stack accounting's (stacks/stack_heap.c): millions of
 * entries, so what it costs an entry is the recorder's memory. 16 bytes a slot, kept 70-87.5% full (it grows by a
 * quarter, in place), so an entry costs 18.3-22.9 bytes, capacity included, and at a growth no more: no second
 * table is built beside the first. The word is the user's: each packs a block's size and stack id into it, and
 * marks its entries that are not live blocks.
 */
struct mt_block_table {
	struct mt_block_slot *slots;	/* NULL while empty */
	size_t cap;			/* home slots: [0, cap) */
	size_t len;			/* slots: cap and a tail for the last runs */
	size_t count;			/* entries, key 0 included */
	bool mapped;			/* slots is a mapping (large), not from malloc */
	bool has_zero;			/* key 0 is kept beside (0 marks a free slot) */
	uint64_t zero_val;
};

/* Zero-initialised is an empty table. The word of key, or NULL; valid until the next put or del. */
uint64_t *mt_block_table__find(const struct mt_block_table *t, uint64_t key);
/* Sets key → val. 1 when key was present (*old gets its word when old is not NULL), 0 when added, -ENOMEM. */
int mt_block_table__put(struct mt_block_table *t, uint64_t key, uint64_t val, uint64_t *old);
/* Removes key; true (and *val when not NULL) when it was present. */
bool mt_block_table__del(struct mt_block_table *t, uint64_t key, uint64_t *val);
/* Removes the entry whose word find gave (found), the table unchanged since: the probe is not made again. */
void mt_block_table__del_found(struct mt_block_table *t, uint64_t *found);
/* Visits every entry (order unspecified); fn must not change the table. */
void mt_block_table__for_each(const struct mt_block_table *t, void (*fn)(uint64_t key, uint64_t val, void *ctx),
			      void *ctx);
/* The bytes the table holds (slots of the capacity and the tail). */
size_t mt_block_table__bytes(const struct mt_block_table *t);
void mt_block_table__release(struct mt_block_table *t);

#endif /* MEMTRACK_BLOCK_TABLE_H */
