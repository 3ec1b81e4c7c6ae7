/* artifact.c — DIR/events.mtz: a fixed header, then records in independent, checksummed zstd frames, in columns. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <zstd.h>

#include "artifact/artifact.h"
#include "common/log.h"

/* Records are stored as host structs and the format is defined as little-endian: the two must agree. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "events.mtz is little-endian");
/* Any record must fit in one frame, and the reader must accept every frame the writer makes. */
_Static_assert(MT_FRAME_MAX_CONTENT >= UINT16_MAX, "a record fits in a frame");
_Static_assert(MT_FRAME_MAX_CONTENT <= MT_FRAME_READ_LIMIT, "the reader accepts the writer's frames");

/*
 * Columns leave zstd little to match: its Huffman coding of literals does most of the work, and a match found in a
 * column of random numbers (ranks, sizes) costs more than the literals it replaces. Level 1 with a hash table of 64
 * slots finds the long repeats (tags, flags) and few others: 1.5% smaller than 4096 slots, and no slower.
 */
#define MT_ZSTD_LEVEL 1
#define MT_ZSTD_WINDOW_LOG 17
#define MT_ZSTD_HASH_LOG 6
#define MT_ZSTD_MIN_MATCH 7
#define MT_READ_CHUNK (256u << 10)
/* ZSTD_FRAMEHEADERSIZE_MAX, which zstd.h only declares for static linking. */
#define MT_ZSTD_HEADER_MAX 18
/* Frame_Header_Descriptor: the byte after the magic (RFC 8878 3.1.1.1.1); bit 2 is Content_Checksum_Flag. */
#define MT_ZSTD_FHD 4
#define MT_ZSTD_FHD_CHECKSUM 0x04
/* Skippable frame: u32 magic, u32 content size, content. */
#define MT_SKIPPABLE_HEADER 8
/* Every record field is at most 8 bytes wide; records at other offsets are copied before delivery. */
#define MT_REC_ALIGN 8

/*
 * Version 2 and 3 frame content (docs/FORMAT.md, "Frame content"): a header, then columns. MT_REC_ALLOC records are
 * split into fields, coded against what the frame has seen so far (the live and freed blocks, the previous time
 * and address); every other record is copied whole into the verbatim column. The writer writes version 3.
 */
#define MT_LAYOUT_COLUMNS 1	/* the first byte of the content; the only layout of versions 2 and 3 */
#define MT_THREADS_MAX 256	/* thread table entries, so that an index is one byte */
#define MT_VARINT_MAX 10	/* LEB128 bytes of a u64 */
#define MT_CONTENT_HEADER_MAX (1 + MT_VARINT_MAX * (3 + COL__COUNT))
/* The most records of each kind a writer frame holds: its content limit over the smallest record. */
#define MT_FRAME_RECORDS_MAX (MT_FRAME_MAX_CONTENT / sizeof(struct mt_rec_hdr))
#define MT_FRAME_ALLOCS_MAX (MT_FRAME_MAX_CONTENT / sizeof(struct mt_alloc))

/*
 * Column numbers are part of the format: the content header gives their lengths in this order. Version 2 has the
 * first COL_V2_COUNT; version 3 all of them, and its head bytes where version 2 has flags.
 */
enum mt_col {
	COL_TAG,		/* u8 per record: 0 verbatim, else func | allocator << 5 */
	COL_FLAGS_FREE,		/* u8 per coded record whose func releases a block: v2 flags, v3 head */
	COL_FLAGS_ALLOC,	/* u8 per other coded record */
	COL_EXTRA,		/* u8 per coded record with FL_EXTRA */
	COL_THREAD,		/* u8: thread table index */
	COL_THREAD_NEW,		/* u32 pid, u32 tid */
	COL_STACK_NEW,		/* u64 stack hash */
	COL_VERBATIM,		/* whole records */
	/* Numbers: the low byte in the _LO column, the rest (value >> 8) as LEB128 in the _HI column after it. */
	COL_TS_FREE_LO, COL_TS_FREE_HI,
	COL_TS_ALLOC_LO, COL_TS_ALLOC_HI,
	COL_SIZE_LO, COL_SIZE_HI,
	COL_LIVE_LO, COL_LIVE_HI,
	COL_FREED_LO, COL_FREED_HI,
	COL_AFTER_LO, COL_AFTER_HI,
	COL_DELTA_LO, COL_DELTA_HI,
	COL_ALIGN_LO, COL_ALIGN_HI,
	COL_STACK_LO, COL_STACK_HI,
	COL_V2_COUNT,
	COL_MORE = COL_V2_COUNT,	/* v3: u8 per coded record with HD_MORE */
	COL_CLASS,		/* v3: u8, the size class of a CLASS_OTHER address */
	COL_SMALL_LO, COL_SMALL_HI,	/* v3: a rank in a small size class's freed list (COL_FREED_*: the big one's) */
	COL__COUNT,
};

static const char *const col_names[COL__COUNT] = {
	"tag", "flags_free", "flags_alloc", "extra", "thread", "thread_new", "stack_new", "verbatim",
	"ts_free_lo", "ts_free_hi", "ts_alloc_lo", "ts_alloc_hi", "size_lo", "size_hi", "live_lo", "live_hi",
	"freed_lo", "freed_hi", "after_lo", "after_hi", "delta_lo", "delta_hi", "align_lo", "align_hi",
	"stack_lo", "stack_hi", "more", "class", "small_lo", "small_hi",
};

/* FLAGS byte of a coded record. */
#define FL_ADDR_SHIFT 0		/* 2 bits: enum addr_mode of addr */
#define FL_OLD_SHIFT 2		/* 2 bits: enum addr_mode of old_addr */
#define FL_SIZE 0x10		/* size is not 0: a size number follows */
#define FL_THREAD_SHIFT 5	/* 2 bits: enum thread_mode */
#define FL_EXTRA 0x80		/* an EXTRA byte follows */
/* EXTRA byte. */
#define EX_ALIGN 0x01		/* align is not 0: an align number follows */
#define EX_STACK_SHIFT 1	/* 2 bits: enum stack_mode */
#define EX_RESERVED 0xf8

/* How an address is coded. Frees and old_addr use the live list, allocations the freed list. */
enum addr_mode {
	ADDR_ZERO,		/* 0 */
	ADDR_REF,		/* a rank in the live list (and removed from it) or in the freed list (likewise) */
	ADDR_AFTER,		/* where the next block after a live entry would start (mt_next_addr) */
	ADDR_DELTA,		/* the previous address plus a zigzag delta */
	/* Version 3 only, never in a flags or MORE byte: */
	ADDR_CLASS,		/* taken: a rank in the freed list of the size's class (V3_CLASS) */
	ADDR_OTHER,		/* taken: a class number, then a rank in that class's freed list (V3_OTHER) */
};

/*
 * Version 3 HEAD byte of a coded record, its first: the time step and the usual fields, so that zstd codes them as one
 * symbol (a column of near-binary bytes costs a whole bit per byte); a release's holds the high part of its live
 * rank too. Its MORE byte has the rarer ones.
 */
#define HD_TS_MASK 0x0f		/* ts - previous ts when 0..14; 15: a ts number follows */
#define HD_TS_NUMBER 15
#define HD_MORE 0x80		/* a MORE byte follows */
#define HD_ADDR_SHIFT 4		/* taking: 2 bits, enum v3_addr of addr */
#define HD_SIZE 0x40		/* taking: as FL_SIZE */
#define HD_PLACE_SHIFT 4	/* releasing: 3 bits, the live rank of addr >> 8, or HD_PLACE_HI */
#define HD_PLACE_HI 7		/* releasing: the live rank >> 8 is 7 + a LEB128 of live_hi */
#define MO_OLD_SHIFT 0		/* 2 bits: enum addr_mode of old_addr */
#define MO_THREAD_SHIFT 2	/* 2 bits: enum thread_mode */
#define MO_EXTRA 0x10		/* an EXTRA byte follows */
#define MO_SIZE 0x20		/* releasing: as FL_SIZE */
#define MO_ADDR_SHIFT 6		/* 2 bits: 0, addr as the head says; else MO_ADDR_ZERO, or releasing, AFTER or DELTA */
#define MO_ADDR_ZERO 1		/* addr is 0, and the head's address mode (place) is 0 */

