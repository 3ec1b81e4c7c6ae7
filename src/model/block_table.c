// SPDX-License-Identifier: GPL-2.0-only
/* block_table.c — an ordered linear-probing table (Amble and Knuth) that grows and shrinks in place. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/u64map.h"
#include "model/block_table.h"

/*
 * A slot holds h, a bijective mix of the key (so the key is recovered for for_each), and the word. A key's home is
 * h scaled to the capacity (h * cap / 2^64), so homes grow with h and the slots are kept in h order: an entry sits
 * at its home or after it, with no free slot between, and no run wraps (runs past the last home go into the tail).
 * A lookup stops at the first h not smaller than the key's, found or not, which keeps lookups short at 87.5% full;
 * an insertion shifts the rest of its run by one, a deletion shifts it back (no tombstones).
 *
 * In order, a resize is done in place: growing moves every entry right or leaves it (its new home is not before
 * its old one, nor its new place before its old place), so entries are re-placed from the last; shrinking moves
 * them left, from the first. realloc extends a large table by remapping it, so a growth costs the new capacity only.
 */
struct mt_block_slot {
	uint64_t h;			/* 0: free */
	uint64_t val;
};

#define MIN_CAP 16
#define MAP_MIN (256u << 10)	/* bytes from which the slots are a mapping of their own */
#define TAIL 32			/* slots past the last home, more when a run needs them */
#define FULL(cap) ((cap) - (cap) / 8)			/* grow beyond 87.5%... */
#define GROWN(cap) ((cap) + (cap) / 4)			/* by a quarter: 70% full after */
#define SPARSE(cap) ((cap) / 4)				/* shrink below 25%... */
#define SHRUNK(n) ((n) + (n) / 2 > MIN_CAP ? (n) + (n) / 2 : MIN_CAP)	/* to 67% full */

/* splitmix64's finalizer: a bijection, and addresses cluster in their low bits, so mix every bit in. */
static uint64_t key_mix(uint64_t x)
{
	return mt_u64map__mix(x);
}

/* Its inverse: each xor-shift and each multiplication (by an odd number) undone in reverse order. */
static uint64_t key_unmix(uint64_t x)
{
	x ^= x >> 31 ^ x >> 62;
	x *= 0x319642b2d24d8ec3ULL;
	x ^= x >> 27 ^ x >> 54;
	x *= 0x96de1b173f119089ULL;
	return x ^ x >> 30 ^ x >> 60;
}

static size_t home_in(size_t cap, uint64_t h)
{
	return (size_t)(((unsigned __int128)h * cap) >> 64);
}

/* The slot of h, or where it would go: the first one from its home whose h is free or not smaller. */
static size_t slot_of(const struct mt_block_table *t, uint64_t h)
{
	size_t i = home_in(t->cap, h);

	while (t->slots[i].h && t->slots[i].h < h)
		i++;
	return i;
}

/*
 * The slots become n (the first ones kept, new ones free). A large table is a mapping of its own: mremap grows or
 * shrinks it without a copy, where realloc from the heap would hold the old and the new table at once and leave
 * the old one's pages resident in the heap. 0 or -ENOMEM.
 */
static int slots_resize(struct mt_block_table *t, size_t n)
{
	size_t old = t->len * sizeof(*t->slots), bytes = n * sizeof(*t->slots);
	void *s;

	if (t->mapped) {
		s = mremap(t->slots, old, bytes, MREMAP_MAYMOVE);
	} else if (bytes >= MAP_MIN) {
		s = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (s != MAP_FAILED) {
			if (old)
				memcpy(s, t->slots, old < bytes ? old : bytes);
			free(t->slots);
			t->mapped = true;
		}
	} else {
		s = realloc(t->slots, bytes);
		if (s && bytes > old)
			memset((char *)s + old, 0, bytes - old);
		s = s ? s : MAP_FAILED;
	}
	if (s == MAP_FAILED)
		return -ENOMEM;
	t->slots = s;
	t->len = n;
	return 0;
}

/* At least n slots. */
static int table_extend(struct mt_block_table *t, size_t n)
{
	return n <= t->len ? 0 : slots_resize(t, n);
}

/*
 * Puts slot v at i, the run from i shifted right by one. The last slot stays free (it ends every run), so the tail
 * grows when the run reaches it. 0 or -ENOMEM (nothing changed).
 */
static int slot_insert(struct mt_block_table *t, size_t i, struct mt_block_slot v)
{
	size_t e = i;
	int err;

	while (t->slots[e].h)
		e++;
	if (e + 1 == t->len) {
		err = table_extend(t, t->len + TAIL);
		if (err)
			return err;
	}
	memmove(t->slots + i + 1, t->slots + i, (e - i) * sizeof(*t->slots));
	t->slots[i] = v;
	return 0;
}

/*
 * Re-places every entry, from the first, at its home under cap or just past the one before: the layout of cap when
 * no entry's place under cap is after where it is (a shrink, or a growth undone halfway).
 */
