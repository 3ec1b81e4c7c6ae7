// SPDX-License-Identifier: GPL-2.0-only
/* decoder.c — the columns of a version 2 to 4 frame back into the records a version 1 frame holds. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/codec.h"
#include "artifact/decoder.h"
#include "artifact/format.h"
#include "artifact/rank_list.h"

/* A version 2 to 4 frame's content turned back into records; the arrays only grow, from frame to frame. */
struct mt_decoder {
	struct mt_cursor col[COL__COUNT];
	uint64_t nrec;
	uint64_t ts_res;
	__u64 ts;
	struct mt_threads threads;
	__u64 *stacks;
	__u32 nstacks;
	__u32 version;		/* the file's: 2 to 4 */
	struct mt_rank_list live, freed;
	struct mt_rank_list cls[MT_CLASSES];	/* version 3: freed entries by size class, numbered by freed seq */
	__u64 *live_addr, *live_size, *freed_addr;
	size_t cap;		/* coded records the arrays are sized for */
	__u8 *out;		/* the decoded records, as a version 1 frame holds them */
	size_t out_len;
	size_t out_cap;
	uint64_t rec;		/* the record being decoded, for reasons */
	char why[112];		/* the first problem found; decoding goes on safely and stops after the record */
	char reason[MT_DECODER_REASON_MAX];	/* why the last frame was refused */
};

/* Records the first problem of a frame; the decoder then only has to stay in bounds until the record ends. */
__attribute__((format(printf, 2, 3)))
static void dec_fail(struct mt_decoder *d, const char *fmt, ...)
{
	va_list ap;

	if (d->why[0])
		return;
	va_start(ap, fmt);
	vsnprintf(d->why, sizeof(d->why), fmt, ap);
	va_end(ap);
}

static void dec_short(struct mt_decoder *d, enum mt_col c)
{
	dec_fail(d, "column %s ends early", mt_col_names[c]);
}

static inline __u8 get_u8(struct mt_decoder *d, enum mt_col c)
{
	struct mt_cursor *k = &d->col[c];

	if (k->pos < k->len)
		return k->p[k->pos++];
	dec_short(d, c);
	return 0;
}

static void get_raw(struct mt_decoder *d, enum mt_col c, void *v, size_t n)
{
	struct mt_cursor *k = &d->col[c];

	if (k->len - k->pos < n) {
		dec_short(d, c);
		memset(v, 0, n);
		return;
	}
	memcpy(v, k->p + k->pos, n);
	k->pos += n;
}

static inline __u64 get_number(struct mt_decoder *d, enum mt_col lo)
{
	struct mt_cursor *k = &d->col[lo + 1];
	__u64 low = get_u8(d, lo), high;
	bool bad = false;

	if (k->pos < k->len && k->p[k->pos] < MT_VARINT_MORE)
		return (__u64)k->p[k->pos++] << 8 | low;	/* the usual one-byte high part */
	high = mt_cursor__varint(k, &bad);
	if (bad || high >> 56) {
		dec_fail(d, "column %s: bad number", mt_col_names[lo + 1]);
		return 0;
	}
	return high << 8 | low;
}

static void decode_thread(struct mt_decoder *d, struct mt_rec_hdr *h, enum thread_mode mode)
{
	struct mt_thread_id id;
	__u8 i;

	switch (mode) {
	case THREAD_SAME:
		break;
	case THREAD_INDEX:
		i = get_u8(d, COL_THREAD);
		if (i >= d->threads.n) {
			dec_fail(d, "thread index %u, the table has %u", i, d->threads.n);
			break;
		}
		mt_threads__select(&d->threads, i);
		break;
	case THREAD_NEW:
		get_raw(d, COL_THREAD_NEW, &id, sizeof(id));
		mt_threads__add(&d->threads, id);
		break;
	default:
		dec_fail(d, "reserved thread mode %d", mode);
	}
	h->pid = d->threads.cur.pid;
	h->tid = d->threads.cur.tid;
}

/* step: a version 3 head's time step, HD_TS_NUMBER (always, in version 2) when a number follows. */
static void decode_ts(struct mt_decoder *d, struct mt_rec_hdr *h, bool is_free, unsigned int step)
{
	if (step == HD_TS_NUMBER)
		d->ts += mt_unzigzag(get_number(d, is_free ? COL_TS_FREE_LO : COL_TS_ALLOC_LO));
	else
		d->ts += step;
	h->ts_ns = d->ts * d->ts_res;
}