/* Version 3 address modes of a taking record's head. */
enum v3_addr {
	V3_CLASS,		/* a rank in the freed list of the size's class */
	V3_OTHER,		/* a class number, then a rank in that class's freed list */
	V3_AFTER,		/* as ADDR_AFTER */
	V3_DELTA,		/* as ADDR_DELTA */
};

/*
 * Freed blocks are listed by size class as well, since glibc hands a request a block of its own size class first
 * (tcache: chunks of 32 to 1040 bytes by 16). The rest, and blocks whose size the frame never saw, are one class.
 */
#define CLASS_SMALL_MAX 1032	/* the largest request of a small class */
#define CLASS_BIG 64
#define MT_CLASSES 65

enum thread_mode { THREAD_SAME, THREAD_INDEX, THREAD_NEW };
enum stack_mode { STACK_ZERO, STACK_INDEX, STACK_NEW };

/* u64_slot.held: nothing, a seq in the live list, or with HELD_FREED a seq in the freed list. */
#define HELD_NONE 0xffffffffu
#define HELD_FREED 0x80000000u
/* The most slots the encoder's maps grow to: a full frame's keys fill them at most 2/3 (checked below). */
#define MT_ADDRS_SLOTS (MT_FRAME_MAX_CONTENT / 16)
#define MT_STACKS_SLOTS (MT_FRAME_MAX_CONTENT / 32)
/* Encoder maps start a frame this small (256 KiB), to stay in cache, and grow when a frame has more keys. */
#define MAP_SLOTS_MIN (1u << 14)

struct mt_file_header {
	char magic[8];		/* MT_ARTIFACT_MAGIC, no NUL */
	__u32 version;		/* MT_ARTIFACT_VERSION */
	__u32 header_size;	/* readers skip this many bytes, so a later version may append fields */
	__u64 flags;		/* 0 */
	__u64 reserved;		/* 0 */
};

_Static_assert(sizeof(struct mt_file_header) == 32, "mt_file_header size");

/*
 * The live and freed lists: entries numbered by insertion (seq), removable, named by rank (how many present entries
 * are newer). A bit per entry, a count per 64 and per 512; ranks are counted from the newest end, where blocks are
 * freed and taken again soonest, so a rank costs a few adds. Appending and removing cost one each.
 */
struct rank_list {
	__u64 *bits;		/* bit seq % 64 of word seq / 64: the entry is present */
	__u8 *count64;		/* present entries of each word */
	__u16 *count512;	/* present entries of each 8 words */
	__u32 cap;		/* appends a frame may make */
	__u32 n;		/* entries appended: the next seq */
	__u32 count;		/* entries present */
};

/*
 * Open addressing, u64 keys, no deletion: the encoder's index of the addresses a frame has seen, and of stacks.
 * One lookup per address answers both questions the encoder asks about it.
 */
struct u64_map {
	struct u64_slot {
		__u64 key;
		__u32 gen;	/* the slot is empty unless this is the map's gen, so clearing is gen++ */
		__u32 held;	/* HELD_*: the list entry holding this address; the stacks map: the table index */
		__u32 after;	/* a live seq whose mt_next_addr is this address, valid if live_next still says so */
	} *slot;		/* the table in use: mask + 1 slots, a small one unless the frame needs more */
	struct u64_slot *spare;	/* where growing rehashes to; both hold max slots */
	__u32 max;
	__u32 mask;
	__u32 count;		/* keys of this gen */
	__u32 gen;
	unsigned int shift;	/* 64 - log2(slots): the top bits of a Fibonacci hash */
};

struct mt_thread_id {
	__u32 pid;
	__u32 tid;
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
	__u64 addr;			/* the previous non-zero address coded */
	__u64 *thread_addr;		/* the previous one of this record's thread: in threads_addr, or addr */
	struct mt_thread_id thread;	/* the previous coded record's */
	struct mt_thread_id threads[MT_THREADS_MAX];
	__u64 threads_addr[MT_THREADS_MAX];
	unsigned int nthreads;
	__u16 thread_hint[MT_THREADS_MAX];	/* by tid: thread table index + 1, 0 for none */
	__u32 nstacks;
	struct rank_list live;
	struct rank_list cls[MT_CLASSES];	/* freed entries by size class, numbered by freed seq */
	__u32 nfreed;			/* freed entries appended: the next freed seq */
	__u8 *freed_cls;		/* by freed seq: its class */
	__u8 *live_cls;			/* by live seq: the class of its size */
	__u64 *live_next;		/* by live seq: mt_next_addr of a present entry, 0 once removed */
	struct u64_map addrs;
	struct u64_map stacks;
};

struct mt_writer {
	int fd;
	int err;		/* first I/O or zstd failure; sticky, so a half-written frame is never followed by more */
	ZSTD_CCtx *cctx;
	struct mt_encoder *enc;
	size_t pending_len;	/* decoded bytes of the records in the open frame */
	uint64_t ts_res;
	void *zbuf;		/* one compressed frame; grown to ZSTD_compressBound of the content */
	size_t zbuf_cap;
	uint64_t records;
	uint64_t bytes;
	mt_record_fn tap;	/* mt_writer__set_tap */
	void *tap_ctx;
	_Alignas(8) __u8 tap_buf[UINT16_MAX];	/* a record as the reader will give it back */
};

/* The reader's outcome for one frame position; errors are negative errno. */
enum frame_kind {
	FRAME_DATA = 1,		/* r->frame holds the complete, checksummed content */
	FRAME_SKIPPED,		/* a skippable frame was passed over */
	FRAME_EOF,		/* the file ends cleanly at a frame boundary */
};

struct cursor {
	const __u8 *p;
	size_t len;
	size_t pos;
};

/* A version 2 frame's content turned back into records; the arrays only grow, from frame to frame. */
struct mt_decoder {
	struct cursor col[COL__COUNT];
	uint64_t nrec;
	uint64_t ts_res;
	__u64 ts, addr, *thread_addr;
	struct mt_thread_id thread;
	struct mt_thread_id threads[MT_THREADS_MAX];
	__u64 threads_addr[MT_THREADS_MAX];
	unsigned int nthreads;
	__u64 *stacks;
	__u32 nstacks;
	__u32 version;		/* the file's: 2 or 3 */
	struct rank_list live, freed;
	struct rank_list cls[MT_CLASSES];	/* version 3: freed entries by size class, numbered by freed seq */
	__u64 *live_addr, *live_size, *freed_addr;
	size_t cap;		/* coded records the arrays are sized for */
	__u8 *out;		/* the decoded records, as a version 1 frame holds them */
	size_t out_len;
	size_t out_cap;
	uint64_t rec;		/* the record being decoded, for reasons */
	char why[112];		/* the first problem found; decoding goes on safely and stops after the record */
};

struct mt_reader {
	int fd;
	char name[256];		/* the file's path, for reasons */
	struct mt_read_status *st;
	mt_record_fn fn;
	void *ctx;
	ZSTD_DCtx *dctx;
	__u32 version;		/* the file's: 1, records as they are; 2, columns */
	__u8 *in;		/* MT_READ_CHUNK bytes of the file, in[0] at file offset in_off */
	size_t in_len;
	size_t in_pos;
	uint64_t in_off;
	bool eof;
	__u8 *frame;		/* decompressed content of the current frame */
	size_t frame_len;
	size_t frame_cap;
	uint64_t frame_start;	/* file offset of the current frame */
	unsigned long long frame_declared;	/* content size from its header, or a ZSTD_CONTENTSIZE_* value */
	void *aligned;		/* UINT16_MAX bytes: an aligned copy of a record found at an odd offset */
	struct mt_decoder dec;
};

/* The reader, the writer and the model share this rule: a record may be longer than its type's struct, never shorter. */
size_t mt_rec__min_size(unsigned int type)
{
	switch (type) {
	case MT_REC_ALLOC: return sizeof(struct mt_alloc);
	case MT_REC_SYSCALL: return sizeof(struct mt_syscall);
	case MT_REC_FORK: return sizeof(struct mt_fork);
	case MT_REC_EXEC: return sizeof(struct mt_exec);
	case MT_REC_EXIT: return sizeof(struct mt_exit);
	case MT_REC_THREAD_EXIT: return sizeof(struct mt_thread_exit);
	case MT_REC_SESSION: return sizeof(struct mt_session);
	case MT_REC_END: return sizeof(struct mt_end);
	case MT_REC_ATTACH: return sizeof(struct mt_attach);
	case MT_REC_MAPPING: return sizeof(struct mt_mapping);
	case MT_REC_FILE: return sizeof(struct mt_file);
	case MT_REC_STACK: return sizeof(struct mt_stack);
	default: return 0;
	}
}

