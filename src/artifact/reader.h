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

/* Where a stage's records go on to the read's fn (struct mt_read_stage). */
struct mt_read_out;
/*
 * Passes rec (rec->size bytes, copied when needed) on to the read's fn: at once on one thread, on the caller's thread
 * later on two. 0, fn's return, or -ENOMEM.
 */
int mt_read_out__emit(struct mt_read_out *out, const struct mt_rec_hdr *rec);

/*
 * Work between the decoding and fn, run where the decoding runs (the second thread when there is one): push takes
 * every record of the file in order and passes on through out what fn is to see, as many and in the order it likes;
 * end, when the file's records are over (whole or damaged; not after a failure or the stage's stop), what it still
 * holds. A non-zero return of either stops the read and is returned; on two threads the stage runs ahead of fn, so it
 * may have gone further when fn stops. With a stage, st's records and frames count what the file gave the stage,
 * frame by frame: when fn stops the read, the frames before the one whose records it stopped in.
 */
struct mt_read_stage {
	int (*push)(const struct mt_rec_hdr *rec, struct mt_read_out *out, void *ctx);
	int (*end)(struct mt_read_out *out, void *ctx);	/* may be NULL */
	void *ctx;
};

struct mt_read_opts {
	enum mt_read_threads threads;
	const struct mt_read_stage *stage;	/* NULL: fn sees the file's records */
};

/* mt_artifact__read with options (opts may be NULL: mt_artifact__read's). */
int mt_artifact__read_opts(const char *path, mt_record_fn fn, void *ctx, struct mt_read_status *st,
			   const struct mt_read_opts *opts);
/* The same over len bytes at buf, as if they were the file (the fuzz target's entry point). */
int mt_artifact__read_buffer(const void *buf, size_t len, mt_record_fn fn, void *ctx, struct mt_read_status *st);

#endif /* MEMTRACK_ARTIFACT_READER_H */
