// SPDX-License-Identifier: GPL-2.0-only
/* pmap.c — the persistent map: a hash array mapped trie whose shared nodes are copied when written. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/u64map.h"
#include "model/pmap.h"

#define WAY_BITS 5	/* 32 ways a level; a bijective 64-bit hash parts any two keys within 13 levels */
#define CAP_STEP 4	/* slots are allocated four at a time, so growing in place seldom reallocates */

struct slot {
	uint64_t key;			/* a leaf's key */
	union {
		uint64_t val;		/* a leaf's value */
		struct mt_pmap *child;	/* else the node one level down */
	};
};

struct mt_pmap {
	uint32_t refs;		/* holders: maps and parent nodes */
	uint32_t bitmap;	/* the ways present, each one slot, in way order */
	uint32_t leaves;	/* of those, the ones holding a key */
	uint16_t n;		/* slots used */
	uint16_t cap;		/* slots allocated */
	struct slot slot[];
};

/* splitmix64's finalizer, a bijection: distinct keys have distinct hashes, so no two ever share a leaf. */
static uint64_t key_hash(uint64_t k)
{
	return mt_u64map__mix(k);
}

/* Without POPCNT in the target, __builtin_popcount is a libgcc call. */
static unsigned int popcount32(uint32_t x)
{
	x -= x >> 1 & 0x55555555u;
	x = (x & 0x33333333u) + (x >> 2 & 0x33333333u);
	return ((x + (x >> 4)) & 0x0f0f0f0fu) * 0x01010101u >> 24;
}

static uint32_t way_bit(uint64_t h, unsigned int shift)
{
	return 1u << ((h >> shift) & 31);
}

static unsigned int slot_index(const struct mt_pmap *n, uint32_t bit)
{
	return popcount32(n->bitmap & (bit - 1));
}

static size_t node_size(unsigned int cap)
{
	return sizeof(struct mt_pmap) + cap * sizeof(struct slot);
}

static unsigned int cap_for(unsigned int slots)
{
	unsigned int cap = (slots + CAP_STEP - 1) / CAP_STEP * CAP_STEP;

	return cap > 32 ? 32 : cap;
}

/* A node holding one leaf, at its way for shift. */
static struct mt_pmap *node_leaf(uint64_t key, uint64_t val, unsigned int shift)
{
	struct mt_pmap *n = malloc(node_size(CAP_STEP));

	if (!n)
		return NULL;
	n->refs = 1;
	n->bitmap = n->leaves = way_bit(key_hash(key), shift);
	n->n = 1;
	n->cap = CAP_STEP;
	n->slot[0].key = key;
	n->slot[0].val = val;
	return n;
}

/*
 * n itself when its holder is its only one and it has room for `room` slots; else a copy with that room, to which
 * the holder's reference moves (the children gain one). NULL on ENOMEM, n unchanged.
 */
static struct mt_pmap *node_writable(struct mt_pmap *n, unsigned int room)
{
	struct mt_pmap *c;
	uint32_t b;
	unsigned int i;

	if (n->refs == 1 && room <= n->cap)
		return n;
	if (n->refs == 1) {
		c = realloc(n, node_size(cap_for(room)));
		if (c)
			c->cap = cap_for(room);
		return c;
	}
	c = malloc(node_size(cap_for(room)));
	if (!c)
		return NULL;
	memcpy(c, n, node_size(n->n));
	c->refs = 1;
	c->cap = cap_for(room);
	for (i = 0, b = n->bitmap; b; i++, b &= b - 1)
		if (!(n->leaves & (b & -b)))
			c->slot[i].child->refs++;
	n->refs--;
	return c;
}

struct mt_pmap *mt_pmap__share(struct mt_pmap *m)
{
	if (m)
		m->refs++;
	return m;
}

void mt_pmap__release(struct mt_pmap *n)
{
	uint32_t b;
	unsigned int i;

	if (!n || --n->refs)
		return;
	for (i = 0, b = n->bitmap; b; i++, b &= b - 1)
		if (!(n->leaves & (b & -b)))
			mt_pmap__release(n->slot[i].child);
	free(n);
}

bool mt_pmap__find(const struct mt_pmap *n, uint64_t key, uint64_t *val)
{
	uint64_t h = key_hash(key);
	unsigned int shift;

	for (shift = 0; n; shift += WAY_BITS) {
		uint32_t bit = way_bit(h, shift);
		const struct slot *s = &n->slot[slot_index(n, bit)];

		if (!(n->bitmap & bit))
			return false;
		if (!(n->leaves & bit)) {
			n = s->child;
			continue;
		}
		if (s->key != key)
			return false;
		if (val)
			*val = s->val;
		return true;
	}
	return false;
}