static size_t rec_min_size(__u16 type)
{
	size_t min = mt_rec__min_size(type);

	return min ? min : sizeof(struct mt_rec_hdr);
}

/* Where glibc puts the next chunk after a block of size bytes at addr (request2size): the AFTER prediction. */
static __u64 mt_next_addr(__u64 addr, __u64 size)
{
	__u64 chunk = (size + 23) & ~(__u64)15;

	return addr + (chunk < 32 ? 32 : chunk);
}

static __u64 zigzag(__u64 delta)
{
	return delta << 1 ^ -(delta >> 63);
}

static __u64 unzigzag(__u64 v)
{
	return v >> 1 ^ -(v & 1);
}

/* __builtin_popcountll is a libgcc call unless the build targets POPCNT; this is a dozen plain instructions. */
static unsigned int popcount64(__u64 x)
{
	x -= x >> 1 & 0x5555555555555555ull;
	x = (x & 0x3333333333333333ull) + (x >> 2 & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return x * 0x0101010101010101ull >> 56;
}

static int rank_list__init(struct rank_list *l, size_t cap)
{
	__u64 *bits = realloc(l->bits, (cap / 64 + 1) * sizeof(*bits));
	__u8 *count64;
	__u16 *count512;

	if (bits)
		l->bits = bits;
	count64 = realloc(l->count64, cap / 64 + 1);
	if (count64)
		l->count64 = count64;
	count512 = realloc(l->count512, (cap / 512 + 1) * sizeof(*count512));
	if (count512)
		l->count512 = count512;
	if (!bits || !count64 || !count512)
		return -ENOMEM;
	l->cap = cap;
	l->n = l->count = 0;
	return 0;
}

/*
 * Adds entry seq (n <= seq < cap). Lists may share one numbering, each holding some of its seqs (the size classes'
 * freed lists): words and counts are cleared as the list reaches them, and the seqs it skipped are absent.
 */
static void rank_list__add(struct rank_list *l, __u32 seq)
{
	__u32 i;

	for (i = l->n ? (l->n - 1) / 64 + 1 : 0; i <= seq / 64; i++) {
		l->bits[i] = 0;
		l->count64[i] = 0;
	}
	for (i = l->n ? (l->n - 1) / 512 + 1 : 0; i <= seq / 512; i++)
		l->count512[i] = 0;
	l->n = seq + 1;
	l->bits[seq / 64] |= 1ull << seq % 64;
	l->count64[seq / 64]++;
	l->count512[seq / 512]++;
	l->count++;
}

/* Returns the new entry's seq; n < cap. */
static __u32 rank_list__append(struct rank_list *l)
{
	__u32 seq = l->n;

	rank_list__add(l, seq);
	return seq;
}

static void rank_list__free(struct rank_list *l)
{
	free(l->count512);
	free(l->count64);
	free(l->bits);
}

/* Class c of a freed block of that many bytes: glibc's tcache bin of its chunk, or CLASS_BIG. */
static unsigned int size_class(__u64 size)
{
	return size > CLASS_SMALL_MAX ? CLASS_BIG : (mt_next_addr(0, size) - 32) / 16;
}

/* seq must be present. */
static void rank_list__remove(struct rank_list *l, __u32 seq)
{
	l->bits[seq / 64] &= ~(1ull << seq % 64);
	l->count64[seq / 64]--;
	l->count512[seq / 512]--;
	l->count--;
}

static __u32 rank_list__rank(const struct rank_list *l, __u32 seq)
{
	__u32 w = seq / 64, last = (l->n - 1) / 64, end = w | 7, rank, i;

	rank = popcount64(l->bits[w] >> seq % 64 >> 1);
	for (i = w + 1; i <= end && i <= last; i++)
		rank += l->count64[i];
	for (i = seq / 512 + 1; i <= last / 8; i++)
		rank += l->count512[i];
	return rank;
}

/* The bit number of set bit k of x, counting from bit 0; k < popcount(x). Bytes first, then bits. */
static unsigned int select64(__u64 x, unsigned int k)
{
	__u64 bytes = x - (x >> 1 & 0x5555555555555555ull);
	unsigned int at, n;

	bytes = (bytes & 0x3333333333333333ull) + (bytes >> 2 & 0x3333333333333333ull);
	bytes = (bytes + (bytes >> 4)) & 0x0f0f0f0f0f0f0f0full;	/* the set bits of each byte */
	for (at = 0; k >= (n = bytes >> at & 0xff); at += 8)
		k -= n;
	for (x >>= at; k; k--)
		x &= x - 1;
	return at + __builtin_ctzll(x);
}

/* The seq of the present entry of that rank; rank < count. */
static __u32 rank_list__find(const struct rank_list *l, __u32 rank)
{
	__u32 last = (l->n - 1) / 64, b = last / 8, w;

	while (rank >= l->count512[b])
		rank -= l->count512[b--];
	for (w = (b * 8 + 7 < last ? b * 8 + 7 : last); rank >= l->count64[w]; w--)
		rank -= l->count64[w];
	/* rank entries of its word are newer: it is the word's set bit count - 1 - rank from bit 0 */
	return w * 64 + select64(l->bits[w], l->count64[w] - 1 - rank);
}

static void u64_map__use(struct u64_map *m, __u32 slots)
{
	m->mask = slots - 1;
	m->shift = __builtin_clzll(slots) + 1;
}

static int u64_map__init(struct u64_map *m, __u32 max)
{
	m->slot = calloc(max, sizeof(*m->slot));
	m->spare = calloc(max, sizeof(*m->spare));
	m->max = max;
	m->gen = 1;
	u64_map__use(m, MAP_SLOTS_MIN < max ? MAP_SLOTS_MIN : max);
	return m->slot && m->spare ? 0 : -ENOMEM;
}

/* Back to the small table, which stays in cache; slots of older gens are empty. */
static void u64_map__clear(struct u64_map *m)
{
	m->count = 0;
	u64_map__use(m, MAP_SLOTS_MIN < m->max ? MAP_SLOTS_MIN : m->max);
	if (++m->gen)
		return;
	memset(m->slot, 0, m->max * sizeof(*m->slot));
	memset(m->spare, 0, m->max * sizeof(*m->spare));
	m->gen = 1;
}

static __u32 u64_map__home(const struct u64_map *m, __u64 key)
{
	return (key * 0x9e3779b97f4a7c15ull) >> m->shift;
}

/* The key's slot, or the empty slot where it would go. The map is never full (sized for a frame). */
static struct u64_slot *u64_map__slot(const struct u64_map *m, __u64 key)
{
	__u32 i = u64_map__home(m, key);

	while (m->slot[i].gen == m->gen && m->slot[i].key != key)
		i = (i + 1) & m->mask;
	return &m->slot[i];
}

/* The key's slot, made if missing. */
static struct u64_slot *u64_map__get(struct u64_map *m, __u64 key)
{
	struct u64_slot *s = u64_map__slot(m, key);

	if (s->gen != m->gen) {
		*s = (struct u64_slot){ .key = key, .gen = m->gen, .held = HELD_NONE, .after = HELD_NONE };
		m->count++;
	}
	return s;
}

static void u64_map__grow(struct u64_map *m)
{
	struct u64_slot *old = m->slot;
	__u32 slots = m->mask + 1, i;

	memset(m->spare, 0, 2 * slots * sizeof(*m->spare));
	m->slot = m->spare;
	m->spare = old;
	u64_map__use(m, 2 * slots);
	for (i = 0; i < slots; i++)
		if (old[i].gen == m->gen)
			*u64_map__slot(m, old[i].key) = old[i];
}

/* Room for n more keys with the table at most 2/3 full. Growing moves every slot: call it holding none. */
static inline void u64_map__reserve(struct u64_map *m, __u32 n)
{
	if ((m->count + n) * 3 > (m->mask + 1) * 2 && m->mask + 1 < m->max)
		u64_map__grow(m);
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

static void encoder_free(struct mt_encoder *e)
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
		rank_list__free(&e->cls[c]);
	rank_list__free(&e->live);
	free(e->arena);
	free(e);
}

static void encoder_reset(struct mt_encoder *e, uint64_t ts_res)
{
	int c;

	for (c = 0; c < COL__COUNT; c++)
		e->col[c].pos = e->col[c].start;
	e->nrec = 0;
	e->ts_res = ts_res;
	e->ts_magic = ts_res > 1 ? UINT64_MAX / ts_res : 0;
	e->ts = e->addr = 0;
	e->thread_addr = &e->addr;
	e->thread = (struct mt_thread_id){ 0 };
	e->nthreads = 0;
	memset(e->thread_hint, 0, sizeof(e->thread_hint));
	e->nstacks = 0;
	e->live.n = e->live.count = 0;
	for (c = 0; c < MT_CLASSES; c++)
		e->cls[c].n = e->cls[c].count = 0;
	e->nfreed = 0;
	u64_map__clear(&e->addrs);
	u64_map__clear(&e->stacks);
}

/* A frame's addresses: old_addr, addr and mt_next_addr(addr) per record, the map at most 2/3 full; its stacks. */
static struct mt_encoder *encoder_new(void)
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
		err = rank_list__init(&e->live, MT_FRAME_ALLOCS_MAX);
	for (c = 0; c < MT_CLASSES && !err; c++)
		err = rank_list__init(&e->cls[c], 2 * MT_FRAME_ALLOCS_MAX);
	if (!err)
		err = u64_map__init(&e->addrs, MT_ADDRS_SLOTS);
	if (!err)
		err = u64_map__init(&e->stacks, MT_STACKS_SLOTS);
	if (err) {
		encoder_free(e);
		return NULL;
	}
	for (c = 0, total = 0; c < COL__COUNT; total += col_cap(c), c++)
		e->col[c].start = e->arena + total;
	encoder_reset(e, 1);
	return e;
}