/* The seq of the entry a rank names, or -1 when the list has no such entry. */
static long long find_rank(struct mt_decoder *d, __u64 rank, const struct mt_rank_list *l, const char *what)
{
	if (rank < l->count)
		return mt_rank_list__find(l, rank);
	dec_fail(d, "%s rank %llu, the list has %u entries", what, (unsigned long long)rank, l->count);
	return -1;
}

static long long get_rank(struct mt_decoder *d, enum mt_col lo, const struct mt_rank_list *l, const char *what)
{
	return find_rank(d, get_number(d, lo), l, what);
}

static __u64 decode_elsewhere(struct mt_decoder *d, enum addr_mode mode)
{
	long long seq;

	if (mode == ADDR_DELTA)
		return *d->threads.cur_addr + mt_unzigzag(get_number(d, COL_DELTA_LO));
	seq = get_rank(d, COL_AFTER_LO, &d->live, "after");
	return seq < 0 ? 0 : mt_next_addr(d->live_addr[seq], d->live_size[seq]);
}

/* rank: of a REF, the live rank, or -1 when it is a number in the live column. */
static __u64 decode_freeing(struct mt_decoder *d, enum addr_mode mode, long long rank)
{
	unsigned int cls = CLASS_BIG;
	long long seq;
	__u32 fseq;
	__u64 v = 0;

	if (mode == ADDR_ZERO)
		return 0;
	if (mode == ADDR_REF) {
		if (rank < 0)
			seq = get_rank(d, COL_LIVE_LO, &d->live, "live");
		else
			seq = find_rank(d, rank, &d->live, "live");
		if (seq >= 0) {
			v = d->live_addr[seq];
			cls = mt_size_class(d->live_size[seq]);
			mt_rank_list__remove(&d->live, seq);
		}
	} else {
		v = decode_elsewhere(d, mode);
	}
	fseq = mt_rank_list__append(&d->freed);
	d->freed_addr[fseq] = v;
	if (d->version >= 3)	/* version 3 takes blocks by class: d->freed only numbers them */
		mt_rank_list__add(&d->cls[cls], fseq);
	mt_threads__set_addr(&d->threads, v);
	return v;
}

/* Version 3: a freed block named by its rank in a class's list, the size's own (ADDR_CLASS) or a named one. */
static __u64 decode_freed(struct mt_decoder *d, enum addr_mode mode, __u64 size)
{
	unsigned int cls = mode == ADDR_OTHER ? get_u8(d, COL_CLASS) : mt_size_class(size);
	long long seq;

	if (cls >= MT_CLASSES) {
		dec_fail(d, "size class %u", cls);
		return 0;
	}
	seq = get_rank(d, cls == CLASS_BIG ? COL_FREED_LO : COL_SMALL_LO, &d->cls[cls], "freed");
	if (seq < 0)
		return 0;
	mt_rank_list__remove(&d->cls[cls], seq);
	return d->freed_addr[seq];
}

static __u64 decode_taking(struct mt_decoder *d, enum addr_mode mode, __u64 size)
{
	long long seq;
	__u64 v = 0;
	__u32 s;

	if (mode == ADDR_ZERO)
		return 0;
	if (mode == ADDR_REF) {
		seq = get_rank(d, COL_FREED_LO, &d->freed, "freed");
		if (seq >= 0) {
			v = d->freed_addr[seq];
			mt_rank_list__remove(&d->freed, seq);
		}
	} else if (mode == ADDR_CLASS || mode == ADDR_OTHER) {
		v = decode_freed(d, mode, size);
	} else {
		v = decode_elsewhere(d, mode);
	}
	s = mt_rank_list__append(&d->live);
	d->live_addr[s] = v;
	d->live_size[s] = size;
	mt_threads__set_addr(&d->threads, v);
	return v;
}

static void decode_extra(struct mt_decoder *d, struct mt_alloc *a, __u8 extra)
{
	__u64 i;

	if (extra & EX_RESERVED)
		dec_fail(d, "reserved extra bits 0x%02x", extra);
	if (extra & EX_ALIGN)
		a->align = get_number(d, COL_ALIGN_LO);
	switch (extra >> EX_STACK_SHIFT & MT_FIELD2_MASK) {
	case STACK_ZERO:
		break;
	case STACK_INDEX:
		i = get_number(d, COL_STACK_LO);
		if (i < d->nstacks)
			a->stack = d->stacks[i];
		else
			dec_fail(d, "stack index %llu, the table has %u", (unsigned long long)i, d->nstacks);
		break;
	case STACK_NEW:
		get_raw(d, COL_STACK_NEW, &a->stack, sizeof(a->stack));
		d->stacks[d->nstacks++] = a->stack;
		break;
	default:
		dec_fail(d, "reserved stack mode 3");
	}
}

