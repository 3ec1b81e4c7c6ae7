/* SPDX-License-Identifier: GPL-2.0-only */
/* format.h — the on-disk layout of events.mtz (docs/FORMAT.md): file header, framing, columns, their bits. */
#ifndef MEMTRACK_ARTIFACT_FORMAT_H
#define MEMTRACK_ARTIFACT_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "artifact/artifact.h"

/* Records are stored as host structs and the format is defined as little-endian: the two must agree. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "events.mtz is little-endian");
/* Any record must fit in one frame, and the reader must accept every frame the writer makes. */
_Static_assert(MT_FRAME_MAX_CONTENT >= UINT16_MAX, "a record fits in a frame");
_Static_assert(MT_FRAME_MAX_CONTENT <= MT_FRAME_READ_LIMIT, "the reader accepts the writer's frames");

/* "File header": 32 bytes at offset 0. */
struct mt_file_header {
	char magic[8];		/* MT_ARTIFACT_MAGIC, no NUL */
	__u32 version;		/* MT_ARTIFACT_VERSION */
	__u32 header_size;	/* readers skip this many bytes, so a later version may append fields */
	__u64 flags;		/* 0 */
	__u32 checksum;		/* version 4: mt_file_header__crc; before, 0 and ignored */
	__u32 reserved;		/* 0 */
};

_Static_assert(sizeof(struct mt_file_header) == 32, "mt_file_header size");

/*
 * Version 4 checks what earlier ones trusted: the header's checksum, and each data frame's number, so that a frame
 * dropped, repeated or moved is damage at its offset. Its frames are version 3's with the number in their header.
 */
#define MT_VERSION_CHECKED 4
#define MT_HEADER_SIZE_MAX 4096	/* version 4: the most header bytes its checksum covers */

/* The checksum of a version 4 header: CRC-32 of its header_size bytes, the checksum field counted as 0. */
__u32 mt_file_header__crc(const __u8 *header, size_t header_size);

/* "Frames": zstd frames (RFC 8878) and skippable frames, back to back after the header. */
#define MT_ZSTD_HEADER_MAX 18		/* ZSTD_FRAMEHEADERSIZE_MAX, which zstd.h only declares for static linking */
#define MT_ZSTD_FHD 4			/* Frame_Header_Descriptor: the byte after the magic (RFC 8878 3.1.1.1.1) */
#define MT_ZSTD_FHD_CHECKSUM 0x04	/* its Content_Checksum_Flag */
#define MT_SKIPPABLE_HEADER 8		/* a skippable frame: u32 magic, u32 content size, content */

/*
 * "Frame content, version 2" and "version 3": a header, then columns. MT_REC_ALLOC records are split into fields,
 * coded against what the frame has seen so far (the live and freed blocks, the previous time and address); every
 * other record is copied whole into the verbatim column. Version 1 frames hold the records themselves.
 */
#define MT_LAYOUT_COLUMNS 1	/* the first byte of the content; the only layout of versions 2 and 3 */
#define MT_THREADS_MAX 256	/* thread table entries, so that an index is one byte */

/* The tag of a coded record: func | allocator << MT_TAG_ALLOCATOR_SHIFT (their widths: MT_FUNC_MASK and
 * MT_ALLOCATOR_MASK, bpf/memtrack.h); tag 0 is a verbatim record. */
#define MT_TAG_ALLOCATOR_SHIFT 5

/*
 * Column numbers are part of the format: the content header gives their lengths in this order. Version 2 has the
 * first COL_V2_COUNT; version 3 all of them, and its head bytes where version 2 has flags.
 */
enum mt_col {
	COL_TAG,		/* u8 per record: 0 verbatim, else func | allocator << 5 */
	COL_FLAGS_FREE,		/* u8 per coded record whose func releases a block: v2 flags, v3 head */
	COL_FLAGS_ALLOC,	/* u8 per other coded record */
	COL_EXTRA,		/* u8 per coded record with FL_EXTRA (v3: MO_EXTRA) */
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
	COL_CLASS,		/* v3: u8, the size class of a V3_OTHER address */
	COL_SMALL_LO, COL_SMALL_HI,	/* v3: a rank in a small size class's freed list (COL_FREED_*: the big one's) */
	COL__COUNT,
};

/* The columns' names in docs/FORMAT.md, for the reader's reasons. */
extern const char *const mt_col_names[COL__COUNT];

/* Version 2 FLAGS byte of a coded record. */
#define FL_ADDR_SHIFT 0		/* 2 bits: enum addr_mode of addr */
#define FL_OLD_SHIFT 2		/* 2 bits: enum addr_mode of old_addr */
#define FL_SIZE 0x10		/* size is not 0: a size number follows */
#define FL_THREAD_SHIFT 5	/* 2 bits: enum thread_mode */
#define FL_EXTRA 0x80		/* an EXTRA byte follows */
/* EXTRA byte, both versions. */
#define EX_ALIGN 0x01		/* align is not 0: an align number follows */
#define EX_STACK_SHIFT 1	/* 2 bits: enum stack_mode */
#define EX_RESERVED 0xf8
/* A 2-bit field of a flags, extra or MORE byte. */
#define MT_FIELD2_MASK 3

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
#define HD_PLACE_MASK 7
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

/* A thread: what a thread_new column entry holds, u32 pid then u32 tid. */
struct mt_thread_id {
	__u32 pid;
	__u32 tid;
};

enum thread_mode { THREAD_SAME, THREAD_INDEX, THREAD_NEW };
enum stack_mode { STACK_ZERO, STACK_INDEX, STACK_NEW };

/* glibc's request2size: the smallest chunk, and the header and alignment a request is rounded up by. */
#define MT_CHUNK_MIN 32
#define MT_CHUNK_OVERHEAD 23	/* 8 bytes of size field, rounded up to MT_CHUNK_ALIGN */
#define MT_CHUNK_ALIGN 16

/* Where glibc puts the next chunk after a block of size bytes at addr (request2size): the AFTER prediction. */
static inline __u64 mt_next_addr(__u64 addr, __u64 size)
{
	__u64 chunk = (size + MT_CHUNK_OVERHEAD) & ~(__u64)(MT_CHUNK_ALIGN - 1);

	return addr + (chunk < MT_CHUNK_MIN ? MT_CHUNK_MIN : chunk);
}

/* Class of a freed block of that many bytes: glibc's tcache bin of its chunk, or CLASS_BIG. */
static inline unsigned int mt_size_class(__u64 size)
{
	return size > CLASS_SMALL_MAX ? CLASS_BIG : (mt_next_addr(0, size) - MT_CHUNK_MIN) / MT_CHUNK_ALIGN;
}

/* The smallest size a record of that type may have: its struct, or the common header for unknown types. */
static inline size_t mt_rec_min_len(__u16 type)
{
	size_t min = mt_rec__min_size(type);

	return min ? min : sizeof(struct mt_rec_hdr);
}

#endif /* MEMTRACK_ARTIFACT_FORMAT_H */
