// SPDX-License-Identifier: GPL-2.0-only
/* diff.c — two runs' totals and sites side by side: sites matched by their frame names, ranked by the change. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "common/array.h"
#include "common/json.h"
#include "common/strmap.h"
#include "report/diff.h"
#include "report/format.h"

static int64_t delta(uint64_t before, uint64_t after)
{
	return (int64_t)(after - before);
}

static uint64_t mag(int64_t v)
{
	return v < 0 ? (uint64_t)-v : (uint64_t)v;
}

static void site_set(struct mt_diff_site *ds)
{
	const struct mt_site *b = ds->before, *a = ds->after;

	ds->bytes_delta = delta(b ? b->bytes : 0, a ? a->bytes : 0);
	ds->count_delta = delta(b ? b->count : 0, a ? a->count : 0);
	ds->leaked_bytes_delta = delta(b ? b->leaked_bytes : 0, a ? a->leaked_bytes : 0);
}

/* qsort is not stable: ties go by order. */
static int by_change(const void *x, const void *y)
{
	const struct mt_diff_site *a = x, *b = y;

	if (mag(a->bytes_delta) != mag(b->bytes_delta))
		return mag(a->bytes_delta) > mag(b->bytes_delta) ? -1 : 1;
	if (mag(a->count_delta) != mag(b->count_delta))
		return mag(a->count_delta) > mag(b->count_delta) ? -1 : 1;
	if (mag(a->leaked_bytes_delta) != mag(b->leaked_bytes_delta))
		return mag(a->leaked_bytes_delta) > mag(b->leaked_bytes_delta) ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* before's sites by key: first[n] is the first site of key number n, next[i] the next one with site i's key. */
struct before_index {
	struct mt_strmap keys;
	size_t *first;		/* by key number */
	size_t *next;		/* by site (SIZE_MAX: none) */
	bool *taken;		/* by site: matched already */
};

/* 0 or -ENOMEM. */
static int index_before(const struct mt_sites *bs, struct before_index *ix)
{
	size_t i;
	int64_t n;
	bool added;
	char *key;

	for (i = bs->count; i-- > 0;) {	/* from the last, so that each key's chain is in site order */
		key = mt_site__key(&bs->sites[i]);
		n = key ? mt_strmap__intern(&ix->keys, key, &added) : -ENOMEM;
		free(key);
		if (n < 0)
			return (int)n;
		ix->next[i] = added ? SIZE_MAX : ix->first[n];
		ix->first[n] = i;
	}
	return 0;
}

/* The first before site with after's key not taken yet, marking it taken; NULL when none. */
static const struct mt_site *match(const struct mt_sites *bs, struct before_index *ix, const char *key)
{
	int64_t n = mt_strmap__find(&ix->keys, key);
	size_t i;

	for (i = n < 0 ? SIZE_MAX : ix->first[n]; i != SIZE_MAX; i = ix->next[i]) {
		if (!ix->taken[i]) {
			ix->taken[i] = true;
			return &bs->sites[i];
		}
	}
	return NULL;
}

static int diff_match(struct mt_diff *d, const struct mt_sites *bs, const struct mt_sites *as)
{
	struct before_index ix = { .first = calloc(bs->count + 1, sizeof(size_t)),
				   .next = calloc(bs->count + 1, sizeof(size_t)),
				   .taken = calloc(bs->count + 1, sizeof(bool)) };
	size_t i;
	char *key;
	int err = ix.first && ix.next && ix.taken ? index_before(bs, &ix) : -ENOMEM;

	for (i = 0; !err && i < as->count; i++) {
		key = mt_site__key(&as->sites[i]);
		if (!key) {
			err = -ENOMEM;
			break;
		}
		d->sites[d->count].after = &as->sites[i];
		d->sites[d->count++].before = match(bs, &ix, key);
		free(key);
	}
	for (i = 0; !err && i < bs->count; i++)
		if (!ix.taken[i])
			d->sites[d->count++].before = &bs->sites[i];
	mt_strmap__release(&ix.keys);
	free(ix.first);
	free(ix.next);
	free(ix.taken);
	return err;
}

struct mt_diff *mt_diff__build(const struct mt_totals *before, const struct mt_sites *bs,
			       const struct mt_totals *after, const struct mt_sites *as)
{
	struct mt_diff *d = calloc(1, sizeof(*d));
	size_t i;
	int err;

	if (!d)
		return NULL;
	d->before = before->heap;
	d->after = after->heap;
	d->suppressed_allocations[0] = bs->suppressed_allocations;
	d->suppressed_bytes[0] = bs->suppressed_bytes;
	d->suppressed_allocations[1] = as->suppressed_allocations;
	d->suppressed_bytes[1] = as->suppressed_bytes;
	d->before.leaked_allocations -= bs->suppressed_allocations;
	d->before.leaked_bytes -= bs->suppressed_bytes;
	d->after.leaked_allocations -= as->suppressed_allocations;
	d->after.leaked_bytes -= as->suppressed_bytes;
	d->sites = calloc(bs->count + as->count + 1, sizeof(*d->sites));
	err = d->sites ? diff_match(d, bs, as) : -ENOMEM;
	if (err) {
		mt_diff__free(d);
		errno = -err;
		return NULL;
	}
	for (i = 0; i < d->count; i++) {
		site_set(&d->sites[i]);
		d->sites[i].order = i;
	}
	mt_array__sort(d->sites, d->count, sizeof(*d->sites), by_change);
	return d;
}

void mt_diff__free(struct mt_diff *d)
{
	if (!d)
		return;
	free(d->sites);
	free(d);
}

/* ---- text ---- */

/* "+17600 B (+17.2 KiB)", "-3 B", "0 B". */
static const char *bytes_change(char *buf, size_t len, int64_t d)
{
	char h[MT_HUMAN_MAX];

	if (mag(d) < 1024)
		snprintf(buf, len, "%+" PRId64 " B", d);
	else
		snprintf(buf, len, "%+" PRId64 " B (%c%s)", d, d < 0 ? '-' : '+', mt_format__human(h, mag(d)));
	return buf;
}

static void total_row(FILE *f, const char *label, uint64_t before, uint64_t after, bool bytes)
{
	char c[64];

	if (bytes)
		fprintf(f, "  %-16s %16" PRIu64 " B %16" PRIu64 " B   %s\n", label, before, after,
			bytes_change(c, sizeof(c), delta(before, after)));
	else
		fprintf(f, "  %-16s %18" PRIu64 " %18" PRIu64 "   %+" PRId64 "\n", label, before, after,
			delta(before, after));
}

static void site_text(FILE *f, size_t rank, const struct mt_diff_site *ds)
{
	const struct mt_site *b = ds->before, *a = ds->after, *show = a ? a : b;
	char c[64];

	fprintf(f, "  #%-3zu %s, %+" PRId64 " allocations", rank, bytes_change(c, sizeof(c), ds->bytes_delta),
		ds->count_delta);
	if (ds->leaked_bytes_delta)
		fprintf(f, ", %s leaked", bytes_change(c, sizeof(c), ds->leaked_bytes_delta));
	if (!b)
		fprintf(f, " (new: %" PRIu64 " B in %" PRIu64 ")\n", a->bytes, a->count);
	else if (!a)
		fprintf(f, " (gone: was %" PRIu64 " B in %" PRIu64 ")\n", b->bytes, b->count);
	else
		fprintf(f, " (%" PRIu64 " B in %" PRIu64 " -> %" PRIu64 " B in %" PRIu64 ")\n", b->bytes, b->count,
			a->bytes, a->count);
	mt_format__frames_text(f, show, true);
}

/* "before: DIR [KEY=VALUE ...]": a run and the labels it was recorded with. */
static void side_text(FILE *f, const char *what, const char *dir, const struct mt_labels *l)
{
	char *text = l && l->n ? mt_labels__text(l) : NULL;

	fprintf(f, "%s%s%s%s%s\n", what, dir, text ? " [" : "", text ? text : "", text ? "]" : "");
	free(text);
}

int mt_diff__text(FILE *f, const struct mt_diff *d, const char *before, const char *after, size_t top)
{
	size_t i, n = d->count < top ? d->count : top;

	side_text(f, "before: ", before, d->labels[0]);
	side_text(f, "after:  ", after, d->labels[1]);
	fputc('\n', f);
	fprintf(f, "  %-16s %18s %18s   %s\n", "", "before", "after", "change");
	total_row(f, "allocations:", d->before.allocations, d->after.allocations, false);
	total_row(f, "allocated:", d->before.allocated_bytes, d->after.allocated_bytes, true);
	total_row(f, "peak live:", d->before.peak_live_bytes, d->after.peak_live_bytes, true);
	total_row(f, "leaked blocks:", d->before.leaked_allocations, d->after.leaked_allocations, false);
	total_row(f, "leaked:", d->before.leaked_bytes, d->after.leaked_bytes, true);
	if (d->suppressed_allocations[0] || d->suppressed_allocations[1])
		total_row(f, "suppressed:", d->suppressed_bytes[0], d->suppressed_bytes[1], true);
	if (top) {
		fprintf(f, "\nsites by change in bytes (%zu of %zu, matched by their functions):\n", n, d->count);
		for (i = 0; i < n; i++)
			site_text(f, i + 1, &d->sites[i]);
	}
	return ferror(f) ? -EIO : 0;
}

/* ---- JSON ---- */

static void heap_json(struct mt_json *j, const char *key, const struct mt_heap_stats *h, uint64_t sup_n,
		      uint64_t sup_b, const struct mt_labels *l)
{
	mt_json__key(j, key);
	mt_json__begin_object(j);
	mt_json__kv_u64(j, "allocations", h->allocations);
	mt_json__kv_u64(j, "bytes", h->allocated_bytes);
	mt_json__kv_u64(j, "peak_bytes", h->peak_live_bytes);
	mt_json__kv_u64(j, "leaked_allocations", h->leaked_allocations);
	mt_json__kv_u64(j, "leaked_bytes", h->leaked_bytes);
	mt_json__kv_u64(j, "suppressed_allocations", sup_n);
	mt_json__kv_u64(j, "suppressed_bytes", sup_b);
	if (l && l->n)
		mt_labels__json(j, l);
	mt_json__end_object(j);
}

static void side_json(struct mt_json *j, const char *key, const struct mt_site *s)
{
	if (!s) {
		mt_json__kv_null(j, key);
		return;
	}
	mt_json__key(j, key);
	mt_json__begin_object(j);
	mt_json__kv_u64(j, "bytes", s->bytes);
	mt_json__kv_u64(j, "count", s->count);
	mt_json__kv_u64(j, "leaked_bytes", s->leaked_bytes);
	mt_json__end_object(j);
}

static void site_json(struct mt_json *j, const struct mt_diff_site *ds)
{
	mt_json__begin_object(j);
	mt_json__key(j, "frames");
	mt_format__frames_json(j, ds->after ? ds->after : ds->before);
	mt_json__kv_i64(j, "bytes_delta", ds->bytes_delta);
	mt_json__kv_i64(j, "count_delta", ds->count_delta);
	mt_json__kv_i64(j, "leaked_bytes_delta", ds->leaked_bytes_delta);
	side_json(j, "before", ds->before);
	side_json(j, "after", ds->after);
	mt_json__end_object(j);
}

int mt_diff__json(FILE *f, const struct mt_diff *d, size_t top)
{
	size_t i, n = d->count < top ? d->count : top;
	struct mt_json j;

	mt_json__init(&j, f, 2);
	mt_json__begin_object(&j);
	mt_json__key(&j, "totals");
	mt_json__begin_object(&j);
	heap_json(&j, "before", &d->before, d->suppressed_allocations[0], d->suppressed_bytes[0], d->labels[0]);
	heap_json(&j, "after", &d->after, d->suppressed_allocations[1], d->suppressed_bytes[1], d->labels[1]);
	mt_json__kv_i64(&j, "count_delta", delta(d->before.allocations, d->after.allocations));
	mt_json__kv_i64(&j, "bytes_delta", delta(d->before.allocated_bytes, d->after.allocated_bytes));
	mt_json__kv_i64(&j, "peak_bytes_delta", delta(d->before.peak_live_bytes, d->after.peak_live_bytes));
	mt_json__kv_i64(&j, "leaked_allocations_delta",
			delta(d->before.leaked_allocations, d->after.leaked_allocations));
	mt_json__kv_i64(&j, "leaked_bytes_delta", delta(d->before.leaked_bytes, d->after.leaked_bytes));
	mt_json__end_object(&j);
	mt_json__kv_u64(&j, "sites_total", d->count);
	mt_json__key(&j, "sites");
	mt_json__begin_array(&j);
	for (i = 0; i < n; i++)
		site_json(&j, &d->sites[i]);
	mt_json__end_array(&j);
	mt_json__end_object(&j);
	fputc('\n', f);
	return mt_json__error(&j);
}