_Static_assert(3 * MT_FRAME_ALLOCS_MAX <= MT_ADDRS_SLOTS * 2 / 3, "addrs map load");
_Static_assert(MT_FRAME_ALLOCS_MAX <= MT_STACKS_SLOTS * 2 / 3, "stacks map load");
_Static_assert(2 * MT_FRAME_ALLOCS_MAX < HELD_FREED, "a freed seq fits in u64_slot.held");

static size_t col_len(const struct col *k)
{
	return k->pos - k->start;
}

static void col_varint(struct col *k, __u64 v)
{
	for (; v >= 0x80; v >>= 7)
		*k->pos++ = (v & 0x7f) | 0x80;
	*k->pos++ = v;
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
	struct mt_thread_id *t;

	if (pid == e->thread.pid && tid == e->thread.tid)
		return THREAD_SAME;
	e->thread = (struct mt_thread_id){ pid, tid };
	t = *hint ? &e->threads[*hint - 1] : NULL;
	if (t && t->pid == pid && t->tid == tid) {
		put_u8(e, COL_THREAD, *hint - 1);
		e->thread_addr = &e->threads_addr[*hint - 1];
		return THREAD_INDEX;
	}
	put_raw(e, COL_THREAD_NEW, &e->thread, sizeof(e->thread));
	e->thread_addr = &e->addr;
	if (e->nthreads < MT_THREADS_MAX) {
		e->threads_addr[e->nthreads] = e->addr;
		e->thread_addr = &e->threads_addr[e->nthreads];
		e->threads[e->nthreads++] = e->thread;
		*hint = e->nthreads;
	}
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

/* ts_ns as the reader gives it back: rounded down to the resolution. */
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
	put_number(e, is_free ? COL_TS_FREE_LO : COL_TS_ALLOC_LO, zigzag(delta));
	return HD_TS_NUMBER;
}

/* An address neither list holds: after a live block when one ends there (and the rank is the smaller number). */
static enum addr_mode encode_elsewhere(struct mt_encoder *e, const struct u64_slot *s, __u64 v)
{
	__u64 delta = zigzag(v - *e->thread_addr);
	__u32 rank;

	if (s->after != HELD_NONE && e->live_next[s->after] == v) {
		rank = rank_list__rank(&e->live, s->after);
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
	struct u64_slot *s;
	enum addr_mode mode;

	if (!v)
		return ADDR_ZERO;
	s = u64_map__get(&e->addrs, v);
	if (!(s->held & HELD_FREED)) {
		if (rank)
			*rank = rank_list__rank(&e->live, s->held);
		else
			put_number(e, COL_LIVE_LO, rank_list__rank(&e->live, s->held));
		rank_list__remove(&e->live, s->held);
		e->live_next[s->held] = 0;
		cls = e->live_cls[s->held];
		mode = ADDR_REF;
	} else {
		mode = encode_elsewhere(e, s, v);
	}
	e->freed_cls[e->nfreed] = cls;
	rank_list__add(&e->cls[cls], e->nfreed);
	s->held = e->nfreed++ | HELD_FREED;
	e->addr = *e->thread_addr = v;
	return mode;
}

/* A freed block taken again: by its rank among the freed blocks of its class, named first if not the size's. */
static enum addr_mode encode_freed(struct mt_encoder *e, __u32 seq, unsigned int want)
{
	unsigned int cls = e->freed_cls[seq];

	if (cls != want)
		put_u8(e, COL_CLASS, cls);
	put_number(e, cls == CLASS_BIG ? COL_FREED_LO : COL_SMALL_LO, rank_list__rank(&e->cls[cls], seq));
	rank_list__remove(&e->cls[cls], seq);
	return cls == want ? ADDR_CLASS : ADDR_OTHER;
}

/* addr of an allocation: often a block freed recently, which leaves the freed list; it becomes the newest live one. */
static enum addr_mode encode_taking(struct mt_encoder *e, __u64 v, __u64 size)
{
	unsigned int want = size_class(size);
	struct u64_slot *s;
	enum addr_mode mode;
	__u32 seq;

	if (!v)
		return ADDR_ZERO;
	s = u64_map__get(&e->addrs, v);
	if (s->held != HELD_NONE && (s->held & HELD_FREED))
		mode = encode_freed(e, s->held & ~HELD_FREED, want);
	else
		mode = encode_elsewhere(e, s, v);
	s->held = seq = rank_list__append(&e->live);
	e->live_cls[seq] = want;
	e->live_next[seq] = mt_next_addr(v, size);
	u64_map__get(&e->addrs, e->live_next[seq])->after = seq;
	e->addr = *e->thread_addr = v;
	return mode;
}

static enum stack_mode encode_stack(struct mt_encoder *e, __u64 stack)
{
	struct u64_slot *s;

	u64_map__reserve(&e->stacks, 1);
	s = u64_map__get(&e->stacks, stack);

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

	u64_map__reserve(&e->addrs, 3);	/* old_addr, addr, mt_next_addr(addr) */
	put_u8(e, COL_TAG, a->func | a->allocator << 5);
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
static bool alloc_codable(const struct mt_alloc *a)
{
	__u64 tail;

	memcpy(&tail, (const __u8 *)a + offsetof(struct mt_alloc, func), sizeof(tail));
	return !a->hdr.seq && tail && !(tail & ~(__u64)(MT_FUNC_MASK | MT_ALLOCATOR_MASK << 8));
}

static void encode_record(struct mt_encoder *e, const void *rec, size_t size)
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

/* The content header: layout, record count, time resolution, column count, column lengths. Returns its length. */
static size_t encode_header(const struct mt_encoder *e, __u8 *buf)
{
	struct col h = { buf, buf };
	int c;

	*h.pos++ = MT_LAYOUT_COLUMNS;
	col_varint(&h, e->nrec);
	col_varint(&h, e->ts_res);
	col_varint(&h, COL__COUNT);
	for (c = 0; c < COL__COUNT; c++)
		col_varint(&h, col_len(&e->col[c]));
	return col_len(&h);
}

static int write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)	/* cannot happen on a regular file; do not spin if it does */
			return -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

static int writer_init_zstd(struct mt_writer *w)
{
	size_t ret;

	w->cctx = ZSTD_createCCtx();
	if (!w->cctx)
		return -ENOMEM;
	ret = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, MT_ZSTD_LEVEL);
	if (!ZSTD_isError(ret))
		ret = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_windowLog, MT_ZSTD_WINDOW_LOG);
	if (!ZSTD_isError(ret))
		ret = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_hashLog, MT_ZSTD_HASH_LOG);
	if (!ZSTD_isError(ret))
		ret = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_minMatch, MT_ZSTD_MIN_MATCH);
	if (!ZSTD_isError(ret))
		ret = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
	if (!ZSTD_isError(ret))
		ret = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1);
	if (ZSTD_isError(ret)) {
		pr_warn("cannot set up zstd compression: %s\n", ZSTD_getErrorName(ret));
		return -EIO;
	}
	return 0;
}

