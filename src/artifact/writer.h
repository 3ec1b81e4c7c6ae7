/* SPDX-License-Identifier: GPL-2.0-only */
/* writer.h — writing DIR/events.mtz: records in, checksummed zstd frames of columns out. */
#ifndef MEMTRACK_ARTIFACT_WRITER_H
#define MEMTRACK_ARTIFACT_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "artifact/reader.h"

struct mt_writer;

/* mt_writer__open_flags: the recording holds stack bytes (secrets the program read, maybe): the file is 0600. */
#define MT_WRITER_PRIVATE 0x1

/*
 * Creates DIR (if missing, 0755) and DIR/events.mtz with its header, 0644, or 0600 with MT_WRITER_PRIVATE (less
 * what the umask takes). NULL + errno on failure: EEXIST when DIR/events.mtz exists (a file, a link, anything: an
 * earlier recording is never overwritten), EINVAL for an unknown flag.
 */
struct mt_writer *mt_writer__open_flags(const char *dir, unsigned int flags);
/* mt_writer__open_flags(dir, 0). */
struct mt_writer *mt_writer__open(const char *dir);
/* DIR/events.mtz created in dfd (DIR's descriptor), 0644, as mt_writer__open does. */
struct mt_writer *mt_writer__open_at(int dfd);
/* The artifact written into fd, an empty file the caller created (how, and whose, is its business): the header is
 * written at once. NULL and errno on failure, fd left to the caller; else the writer closes it. */
struct mt_writer *mt_writer__open_fd(int fd);
/* Appends one record (starting with struct mt_rec_hdr whose size == size). 0 or -errno. */
int mt_writer__append(struct mt_writer *w, const void *rec, size_t size);
/*
 * Stores the ts_ns of the records that follow rounded down to a multiple of ns (1, the default: exact). Coarser
 * times compress better (docs/FORMAT.md, "Time resolution"). Closes the open frame first. 0, -EINVAL for ns 0, or
 * the flush's -errno.
 */
int mt_writer__set_ts_resolution(struct mt_writer *w, uint64_t ns);
/*
 * Hands every record appended from now on to fn as a reader will get it back (with its stored ts_ns), so that the
 * writer's user can model the artifact while it is written. fn's return is ignored.
 */
void mt_writer__set_tap(struct mt_writer *w, mt_record_fn fn, void *ctx);
/*
 * Compresses the pending records into one frame and writes it. 0 or -errno, the write's own (ENOSPC and EDQUOT as
 * such): the file is then cut back to its last whole frame, and every later call returns the same error.
 */
int mt_writer__flush(struct mt_writer *w);
/* Flushes, fsyncs and closes; frees w (NULL-safe). 0 or -errno of the first failure. */
int mt_writer__close(struct mt_writer *w);
/* Records appended so far and bytes written to the file so far. */
uint64_t mt_writer__records(const struct mt_writer *w);
uint64_t mt_writer__bytes(const struct mt_writer *w);

#endif /* MEMTRACK_ARTIFACT_WRITER_H */