static void decode_alloc_v2(struct mt_decoder *d, struct mt_alloc *a, bool is_free)
{
	__u8 flags, extra = 0;

	flags = get_u8(d, is_free ? COL_FLAGS_FREE : COL_FLAGS_ALLOC);
	if (flags & FL_EXTRA)
		extra = get_u8(d, COL_EXTRA);
	decode_thread(d, &a->hdr, flags >> FL_THREAD_SHIFT & MT_FIELD2_MASK);
	decode_ts(d, &a->hdr, is_free, HD_TS_NUMBER);
	if (flags & FL_SIZE)
		a->size = get_number(d, COL_SIZE_LO);
	a->old_addr = decode_freeing(d, flags >> FL_OLD_SHIFT & MT_FIELD2_MASK, -1);
	if (is_free)
		a->addr = decode_freeing(d, flags >> FL_ADDR_SHIFT & MT_FIELD2_MASK, -1);
	else
		a->addr = decode_taking(d, flags >> FL_ADDR_SHIFT & MT_FIELD2_MASK, a->size);
	decode_extra(d, a, extra);
}

/* A released addr: as MORE's address field says, or a live rank whose high part is the head's place. */
static __u64 decode_released(struct mt_decoder *d, __u8 head, __u8 more)
{
	unsigned int place = head >> HD_PLACE_SHIFT & HD_PLACE_MASK, field = more >> MO_ADDR_SHIFT;
	struct mt_cursor *hi = &d->col[COL_LIVE_HI];
	bool bad = false;
	__u64 high = place;

	if (field && place)
		dec_fail(d, "place %u with address field %u", place, field);
	if (field)
		return decode_freeing(d, field == MO_ADDR_ZERO ? ADDR_ZERO : field, -1);
	if (place == HD_PLACE_HI)
		high += mt_cursor__varint(hi, &bad);
	if (bad || high >> 48)
		dec_fail(d, "column live_hi: bad number");
	return decode_freeing(d, ADDR_REF, high << 8 | get_u8(d, COL_LIVE_LO));
}

static const enum addr_mode v3_taking[] = { ADDR_CLASS, ADDR_OTHER, ADDR_AFTER, ADDR_DELTA };

static void decode_taken(struct mt_decoder *d, struct mt_alloc *a, __u8 head, __u8 more)
{
	unsigned int mode = head >> HD_ADDR_SHIFT & MT_FIELD2_MASK, field = more >> MO_ADDR_SHIFT;

	if (more & MO_SIZE || field > MO_ADDR_ZERO || (field == MO_ADDR_ZERO && mode))
		dec_fail(d, "more 0x%02x with head 0x%02x", more, head);
	if (head & HD_SIZE)
		a->size = get_number(d, COL_SIZE_LO);
	a->old_addr = decode_freeing(d, more >> MO_OLD_SHIFT & MT_FIELD2_MASK, -1);
	if (field != MO_ADDR_ZERO)
		a->addr = decode_taking(d, v3_taking[mode], a->size);
}

static void decode_alloc_v3(struct mt_decoder *d, struct mt_alloc *a, bool is_free)
{
	__u8 head, more = 0, extra = 0;

	head = get_u8(d, is_free ? COL_FLAGS_FREE : COL_FLAGS_ALLOC);
	if (head & HD_MORE)
		more = get_u8(d, COL_MORE);
	if (more & MO_EXTRA)
		extra = get_u8(d, COL_EXTRA);
	decode_thread(d, &a->hdr, more >> MO_THREAD_SHIFT & MT_FIELD2_MASK);
	decode_ts(d, &a->hdr, is_free, head & HD_TS_MASK);
	if (is_free) {
		if (more & MO_SIZE)
			a->size = get_number(d, COL_SIZE_LO);
		a->old_addr = decode_freeing(d, more >> MO_OLD_SHIFT & MT_FIELD2_MASK, -1);
		a->addr = decode_released(d, head, more);
	} else {
		decode_taken(d, a, head, more);
	}
	decode_extra(d, a, extra);
}

