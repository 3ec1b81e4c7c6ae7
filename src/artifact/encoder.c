// SPDX-License-Identifier: GPL-2.0-only
/* encoder.c — a writer's open frame, in columns: each record coded against the frame's state as the decoder keeps it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/encoder.h"
#include "artifact/rank_list.h"

/* The most records of each kind a writer frame holds: its content limit over the smallest record. */
#define MT_FRAME_RECORDS_MAX (MT_FRAME_MAX_CONTENT / sizeof(struct mt_rec_hdr))
#define MT_FRAME_ALLOCS_MAX (MT_FRAME_MAX_CONTENT / sizeof(struct mt_alloc))

/* frame_slot.held: nothing, a seq in the live list, or with HELD_FREED a seq in the freed list. */
#define HELD_NONE 0xffffffffu
#define HELD_FREED 0x80000000u
/* The most slots the encoder's maps grow to: a full frame's keys fill them at most 2/3 (checked below). */
#define MT_ADDRS_SLOTS (MT_FRAME_MAX_CONTENT / 16)
#define MT_STACKS_SLOTS (MT_FRAME_MAX_CONTENT / 32)
/* Encoder maps start a frame this small (256 KiB), to stay in cache, and grow when a frame has more keys. */
#define MAP_SLOTS_MIN (1u << 14)
#define FIBONACCI_HASH 0x9e3779b97f4a7c15ull	/* 2^64 / the golden ratio: its top bits spread addresses */

/*
 * Open addressing, u64 keys, no deletion: the encoder's index of the addresses a frame has seen, and of stacks.
 * One lookup per address answers both questions the encoder asks about it. Not common/u64map, whose entries live
 * until deleted: this one is emptied at every frame at no cost (a generation per slot), and sized for a full frame
 * up front, so that coding a record never allocates and never fails halfway.
 */
struct frame_map {
	struct frame_slot {
		__u64 key;
		__u32 gen;	/* the slot is empty unless this is the map's gen, so clearing is gen++ */
		__u32 held;	/* HELD_*: the list entry holding this address; the stacks map: the table index */
		__u32 after;	/* a live seq whose mt_next_addr is this address, valid if live_next still says so */
	} *slot;		/* the table in use: mask + 1 slots, a small one unless the frame needs more */
	struct frame_slot *spare;	/* where growing rehashes to; both hold max slots */
	__u32 max;
	__u32 mask;
	__u32 count;		/* keys of this gen */
	__u32 gen;
	unsigned int shift;	/* 64 - log2(slots): the top bits of a Fibonacci hash */
};

struct col {
	__u8 *start;
	__u8 *pos;		/* where the next byte goes */
};

/* The open frame of a writer, already in columns; its state is the decoder's state at the same record. */
struct mt_encoder {
	struct col col[COL__COUNT];	/* each sized for a full frame, in one arena */
	__u8 *arena;
	uint64_t nrec;
	uint64_t ts_res;
	__u64 ts_magic;			/* floor(UINT64_MAX / ts_res): dividing by multiplying; 0 when ts_res is 1 */
	__u64 ts;			/* the previous coded record's ts_ns / ts_res */
	struct mt_threads threads;
	__u16 thread_hint[MT_THREADS_MAX];	/* by tid: thread table index + 1, 0 for none */
	__u32 nstacks;
	struct mt_rank_list live;
	struct mt_rank_list cls[MT_CLASSES];	/* freed entries by size class, numbered by freed seq */
	__u32 nfreed;			/* freed entries appended: the next freed seq */
	__u8 *freed_cls;		/* by freed seq: its class */
	__u8 *live_cls;			/* by live seq: the class of its size */
	__u64 *live_next;		/* by live seq: mt_next_addr of a present entry, 0 once removed */
	struct frame_map addrs;
	struct frame_map stacks;
};

static void frame_map__use(struct frame_map *m, __u32 slots)
{
	m->mask = slots - 1;
	m->shift = __builtin_clzll(slots) + 1;
}

