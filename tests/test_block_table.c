// SPDX-License-Identifier: GPL-2.0-only
/* test_block_table.c — the live-block table (src/model/block_table.c) against u64map, and what an entry costs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/u64map.h"
#include "model/block_table.h"

/* xorshift64: a fixed sequence, so a failure repeats. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

struct sum {
	uint64_t n, keys, vals;
};

static void sum_one(uint64_t key, uint64_t val, void *ctx)
{
	struct sum *s = ctx;

	s->n++;
	s->keys += key;
	s->vals += val;
}

/* Every entry of the oracle is in t with its word, and the two hold the same keys (sums of keys and of words). */
static void check_same(const struct mt_block_table *t, const struct mt_u64map *oracle)
{
	struct sum a = { 0 }, b = { 0 };

	assert_int_equal(t->count, oracle->count);
	mt_block_table__for_each(t, sum_one, &a);
	mt_u64map__for_each(oracle, sum_one, &b);
	assert_int_equal(a.n, b.n);
	assert_int_equal(a.keys, b.keys);
	assert_int_equal(a.vals, b.vals);
}

/*
 * Puts, replacements and deletions at random over addresses that cluster as heap blocks do (16-byte aligned, in a
 * few regions), key 0 among them, deleted by key or by the entry a find gave: the table agrees with u64map at each
 * step, through its growths and shrinks.
 */
static void test_against_u64map(void **state)
{
	struct mt_block_table t = { 0 };
	struct mt_u64map oracle = { 0 };
	uint64_t s = 88172645463325252ULL, r, key, val, got, want;
	const uint64_t *v;
	size_t i, span;
	int rt, ro;

	(void)state;
	for (i = 0; i < 400000; i++) {
		r = next_rand(&s);
		/* the live span breathes: 64 keys to 64 K, so the table grows and shrinks */
		span = 64u << (i / 50000 % 2 ? 10 : (i / 25000) % 8);
		key = r % 7 == 0 ? 0 : (r >> 48 & 3) << 40 | ((r >> 8) % span) << 4;
		val = next_rand(&s);
		if (r % 3) {
			rt = mt_block_table__put(&t, key, val, &got);
			ro = mt_u64map__put(&oracle, key, val, &want);
			assert_int_equal(rt, ro);
			if (rt)
				assert_int_equal(got, want);
		} else if (r >> 20 & 1) {	/* a find, then its entry deleted where it is (the stack heap's way) */
			uint64_t *e = mt_block_table__find(&t, key);

			if (e) {
				got = *e;
				mt_block_table__del_found(&t, e);
			}
			ro = mt_u64map__del(&oracle, key, &want);
			assert_int_equal(e != NULL, ro);
			if (e)
				assert_int_equal(got, want);
		} else {
			rt = mt_block_table__del(&t, key, &got);
			ro = mt_u64map__del(&oracle, key, &want);
			assert_int_equal(rt, ro);
			if (rt)
				assert_int_equal(got, want);
		}
		v = mt_block_table__find(&t, key ^ 16);
		assert_int_equal(v != NULL, mt_u64map__find(&oracle, key ^ 16) != NULL);
		if (v)
			assert_int_equal(*v, *mt_u64map__find(&oracle, key ^ 16));
		if (i % 10000 == 0)
			check_same(&t, &oracle);
	}
	check_same(&t, &oracle);
	mt_block_table__release(&t);
	mt_u64map__release(&oracle);
}

/* Every key can be found, from 1 to the top bit set, and for_each gives the keys back unchanged (the mix inverted). */
static void test_any_key(void **state)
{
	struct mt_block_table t = { 0 };
	struct sum a = { 0 };
	uint64_t s = 1, key, sum = 0;
	size_t i;

	(void)state;
	for (i = 0; i < 10000; i++) {
		key = i < 64 ? 1ull << i : next_rand(&s);
		assert_int_equal(mt_block_table__put(&t, key, i, NULL), 0);
		sum += key;
	}
	for (i = 0, s = 1; i < 10000; i++) {
		key = i < 64 ? 1ull << i : next_rand(&s);
		assert_non_null(mt_block_table__find(&t, key));
		assert_int_equal(*mt_block_table__find(&t, key), i);
	}
	mt_block_table__for_each(&t, sum_one, &a);
	assert_int_equal(a.n, 10000);
	assert_int_equal(a.keys, sum);
	mt_block_table__release(&t);
	assert_null(mt_block_table__find(&t, 1));
}

/*
 * What a live block costs: from 10^4 to 2·10^6 entries, the table's bytes (capacity and tail) over its entries stay
 * at or below 23 (16 a slot, 70% full at worst: issue 35's bound is 24), and come back down once most are removed.
 */
static void test_bytes_per_entry(void **state)
{
	struct mt_block_table t = { 0 };
	uint64_t addr, worst = 0;
	size_t n;

	(void)state;
	for (n = 1; n <= 2000000; n++) {
		addr = 0x5555550000ULL + n * 48;
		assert_int_equal(mt_block_table__put(&t, addr, n, NULL), 0);
		if (n >= 10000 && mt_block_table__bytes(&t) * 100 / n > worst)
			worst = mt_block_table__bytes(&t) * 100 / n;
	}
	assert_true(worst <= 2300);
	for (n = 1; n <= 1990000; n++)
		assert_true(mt_block_table__del(&t, 0x5555550000ULL + n * 48, NULL));
	assert_int_equal(t.count, 10000);
	assert_true(mt_block_table__bytes(&t) <= 10000 * 32);
	for (n = 1990001; n <= 2000000; n++)
		assert_int_equal(*mt_block_table__find(&t, 0x5555550000ULL + n * 48), n);
	mt_block_table__release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_u64map),
		cmocka_unit_test(test_any_key),
		cmocka_unit_test(test_bytes_per_entry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