/* Returns the new file's descriptor or -errno; openat keeps DIR's identity between the checks and the create. */
static int create_artifact_file(const char *dir)
{
	int dfd, fd;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	fd = openat(dfd, MT_ARTIFACT_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		fd = -errno;
	close(dfd);
	return fd;
}

static void writer_free(struct mt_writer *w)
{
	ZSTD_freeCCtx(w->cctx);
	encoder_free(w->enc);
	free(w->zbuf);
	free(w);
}

struct mt_writer *mt_writer__open(const char *dir)
{
	struct mt_file_header hdr = { .version = MT_ARTIFACT_VERSION, .header_size = sizeof(hdr) };
	struct mt_writer *w;
	int err;

	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->ts_res = 1;
	w->enc = encoder_new();
	err = w->enc ? writer_init_zstd(w) : -ENOMEM;
	if (err)
		goto err_free;
	w->fd = create_artifact_file(dir);
	if (w->fd < 0) {
		err = w->fd;
		goto err_free;
	}
	memcpy(hdr.magic, MT_ARTIFACT_MAGIC, sizeof(hdr.magic));
	err = write_full(w->fd, &hdr, sizeof(hdr));
	if (err)
		goto err_close;
	w->bytes = sizeof(hdr);
	return w;

err_close:
	close(w->fd);
err_free:
	writer_free(w);
	errno = -err;
	return NULL;
}

/* The record as the reader gives it back: only its time can differ, rounded down to the resolution. */
static void writer__tap(struct mt_writer *w, const void *rec, size_t size)
{
	struct mt_rec_hdr *copy = (struct mt_rec_hdr *)w->tap_buf;

	if (w->ts_res == 1) {
		w->tap(rec, w->tap_ctx);
		return;
	}
	memcpy(copy, rec, size);
	copy->ts_ns = round_ts(w->enc, copy->ts_ns);
	w->tap(copy, w->tap_ctx);
}

int mt_writer__append(struct mt_writer *w, const void *rec, size_t size)
{
	struct mt_rec_hdr hdr;
	int err;

	if (w->err)
		return w->err;
	if (size < sizeof(hdr) || size > UINT16_MAX)
		return -EINVAL;
	memcpy(&hdr, rec, sizeof(hdr));
	if (hdr.size != size || size < rec_min_size(hdr.type))
		return -EINVAL;
	if (w->pending_len + size > MT_FRAME_MAX_CONTENT) {
		err = mt_writer__flush(w);
		if (err)
			return err;
	}
	encode_record(w->enc, rec, size);
	w->pending_len += size;
	w->records++;
	if (w->tap)
		writer__tap(w, rec, size);
	return 0;
}

void mt_writer__set_tap(struct mt_writer *w, mt_record_fn fn, void *ctx)
{
	w->tap = fn;
	w->tap_ctx = ctx;
}

int mt_writer__set_ts_resolution(struct mt_writer *w, uint64_t ns)
{
	int err;

	if (!ns)
		return -EINVAL;
	err = mt_writer__flush(w);
	if (err)
		return err;
	w->ts_res = ns;
	encoder_reset(w->enc, ns);	/* the open frame is empty */
	return 0;
}

/*
 * Feeds one part of the frame to zstd; flushing and ending repeat until zstd holds nothing back. out has room for
 * the whole frame, so running short would be a bug, reported as -EIO.
 */
static int compress_part(struct mt_writer *w, ZSTD_outBuffer *out, const void *p, size_t len, ZSTD_EndDirective end)
{
	ZSTD_inBuffer in = { p, len, 0 };
	size_t left;

	do {
		left = ZSTD_compressStream2(w->cctx, out, &in, end);
		if (ZSTD_isError(left)) {
			pr_warn("cannot compress a frame: %s\n", ZSTD_getErrorName(left));
			return -EIO;
		}
		if (left && out->pos == out->size) {
			pr_warn("cannot compress a frame: output buffer full\n");
			return -EIO;
		}
	} while (in.pos < in.size || (end != ZSTD_e_continue && left));
	return 0;
}

/* Each column ends a zstd block (ZSTD_e_flush), so its bytes get their own literal statistics. */
static int compress_frame(struct mt_writer *w, size_t *n)
{
	struct mt_encoder *e = w->enc;
	__u8 header[MT_CONTENT_HEADER_MAX];
	size_t hlen = encode_header(e, header), total = hlen, cap;
	ZSTD_outBuffer out;
	int c, err;

	for (c = 0; c < COL__COUNT; c++)
		total += col_len(&e->col[c]);
	cap = ZSTD_compressBound(total) + 3 * COL__COUNT + MT_ZSTD_HEADER_MAX;	/* + a block header per column */
	if (cap > w->zbuf_cap) {
		free(w->zbuf);
		w->zbuf_cap = 0;
		w->zbuf = malloc(cap);
		if (!w->zbuf)
			return -ENOMEM;
		w->zbuf_cap = cap;
	}
	out = (ZSTD_outBuffer){ w->zbuf, w->zbuf_cap, 0 };
	ZSTD_CCtx_reset(w->cctx, ZSTD_reset_session_only);
	if (ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(w->cctx, total)))
		return -EIO;	/* only fails out of order; reset just made the order right */
	err = compress_part(w, &out, header, hlen, ZSTD_e_continue);
	for (c = 0; c < COL__COUNT && !err; c++)
		if (col_len(&e->col[c]))
			err = compress_part(w, &out, e->col[c].start, col_len(&e->col[c]), ZSTD_e_flush);
	if (!err)
		err = compress_part(w, &out, NULL, 0, ZSTD_e_end);
	*n = out.pos;
	return err;
}

int mt_writer__flush(struct mt_writer *w)
{
	size_t n;
	int err;

	if (w->err || !w->pending_len)
		return w->err;
	err = compress_frame(w, &n);
	if (!err)
		err = write_full(w->fd, w->zbuf, n);
	if (err) {
		w->err = err;
		return err;
	}
	w->bytes += n;
	w->pending_len = 0;
	encoder_reset(w->enc, w->ts_res);
	return 0;
}

int mt_writer__close(struct mt_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = mt_writer__flush(w);
	if (fsync(w->fd) && !err)
		err = -errno;
	if (close(w->fd) && !err)
		err = -errno;
	writer_free(w);
	return err;
}

uint64_t mt_writer__records(const struct mt_writer *w)
{
	return w ? w->records : 0;
}

uint64_t mt_writer__bytes(const struct mt_writer *w)
{
	return w ? w->bytes : 0;
}

static void set_reason(struct mt_read_status *st, size_t at, const char *fmt, va_list ap)
{
	if (at < sizeof(st->reason))
		vsnprintf(st->reason + at, sizeof(st->reason) - at, fmt, ap);
}

/* Fails the whole read: the file cannot be read at all. */
__attribute__((format(printf, 3, 4)))
static int reader_fail(struct mt_reader *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_reason(r->st, 0, fmt, ap);
	va_end(ap);
	return err;
}

