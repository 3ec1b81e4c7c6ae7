// SPDX-License-Identifier: GPL-2.0-only
/* counts.c — struct mt_stack_counts by stack, compact: three pairs in each slot, seven in side records. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "stacks/counts.h"
#include "stacks/stack_heap.h"

struct mt_count_slot {
	uint64_t v[MT_CP_INLINE][2];
};

_Static_assert(sizeof(struct mt_stack_counts) == MT_CP__COUNT * 2 * sizeof(uint64_t),
	       "struct mt_stack_counts is the pairs of enum mt_count_pair");

/* Where pair p is: in a slot (its index there) or in a side record (MT_CP_INLINE + its index there). */
static const uint8_t pair_at[MT_CP__COUNT] = {
	[MT_CP_ALLOCATED] = 0, [MT_CP_FREED] = 1, [MT_CP_TEMPORARY] = 2,
	[MT_CP_INHERITED] = MT_CP_INLINE + 0, [MT_CP_REPLACED] = MT_CP_INLINE + 1,
	[MT_CP_DISCARDED] = MT_CP_INLINE + 2, [MT_CP_LEAKED] = MT_CP_INLINE + 3,
	[MT_CP_INHERITED_LIVE] = MT_CP_INLINE + 4, [MT_CP_STILL_LIVE] = MT_CP_INLINE + 5,
	[MT_CP_PEAK] = MT_CP_INLINE + 6,
};

int mt_counts__reserve(struct mt_counts *t, size_t n)
{
	size_t cap = t->cap ? t->cap : 64;
	void *v;

	if (n <= t->n)
		return 0;
	if (n > t->cap) {
		while (cap < n)
			cap *= 2;
		v = realloc(t->slots, cap * sizeof(*t->slots));
		if (v)
			t->slots = v;
		v = v ? realloc(t->rare_at, cap * sizeof(*t->rare_at)) : NULL;
		if (!v)
			return -ENOMEM;
		t->rare_at = v;
		t->cap = cap;
	}
	memset(t->slots + t->n, 0, (n - t->n) * sizeof(*t->slots));
	memset(t->rare_at + t->n, 0, (n - t->n) * sizeof(*t->rare_at));
	t->n = n;
	return 0;
}

void mt_counts__shrink(struct mt_counts *t, size_t n)
{
	void *v;

	if (!n || n >= t->cap)
		return;
	/* a shrink that fails leaves the larger block, which is as good */
	v = realloc(t->slots, n * sizeof(*t->slots));
	if (v)
		t->slots = v;
	v = realloc(t->rare_at, n * sizeof(*t->rare_at));
	if (v)
		t->rare_at = v;
	t->cap = n;
	if (t->n > n)
		t->n = n;
}

int mt_counts__add(struct mt_counts *t, size_t stack, enum mt_count_pair p, uint64_t blocks, uint64_t bytes)
{
	struct mt_count_slot *s = &t->slots[stack];
	unsigned int at = pair_at[p];
	uint64_t *v;

	if (at < MT_CP_INLINE) {
		s->v[at][0] += blocks;
		s->v[at][1] += bytes;
		return 0;
	}
	if (!t->rare_at[stack]) {
		if (!blocks && !bytes)
			return 0;
		if (t->nrare >= UINT32_MAX ||
		    mt_array__grow((void **)&t->rare, &t->cap_rare, t->nrare, sizeof(*t->rare)))
			return -ENOMEM;
		memset(t->rare[t->nrare], 0, sizeof(*t->rare));
		t->rare_at[stack] = (uint32_t)++t->nrare;
	}
	v = &t->rare[t->rare_at[stack] - 1][2 * (at - MT_CP_INLINE)];
	v[0] += blocks;
	v[1] += bytes;
	return 0;
}

void mt_counts__get(const struct mt_counts *t, size_t stack, struct mt_stack_counts *out)
{
	const struct mt_count_slot *s = stack < t->n ? &t->slots[stack] : NULL;
	uint64_t *o = (uint64_t *)out;
	unsigned int p, at;

	memset(out, 0, sizeof(*out));
	if (!s)
		return;
	for (p = 0; p < MT_CP__COUNT; p++) {
		at = pair_at[p];
		if (at < MT_CP_INLINE) {
			o[2 * p] = s->v[at][0];
			o[2 * p + 1] = s->v[at][1];
		} else if (t->rare_at[stack]) {
			o[2 * p] = t->rare[t->rare_at[stack] - 1][2 * (at - MT_CP_INLINE)];
			o[2 * p + 1] = t->rare[t->rare_at[stack] - 1][2 * (at - MT_CP_INLINE) + 1];
		}
	}
}

size_t mt_counts__nr_rare(const struct mt_counts *t)
{
	return t->nrare;
}

void mt_counts__release(struct mt_counts *t)
{
	free(t->slots);
	free(t->rare_at);
	free(t->rare);
	memset(t, 0, sizeof(*t));
}
