// SPDX-License-Identifier: GPL-2.0-only
/* order.c — puts the ring's records back in the order of their sequence numbers before they are written. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/memtrack.h"
#include "common/pqueue.h"
#include "tracer/order.h"

/*
 * Records wait here only behind a gap: a number whose record is still in another CPU's batch. They wait in runs,
 * copies of what followed the gap in one ring record (a batch's records rise in number, a single record is a run
 * of one), in a priority queue by each run's next number. Mostly nothing waits: one CPU's batch follows the last,
 * and its records are written straight from the ring.
 *
 * Numbers wrap at 2^32: a is before b when b is less than half the circle ahead. Each number is unwrapped, near
 * the next one expected, to a 64-bit position, which orders like that and keeps its place while it waits.
 */
struct run {
	size_t off, end;
	size_t stride;		/* a batch's record size; 0: one record, the whole buffer */
	__u8 buf[];		/* the records */
};

struct mt_order {
	mt_order_emit_fn emit;
	void *ctx;
	struct mt_pqueue runs;	/* by the position of the record at each run's off */
	uint64_t next;		/* the position the next record written should have; its low 32 bits, the number */
	uint64_t late;		/* written after a later one: their gap was skipped */
};

/* Far enough from 0 for the positions of numbers up to half the circle behind the first one expected (0). */
#define ORDER_FIRST (1ull << 32)

/* The position of number seq: the one within half the circle of the next expected. */
static uint64_t seq__pos(const struct mt_order *o, uint32_t seq)
{
	return o->next + (int32_t)(seq - (uint32_t)o->next);
}

static uint64_t rec__pos(const struct mt_order *o, const void *rec)
{
	return seq__pos(o, ((const struct mt_rec_hdr *)rec)->seq);
}

struct mt_order *mt_order__new(mt_order_emit_fn emit, void *ctx)
{
	struct mt_order *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->emit = emit;
	o->ctx = ctx;
	o->next = ORDER_FIRST;
	return o;
}

/* Writes one record: the next in number, or a late one, which leaves the next number as it is. */
static void order__write(struct mt_order *o, const void *rec, size_t size)
{
	uint64_t pos = rec__pos(o, rec);

	if (pos < o->next)
		o->late++;
	else
		o->next = pos + 1;	/* beyond next only when a copy failed: what was passed over comes late */
	o->emit(o->ctx, rec, size);
}

static size_t run__len(const struct run *r)
{
	return r->stride ? r->stride : r->end;
}

/* Writes the waiting records whose turn has come, and the late ones. */
static void order__pump(struct mt_order *o)
{
	const struct mt_pqueue_ent *top;
	struct run *r;

	while ((top = mt_pqueue__top(&o->runs)) && top->key <= o->next) {
		r = top->item;
		order__write(o, r->buf + r->off, run__len(r));
		r->off += run__len(r);
		if (r->off < r->end) {
			mt_pqueue__rekey_top(&o->runs, rec__pos(o, r->buf + r->off));
			continue;
		}
		free(mt_pqueue__pop(&o->runs));
	}
}

/* What is left of a ring record waits, copied: the ring takes its space back. */
static int order__wait(struct mt_order *o, const __u8 *rest, size_t len, size_t stride)
{
	struct run *r = malloc(sizeof(*r) + len);

	if (!r)
		return -ENOMEM;
	*r = (struct run){ .end = len, .stride = stride };
	memcpy(r->buf, rest, len);
	if (mt_pqueue__push(&o->runs, rec__pos(o, rest), r)) {
		free(r);
		return -ENOMEM;
	}
	return 0;
}

/*
 * count records of stride bytes (stride 0: one record of len bytes), their numbers rising. Those whose turn it is
 * are written at once; from the first that is early, the rest waits. -ENOMEM: the rest was written out of order.
 */
int mt_order__push(struct mt_order *o, const void *recs, size_t len, size_t stride)
{
	const __u8 *p = recs, *end = p + len;
	size_t one = stride ? stride : len;
	int err;

	while (p + one <= end && !o->runs.n && rec__pos(o, p) <= o->next) {
		order__write(o, p, one);
		p += one;
	}
	if (p + one > end)
		return 0;
	err = order__wait(o, p, end - p, stride);
	if (err) {
		for (; p + one <= end; p += one)
			order__write(o, p, one);
		return err;
	}
	order__pump(o);
	return 0;
}

bool mt_order__waiting(const struct mt_order *o)
{
	return o->runs.n != 0;
}

/* The records before the first waiting one will not come (their batch was lost to a full ring, and counted so):
 * the waiting ones are written, and any that comes after all is late. */
void mt_order__skip_gap(struct mt_order *o)
{
	const struct mt_pqueue_ent *top = mt_pqueue__top(&o->runs);

	if (!top)
		return;
	o->next = top->key;
	order__pump(o);
}

void mt_order__lost_before(struct mt_order *o, uint32_t seq)
{
	uint64_t until = seq__pos(o, seq);
	const struct mt_pqueue_ent *top;

	while (o->next < until) {
		top = mt_pqueue__top(&o->runs);
		o->next = top && top->key < until ? top->key : until;
		order__pump(o);
	}
}

uint32_t mt_order__next(const struct mt_order *o)
{
	return (uint32_t)o->next;
}

uint64_t mt_order__late(const struct mt_order *o)
{
	return o->late;
}

void mt_order__free(struct mt_order *o)
{
	if (!o)
		return;
	while (o->runs.n)
		free(mt_pqueue__pop(&o->runs));
	mt_pqueue__release(&o->runs);
	free(o);
}