static int frame_map__init(struct frame_map *m, __u32 max)
{
	m->slot = calloc(max, sizeof(*m->slot));
	m->spare = calloc(max, sizeof(*m->spare));
	m->max = max;
	m->gen = 1;
	frame_map__use(m, MAP_SLOTS_MIN < max ? MAP_SLOTS_MIN : max);
	return m->slot && m->spare ? 0 : -ENOMEM;
}

/* Back to the small table, which stays in cache; slots of older gens are empty. */
static void frame_map__clear(struct frame_map *m)
{
	m->count = 0;
	frame_map__use(m, MAP_SLOTS_MIN < m->max ? MAP_SLOTS_MIN : m->max);
	if (++m->gen)
		return;
	memset(m->slot, 0, m->max * sizeof(*m->slot));
	memset(m->spare, 0, m->max * sizeof(*m->spare));
	m->gen = 1;
}

static __u32 frame_map__home(const struct frame_map *m, __u64 key)
{
	return (key * FIBONACCI_HASH) >> m->shift;
}

/* The key's slot, or the empty slot where it would go. The map is never full (sized for a frame). */
static struct frame_slot *frame_map__slot(const struct frame_map *m, __u64 key)
{
	__u32 i = frame_map__home(m, key);

	while (m->slot[i].gen == m->gen && m->slot[i].key != key)
		i = (i + 1) & m->mask;
	return &m->slot[i];
}

/* The key's slot, made if missing. */
static struct frame_slot *frame_map__get(struct frame_map *m, __u64 key)
{
	struct frame_slot *s = frame_map__slot(m, key);

	if (s->gen != m->gen) {
		*s = (struct frame_slot){ .key = key, .gen = m->gen, .held = HELD_NONE, .after = HELD_NONE };
		m->count++;
	}
	return s;
}

static void frame_map__grow(struct frame_map *m)
{
	struct frame_slot *old = m->slot;
	__u32 slots = m->mask + 1, i;

	memset(m->spare, 0, 2 * slots * sizeof(*m->spare));
	m->slot = m->spare;
	m->spare = old;
	frame_map__use(m, 2 * slots);
	for (i = 0; i < slots; i++)
		if (old[i].gen == m->gen)
			*frame_map__slot(m, old[i].key) = old[i];
}

/* Room for n more keys with the table at most 2/3 full. Growing moves every slot: call it holding none. */
static inline void frame_map__reserve(struct frame_map *m, __u32 n)
{
	if ((m->count + n) * 3 > (m->mask + 1) * 2 && m->mask + 1 < m->max)
		frame_map__grow(m);
}

/* Worst-case bytes of a column in a full frame, so that encoding never checks for room. */
static size_t col_cap(enum mt_col c)
{
	switch (c) {
	case COL_TAG: return MT_FRAME_RECORDS_MAX;
	case COL_FLAGS_FREE: case COL_FLAGS_ALLOC: case COL_EXTRA: case COL_THREAD: case COL_MORE: case COL_CLASS:
		return MT_FRAME_ALLOCS_MAX;
	case COL_THREAD_NEW: case COL_STACK_NEW: return 8 * MT_FRAME_ALLOCS_MAX;
	case COL_VERBATIM: return MT_FRAME_MAX_CONTENT;
	default: break;
	}
	/* A number column: at most two uses per record (old_addr and addr), a byte or 8 LEB128 bytes each. */
	return (c - COL_TS_FREE_LO) % 2 ? 2 * 8 * MT_FRAME_ALLOCS_MAX : 2 * MT_FRAME_ALLOCS_MAX;
}

void mt_encoder__free(struct mt_encoder *e)
{
	int c;

	if (!e)
		return;
	free(e->stacks.spare);
	free(e->stacks.slot);
	free(e->addrs.spare);
	free(e->addrs.slot);
	free(e->live_next);
	free(e->live_cls);
	free(e->freed_cls);
	for (c = 0; c < MT_CLASSES; c++)
		mt_rank_list__free(&e->cls[c]);
	mt_rank_list__free(&e->live);
	free(e->arena);
	free(e);
}

