// SPDX-License-Identifier: GPL-2.0-only
/* blocks.c — the live blocks of one process image: its own, those inherited at fork (shared), who freed which. */
#include <errno.h>
#include <stdlib.h>

#include "common/array.h"
#include "common/u64map.h"
#include "model/block_table.h"
#include "model/blocks.h"
#include "model/pmap.h"

/*
 * own holds, per address, the block live there or, once it is freed, FREED | the tid that freed it: the free and a
 * later allocation at the address cost one probe each, and libc's release of a block the same thread freed last
 * (glibc's tcache flush at thread exit) is recognised. An entry in own hides base's at the address. base holds the
 * blocks that were live at the last fork: a child shares its parent's (one reference), and each side's changes
 * since live in its own `own` and `kills` until it forks in turn (fold).
 *
 * A live block's word is its size, or with STACKED its stack id (bits 38-60) and its size (bits 0-37), so keeping
 * the stack of each block costs no memory; EARLY marks a block allocated before the report's time window.
 */
#define FREED (1ull << 63)
#define FREED_TID(v) ((uint32_t)(v))
#define EARLY (1ull << 62)
#define STACKED (1ull << 61)
#define SIZE_BITS 38
#define SIZE_MASK(v) ((v) & STACKED ? (v) & ((1ull << SIZE_BITS) - 1) : (v) & (STACKED - 1))
#define DIRTY_MIN 1024		/* additions listed for the next fold, at least; beyond half of own, it scans own */

struct mt_blocks {
	struct mt_block_table own;
	uint64_t own_live;		/* live entries in own */
	struct mt_pmap *base;		/* shared, copy on write */
	uint64_t *kills;		/* base blocks freed or replaced here since the last fold */
	size_t nr_kills, cap_kills;
	uint64_t *dirty;		/* after a fold: addresses given a live entry in own since, while few enough */
	size_t nr_dirty, cap_dirty;
	bool folded;			/* dirty is kept (the first fold scans own) */
	bool dirty_full;		/* dirty missed some: the next fold scans own */
	struct mt_u64map held;		/* tid → 1: its last release matched no block, maybe libc's last */
	struct mt_pmap *inh;		/* the blocks inherited at the fork (a share of the parent's base) */
	struct mt_u64map inh_gone;	/* addresses of inherited blocks freed or replaced since: no longer held */
	uint64_t inh_n, inh_b;		/* inherited blocks still held, and their bytes */
	uint64_t left[2];		/* inherited blocks that left in the current record (mt_blocks__left_inherited) */
	size_t nleft;
};

#define ADD MT_ACCT_ADD

/* The word own and base keep for a live block. */
static uint64_t block_word(uint64_t size, const struct mt_block_tag *tag)
{
	uint64_t w = size & (STACKED - 1);	/* no allocation that large succeeds; the bits above mark the word */

	if (!tag)
		return w;
	if (tag->stack && tag->stack <= MT_BLOCKS_STACK_MAX && size < 1ull << SIZE_BITS)
		w = STACKED | (uint64_t)tag->stack << SIZE_BITS | size;
	return tag->early ? w | EARLY : w;
}

static uint32_t word_stack(uint64_t w)
{
	return w & STACKED ? (uint32_t)((w & ~(FREED | EARLY | STACKED)) >> SIZE_BITS) : 0;
}

struct mt_blocks *mt_blocks__new(void)
{
	return calloc(1, sizeof(struct mt_blocks));
}

static void blocks_clear(struct mt_blocks *b)
{
	mt_block_table__release(&b->own);
	mt_u64map__release(&b->held);
	mt_pmap__release(b->base);
	mt_pmap__release(b->inh);
	mt_u64map__release(&b->inh_gone);
	free(b->kills);
	free(b->dirty);
	*b = (struct mt_blocks){ 0 };
}

void mt_blocks__free(struct mt_blocks *b)
{
	if (!b)
		return;
	blocks_clear(b);
	free(b);
}