/* Stops at the current frame: everything before it has been delivered. */
__attribute__((format(printf, 2, 3)))
static int reader_corrupt(struct mt_reader *r, const char *fmt, ...)
{
	struct mt_read_status *st = r->st;
	va_list ap;
	int n;

	st->damaged = true;
	st->bad_offset = r->frame_start;
	n = snprintf(st->reason, sizeof(st->reason), "corrupt frame at byte %llu: ",
		     (unsigned long long)r->frame_start);
	va_start(ap, fmt);
	set_reason(st, n, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

static int reader_truncated(struct mt_reader *r)
{
	struct mt_read_status *st = r->st;

	st->damaged = true;
	st->bad_offset = r->frame_start;
	snprintf(st->reason, sizeof(st->reason), "truncated: frame at byte %llu is incomplete (file ends at byte %llu)",
		 (unsigned long long)r->frame_start, (unsigned long long)(r->in_off + r->in_len));
	return -EBADMSG;
}

static uint64_t reader_offset(const struct mt_reader *r)
{
	return r->in_off + r->in_pos;
}

/* Makes at least want (<= MT_READ_CHUNK) unconsumed bytes available unless the file ends; returns how many are. */
static ssize_t reader_fill(struct mt_reader *r, size_t want)
{
	ssize_t n;
	int err;

	while (r->in_len - r->in_pos < want && !r->eof) {
		if (r->in_pos) {
			memmove(r->in, r->in + r->in_pos, r->in_len - r->in_pos);
			r->in_off += r->in_pos;
			r->in_len -= r->in_pos;
			r->in_pos = 0;
		}
		n = read(r->fd, r->in + r->in_len, MT_READ_CHUNK - r->in_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			return reader_fail(r, err, "cannot read %s at byte %llu: %s", r->name,
					   (unsigned long long)(r->in_off + r->in_len), strerror(-err));
		}
		r->eof = n == 0;
		r->in_len += n;
	}
	return r->in_len - r->in_pos;
}

/* Returns 0, 1 when the file ends first, or -errno. */
static int reader_skip(struct mt_reader *r, uint64_t n)
{
	ssize_t avail;
	size_t step;

	while (n) {
		avail = reader_fill(r, 1);
		if (avail < 0)
			return avail;
		if (avail == 0)
			return 1;
		step = (uint64_t)avail < n ? (size_t)avail : (size_t)n;
		r->in_pos += step;
		n -= step;
	}
	return 0;
}

static int read_header(struct mt_reader *r)
{
	struct mt_file_header h;
	ssize_t avail;
	int err;

	avail = reader_fill(r, sizeof(h));
	if (avail < 0)
		return avail;
	if (avail >= (ssize_t)sizeof(h.magic) && memcmp(r->in, MT_ARTIFACT_MAGIC, sizeof(h.magic)))
		return reader_fail(r, -EINVAL, "not a memtrack artifact (bad magic)");
	if (avail < (ssize_t)sizeof(h))
		return reader_fail(r, -EINVAL, "not a memtrack artifact (file is %zd bytes, shorter than the header)",
				   avail);
	memcpy(&h, r->in, sizeof(h));
	if (h.version < MT_ARTIFACT_VERSION_MIN || h.version > MT_ARTIFACT_VERSION)
		return reader_fail(r, -EPROTONOSUPPORT,
				   "unsupported artifact version %u (this memtrack reads versions %u to %u)", h.version,
				   MT_ARTIFACT_VERSION_MIN, MT_ARTIFACT_VERSION);
	if (h.header_size < sizeof(h))
		return reader_fail(r, -EINVAL, "not a memtrack artifact (header size %u, at least %zu expected)",
				   h.header_size, sizeof(h));
	err = reader_skip(r, h.header_size);
	if (err > 0)
		return reader_fail(r, -EINVAL, "not a memtrack artifact (header claims %u bytes, file is %llu)",
				   h.header_size, (unsigned long long)reader_offset(r));
	if (err)
		return err;
	r->version = r->dec.version = h.version;
	r->st->good_bytes = h.header_size;
	return 0;
}

/* Passes over a skippable frame (room for a future index): it counts in good_bytes, not in frames. */
static int skip_frame(struct mt_reader *r, size_t avail)
{
	__u32 size;
	int err;

	if (avail < MT_SKIPPABLE_HEADER)
		return reader_truncated(r);
	memcpy(&size, r->in + r->in_pos + 4, sizeof(size));
	err = reader_skip(r, MT_SKIPPABLE_HEADER + (uint64_t)size);
	if (err > 0)
		return reader_truncated(r);
	if (err)
		return err;
	r->st->good_bytes = reader_offset(r);
	return FRAME_SKIPPED;
}

/* Room for more output, within the content size the frame declares or else the read limit. */
static int frame_room(struct mt_reader *r)
{
	size_t target = (size_t)MT_FRAME_READ_LIMIT + 1;	/* one past the limit, so exceeding it is visible */
	bool known = r->frame_declared <= MT_FRAME_READ_LIMIT;
	size_t cap;
	void *p;

	if (known)
		target = r->frame_declared;
	if (r->frame_len < r->frame_cap || r->frame_cap >= target)
		return 0;	/* full at the declared size: zstd itself rejects any further output */
	cap = known ? target : 2 * r->frame_cap;
	if (cap > target)
		cap = target;
	p = realloc(r->frame, cap);
	if (!p)
		return reader_fail(r, -ENOMEM, "out of memory for a frame of %zu bytes", cap);
	r->frame = p;
	r->frame_cap = cap;
	return 0;
}

static int decompress_frame(struct mt_reader *r)
{
	ZSTD_inBuffer in;
	ZSTD_outBuffer out;
	size_t ret, before;
	ssize_t avail;
	int err;

	ZSTD_DCtx_reset(r->dctx, ZSTD_reset_session_only);
	for (;;) {
		avail = reader_fill(r, 1);
		if (avail < 0)
			return avail;
		err = frame_room(r);
		if (err)
			return err;
		in = (ZSTD_inBuffer){ r->in, r->in_len, r->in_pos };
		out = (ZSTD_outBuffer){ r->frame, r->frame_cap, r->frame_len };
		before = r->frame_len;
		ret = ZSTD_decompressStream(r->dctx, &out, &in);
		r->in_pos = in.pos;
		r->frame_len = out.pos;
		if (ZSTD_isError(ret))
			return reader_corrupt(r, "%s", ZSTD_getErrorName(ret));
		if (r->frame_len > MT_FRAME_READ_LIMIT)
			return reader_corrupt(r, "content exceeds the limit of %u bytes", MT_FRAME_READ_LIMIT);
		if (ret == 0)
			return FRAME_DATA;
		/* At EOF zstd may still flush what it holds; once it stops producing, the frame is cut short. */
		if (avail == 0 && r->frame_len == before)
			return reader_truncated(r);
	}
}

static int read_frame(struct mt_reader *r)
{
	ssize_t avail;
	__u32 magic;

	r->frame_start = reader_offset(r);
	r->frame_len = 0;
	avail = reader_fill(r, MT_ZSTD_HEADER_MAX);
	if (avail <= 0)
		return avail < 0 ? avail : FRAME_EOF;
	if (avail < (ssize_t)sizeof(magic))
		return reader_truncated(r);
	memcpy(&magic, r->in + r->in_pos, sizeof(magic));
	if ((magic & ZSTD_MAGIC_SKIPPABLE_MASK) == ZSTD_MAGIC_SKIPPABLE_START)
		return skip_frame(r, avail);
	if (magic != ZSTD_MAGICNUMBER)
		return reader_corrupt(r, "not a zstd frame (magic 0x%08x)", magic);
	/* The checksum is what makes a frame's records trustworthy; a flipped flag bit must not switch it off. */
	if (avail > MT_ZSTD_FHD && !(r->in[r->in_pos + MT_ZSTD_FHD] & MT_ZSTD_FHD_CHECKSUM))
		return reader_corrupt(r, "frame has no content checksum");
	/* An unreadable header is left to zstd, which names the problem or finds the file cut short. */
	r->frame_declared = ZSTD_getFrameContentSize(r->in + r->in_pos, avail);
	if (r->frame_declared < ZSTD_CONTENTSIZE_ERROR && r->frame_declared > MT_FRAME_READ_LIMIT)
		return reader_corrupt(r, "frame claims %llu bytes of content, more than the limit of %u",
				      r->frame_declared, MT_FRAME_READ_LIMIT);
	return decompress_frame(r);
}

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
	dec_fail(d, "column %s ends early", col_names[c]);
}

static inline __u8 get_u8(struct mt_decoder *d, enum mt_col c)
{
	struct cursor *k = &d->col[c];

	if (k->pos < k->len)
		return k->p[k->pos++];
	dec_short(d, c);
	return 0;
}

static void get_raw(struct mt_decoder *d, enum mt_col c, void *v, size_t n)
{
	struct cursor *k = &d->col[c];

	if (k->len - k->pos < n) {
		dec_short(d, c);
		memset(v, 0, n);
		return;
	}
	memcpy(v, k->p + k->pos, n);
	k->pos += n;
}

static __u64 cursor_varint(struct cursor *k, bool *bad)
{
	unsigned int shift;
	__u64 v = 0;
	__u8 b;

	for (shift = 0; shift < 64 && k->pos < k->len; shift += 7) {
		b = k->p[k->pos++];
		if (shift == 63 && b > 1)
			break;
		v |= (__u64)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	*bad = true;	/* ran out, or more than 64 bits */
	return 0;
}

static inline __u64 get_number(struct mt_decoder *d, enum mt_col lo)
{
	struct cursor *k = &d->col[lo + 1];
	__u64 low = get_u8(d, lo), high;
	bool bad = false;

	if (k->pos < k->len && k->p[k->pos] < 0x80)
		return (__u64)k->p[k->pos++] << 8 | low;	/* the usual one-byte high part */
	high = cursor_varint(k, &bad);
	if (bad || high >> 56) {
		dec_fail(d, "column %s: bad number", col_names[lo + 1]);
		return 0;
	}
	return high << 8 | low;
}

static void decode_thread(struct mt_decoder *d, struct mt_rec_hdr *h, enum thread_mode mode)
{
	__u8 i;

	switch (mode) {
	case THREAD_SAME:
		break;
	case THREAD_INDEX:
		i = get_u8(d, COL_THREAD);
		if (i >= d->nthreads) {
			dec_fail(d, "thread index %u, the table has %u", i, d->nthreads);
			break;
		}
		d->thread = d->threads[i];
		d->thread_addr = &d->threads_addr[i];
		break;
	case THREAD_NEW:
		get_raw(d, COL_THREAD_NEW, &d->thread, sizeof(d->thread));
		d->thread_addr = &d->addr;
		if (d->nthreads < MT_THREADS_MAX) {
			d->threads_addr[d->nthreads] = d->addr;
			d->thread_addr = &d->threads_addr[d->nthreads];
			d->threads[d->nthreads++] = d->thread;
		}
		break;
	default:
		dec_fail(d, "reserved thread mode %d", mode);
	}
	h->pid = d->thread.pid;
	h->tid = d->thread.tid;
}

/* step: a version 3 head's time step, HD_TS_NUMBER (always, in version 2) when a number follows. */
static void decode_ts(struct mt_decoder *d, struct mt_rec_hdr *h, bool is_free, unsigned int step)
{
	if (step == HD_TS_NUMBER)
		d->ts += unzigzag(get_number(d, is_free ? COL_TS_FREE_LO : COL_TS_ALLOC_LO));
	else
		d->ts += step;
	h->ts_ns = d->ts * d->ts_res;
}

/* The seq of the entry a rank names, or -1 when the list has no such entry. */
static long long find_rank(struct mt_decoder *d, __u64 rank, const struct rank_list *l, const char *what)
{
	if (rank < l->count)
		return rank_list__find(l, rank);
	dec_fail(d, "%s rank %llu, the list has %u entries", what, (unsigned long long)rank, l->count);
	return -1;
}

static long long get_rank(struct mt_decoder *d, enum mt_col lo, const struct rank_list *l, const char *what)
{
	return find_rank(d, get_number(d, lo), l, what);
}

static __u64 decode_elsewhere(struct mt_decoder *d, enum addr_mode mode)
{
	long long seq;

	if (mode == ADDR_DELTA)
		return *d->thread_addr + unzigzag(get_number(d, COL_DELTA_LO));
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
			cls = size_class(d->live_size[seq]);
			rank_list__remove(&d->live, seq);
		}
	} else {
		v = decode_elsewhere(d, mode);
	}
	fseq = rank_list__append(&d->freed);
	d->freed_addr[fseq] = v;
	if (d->version >= 3)	/* version 3 takes blocks by class: d->freed only numbers them */
		rank_list__add(&d->cls[cls], fseq);
	d->addr = *d->thread_addr = v;
	return v;
}

