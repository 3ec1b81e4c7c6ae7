/* reorder.c — the time-order window every reader puts the record stream through (semantics: model.c, "Order"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/pqueue.h"
#include "model/reorder.h"

#define REORDER_SLOT 320	/* fits every fixed-size record (mt_exec is 304); bigger ones are malloc'd */

struct mt_reorder {
	mt_reorder_fn fn;
	void *ctx;
	size_t window;
	uint64_t last_ts;		/* of the last record emitted */
	uint64_t late;
	struct mt_pqueue held;		/* the records by ts_ns (equal ones in arrival order): a slot, or malloc'd */
	unsigned char *slots;		/* window + 1 slots of REORDER_SLOT bytes */
	void **free_slots;		/* stack of unused slots */
	size_t nr_free;
};

static void rec_release(struct mt_reorder *r, void *rec);

struct mt_reorder *mt_reorder__new(size_t window, mt_reorder_fn fn, void *ctx)
{
	struct mt_reorder *r;
	size_t i;

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
	r->slots = calloc(window + 1, REORDER_SLOT);
	r->free_slots = calloc(window + 1, sizeof(*r->free_slots));
	if (!r->slots || !r->free_slots) {
		mt_reorder__free(r);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i <= window; i++)
		r->free_slots[r->nr_free++] = r->slots + i * REORDER_SLOT;
	return r;
}

void mt_reorder__free(struct mt_reorder *r)
{
	if (!r)
		return;
	while (r->held.n)
		rec_release(r, mt_pqueue__pop(&r->held));
	mt_pqueue__release(&r->held);
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

/* Pops the smallest record and hands it to fn. */
static int emit_min(struct mt_reorder *r)
{
	uint64_t ts = mt_pqueue__top(&r->held)->key;
	void *rec = mt_pqueue__pop(&r->held);
	int err;

	if (ts < r->last_ts)
		r->late++;
	else
		r->last_ts = ts;
	err = r->fn(rec, r->ctx);
	rec_release(r, rec);
	return err;
}

int mt_reorder__push(struct mt_reorder *r, const struct mt_rec_hdr *rec)
{
	void *copy;

	if (rec->size < sizeof(*rec))
		return -EINVAL;
	copy = rec_copy(r, rec);
	if (!copy)
		return -ENOMEM;
	if (mt_pqueue__push(&r->held, rec->ts_ns, copy)) {
		rec_release(r, copy);
		return -ENOMEM;
	}
	if (r->held.n > r->window)
		return emit_min(r);
	return 0;
}

int mt_reorder__flush(struct mt_reorder *r)
{
	int err;

	while (r->held.n) {
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
