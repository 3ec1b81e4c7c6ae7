// SPDX-License-Identifier: GPL-2.0-only
/* test_order.c — the tracer's reordering of ring records by their sequence numbers (tracer/order.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bpf/memtrack.h"
#include "tracer/order.h"

#define MAX_OUT 64

struct out {
	uint32_t seq[MAX_OUT];
	size_t n;
};

static void collect(void *ctx, const void *rec, size_t size)
{
	struct out *o = ctx;

	assert_int_equal(size, sizeof(struct mt_alloc));
	assert_true(o->n < MAX_OUT);
	o->seq[o->n++] = ((const struct mt_rec_hdr *)rec)->seq;
}

/* A batch of records numbered from, from + step, ... */
static void batch(struct mt_alloc *r, size_t n, uint32_t from, uint32_t step)
{
	size_t i;

	memset(r, 0, n * sizeof(*r));
	for (i = 0; i < n; i++) {
		r[i].hdr.type = MT_REC_ALLOC;
		r[i].hdr.size = sizeof(*r);
		r[i].hdr.seq = from + i * step;
	}
}

static void expect(const struct out *o, uint32_t from, size_t n)
{
	size_t i;

	assert_int_equal(o->n, n);
	for (i = 0; i < n; i++)
		assert_int_equal(o->seq[i], from + i);
}

/* Two CPUs' batches interleaved in number, the later one first: nothing is written until the gap is filled. */
static void test_interleaved_batches(void **state)
{
	struct mt_alloc even[4], odd[4];
	struct out o = { 0 };
	struct mt_order *ord = mt_order__new(collect, &o);

	(void)state;
	batch(odd, 4, 1, 2);	/* 1 3 5 7 */
	batch(even, 4, 0, 2);	/* 0 2 4 6 */
	assert_int_equal(mt_order__push(ord, odd, sizeof(odd), sizeof(*odd)), 0);
	assert_int_equal(o.n, 0);
	assert_true(mt_order__waiting(ord));
	assert_int_equal(mt_order__next(ord), 0);
	assert_int_equal(mt_order__push(ord, even, sizeof(even), sizeof(*even)), 0);
	expect(&o, 0, 8);
	assert_false(mt_order__waiting(ord));
	assert_int_equal(mt_order__late(ord), 0);
	mt_order__free(ord);
}

/* Records in turn go straight through; a single record (stride 0) can fill a gap between batches. */
static void test_single_fills_gap(void **state)
{
	struct mt_alloc a[3], one, b[2];
	struct out o = { 0 };
	struct mt_order *ord = mt_order__new(collect, &o);

	(void)state;
	batch(a, 3, 0, 1);	/* 0 1 2 */
	batch(&one, 1, 3, 1);
	batch(b, 2, 4, 1);	/* 4 5 */
	assert_int_equal(mt_order__push(ord, a, sizeof(a), sizeof(*a)), 0);
	expect(&o, 0, 3);
	assert_int_equal(mt_order__push(ord, b, sizeof(b), sizeof(*b)), 0);
	assert_int_equal(o.n, 3);
	assert_int_equal(mt_order__push(ord, &one, sizeof(one), 0), 0);
	expect(&o, 0, 6);
	mt_order__free(ord);
}

/* A number that never comes (its batch lost): skipping it writes what waits, and the missing one, if it still
 * comes, is written late. */
static void test_skip_gap_then_late(void **state)
{
	struct mt_alloc a[2], lost;
	struct out o = { 0 };
	struct mt_order *ord = mt_order__new(collect, &o);

	(void)state;
	batch(a, 2, 1, 1);	/* 1 2: 0 is missing */
	batch(&lost, 1, 0, 1);
	assert_int_equal(mt_order__push(ord, a, sizeof(a), sizeof(*a)), 0);
	assert_int_equal(o.n, 0);
	mt_order__skip_gap(ord);
	assert_int_equal(o.n, 2);
	assert_int_equal(mt_order__next(ord), 3);
	assert_int_equal(mt_order__push(ord, &lost, sizeof(lost), 0), 0);
	assert_int_equal(o.n, 3);
	assert_int_equal(o.seq[2], 0);
	assert_int_equal(mt_order__late(ord), 1);
	mt_order__free(ord);
}

/* After a flush every CPU gave: the numbers before it not seen are lost, those after it may still come. */
static void test_lost_before(void **state)
{
	struct mt_alloc a[2], b, c;
	struct out o = { 0 };
	struct mt_order *ord = mt_order__new(collect, &o);

	(void)state;
	batch(a, 2, 2, 1);	/* 2 3: 0 and 1 lost */
	batch(&b, 1, 6, 1);	/* 4 and 5 taken after the flush began */
	batch(&c, 1, 4, 1);
	assert_int_equal(mt_order__push(ord, a, sizeof(a), sizeof(*a)), 0);
	assert_int_equal(mt_order__push(ord, &b, sizeof(b), 0), 0);
	mt_order__lost_before(ord, 5);
	assert_int_equal(o.n, 2);
	assert_int_equal(mt_order__next(ord), 5);	/* 4 was passed over; 5 may come */
	assert_true(mt_order__waiting(ord));
	assert_int_equal(mt_order__push(ord, &c, sizeof(c), 0), 0);	/* 4 after all: late */
	assert_int_equal(mt_order__late(ord), 1);
	mt_order__lost_before(ord, 7);
	assert_int_equal(o.n, 4);
	assert_int_equal(o.seq[3], 6);
	assert_false(mt_order__waiting(ord));
	mt_order__free(ord);
}

/* Numbers are 32 bits in the ring: they wrap, and order holds across the wrap. */
static void test_wraps(void **state)
{
	struct mt_alloc lo[2], hi[2], first;
	struct out o = { 0 };
	struct mt_order *ord = mt_order__new(collect, &o);

	(void)state;
	/* Toward the wrap in skips of a quarter circle: each is ahead of the next number, none late. */
	for (uint32_t q = 1; q < 4; q++) {
		batch(&first, 1, q << 30, 1);
		assert_int_equal(mt_order__push(ord, &first, sizeof(first), 0), 0);
		mt_order__skip_gap(ord);
		assert_int_equal(mt_order__next(ord), (q << 30) + 1);
	}
	o.n = 0;
	batch(hi, 2, UINT32_MAX - 1, 1);	/* 0xfffffffe 0xffffffff */
	batch(lo, 2, 0, 1);			/* 0 1: after the wrap */
	assert_int_equal(mt_order__push(ord, hi, sizeof(hi), sizeof(*hi)), 0);
	mt_order__skip_gap(ord);
	assert_int_equal(mt_order__push(ord, lo, sizeof(lo), sizeof(*lo)), 0);
	assert_int_equal(o.n, 4);
	assert_int_equal(o.seq[0], UINT32_MAX - 1);
	assert_int_equal(o.seq[1], UINT32_MAX);
	assert_int_equal(o.seq[2], 0);
	assert_int_equal(o.seq[3], 1);
	assert_int_equal(mt_order__late(ord), 0);
	mt_order__free(ord);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interleaved_batches),
		cmocka_unit_test(test_single_fills_gap),
		cmocka_unit_test(test_skip_gap_then_late),
		cmocka_unit_test(test_lost_before),
		cmocka_unit_test(test_wraps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