void mt_encoder__reset(struct mt_encoder *e, uint64_t ts_res)
{
	int c;

	for (c = 0; c < COL__COUNT; c++)
		e->col[c].pos = e->col[c].start;
	e->nrec = 0;
	e->ts_res = ts_res;
	e->ts_magic = ts_res > 1 ? UINT64_MAX / ts_res : 0;
	e->ts = 0;
	mt_threads__reset(&e->threads);
	memset(e->thread_hint, 0, sizeof(e->thread_hint));
	e->nstacks = 0;
	mt_rank_list__clear(&e->live);
	for (c = 0; c < MT_CLASSES; c++)
		mt_rank_list__clear(&e->cls[c]);
	e->nfreed = 0;
	frame_map__clear(&e->addrs);
	frame_map__clear(&e->stacks);
}

/* A frame's addresses: old_addr, addr and mt_next_addr(addr) per record, the map at most 2/3 full; its stacks. */
struct mt_encoder *mt_encoder__new(void)
{
	struct mt_encoder *e = calloc(1, sizeof(*e));
	size_t total = 0;
	int c, err;

	if (!e)
		return NULL;
	for (c = 0; c < COL__COUNT; c++)
		total += col_cap(c);
	e->arena = malloc(total);
	e->live_next = malloc(MT_FRAME_ALLOCS_MAX * sizeof(*e->live_next));
	e->live_cls = malloc(MT_FRAME_ALLOCS_MAX);
	e->freed_cls = malloc(2 * MT_FRAME_ALLOCS_MAX);
	err = e->arena && e->live_next && e->live_cls && e->freed_cls ? 0 : -ENOMEM;
	if (!err)
		err = mt_rank_list__init(&e->live, MT_FRAME_ALLOCS_MAX);
	for (c = 0; c < MT_CLASSES && !err; c++)
		err = mt_rank_list__init(&e->cls[c], 2 * MT_FRAME_ALLOCS_MAX);
	if (!err)
		err = frame_map__init(&e->addrs, MT_ADDRS_SLOTS);
	if (!err)
		err = frame_map__init(&e->stacks, MT_STACKS_SLOTS);
	if (err) {
		mt_encoder__free(e);
		errno = -err;
		return NULL;
	}
	for (c = 0, total = 0; c < COL__COUNT; total += col_cap(c), c++)
		e->col[c].start = e->arena + total;
	mt_encoder__reset(e, 1);
	return e;
}

_Static_assert(3 * MT_FRAME_ALLOCS_MAX <= MT_ADDRS_SLOTS * 2 / 3, "addrs map load");
_Static_assert(MT_FRAME_ALLOCS_MAX <= MT_STACKS_SLOTS * 2 / 3, "stacks map load");
_Static_assert(2 * MT_FRAME_ALLOCS_MAX < HELD_FREED, "a freed seq fits in frame_slot.held");

static size_t col_len(const struct col *k)
{
	return k->pos - k->start;
}

static void col_varint(struct col *k, __u64 v)
{
	k->pos = mt_varint_put(k->pos, v);
}

static void put_u8(struct mt_encoder *e, enum mt_col c, __u8 v)
{
	*e->col[c].pos++ = v;
}

static void put_raw(struct mt_encoder *e, enum mt_col c, const void *v, size_t n)
{
	memcpy(e->col[c].pos, v, n);
	e->col[c].pos += n;
}

static void put_varint(struct mt_encoder *e, enum mt_col c, __u64 v)
{
	col_varint(&e->col[c], v);
}

/* Low bytes and high parts in separate columns: zstd codes each column's bytes with its own Huffman table. */
static void put_number(struct mt_encoder *e, enum mt_col lo, __u64 v)
{
	put_u8(e, lo, v & 0xff);
	put_varint(e, lo + 1, v >> 8);
}

static enum thread_mode encode_thread(struct mt_encoder *e, __u32 pid, __u32 tid)
{
	__u16 *hint = &e->thread_hint[tid % MT_THREADS_MAX];
	struct mt_threads *ts = &e->threads;
	struct mt_thread_id id = { pid, tid };
	const struct mt_thread_id *t;
	unsigned int n;