static void table_compact(struct mt_block_table *t, size_t cap)
{
	size_t i, to, next = 0;

	t->cap = cap;
	for (i = 0; i < t->len; i++) {
		if (!t->slots[i].h)
			continue;
		to = home_in(cap, t->slots[i].h);
		to = to > next ? to : next;
		if (to != i) {
			t->slots[to] = t->slots[i];
			t->slots[i].h = 0;
		}
		next = to + 1;
	}
	/* homes run to cap, entries to next: the slots past both and a tail go */
	next = (next > cap ? next : cap) + TAIL;
	if (next < t->len)
		slots_resize(t, next);	/* on ENOMEM the slots past next stay, free */
}

/* Grows to cap homes: each entry, from the last, taken out and put back at its new place or where it was. */
static int table_grow(struct mt_block_table *t, size_t cap)
{
	size_t i = t->len, to, old_cap = t->cap;
	struct mt_block_slot v;
	int err;

	err = table_extend(t, cap + TAIL);
	if (err)
		return err;
	t->cap = cap;
	while (i-- > 0) {
		if (!t->slots[i].h)
			continue;
		v = t->slots[i];
		t->slots[i].h = 0;
		to = home_in(cap, v.h);
		/* the run from `to` holds moved entries only, all after v in order */
		err = slot_insert(t, to > i ? to : i, v);
		if (err) {
			/* a longer tail failed: the entries moved so far are after their old places, so go back */
			t->slots[i] = v;
			table_compact(t, old_cap);
			return err;
		}
	}
	return 0;
}

/* The slot of key (not 0), or SIZE_MAX. */
static size_t slot_find(const struct mt_block_table *t, uint64_t key)
{
	uint64_t h = key_mix(key);
	size_t i;

	if (!t->slots)
		return SIZE_MAX;
	i = slot_of(t, h);
	return t->slots[i].h == h ? i : SIZE_MAX;
}

uint64_t *mt_block_table__find(const struct mt_block_table *t, uint64_t key)
{
	size_t i;

	if (!key)
		return t->has_zero ? (uint64_t *)&t->zero_val : NULL;
	i = slot_find(t, key);
	return i == SIZE_MAX ? NULL : &t->slots[i].val;
}

/* key 0's word, beside the slots (0 marks a free slot); as mt_block_table__put. */
static int zero_put(struct mt_block_table *t, uint64_t val, uint64_t *old)
{
	if (t->has_zero && old)
		*old = t->zero_val;
	t->zero_val = val;
	if (t->has_zero)
		return 1;
	t->has_zero = true;
	t->count++;
	return 0;
}

/* One probe: where the key is, or where it goes (found again only when the table grew). */
int mt_block_table__put(struct mt_block_table *t, uint64_t key, uint64_t val, uint64_t *old)
{
	uint64_t h = key_mix(key);
	size_t i = 0;
	int err;

	if (!key)
		return zero_put(t, val, old);
	if (t->slots) {
		i = slot_of(t, h);
		if (t->slots[i].h == h) {
			if (old)
				*old = t->slots[i].val;
			t->slots[i].val = val;
			return 1;
		}
	}
	if (t->count + 1 > FULL(t->cap)) {
		err = table_grow(t, t->cap ? GROWN(t->cap) : MIN_CAP);
		if (err)
			return err;
		i = slot_of(t, h);
	}
	err = slot_insert(t, i, (struct mt_block_slot){ h, val });
	if (err)
		return err;
	t->count++;
	return 0;
}

bool mt_block_table__del(struct mt_block_table *t, uint64_t key, uint64_t *val)
{
	uint64_t *e = mt_block_table__find(t, key);

	if (!e)
		return false;
	if (val)
		*val = *e;
	mt_block_table__del_found(t, e);
	return true;
}

void mt_block_table__del_found(struct mt_block_table *t, uint64_t *found)
{
	size_t i;

	t->count--;
	if (found == &t->zero_val) {
		t->has_zero = false;
		return;
	}
	i = (size_t)((struct mt_block_slot *)((char *)found - offsetof(struct mt_block_slot, val)) - t->slots);
	/* the run after it moves back by one, up to a free slot or an entry at its home */
	for (; t->slots[i + 1].h && home_in(t->cap, t->slots[i + 1].h) <= i; i++)
		t->slots[i] = t->slots[i + 1];
	t->slots[i].h = 0;
	if (t->cap > MIN_CAP && t->count < SPARSE(t->cap))
		table_compact(t, SHRUNK(t->count));
}

void mt_block_table__for_each(const struct mt_block_table *t, void (*fn)(uint64_t key, uint64_t val, void *ctx),
			      void *ctx)
{
	size_t i;

	if (t->has_zero)
		fn(0, t->zero_val, ctx);
	for (i = 0; i < t->len; i++)
		if (t->slots[i].h)
			fn(key_unmix(t->slots[i].h), t->slots[i].val, ctx);
}

size_t mt_block_table__bytes(const struct mt_block_table *t)
{
	return t->len * sizeof(*t->slots);
}

void mt_block_table__release(struct mt_block_table *t)
{
	if (t->mapped)
		munmap(t->slots, t->len * sizeof(*t->slots));
	else
		free(t->slots);
	memset(t, 0, sizeof(*t));
}