/* Version 3: a freed block named by its rank in a class's list, the size's own (ADDR_CLASS) or a named one. */
static __u64 decode_freed(struct mt_decoder *d, enum addr_mode mode, __u64 size)
{
	unsigned int cls = mode == ADDR_OTHER ? get_u8(d, COL_CLASS) : size_class(size);
	long long seq;

	if (cls >= MT_CLASSES) {
		dec_fail(d, "size class %u", cls);
		return 0;
	}
	seq = get_rank(d, cls == CLASS_BIG ? COL_FREED_LO : COL_SMALL_LO, &d->cls[cls], "freed");
	if (seq < 0)
		return 0;
	rank_list__remove(&d->cls[cls], seq);
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
			rank_list__remove(&d->freed, seq);
		}
	} else if (mode == ADDR_CLASS || mode == ADDR_OTHER) {
		v = decode_freed(d, mode, size);
	} else {
		v = decode_elsewhere(d, mode);
	}
	s = rank_list__append(&d->live);
	d->live_addr[s] = v;
	d->live_size[s] = size;
	d->addr = *d->thread_addr = v;
	return v;
}

static void decode_extra(struct mt_decoder *d, struct mt_alloc *a, __u8 extra)
{
	__u64 i;

	if (extra & EX_RESERVED)
		dec_fail(d, "reserved extra bits 0x%02x", extra);
	if (extra & EX_ALIGN)
		a->align = get_number(d, COL_ALIGN_LO);
	switch (extra >> EX_STACK_SHIFT & 3) {
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
	decode_thread(d, &a->hdr, flags >> FL_THREAD_SHIFT & 3);
	decode_ts(d, &a->hdr, is_free, HD_TS_NUMBER);
	if (flags & FL_SIZE)
		a->size = get_number(d, COL_SIZE_LO);
	a->old_addr = decode_freeing(d, flags >> FL_OLD_SHIFT & 3, -1);
	if (is_free)
		a->addr = decode_freeing(d, flags >> FL_ADDR_SHIFT & 3, -1);
	else
		a->addr = decode_taking(d, flags >> FL_ADDR_SHIFT & 3, a->size);
	decode_extra(d, a, extra);
}

/* A released addr: as MORE's address field says, or a live rank whose high part is the head's place. */
static __u64 decode_released(struct mt_decoder *d, __u8 head, __u8 more)
{
	unsigned int place = head >> HD_PLACE_SHIFT & 7, field = more >> MO_ADDR_SHIFT;
	struct cursor *hi = &d->col[COL_LIVE_HI];
	bool bad = false;
	__u64 high = place;

	if (field && place)
		dec_fail(d, "place %u with address field %u", place, field);
	if (field)
		return decode_freeing(d, field == MO_ADDR_ZERO ? ADDR_ZERO : field, -1);
	if (place == HD_PLACE_HI)
		high += cursor_varint(hi, &bad);
	if (bad || high >> 48)
		dec_fail(d, "column live_hi: bad number");
	return decode_freeing(d, ADDR_REF, high << 8 | get_u8(d, COL_LIVE_LO));
}

static const enum addr_mode v3_taking[] = { ADDR_CLASS, ADDR_OTHER, ADDR_AFTER, ADDR_DELTA };

static void decode_taken(struct mt_decoder *d, struct mt_alloc *a, __u8 head, __u8 more)
{
	unsigned int mode = head >> HD_ADDR_SHIFT & 3, field = more >> MO_ADDR_SHIFT;

	if (more & MO_SIZE || field > MO_ADDR_ZERO || (field == MO_ADDR_ZERO && mode))
		dec_fail(d, "more 0x%02x with head 0x%02x", more, head);
	if (head & HD_SIZE)
		a->size = get_number(d, COL_SIZE_LO);
	a->old_addr = decode_freeing(d, more >> MO_OLD_SHIFT & 3, -1);
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
	decode_thread(d, &a->hdr, more >> MO_THREAD_SHIFT & 3);
	decode_ts(d, &a->hdr, is_free, head & HD_TS_MASK);
	if (is_free) {
		if (more & MO_SIZE)
			a->size = get_number(d, COL_SIZE_LO);
		a->old_addr = decode_freeing(d, more >> MO_OLD_SHIFT & 3, -1);
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
	a.func = tag & 31;
	a.allocator = tag >> 5;
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
	struct cursor *k = &d->col[COL_VERBATIM];
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

/* Parses the content header and points the cursors at the columns, which follow it in order. */
static int decode_header(struct mt_reader *r, struct mt_decoder *d)
{
	struct cursor k = { r->frame, r->frame_len, 1 };
	__u64 ncol, want = r->version >= 3 ? COL__COUNT : COL_V2_COUNT, len[COL__COUNT] = { 0 };
	bool bad = false;
	size_t off;
	int c;

	if (r->frame[0] != MT_LAYOUT_COLUMNS)
		return reader_corrupt(r, "unknown frame layout %u", r->frame[0]);
	d->nrec = cursor_varint(&k, &bad);
	d->ts_res = cursor_varint(&k, &bad);
	ncol = cursor_varint(&k, &bad);
	if (bad || !d->ts_res || ncol != want)
		return reader_corrupt(r, "bad frame header (%llu columns, time resolution %llu)",
				      (unsigned long long)ncol, (unsigned long long)d->ts_res);
	for (c = 0; c < (int)ncol; c++)
		len[c] = cursor_varint(&k, &bad);
	for (c = 0, off = k.pos; c < COL__COUNT && !bad; off += len[c], c++) {
		bad = len[c] > r->frame_len - off;
		d->col[c] = (struct cursor){ r->frame + off, bad ? 0 : len[c], 0 };
	}
	if (bad || off != r->frame_len)
		return reader_corrupt(r, "column lengths do not add up to the frame content");
	if (d->col[COL_TAG].len != d->nrec)
		return reader_corrupt(r, "%llu records but %zu tags", (unsigned long long)d->nrec, d->col[COL_TAG].len);
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
		err = rank_list__init(&d->live, n);
	if (!err)
		err = rank_list__init(&d->freed, 2 * n);
	for (c = 0; c < MT_CLASSES && !err; c++)
		err = rank_list__init(&d->cls[c], 2 * n);
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
	d->live.n = d->live.count = 0;
	d->freed.n = d->freed.count = 0;
	for (c = 0; c < MT_CLASSES; c++)
		d->cls[c].n = d->cls[c].count = 0;
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
static int decoder_start(struct mt_reader *r, struct mt_decoder *d)
{
	const __u8 *tag = d->col[COL_TAG].p;
	size_t i, coded = 0, size;

	for (i = 0; i < d->nrec; i++)
		coded += tag[i] != 0;
	if (coded > (MT_FRAME_READ_LIMIT - d->col[COL_VERBATIM].len) / sizeof(struct mt_alloc))
		return reader_corrupt(r, "decoded records exceed the limit of %u bytes", MT_FRAME_READ_LIMIT);
	size = coded * sizeof(struct mt_alloc) + d->col[COL_VERBATIM].len;
	if (decoder_out(d, size) || decoder_reserve(d, coded))
		return reader_fail(r, -ENOMEM, "out of memory for a frame of %zu records", (size_t)d->nrec);
	d->ts = d->addr = 0;
	d->thread_addr = &d->addr;
	d->thread = (struct mt_thread_id){ 0 };
	d->nthreads = d->nstacks = 0;
	d->why[0] = 0;
	return 0;
}

static int decode_frame(struct mt_reader *r)
{
	struct mt_decoder *d = &r->dec;
	__u8 tag;
	int err, c;

	d->out_len = 0;
	if (!r->frame_len)
		return 0;	/* an empty frame, as in version 1 */
	err = decode_header(r, d);
	if (!err)
		err = decoder_start(r, d);
	for (d->rec = 0; !err && d->rec < d->nrec; d->rec++) {
		tag = get_u8(d, COL_TAG);
		if (tag)
			decode_alloc(d, tag);
		else
			decode_verbatim(d);
		if (d->why[0])
			return reader_corrupt(r, "record %llu: %s", (unsigned long long)d->rec, d->why);
	}
	for (c = 0; !err && c < COL__COUNT; c++)
		if (d->col[c].pos != d->col[c].len)
			return reader_corrupt(r, "column %s has %zu bytes left over", col_names[c],
					      d->col[c].len - d->col[c].pos);
	return err;
}

/* The whole frame is checked before any record is delivered, so a bad frame delivers nothing. */
static int check_records(struct mt_reader *r, const __u8 *recs, size_t len)
{
	struct mt_rec_hdr h;
	size_t off, left;

	for (off = 0; off < len; off += h.size) {
		left = len - off;
		if (left < sizeof(h))
			return reader_corrupt(r, "%zu stray bytes at the end of the frame's records", left);
		memcpy(&h, recs + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > left)
			return reader_corrupt(r, "record at byte %zu of the frame's records has size %u (type %u, %zu bytes left)",
					      off, h.size, h.type, left);
		if (h.size < rec_min_size(h.type))
			return reader_corrupt(r, "record at byte %zu of the frame's records is %u bytes, type %u needs %zu",
					      off, h.size, h.type, rec_min_size(h.type));
	}
	return 0;
}

static int deliver_records(struct mt_reader *r, const __u8 *recs, size_t len)
{
	const struct mt_rec_hdr *rec;
	struct mt_rec_hdr h;
	size_t off;
	int err;

	for (off = 0; off < len; off += h.size) {
		memcpy(&h, recs + off, sizeof(h));
		rec = (const void *)(recs + off);
		if ((uintptr_t)rec % MT_REC_ALIGN)
			rec = memcpy(r->aligned, rec, h.size);
		r->st->records++;
		err = r->fn ? r->fn(rec, r->ctx) : 0;
		if (err)
			return err;
	}
	r->st->frames++;
	r->st->good_bytes = reader_offset(r);
	return 0;
}

/* Version 1 frames hold the records themselves; version 2 frames hold columns that decode to them. */
static int handle_frame(struct mt_reader *r)
{
	const __u8 *recs = r->frame;
	size_t len = r->frame_len;
	int err;

	if (r->version >= 2) {
		err = decode_frame(r);
		if (err)
			return err;
		recs = r->dec.out;
		len = r->dec.out_len;
	}
	err = check_records(r, recs, len);
	return err ? err : deliver_records(r, recs, len);
}

static int read_frames(struct mt_reader *r)
{
	int kind, err;

	for (;;) {
		kind = read_frame(r);
		if (kind < 0)
			return kind;
		if (kind == FRAME_EOF)
			return 0;
		if (kind == FRAME_SKIPPED)
			continue;
		err = handle_frame(r);
		if (err)
			return err;
	}
}

/* Opens PATH, or PATH/events.mtz when PATH is a directory; returns the descriptor or -errno. */
static int open_artifact_file(struct mt_reader *r, const char *path)
{
	struct stat sb;
	int fd, err;

	snprintf(r->name, sizeof(r->name), "%s", path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISDIR(sb.st_mode))
		return fd;
	snprintf(r->name, sizeof(r->name), "%s/%s", path, MT_ARTIFACT_FILE);
	err = openat(fd, MT_ARTIFACT_FILE, O_RDONLY | O_CLOEXEC);
	if (err < 0)
		err = -errno;
	close(fd);
	return err;
}

/* The window limit follows the content limit: a frame never needs more history than it has content. */
static int reader_init_zstd(struct mt_reader *r)
{
	int window_log = 10;	/* zstd's smallest window, 1 KiB */
	size_t ret;

	while ((1ull << window_log) < MT_FRAME_READ_LIMIT)
		window_log++;
	r->dctx = ZSTD_createDCtx();
	if (!r->dctx)
		return reader_fail(r, -ENOMEM, "out of memory for zstd");
	ret = ZSTD_DCtx_setParameter(r->dctx, ZSTD_d_windowLogMax, window_log);
	if (ZSTD_isError(ret)) {
		pr_warn("cannot set up zstd decompression: %s\n", ZSTD_getErrorName(ret));
		return reader_fail(r, -EIO, "cannot set up zstd: %s", ZSTD_getErrorName(ret));
	}
	return 0;
}

static int reader_open(struct mt_reader *r, const char *path)
{
	r->fd = open_artifact_file(r, path);
	if (r->fd < 0)
		return reader_fail(r, r->fd, "cannot open %s: %s", r->name, strerror(-r->fd));
	r->in = malloc(MT_READ_CHUNK);
	r->frame_cap = MT_READ_CHUNK;
	r->frame = malloc(r->frame_cap);
	r->aligned = malloc(UINT16_MAX);
	if (!r->in || !r->frame || !r->aligned)
		return reader_fail(r, -ENOMEM, "out of memory");
	return reader_init_zstd(r);
}

static void decoder_free(struct mt_decoder *d)
{
	int c;

	free(d->out);
	free(d->stacks);
	free(d->freed_addr);
	free(d->live_size);
	free(d->live_addr);
	for (c = 0; c < MT_CLASSES; c++)
		rank_list__free(&d->cls[c]);
	rank_list__free(&d->freed);
	rank_list__free(&d->live);
}

static void reader_close(struct mt_reader *r)
{
	ZSTD_freeDCtx(r->dctx);
	decoder_free(&r->dec);
	free(r->aligned);
	free(r->frame);
	free(r->in);
	if (r->fd >= 0)
		close(r->fd);
}

int mt_artifact__read(const char *path, mt_record_fn fn, void *ctx, struct mt_read_status *st)
{
	struct mt_reader r = { .fd = -1, .st = st, .fn = fn, .ctx = ctx };
	int err;

	memset(st, 0, sizeof(*st));
	err = reader_open(&r, path);
	if (!err)
		err = read_header(&r);
	if (!err)
		err = read_frames(&r);
	reader_close(&r);
	return err;
}