static int list_add(uint64_t **v, size_t *n, size_t *cap, uint64_t addr)
{
	if (mt_array__grow((void **)v, cap, *n, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*n)++] = addr;
	return 0;
}

static void note_dirty(struct mt_blocks *b, uint64_t addr)
{
	size_t max = b->own.count / 2 > DIRTY_MIN ? b->own.count / 2 : DIRTY_MIN;

	if (!b->folded || b->dirty_full)
		return;
	if (b->nr_dirty >= max || list_add(&b->dirty, &b->nr_dirty, &b->cap_dirty, addr))
		b->dirty_full = true;
}

/* Releases of blocks never seen allocated: after a start mark, mostly of blocks allocated while recording was off;
 * attached to a running process, of blocks allocated before. */
static void unknown_free(const struct mt_blocks_acct *a, uint64_t n)
{
	if (a->pre_attach) {
		ADD(a, pre_attach_frees, n);
		return;
	}
	ADD(a, unknown_frees, n);
	if (a->resumed)
		ADD(a, paused_frees, n);
}

/* A live block's word leaves. */
static void block_gone(const struct mt_blocks_acct *a, uint64_t word)
{
	ADD(a, live_allocations, -1);
	ADD(a, live_bytes, -SIZE_MASK(word));
}

/*
 * A base block at addr left (freed or replaced): when it is one the image inherited, the image holds one fewer. An
 * inherited block is never in own; an own block at its address (folded into base at a later fork) comes only after
 * it left, which inh_gone says.
 */
static int inh_leave(struct mt_blocks *b, uint64_t addr, uint64_t word)
{
	if (!b->inh_n || !mt_pmap__find(b->inh, addr, NULL) || mt_u64map__find(&b->inh_gone, addr))
		return 0;
	if (mt_u64map__put(&b->inh_gone, addr, 1, NULL) < 0)
		return -ENOMEM;
	b->inh_n--;
	b->inh_b -= SIZE_MASK(word);
	if (b->nleft < 2)
		b->left[b->nleft++] = addr;
	return 0;
}

void mt_blocks__on_call(struct mt_blocks *b, const struct mt_blocks_acct *a, uint32_t tid)
{
	if (b->held.count && mt_u64map__del(&b->held, tid, NULL))
		unknown_free(a, 1);
}

int mt_blocks__on_alloc(struct mt_blocks *b, const struct mt_blocks_acct *a, uint32_t tid, uint64_t addr,
		     uint64_t size, const struct mt_block_tag *tag)
{
	uint64_t old = 0, gone, word = block_word(size, tag);
	int ret;

	size = SIZE_MASK(word);
	mt_blocks__on_call(b, a, tid);
	ret = mt_block_table__put(&b->own, addr, word, &old);
	if (ret < 0)
		return ret;
	if (ret && !(old & FREED)) {
		/* its free was lost */
		ADD(a, replaced, 1);
		ADD(a, replaced_bytes, SIZE_MASK(old));
		block_gone(a, old);
	} else {
		b->own_live++;
		note_dirty(b, addr);
		if (!ret && b->base && mt_pmap__find(b->base, addr, &gone)) {
			if (list_add(&b->kills, &b->nr_kills, &b->cap_kills, addr) || inh_leave(b, addr, gone))
				return -ENOMEM;
			ADD(a, replaced, 1);
			ADD(a, replaced_bytes, SIZE_MASK(gone));
			block_gone(a, gone);
		}
	}
	ADD(a, allocations, 1);
	ADD(a, allocated_bytes, size);
	ADD(a, live_allocations, 1);
	ADD(a, live_bytes, size);
	return 0;
}

/* A live block's word freed: a free, and one of a block older than the time window when it is EARLY. */
static void block_freed(const struct mt_blocks_acct *a, uint64_t word)
{
	ADD(a, frees, 1);
	ADD(a, freed_bytes, SIZE_MASK(word));
	if (word & EARLY) {
		ADD(a, early_frees, 1);
		ADD(a, early_freed_bytes, SIZE_MASK(word));
	}
	block_gone(a, word);
}

