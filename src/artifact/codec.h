/* SPDX-License-Identifier: GPL-2.0-only */
/* codec.h — the number encodings of events.mtz's columns: LEB128 and zigzag (docs/FORMAT.md, "Encodings"). */
#ifndef MEMTRACK_ARTIFACT_CODEC_H
#define MEMTRACK_ARTIFACT_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "artifact/format.h"

#define MT_VARINT_MAX 10	/* LEB128 bytes of a u64 */
#define MT_VARINT_MORE 0x80	/* bit 7 of a LEB128 byte: another byte follows */
#define MT_VARINT_BITS 7

/* A signed difference as an unsigned number, small for small differences of either sign. */
static inline __u64 mt_zigzag(__u64 delta)
{
	return delta << 1 ^ -(delta >> 63);
}

static inline __u64 mt_unzigzag(__u64 v)
{
	return v >> 1 ^ -(v & 1);
}

/* Writes v as LEB128 at p, in the shortest form; returns the end. Inline: the encoder writes one per number. */
static inline __u8 *mt_varint_put(__u8 *p, __u64 v)
{
	for (; v >= MT_VARINT_MORE; v >>= MT_VARINT_BITS)
		*p++ = (v & (MT_VARINT_MORE - 1)) | MT_VARINT_MORE;
	*p++ = v;
	return p;
}

/* CRC-32/ISO-HDLC (zlib's crc32): start with crc 0, feed the bytes in any number of calls. */
__u32 mt_crc32(__u32 crc, const void *p, size_t n);

/* Bytes being read, and where the next one is. */
struct mt_cursor {
	const __u8 *p;
	size_t len;
	size_t pos;
};

/* The next LEB128 number; sets *bad (and returns 0) when it runs out or holds more than 64 bits. */
__u64 mt_cursor__varint(struct mt_cursor *k, bool *bad);

/*
 * The threads of a frame as both sides keep them (docs/FORMAT.md, "State"): the current thread, a table of those
 * seen, and the previous address of each and of the frame. Inline: the encoder consults it at every record.
 */
struct mt_threads {
	struct mt_thread_id cur;	/* the previous coded record's thread */
	__u64 addr;			/* the frame's previous address */
	__u64 *cur_addr;		/* cur's previous address: its table entry's, or addr when it has none */
	unsigned int n;			/* table entries */
	struct mt_thread_id id[MT_THREADS_MAX];
	__u64 id_addr[MT_THREADS_MAX];
};

static inline void mt_threads__reset(struct mt_threads *t)
{
	t->cur = (struct mt_thread_id){ 0 };
	t->addr = 0;
	t->cur_addr = &t->addr;
	t->n = 0;
}

/* Table entry i (< n) becomes the current thread. */
static inline void mt_threads__select(struct mt_threads *t, unsigned int i)
{
	t->cur = t->id[i];
	t->cur_addr = &t->id_addr[i];
}

/* A new thread becomes the current one, with a table entry when there is room; returns the entries then. */
static inline unsigned int mt_threads__add(struct mt_threads *t, struct mt_thread_id id)
{
	t->cur = id;
	t->cur_addr = &t->addr;
	if (t->n < MT_THREADS_MAX) {
		t->id_addr[t->n] = t->addr;
		t->cur_addr = &t->id_addr[t->n];
		t->id[t->n++] = id;
	}
	return t->n;
}

/* An address decoded with a mode other than ZERO: the previous one of the frame and of the current thread. */
static inline void mt_threads__set_addr(struct mt_threads *t, __u64 addr)
{
	t->addr = *t->cur_addr = addr;
}

#endif /* MEMTRACK_ARTIFACT_CODEC_H */