	if (pid == ts->cur.pid && tid == ts->cur.tid)
		return THREAD_SAME;
	t = *hint ? &ts->id[*hint - 1] : NULL;
	if (t && t->pid == pid && t->tid == tid) {
		put_u8(e, COL_THREAD, *hint - 1);
		mt_threads__select(ts, *hint - 1);
		return THREAD_INDEX;
	}
	put_raw(e, COL_THREAD_NEW, &id, sizeof(id));
	n = ts->n;
	if (mt_threads__add(ts, id) > n)
		*hint = ts->n;
	return THREAD_NEW;
}

/* ts_ns / ts_res: the product with the reciprocal is never over and at most a few short. A divq costs 40 cycles. */
static __u64 quantize(const struct mt_encoder *e, __u64 ts_ns)
{
	__u64 q = (unsigned __int128)ts_ns * e->ts_magic >> 64;

	while (ts_ns - q * e->ts_res >= e->ts_res)
		q++;
	return q;
}

static __u64 round_ts(const struct mt_encoder *e, __u64 ts_ns)
{
	return e->ts_magic ? quantize(e, ts_ns) * e->ts_res : ts_ns;
}

/* Returns the head's time step: the difference itself when small, else HD_TS_NUMBER and a number. */
static __u8 encode_ts(struct mt_encoder *e, __u64 ts_ns, bool is_free)
{
	__u64 ts = e->ts_magic ? quantize(e, ts_ns) : ts_ns, delta = ts - e->ts;

	e->ts = ts;
	if (delta < HD_TS_NUMBER)
		return delta;
	put_number(e, is_free ? COL_TS_FREE_LO : COL_TS_ALLOC_LO, mt_zigzag(delta));
	return HD_TS_NUMBER;
}

/* An address neither list holds: after a live block when one ends there (and the rank is the smaller number). */
static enum addr_mode encode_elsewhere(struct mt_encoder *e, const struct frame_slot *s, __u64 v)
{
	__u64 delta = mt_zigzag(v - *e->threads.cur_addr);
	__u32 rank;

	if (s->after != HELD_NONE && e->live_next[s->after] == v) {
		rank = mt_rank_list__rank(&e->live, s->after);
		if (rank < delta) {
			put_number(e, COL_AFTER_LO, rank);
			return ADDR_AFTER;
		}
	}
	put_number(e, COL_DELTA_LO, delta);
	return ADDR_DELTA;
}

/*
 * addr of a free, old_addr of a realloc: the block leaves the live list and becomes the newest freed entry. A REF's
 * live rank goes into *rank, or when rank is NULL into the live column.
 */
static enum addr_mode encode_freeing(struct mt_encoder *e, __u64 v, __u32 *rank)
{
	unsigned int cls = CLASS_BIG;	/* a block the frame has not seen taken: its size is unknown */
	struct frame_slot *s;
	enum addr_mode mode;

	if (!v)
		return ADDR_ZERO;
	s = frame_map__get(&e->addrs, v);
	if (!(s->held & HELD_FREED)) {
		if (rank)
			*rank = mt_rank_list__rank(&e->live, s->held);
		else
			put_number(e, COL_LIVE_LO, mt_rank_list__rank(&e->live, s->held));
		mt_rank_list__remove(&e->live, s->held);
		e->live_next[s->held] = 0;
		cls = e->live_cls[s->held];
		mode = ADDR_REF;
	} else {
		mode = encode_elsewhere(e, s, v);
	}
	e->freed_cls[e->nfreed] = cls;
	mt_rank_list__add(&e->cls[cls], e->nfreed);
	s->held = e->nfreed++ | HELD_FREED;
	mt_threads__set_addr(&e->threads, v);
	return mode;
}

/* A freed block taken again: by its rank among the freed blocks of its class, named first if not the size's. */
static enum addr_mode encode_freed(struct mt_encoder *e, __u32 seq, unsigned int want)
{
	unsigned int cls = e->freed_cls[seq];