/* A release that matches no block: held as tid's possible last (only the latest one), or unknown now. */
static int free_unknown(struct mt_blocks *b, const struct mt_blocks_acct *a, uint32_t tid, bool hold)
{
	int ret;

	if (a->paused)	/* while recording is off only releases are recorded: those of blocks it saw count */
		return 0;
	if (!hold) {
		unknown_free(a, 1);
		return 0;
	}
	ret = mt_u64map__put(&b->held, tid, 1, NULL);
	if (ret > 0)
		unknown_free(a, 1);	/* the one held before was not the thread's last */
	return ret < 0 ? ret : 0;
}

int mt_blocks__on_free(struct mt_blocks *b, const struct mt_blocks_acct *a, uint32_t tid, uint64_t addr,
		       bool in_realloc)
{
	uint64_t *e = mt_block_table__find(&b->own, addr), word;

	if (e && !(*e & FREED)) {
		word = *e;
		*e = FREED | tid;
		b->own_live--;
		block_freed(a, word);
		return 0;
	}
	if (e && !in_realloc && tid && FREED_TID(*e) == tid) {
		/* freed by this thread last, not allocated since: libc releasing its cache of it */
		*e = FREED;
		ADD(a, internal_releases, 1);
		return 0;
	}
	if (!e && b->base && mt_pmap__find(b->base, addr, &word)) {
		if (list_add(&b->kills, &b->nr_kills, &b->cap_kills, addr) ||
		    mt_block_table__put(&b->own, addr, FREED | tid, NULL) < 0 || inh_leave(b, addr, word))
			return -ENOMEM;
		block_freed(a, word);
		return 0;
	}
	return free_unknown(b, a, tid, !in_realloc);
}

void mt_blocks__on_thread_exit(struct mt_blocks *b, const struct mt_blocks_acct *a, uint32_t tid)
{
	if (b->held.count && mt_u64map__del(&b->held, tid, NULL))
		ADD(a, internal_releases, 1);
}

/* Moves a live entry of own into base; 1 when it did. */
static int fold_one(struct mt_blocks *b, uint64_t addr)
{
	uint64_t *e = mt_block_table__find(&b->own, addr);
	int err;

	if (!e || *e & FREED)
		return 0;
	err = mt_pmap__put(&b->base, addr, *e);
	if (err)
		return err;
	mt_block_table__del(&b->own, addr, NULL);
	b->own_live--;
	return 1;
}

struct scan {
	uint64_t *addrs;
	size_t n;
};

static void scan_live(uint64_t key, uint64_t val, void *ctx)
{
	struct scan *s = ctx;

	if (!(val & FREED))
		s->addrs[s->n++] = key;
}

/* The live entries of own, listed by a scan (own_live of them). */
static int scan_own(struct mt_blocks *b)
{
	struct scan s = { malloc(b->own_live * sizeof(uint64_t)), 0 };

	if (!s.addrs)
		return -ENOMEM;
	mt_block_table__for_each(&b->own, scan_live, &s);
	free(b->dirty);
	b->dirty = s.addrs;
	b->nr_dirty = b->cap_dirty = s.n;
	return 0;
}

/* base becomes the image's live blocks (a child is to share them): the kills go out, own's live blocks in. */
static int fold(struct mt_blocks *b)
{
	size_t i;
	int err;

	for (i = 0; i < b->nr_kills; i++) {
		err = mt_pmap__del(&b->base, b->kills[i]);
		if (err < 0)
			return err;
	}
	b->nr_kills = 0;
	if (b->own_live && (!b->folded || b->dirty_full)) {
		err = scan_own(b);
		if (err)
			return err;
	}
	for (i = 0; i < b->nr_dirty && b->own_live; i++) {
		err = fold_one(b, b->dirty[i]);
		if (err < 0)
			return err;
	}
	b->nr_dirty = 0;
	b->folded = true;
	b->dirty_full = false;
	return 0;
}

