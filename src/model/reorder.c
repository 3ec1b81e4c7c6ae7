// SPDX-License-Identifier: GPL-2.0-only
/* reorder.c — the time-order window every reader puts the record stream through (semantics: model.c, "Order"). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/pqueue.h"
#include "model/reorder.h"

#define REORDER_SLOT 320	/* fits every fixed-size record (mt_exec is 304); bigger ones are malloc'd */

/* A held record: its time, its arrival number (equal times leave in arrival order), its copy. */
struct held {
	uint64_t key;
	uint64_t nth;
	void *rec;
};

/*
 * Records mostly arrive in time order: those that do go to `run`, a FIFO whose times never decrease, at O(1) each;
 * only those older than the run's newest go to the heap. The smallest held record is the older of the two heads.
 */
struct mt_reorder {
	mt_reorder_fn fn;
	void *ctx;
	size_t window;
	uint64_t last_ts;		/* of the last record emitted */
	uint64_t late;
	uint64_t arrived;		/* records pushed so far: the next one's arrival number */
	struct held *run;		/* a ring of window + 1 entries, from run_head, run_n of them */
	size_t run_head, run_n;
	struct mt_pqueue heap;		/* the out-of-order ones: item is their struct held, key their time */
	struct held *heap_ents;		/* window + 1 entries for the heap's items, the free ones stacked below */
	struct held **free_ents;
	size_t nr_free_ents;
	unsigned char *slots;		/* window + 1 slots of REORDER_SLOT bytes */
	void **free_slots;		/* stack of unused slots */
	size_t nr_free;
};

static void rec_release(struct mt_reorder *r, void *rec);

static int reorder_alloc(struct mt_reorder *r)
{
	size_t i, n = r->window + 1;

	r->slots = calloc(n, REORDER_SLOT);
	r->free_slots = calloc(n, sizeof(*r->free_slots));
	r->run = calloc(n, sizeof(*r->run));
	r->heap_ents = calloc(n, sizeof(*r->heap_ents));
	r->free_ents = calloc(n, sizeof(*r->free_ents));
	if (!r->slots || !r->free_slots || !r->run || !r->heap_ents || !r->free_ents)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		r->free_slots[r->nr_free++] = r->slots + i * REORDER_SLOT;
		r->free_ents[r->nr_free_ents++] = &r->heap_ents[i];
	}
	return 0;
}

struct mt_reorder *mt_reorder__new(size_t window, mt_reorder_fn fn, void *ctx)
{
	struct mt_reorder *r;

	if (!window || !fn) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fn = fn;
	r->ctx = ctx;
	r->window = window;
	if (reorder_alloc(r)) {
		mt_reorder__free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

/* Takes the older of the run's head and the heap's top out: false when nothing is held. */
static bool take_min(struct mt_reorder *r, struct held *out)
{
	const struct mt_pqueue_ent *top = mt_pqueue__top(&r->heap);
	const struct held *h = top ? top->item : NULL;
	const struct held *first = r->run_n ? &r->run[r->run_head] : NULL;
	struct held *e;

	if (!h && !first)
		return false;
	if (first && (!h || first->key < h->key || (first->key == h->key && first->nth < h->nth))) {
		*out = *first;
		r->run_head = (r->run_head + 1) % (r->window + 1);
		r->run_n--;
		return true;
	}
	e = mt_pqueue__pop(&r->heap);
	*out = *e;
	r->free_ents[r->nr_free_ents++] = e;
	return true;
}

void mt_reorder__free(struct mt_reorder *r)
{
	struct held h;

	if (!r)
		return;
	while (r->run && r->heap_ents && take_min(r, &h))
		rec_release(r, h.rec);
	mt_pqueue__release(&r->heap);
	free(r->free_ents);
	free(r->heap_ents);
	free(r->run);
	free(r->free_slots);
	free(r->slots);
	free(r);
}

static void *rec_copy(struct mt_reorder *r, const struct mt_rec_hdr *rec)
{
	void *copy;

	if (rec->size <= REORDER_SLOT && r->nr_free)
		copy = r->free_slots[--r->nr_free];
	else
		copy = malloc(rec->size);
	if (copy)
		memcpy(copy, rec, rec->size);
	return copy;
}

static void rec_release(struct mt_reorder *r, void *rec)
{
	unsigned char *p = rec;

	if (p >= r->slots && p < r->slots + (r->window + 1) * REORDER_SLOT)
		r->free_slots[r->nr_free++] = rec;
	else
		free(rec);
}

/* Emits the smallest record; the callers hold one at least (none: nothing to emit). */
static int emit_min(struct mt_reorder *r)
{
	struct held h;
	int err;

	if (!take_min(r, &h))
		return 0;
	if (h.key < r->last_ts)
		r->late++;
	else
		r->last_ts = h.key;
	err = r->fn(h.rec, r->ctx);
	rec_release(r, h.rec);
	return err;
}

/* The record goes to the run when it is not older than the run's newest, else to the heap. 0 or -ENOMEM. */
static int hold(struct mt_reorder *r, uint64_t key, void *copy)
{
	size_t tail = (r->run_head + r->run_n + r->window) % (r->window + 1);
	struct held h = { key, r->arrived++, copy }, *e;

	if (!r->run_n || key >= r->run[tail].key) {
		r->run[(r->run_head + r->run_n) % (r->window + 1)] = h;
		r->run_n++;
		return 0;
	}
	e = r->free_ents[--r->nr_free_ents];
	*e = h;
	if (mt_pqueue__push(&r->heap, key, e)) {
		r->free_ents[r->nr_free_ents++] = e;
		return -ENOMEM;
	}
	return 0;
}

int mt_reorder__push(struct mt_reorder *r, const struct mt_rec_hdr *rec)
{
	void *copy;

	if (rec->size < sizeof(*rec))
		return -EINVAL;
	copy = rec_copy(r, rec);
	if (!copy)
		return -ENOMEM;
	if (hold(r, rec->ts_ns, copy)) {
		rec_release(r, copy);
		return -ENOMEM;
	}
	if (r->run_n + r->heap.n > r->window)
		return emit_min(r);
	return 0;
}

int mt_reorder__flush(struct mt_reorder *r)
{
	int err;

	while (r->run_n + r->heap.n) {
		err = emit_min(r);
		if (err)
			return err;
	}
	return 0;
}

uint64_t mt_reorder__late(const struct mt_reorder *r)
{
	return r->late;
}