	if (cls != want)
		put_u8(e, COL_CLASS, cls);
	put_number(e, cls == CLASS_BIG ? COL_FREED_LO : COL_SMALL_LO, mt_rank_list__rank(&e->cls[cls], seq));
	mt_rank_list__remove(&e->cls[cls], seq);
	return cls == want ? ADDR_CLASS : ADDR_OTHER;
}

/* addr of an allocation: often a block freed recently, which leaves the freed list; it becomes the newest live one. */
static enum addr_mode encode_taking(struct mt_encoder *e, __u64 v, __u64 size)
{
	unsigned int want = mt_size_class(size);
	struct frame_slot *s;
	enum addr_mode mode;
	__u32 seq;

	if (!v)
		return ADDR_ZERO;
	s = frame_map__get(&e->addrs, v);
	if (s->held != HELD_NONE && (s->held & HELD_FREED))
		mode = encode_freed(e, s->held & ~HELD_FREED, want);
	else
		mode = encode_elsewhere(e, s, v);
	s->held = seq = mt_rank_list__append(&e->live);
	e->live_cls[seq] = want;
	e->live_next[seq] = mt_next_addr(v, size);
	frame_map__get(&e->addrs, e->live_next[seq])->after = seq;
	mt_threads__set_addr(&e->threads, v);
	return mode;
}

static enum stack_mode encode_stack(struct mt_encoder *e, __u64 stack)
{
	struct frame_slot *s;

	frame_map__reserve(&e->stacks, 1);
	s = frame_map__get(&e->stacks, stack);

	if (s->held != HELD_NONE) {
		put_number(e, COL_STACK_LO, s->held);
		return STACK_INDEX;
	}
	put_raw(e, COL_STACK_NEW, &stack, sizeof(stack));
	s->held = e->nstacks++;
	return STACK_NEW;
}

static __u8 encode_extra(struct mt_encoder *e, const struct mt_alloc *a)
{
	__u8 extra = 0;

	if (a->align) {
		extra |= EX_ALIGN;
		put_number(e, COL_ALIGN_LO, a->align);
	}
	if (a->stack)
		extra |= encode_stack(e, a->stack) << EX_STACK_SHIFT;
	return extra;
}

/* The head's 2 bits of a taken non-zero address's mode. */
static enum v3_addr v3_addr_of(enum addr_mode mode)
{
	switch (mode) {
	case ADDR_OTHER: return V3_OTHER;
	case ADDR_AFTER: return V3_AFTER;
	case ADDR_DELTA: return V3_DELTA;
	default: return V3_CLASS;	/* ADDR_CLASS */
	}
}

/* A released addr: a live rank, its high part in the head (its place) and its low byte in live_lo; others via MORE. */
static void encode_released(struct mt_encoder *e, __u64 v, __u8 *head, __u8 *more)
{
	enum addr_mode mode;
	__u32 rank = 0;

	mode = encode_freeing(e, v, &rank);
	if (mode != ADDR_REF) {
		*more |= (mode == ADDR_ZERO ? MO_ADDR_ZERO : mode) << MO_ADDR_SHIFT;	/* ADDR_AFTER, ADDR_DELTA: 2, 3 */
		return;
	}
	put_u8(e, COL_LIVE_LO, rank & 0xff);
	if (rank >> 8 < HD_PLACE_HI) {
		*head |= rank >> 8 << HD_PLACE_SHIFT;
		return;
	}
	*head |= HD_PLACE_HI << HD_PLACE_SHIFT;
	put_varint(e, COL_LIVE_HI, (rank >> 8) - HD_PLACE_HI);
}

static void encode_taken(struct mt_encoder *e, const struct mt_alloc *a, __u8 *head, __u8 *more)
{
	if (a->size) {
		*head |= HD_SIZE;
		put_number(e, COL_SIZE_LO, a->size);
	}
	*more |= encode_freeing(e, a->old_addr, NULL) << MO_OLD_SHIFT;
	if (a->addr)
		*head |= v3_addr_of(encode_taking(e, a->addr, a->size)) << HD_ADDR_SHIFT;
	else
		*more |= MO_ADDR_ZERO << MO_ADDR_SHIFT;
}