int mt_blocks__inherit(struct mt_blocks *child, const struct mt_blocks_acct *a, struct mt_blocks *parent,
		       const struct mt_heap_stats *parent_heap)
{
	uint64_t n = parent_heap->live_allocations, bytes = parent_heap->live_bytes;
	int err;

	if (!n)
		return 0;
	if (parent->own_live || parent->nr_kills) {
		err = fold(parent);
		if (err)
			return err;
	}
	mt_pmap__release(child->base);
	child->base = mt_pmap__share(parent->base);
	mt_pmap__release(child->inh);
	child->inh = mt_pmap__share(parent->base);
	child->inh_n = n;
	child->inh_b = bytes;
	ADD(a, inherited_allocations, n);
	ADD(a, inherited_bytes, bytes);
	ADD(a, live_allocations, n);
	ADD(a, live_bytes, bytes);
	return 0;
}

void mt_blocks__end_holds(struct mt_blocks *b, const struct mt_blocks_acct *a)
{
	unknown_free(a, b->held.count);
	mt_u64map__release(&b->held);
}

void mt_blocks__end(struct mt_blocks *b, const struct mt_blocks_acct *a, enum mt_blocks_end how)
{
	uint64_t n = a->img->live_allocations, bytes = a->img->live_bytes;

	unknown_free(a, b->held.count);
	if (how == MT_BLOCKS_EXEC) {
		ADD(a, exec_discarded_allocations, n);
		ADD(a, exec_discarded_bytes, bytes);
	} else if (how == MT_BLOCKS_EXIT) {
		ADD(a, leaked_allocations, n - b->inh_n);
		ADD(a, leaked_bytes, bytes - b->inh_b);
		ADD(a, inherited_live_allocations, b->inh_n);
		ADD(a, inherited_live_bytes, b->inh_b);
	} else {
		ADD(a, still_live_allocations, n);
		ADD(a, still_live_bytes, bytes);
	}
	ADD(a, live_allocations, -n);
	ADD(a, live_bytes, -bytes);
	blocks_clear(b);
}

struct live_walk {
	const struct mt_blocks *b;
	void (*fn)(uint64_t size, uint32_t stack, bool inherited, void *ctx);
	void *ctx;
};

static void walk_own(uint64_t key, uint64_t w, void *ctx)
{
	const struct live_walk *lw = ctx;

	(void)key;
	if (!(w & FREED))
		lw->fn(SIZE_MASK(w), word_stack(w), false, lw->ctx);
}

/* A base block is live unless own has an entry at its address (freed, or replaced there). */
static void walk_base(uint64_t key, uint64_t w, void *ctx)
{
	const struct live_walk *lw = ctx;

	const struct mt_blocks *b = lw->b;
	bool inherited;

	if (mt_block_table__find(&b->own, key))
		return;
	inherited = b->inh_n && mt_pmap__find(b->inh, key, NULL) && !mt_u64map__find(&b->inh_gone, key);
	lw->fn(SIZE_MASK(w), word_stack(w), inherited, lw->ctx);
}

void mt_blocks__for_each_live(const struct mt_blocks *b,
			      void (*fn)(uint64_t size, uint32_t stack, bool inherited, void *ctx), void *ctx)
{
	struct live_walk lw = { b, fn, ctx };

	mt_block_table__for_each(&b->own, walk_own, &lw);
	mt_pmap__for_each(b->base, walk_base, &lw);
}

uint64_t mt_blocks__inherited_live(const struct mt_blocks *b, uint64_t *bytes)
{
	*bytes = b->inh_b;
	return b->inh_n;
}

void mt_blocks__record_begin(struct mt_blocks *b)
{
	b->nleft = 0;
}

bool mt_blocks__left_inherited(const struct mt_blocks *b, uint64_t addr)
{
	size_t i;

	for (i = 0; i < b->nleft; i++)
		if (b->left[i] == addr)
			return true;
	return false;
}
