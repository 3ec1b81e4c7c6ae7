/* order.c — puts the ring's records back in the order of their sequence numbers before they are written. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/memtrack.h"
#include "tracer/order.h"

/*
 * Records wait here only behind a gap: a number whose record is still in another CPU's batch. They wait in runs,
 * copies of what followed the gap in one ring record (a batch's records rise in number, a single record is a run
 * of one), in a min-heap by each run's next number. Mostly nothing waits: one CPU's batch follows the last, and
 * its records are written straight from the ring.
 */
struct run {
	__u8 *buf;
	size_t off, end;
	size_t stride;		/* a batch's record size; 0: one record, the whole buffer */
	uint32_t seq;		/* the number of the record at off */
};

struct mt_order {
	mt_order_emit_fn emit;
	void *ctx;
	struct run *heap;
	size_t n, cap;
	uint32_t next;		/* the number the next record written should have */
	uint64_t late;		/* written after a later one: their gap was skipped */
};

static uint32_t rec__seq(const void *rec)
{
	return ((const struct mt_rec_hdr *)rec)->seq;
}

/* Numbers wrap at 2^32: a is before b when b is less than half the circle ahead. */
static bool seq__before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

struct mt_order *mt_order__new(mt_order_emit_fn emit, void *ctx)
{
	struct mt_order *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->emit = emit;
	o->ctx = ctx;
	return o;
}

/* Writes one record: the next in number, or a late one, which leaves the next number as it is. */
static void order__write(struct mt_order *o, const void *rec, size_t size)
{
	uint32_t seq = rec__seq(rec);

	if (seq__before(seq, o->next))
		o->late++;
	else
		o->next = seq + 1;	/* beyond next only when a copy failed: what was passed over comes late */
	o->emit(o->ctx, rec, size);
}

static size_t run__len(const struct run *r)
{
	return r->stride ? r->stride : r->end;
}

static void heap__swap(struct mt_order *o, size_t a, size_t b)
{
	struct run t = o->heap[a];

	o->heap[a] = o->heap[b];
	o->heap[b] = t;
}

static void heap__up(struct mt_order *o, size_t i)
{
	while (i && seq__before(o->heap[i].seq, o->heap[(i - 1) / 2].seq)) {
		heap__swap(o, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void heap__down(struct mt_order *o, size_t i)
{
	size_t l, m;

	for (;;) {
		l = 2 * i + 1;
		m = i;
		if (l < o->n && seq__before(o->heap[l].seq, o->heap[m].seq))
			m = l;
		if (l + 1 < o->n && seq__before(o->heap[l + 1].seq, o->heap[m].seq))
			m = l + 1;
		if (m == i)
			return;
		heap__swap(o, i, m);
		i = m;
	}
}

/* Writes the waiting records whose turn has come, and the late ones. */
static void order__pump(struct mt_order *o)
{
	struct run *top;

	while (o->n && !seq__before(o->next, o->heap[0].seq)) {
		top = &o->heap[0];
		order__write(o, top->buf + top->off, run__len(top));
		top->off += run__len(top);
		if (top->off < top->end) {
			top->seq = rec__seq(top->buf + top->off);
			heap__down(o, 0);
			continue;
		}
		free(top->buf);
		o->heap[0] = o->heap[--o->n];
		heap__down(o, 0);
	}
}

/* What is left of a ring record waits, copied: the ring takes its space back. */
static int order__wait(struct mt_order *o, const __u8 *rest, size_t len, size_t stride)
{
	struct run r = { .end = len, .stride = stride, .seq = rec__seq(rest) };

	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 16;
		struct run *h = realloc(o->heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		o->heap = h;
		o->cap = cap;
	}
	r.buf = malloc(len);
	if (!r.buf)
		return -ENOMEM;
	memcpy(r.buf, rest, len);
	o->heap[o->n++] = r;
	heap__up(o, o->n - 1);
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

	while (p + one <= end && !o->n && !seq__before(o->next, rec__seq(p))) {
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
	return o->n != 0;
}

/* The records before the first waiting one will not come (their batch was lost to a full ring, and counted so):
 * the waiting ones are written, and any that comes after all is late. */
void mt_order__skip_gap(struct mt_order *o)
{
	if (!o->n)
		return;
	o->next = o->heap[0].seq;
	order__pump(o);
}

void mt_order__lost_before(struct mt_order *o, uint32_t seq)
{
	while (seq__before(o->next, seq)) {
		o->next = o->n && seq__before(o->heap[0].seq, seq) ? o->heap[0].seq : seq;
		order__pump(o);
	}
}

uint32_t mt_order__next(const struct mt_order *o)
{
	return o->next;
}

uint64_t mt_order__late(const struct mt_order *o)
{
	return o->late;
}

void mt_order__free(struct mt_order *o)
{
	if (!o)
		return;
	while (o->n)
		free(o->heap[--o->n].buf);
	free(o->heap);
	free(o);
}
