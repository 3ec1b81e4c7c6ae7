/* SPDX-License-Identifier: GPL-2.0-only */
/* reader.h — reading DIR/events.mtz: every record of every whole, valid frame, and where damage starts. */
#ifndef MEMTRACK_ARTIFACT_READER_H
#define MEMTRACK_ARTIFACT_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/memtrack.h"

/* Called once per record, in file order; a non-zero return stops the read and is returned. */
typedef int (*mt_record_fn)(const struct mt_rec_hdr *rec, void *ctx);

/* What a read found; reason is empty when the file was whole. */
struct mt_read_status {
	uint64_t frames;	/* complete frames delivered */
	uint64_t records;	/* records delivered */
	uint64_t good_bytes;	/* file bytes up to the end of the last good frame */
	uint64_t bad_offset;	/* file offset where damage starts (valid when damaged) */
	bool damaged;		/* truncated or corrupt: records after bad_offset are lost */
	char reason[160];
};

/*
 * Reads DIR/events.mtz (or PATH itself when it is a file), delivering every record of every complete and valid frame.
 * Returns 0 when the file is whole, -EBADMSG when it is damaged (st says where and why; all records before the
 * damage were delivered), another -errno when it cannot be read at all (st->reason says why).
 */
int mt_artifact__read(const char *path, mt_record_fn fn, void *ctx, struct mt_read_status *st);
/*
 * The same from fd, a file the caller opened (through mt_openreg__at: a regular file), named name in the reasons.
 * fd is the reader's: closed before it returns.
 */
int mt_artifact__read_fd(int fd, const char *name, mt_record_fn fn, void *ctx, struct mt_read_status *st);

/* Who decodes: the caller's thread, or a second one while the caller's runs fn (what fn sees is the same). */
enum mt_read_threads {
	MT_READ_AUTO,	/* two for a large file on a machine with two CPUs: mt_artifact__read's choice */
	MT_READ_ONE,
	MT_READ_TWO,	/* always (one when no thread can be started) */
};

/* mt_artifact__read with the choice of threads; fn is always called on the caller's thread. */
int mt_artifact__read_with(const char *path, mt_record_fn fn, void *ctx, struct mt_read_status *st,
			   enum mt_read_threads threads);
/* The same over len bytes at buf, as if they were the file (the fuzz target's entry point). */
int mt_artifact__read_buffer(const void *buf, size_t len, mt_record_fn fn, void *ctx, struct mt_read_status *st);

#endif /* MEMTRACK_ARTIFACT_READER_H */