/* A new way in n for key. */
static int node_add_leaf(struct mt_pmap **np, uint32_t bit, uint64_t key, uint64_t val)
{
	struct mt_pmap *n = node_writable(*np, (*np)->n + 1);
	unsigned int i;

	if (!n)
		return -ENOMEM;
	*np = n;
	i = slot_index(n, bit);
	memmove(&n->slot[i + 1], &n->slot[i], (n->n - i) * sizeof(struct slot));
	n->slot[i].key = key;
	n->slot[i].val = val;
	n->bitmap |= bit;
	n->leaves |= bit;
	n->n++;
	return 0;
}

static int node_put(struct mt_pmap **np, uint64_t key, uint64_t h, unsigned int shift, uint64_t val);

/* The way of bit holds another key: a node one level down takes both. */
static int node_split(struct mt_pmap **np, uint32_t bit, uint64_t key, uint64_t h, unsigned int shift, uint64_t val)
{
	const struct slot *s = &(*np)->slot[slot_index(*np, bit)];
	struct mt_pmap *c = node_leaf(s->key, s->val, shift + WAY_BITS), *n;
	int err;

	if (!c)
		return -ENOMEM;
	err = node_put(&c, key, h, shift + WAY_BITS, val);
	n = err ? NULL : node_writable(*np, (*np)->n);
	if (!n) {
		mt_pmap__release(c);
		return err ? err : -ENOMEM;
	}
	*np = n;
	n->slot[slot_index(n, bit)].child = c;
	n->leaves &= ~bit;
	return 0;
}

/* Sets key (hash h) in the subtree *np, whose keys all agree with h below shift. */
static int node_put(struct mt_pmap **np, uint64_t key, uint64_t h, unsigned int shift, uint64_t val)
{
	uint32_t bit = way_bit(h, shift);
	struct mt_pmap *n = *np;
	unsigned int i = slot_index(n, bit);

	if (!(n->bitmap & bit))
		return node_add_leaf(np, bit, key, val);
	if (n->leaves & bit && n->slot[i].key != key)
		return node_split(np, bit, key, h, shift, val);
	if (n->leaves & bit && n->slot[i].val == val)
		return 0;
	n = node_writable(n, n->n);
	if (!n)
		return -ENOMEM;
	*np = n;
	if (n->leaves & bit) {
		n->slot[i].val = val;
		return 0;
	}
	return node_put(&n->slot[i].child, key, h, shift + WAY_BITS, val);
}

int mt_pmap__put(struct mt_pmap **m, uint64_t key, uint64_t val)
{
	if (!*m) {
		*m = node_leaf(key, val, 0);
		return *m ? 0 : -ENOMEM;
	}
	return node_put(m, key, key_hash(key), 0, val);
}

/* Removes key, which is present, from the subtree *np; *np becomes NULL when it empties. */
static int node_del(struct mt_pmap **np, uint64_t key, uint64_t h, unsigned int shift)
{
	uint32_t bit = way_bit(h, shift);
	struct mt_pmap *n = node_writable(*np, (*np)->n), *c;
	unsigned int i;
	int err;

	if (!n)
		return -ENOMEM;
	*np = n;
	i = slot_index(n, bit);
	if (!(n->leaves & bit)) {
		err = node_del(&n->slot[i].child, key, h, shift + WAY_BITS);
		c = n->slot[i].child;
		if (err || (c && (c->n > 1 || !c->leaves)))
			return err;
		if (c) {
			/* one key left below: it moves up here (c is ours alone, node_del made it so) */
			n->slot[i] = c->slot[0];
			n->leaves |= bit;
			free(c);
			return 0;
		}
	}
	memmove(&n->slot[i], &n->slot[i + 1], (n->n - i - 1) * sizeof(struct slot));
	n->n--;
	n->bitmap &= ~bit;
	n->leaves &= ~bit;
	if (!n->n) {
		free(n);
		*np = NULL;
	}
	return 0;
}

int mt_pmap__del(struct mt_pmap **m, uint64_t key)
{
	int err;

	if (!mt_pmap__find(*m, key, NULL))
		return 0;
	err = node_del(m, key, key_hash(key), 0);
	return err ? err : 1;
}

void mt_pmap__for_each(const struct mt_pmap *n, void (*fn)(uint64_t key, uint64_t val, void *ctx), void *ctx)
{
	uint32_t b;
	unsigned int i;

	if (!n)
		return;
	for (i = 0, b = n->bitmap; b; i++, b &= b - 1) {
		if (n->leaves & (b & -b))
			fn(n->slot[i].key, n->slot[i].val, ctx);
		else
			mt_pmap__for_each(n->slot[i].child, fn, ctx);
	}
}