static void decode_alloc(struct mt_decoder *d, __u8 tag)
{
	struct mt_alloc a;
	bool is_free;

	memset(&a, 0, sizeof(a));
	a.hdr.type = MT_REC_ALLOC;
	a.hdr.size = sizeof(a);
	a.func = tag & MT_FUNC_MASK;
	a.allocator = tag >> MT_TAG_ALLOCATOR_SHIFT;
	is_free = mt_func__is_free(a.func);
	if (d->version >= 3)
		decode_alloc_v3(d, &a, is_free);
	else
		decode_alloc_v2(d, &a, is_free);
	memcpy(d->out + d->out_len, &a, sizeof(a));
	d->out_len += sizeof(a);
}

/* Only what walking the column needs; the record rules are checked on the decoded frame, as in version 1. */
static void decode_verbatim(struct mt_decoder *d)
{
	struct mt_cursor *k = &d->col[COL_VERBATIM];
	size_t left = k->len - k->pos;
	struct mt_rec_hdr h;

	if (left < sizeof(h)) {
		dec_short(d, COL_VERBATIM);
		return;
	}
	memcpy(&h, k->p + k->pos, sizeof(h));
	if (h.size < sizeof(h) || h.size > left) {
		dec_fail(d, "verbatim record of size %u (type %u, %zu bytes left)", h.size, h.type, left);
		return;
	}
	memcpy(d->out + d->out_len, k->p + k->pos, h.size);
	d->out_len += h.size;
	k->pos += h.size;
}

/* The frame's outcome: 0, or err with the reason in d->reason. */
__attribute__((format(printf, 3, 4)))
static int dec_refuse(struct mt_decoder *d, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->reason, sizeof(d->reason), fmt, ap);
	va_end(ap);
	return err;
}

/* Version 4: a frame that is not the next one is where frames were dropped, repeated or reordered. */
static int decode_seq(struct mt_decoder *d, struct mt_cursor *k, uint64_t want)
{
	bool bad = false;
	__u64 seq = mt_cursor__varint(k, &bad);

	if (bad)
		return dec_refuse(d, -EBADMSG, "bad frame header (no frame number)");
	if (seq > want)
		return dec_refuse(d, -EBADMSG, "frame number %llu where %llu was expected (%llu missing before it)",
				  (unsigned long long)seq, (unsigned long long)want, (unsigned long long)(seq - want));
	if (seq < want)
		return dec_refuse(d, -EBADMSG, "frame number %llu where %llu was expected (a frame repeated or moved)",
				  (unsigned long long)seq, (unsigned long long)want);
	return 0;
}

/* Parses the content header and points the cursors at the columns, which follow it in order. */
static int decode_header(struct mt_decoder *d, uint64_t seq, const __u8 *content, size_t len)
{
	struct mt_cursor k = { content, len, 1 };
	__u64 ncol, want = d->version >= 3 ? COL__COUNT : COL_V2_COUNT, col_len[COL__COUNT] = { 0 };
	bool bad = false;
	size_t off;
	int c, err;

	if (content[0] != MT_LAYOUT_COLUMNS)
		return dec_refuse(d, -EBADMSG, "unknown frame layout %u", content[0]);
	err = d->version >= MT_VERSION_CHECKED ? decode_seq(d, &k, seq) : 0;
	if (err)
		return err;
	d->nrec = mt_cursor__varint(&k, &bad);
	d->ts_res = mt_cursor__varint(&k, &bad);
	ncol = mt_cursor__varint(&k, &bad);
	if (bad || !d->ts_res || ncol != want)
		return dec_refuse(d, -EBADMSG, "bad frame header (%llu columns, time resolution %llu)",
				  (unsigned long long)ncol, (unsigned long long)d->ts_res);
	for (c = 0; c < (int)ncol; c++)
		col_len[c] = mt_cursor__varint(&k, &bad);
	for (c = 0, off = k.pos; c < COL__COUNT && !bad; off += col_len[c], c++) {
		bad = col_len[c] > len - off;
		d->col[c] = (struct mt_cursor){ content + off, bad ? 0 : col_len[c], 0 };
	}
	if (bad || off != len)
		return dec_refuse(d, -EBADMSG, "column lengths do not add up to the frame content");
	if (d->col[COL_TAG].len != d->nrec)
		return dec_refuse(d, -EBADMSG, "%llu records but %zu tags", (unsigned long long)d->nrec,
				  d->col[COL_TAG].len);
	return 0;
}

