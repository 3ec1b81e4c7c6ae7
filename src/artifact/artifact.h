/* artifact.h — writer and reader of DIR/events.mtz: a versioned header, then records in independent zstd frames. */
#ifndef MEMTRACK_ARTIFACT_H
#define MEMTRACK_ARTIFACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/memtrack.h"

#define MT_ARTIFACT_FILE "events.mtz"
#define MT_ARTIFACT_MAGIC "MEMTRACK"	/* 8 bytes, no NUL */
#define MT_ARTIFACT_VERSION 3		/* what the writer writes; the reader also reads versions 1 and 2 */
#define MT_ARTIFACT_VERSION_MIN 1	/* the oldest version the reader reads */
#define MT_FRAME_MAX_CONTENT (8u << 20)	/* writer closes a frame at this many record bytes (decoded) */
#define MT_FRAME_READ_LIMIT (64u << 20)	/* reader refuses frames claiming more, stored or decoded */

struct mt_writer;

/* Called once per record, in file order; a non-zero return stops the read and is returned. */
typedef int (*mt_record_fn)(const struct mt_rec_hdr *rec, void *ctx);

/* Creates DIR (if missing) and DIR/events.mtz with its header. NULL + errno on failure. */
struct mt_writer *mt_writer__open(const char *dir);
/* Appends one record (starting with struct mt_rec_hdr whose size == size). 0 or -errno. */
int mt_writer__append(struct mt_writer *w, const void *rec, size_t size);
/*
 * Stores the ts_ns of the MT_REC_ALLOC records that follow rounded down to a multiple of ns (1, the default: exact);
 * other records keep theirs. Coarser times compress better (docs/FORMAT.md, "Time resolution"). Closes the open
 * frame first. 0, -EINVAL for ns 0, or the flush's -errno.
 */
int mt_writer__set_ts_resolution(struct mt_writer *w, uint64_t ns);
/*
 * Hands every record appended from now on to fn as a reader will get it back (coded allocation records with their
 * stored ts_ns), so that the writer's user can model the artifact while it is written. fn's return is ignored.
 */
void mt_writer__set_tap(struct mt_writer *w, mt_record_fn fn, void *ctx);
/* Compresses the pending records into one frame and writes it. 0 or -errno. */
int mt_writer__flush(struct mt_writer *w);
/* Flushes, fsyncs and closes; frees w (NULL-safe). 0 or -errno of the first failure. */
int mt_writer__close(struct mt_writer *w);
/* Records appended so far and bytes written to the file so far. */
uint64_t mt_writer__records(const struct mt_writer *w);
uint64_t mt_writer__bytes(const struct mt_writer *w);

/* What a read found; reason is empty when the file was whole. */
struct mt_read_status {
	uint64_t frames;	/* complete frames delivered */
	uint64_t records;	/* records delivered */
	uint64_t good_bytes;	/* file bytes up to the end of the last good frame */
	uint64_t bad_offset;	/* file offset where damage starts (valid when damaged) */
	bool damaged;		/* truncated or corrupt: records after bad_offset are lost */
	char reason[160];
};

/* sizeof the struct of a record type, or 0 for a type this version does not know. */
size_t mt_rec__min_size(unsigned int type);


/*
 * Reads DIR/events.mtz (or PATH itself when it is a file), delivering every record of every complete and valid frame.
 * Returns 0 when the file is whole, -EBADMSG when it is damaged (st says where and why; all records before the
 * damage were delivered), another -errno when it cannot be read at all (st->reason says why).
 */
int mt_artifact__read(const char *path, mt_record_fn fn, void *ctx, struct mt_read_status *st);

#endif /* MEMTRACK_ARTIFACT_H */