/* The decoder's order: thread, ts, size, old_addr, addr, extra. Only the two addresses share state. */
static void encode_alloc(struct mt_encoder *e, const struct mt_alloc *a)
{
	bool is_free = mt_func__is_free(a->func);
	__u8 head, more, extra;

	frame_map__reserve(&e->addrs, 3);	/* old_addr, addr, mt_next_addr(addr) */
	put_u8(e, COL_TAG, a->func | a->allocator << MT_TAG_ALLOCATOR_SHIFT);
	more = encode_thread(e, a->hdr.pid, a->hdr.tid) << MO_THREAD_SHIFT;
	head = encode_ts(e, a->hdr.ts_ns, is_free);
	if (!is_free) {
		encode_taken(e, a, &head, &more);
	} else {
		if (a->size) {
			more |= MO_SIZE;
			put_number(e, COL_SIZE_LO, a->size);
		}
		more |= encode_freeing(e, a->old_addr, NULL) << MO_OLD_SHIFT;
		encode_released(e, a->addr, &head, &more);
	}
	extra = encode_extra(e, a);
	if (extra) {
		more |= MO_EXTRA;
		put_u8(e, COL_EXTRA, extra);
	}
	if (more) {
		head |= HD_MORE;
		put_u8(e, COL_MORE, more);
	}
	put_u8(e, is_free ? COL_FLAGS_FREE : COL_FLAGS_ALLOC, head);
}

/*
 * Columns hold the allocation records whose every byte they can give back; anything else goes verbatim. The last
 * 8 bytes are func, allocator and padding: padding 0, func < 32 and allocator < 8, not both 0.
 */
#define TAIL_CODABLE ((__u64)MT_FUNC_MASK | (__u64)MT_ALLOCATOR_MASK << 8)

static bool alloc_codable(const struct mt_alloc *a)
{
	__u64 tail;

	memcpy(&tail, (const __u8 *)a + offsetof(struct mt_alloc, func), sizeof(tail));
	return !a->hdr.seq && tail && !(tail & ~TAIL_CODABLE);
}

void mt_encoder__add(struct mt_encoder *e, const void *rec, size_t size)
{
	bool codable = false;
	struct mt_alloc a;

	memcpy(&a.hdr, rec, sizeof(a.hdr));
	if (size == sizeof(a) && a.hdr.type == MT_REC_ALLOC) {
		memcpy(&a, rec, sizeof(a));
		codable = alloc_codable(&a);
	}
	if (codable) {
		encode_alloc(e, &a);
	} else {
		/* Rounded down like the coded ones: an exact time would sort a fork or an exec after the calls that
		 * follow it but whose times were rounded below it. */
		__u64 ts = round_ts(e, a.hdr.ts_ns);

		put_u8(e, COL_TAG, 0);
		put_raw(e, COL_VERBATIM, rec, size);
		memcpy(e->col[COL_VERBATIM].pos - size + offsetof(struct mt_rec_hdr, ts_ns), &ts, sizeof(ts));
	}
	e->nrec++;
}

uint64_t mt_encoder__round_ts(const struct mt_encoder *e, uint64_t ts_ns)
{
	return round_ts(e, ts_ns);
}

size_t mt_encoder__header(const struct mt_encoder *e, uint64_t seq, __u8 *buf)
{
	struct col h = { buf, buf };
	int c;

	*h.pos++ = MT_LAYOUT_COLUMNS;
	col_varint(&h, seq);
	col_varint(&h, e->nrec);
	col_varint(&h, e->ts_res);
	col_varint(&h, COL__COUNT);
	for (c = 0; c < COL__COUNT; c++)
		col_varint(&h, col_len(&e->col[c]));
	return col_len(&h);
}

const __u8 *mt_encoder__column(const struct mt_encoder *e, enum mt_col c, size_t *len)
{
	*len = col_len(&e->col[c]);
	return e->col[c].start;
}