/* Sizes the state for n coded records: each takes at most one live entry, two freed ones and one stack. */
static int decoder_grow(struct mt_decoder *d, size_t n)
{
	__u64 *la, *ls, *fa, *st;
	int err, c;

	la = realloc(d->live_addr, n * sizeof(*la));
	if (la)
		d->live_addr = la;
	ls = realloc(d->live_size, n * sizeof(*ls));
	if (ls)
		d->live_size = ls;
	fa = realloc(d->freed_addr, 2 * n * sizeof(*fa));
	if (fa)
		d->freed_addr = fa;
	st = realloc(d->stacks, n * sizeof(*st));
	if (st)
		d->stacks = st;
	err = la && ls && fa && st ? 0 : -ENOMEM;
	if (!err)
		err = mt_rank_list__init(&d->live, n);
	if (!err)
		err = mt_rank_list__init(&d->freed, 2 * n);
	for (c = 0; c < MT_CLASSES && !err; c++)
		err = mt_rank_list__init(&d->cls[c], 2 * n);
	return err;
}

static int decoder_reserve(struct mt_decoder *d, size_t n)
{
	int err, c;

	if (n > d->cap) {
		err = decoder_grow(d, n);
		if (err)
			return err;
		d->cap = n;
	}
	mt_rank_list__clear(&d->live);
	mt_rank_list__clear(&d->freed);
	for (c = 0; c < MT_CLASSES; c++)
		mt_rank_list__clear(&d->cls[c]);
	return 0;
}

static int decoder_out(struct mt_decoder *d, size_t size)
{
	__u8 *out;

	if (size > d->out_cap) {
		out = realloc(d->out, size);
		if (!out)
			return -ENOMEM;
		d->out = out;
		d->out_cap = size;
	}
	d->out_len = 0;
	return 0;
}

/* The decoded size is exact before decoding: coded records are sizeof(struct mt_alloc), the rest verbatim. */
static int decoder_start(struct mt_decoder *d)
{
	const __u8 *tag = d->col[COL_TAG].p;
	size_t i, coded = 0, size;

	for (i = 0; i < d->nrec; i++)
		coded += tag[i] != 0;
	if (coded > (MT_FRAME_READ_LIMIT - d->col[COL_VERBATIM].len) / sizeof(struct mt_alloc))
		return dec_refuse(d, -EBADMSG, "decoded records exceed the limit of %u bytes", MT_FRAME_READ_LIMIT);
	size = coded * sizeof(struct mt_alloc) + d->col[COL_VERBATIM].len;
	if (decoder_out(d, size) || decoder_reserve(d, coded))
		return dec_refuse(d, -ENOMEM, "out of memory for a frame of %zu records", (size_t)d->nrec);
	d->ts = 0;
	mt_threads__reset(&d->threads);
	d->nstacks = 0;
	d->why[0] = 0;
	return 0;
}

int mt_decoder__decode(struct mt_decoder *d, __u32 version, uint64_t seq, const __u8 *content, size_t len)
{
	__u8 tag;
	int err, c;

	d->out_len = 0;
	d->reason[0] = 0;
	d->version = version;
	if (!len && version >= MT_VERSION_CHECKED)
		return dec_refuse(d, -EBADMSG, "empty frame (a version %u frame has a number)", version);
	if (!len)
		return 0;	/* an empty frame, as in version 1 */
	err = decode_header(d, seq, content, len);
	if (!err)
		err = decoder_start(d);
	for (d->rec = 0; !err && d->rec < d->nrec; d->rec++) {
		tag = get_u8(d, COL_TAG);
		if (tag)
			decode_alloc(d, tag);
		else
			decode_verbatim(d);
		if (d->why[0])
			return dec_refuse(d, -EBADMSG, "record %llu: %s", (unsigned long long)d->rec, d->why);
	}
	for (c = 0; !err && c < COL__COUNT; c++)
		if (d->col[c].pos != d->col[c].len)
			return dec_refuse(d, -EBADMSG, "column %s has %zu bytes left over", mt_col_names[c],
					  d->col[c].len - d->col[c].pos);
	return err;
}

const __u8 *mt_decoder__records(const struct mt_decoder *d, size_t *len)
{
	*len = d->out_len;
	return d->out;
}

const char *mt_decoder__reason(const struct mt_decoder *d)
{
	return d->reason;
}

struct mt_decoder *mt_decoder__new(void)
{
	return calloc(1, sizeof(struct mt_decoder));
}

void mt_decoder__free(struct mt_decoder *d)
{
	int c;

	if (!d)
		return;
	free(d->out);
	free(d->stacks);
	free(d->freed_addr);
	free(d->live_size);
	free(d->live_addr);
	for (c = 0; c < MT_CLASSES; c++)
		mt_rank_list__free(&d->cls[c]);
	mt_rank_list__free(&d->freed);
	mt_rank_list__free(&d->live);
	free(d);
}
