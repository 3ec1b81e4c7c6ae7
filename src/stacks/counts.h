/* SPDX-License-Identifier: GPL-2.0-only */
/* counts.h — struct mt_stack_counts by stack, compact: the counts most stacks have inline, the others aside. */
#ifndef MEMTRACK_COUNTS_H
#define MEMTRACK_COUNTS_H

#include <stddef.h>
#include <stdint.h>

struct mt_stack_counts;

/* The members of struct mt_stack_counts come in pairs (blocks, bytes), in this order. */
enum mt_count_pair {
	MT_CP_ALLOCATED,	/* allocations, bytes */
	MT_CP_INHERITED,
	MT_CP_FREED,		/* frees, freed_bytes */
	MT_CP_REPLACED,
	MT_CP_DISCARDED,
	MT_CP_LEAKED,
	MT_CP_INHERITED_LIVE,
	MT_CP_STILL_LIVE,
	MT_CP_TEMPORARY,
	MT_CP_PEAK,
	MT_CP__COUNT,
};

#define MT_CP_INLINE 3		/* pairs kept in every slot: allocated, freed, temporary */

struct mt_count_slot;

/*
 * Most stacks of a program with many call paths are allocated, freed and temporary, and nothing else: those three
 * pairs are in each stack's slot, the other seven in a side record that a stack gets when one of them first changes.
 * Zeroed is empty.
 */
struct mt_counts {
	struct mt_count_slot *slots;	/* by stack */
	uint32_t *rare_at;		/* by stack: index + 1 of its side record (0: none, the other pairs are zero); beside
					 * the slots, which it would pad by 4 bytes */
	size_t n, cap;
	uint64_t (*rare)[2 * (MT_CP__COUNT - MT_CP_INLINE)];	/* the side records, by a slot's rare - 1 */
	size_t nrare, cap_rare;
};

/* Stacks 0 .. n - 1 have slots (the new ones zero). 0 or -ENOMEM. */
int mt_counts__reserve(struct mt_counts *t, size_t n);
/* Only stacks 0 .. n - 1 keep slots (the reserved ones grow by doubling), when they are fewer. */
void mt_counts__shrink(struct mt_counts *t, size_t n);
/* Pair p of stack (below the reserved ones) changes by blocks and bytes (two's complement for less). 0 or -ENOMEM. */
int mt_counts__add(struct mt_counts *t, size_t stack, enum mt_count_pair p, uint64_t blocks, uint64_t bytes);
/* All the counts of stack; zeros for one past the reserved. */
void mt_counts__get(const struct mt_counts *t, size_t stack, struct mt_stack_counts *out);
/* Stacks with a side record. */
size_t mt_counts__nr_rare(const struct mt_counts *t);
/* Frees what t holds and empties it. */
void mt_counts__release(struct mt_counts *t);

#endif /* MEMTRACK_COUNTS_H */
