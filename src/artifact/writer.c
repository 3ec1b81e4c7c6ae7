// SPDX-License-Identifier: GPL-2.0-only
/* writer.c — DIR/events.mtz: the header, then each frame's columns compressed into one checksummed zstd frame. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <zstd.h>

#include "artifact/encoder.h"
#include "artifact/format.h"
#include "artifact/writer.h"
#include "common/log.h"

/*
 * Columns leave zstd little to match: its Huffman coding of literals does most of the work, and a match found in a
 * column of random numbers (ranks, sizes) costs more than the literals it replaces. Level 1 with a hash table of 64
 * slots finds the long repeats (tags, flags) and few others: 1.5% smaller than 4096 slots, and no slower.
 */
#define MT_ZSTD_LEVEL 1
#define MT_ZSTD_WINDOW_LOG 17
#define MT_ZSTD_HASH_LOG 6
#define MT_ZSTD_MIN_MATCH 7
#define MT_ZSTD_BLOCK_HEADER 3	/* bytes before each zstd block: one per column, since each column ends a block */

#define MT_DIR_MODE 0755
#define MT_FILE_MODE 0644
#define MT_FILE_MODE_PRIVATE 0600	/* MT_WRITER_PRIVATE: stack bytes may hold what the program read */

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
	uint64_t frames;	/* data frames written: the next one's number */
	uint64_t bytes;
	mt_record_fn tap;	/* mt_writer__set_tap */
	void *tap_ctx;
	_Alignas(8) __u8 tap_buf[UINT16_MAX];	/* a record as the reader will give it back */
};

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

static int write_header(int fd)
{
	struct mt_file_header hdr = { .version = MT_ARTIFACT_VERSION, .header_size = sizeof(hdr) };

	memcpy(hdr.magic, MT_ARTIFACT_MAGIC, sizeof(hdr.magic));
	hdr.checksum = mt_file_header__crc((const __u8 *)&hdr, sizeof(hdr));
	return write_full(fd, &hdr, sizeof(hdr));
}

/* DIR/events.mtz (dfd: DIR) with its header; its descriptor or -errno. O_EXCL: an earlier recording is never
 * overwritten, and a link planted at the name is never followed (O_NOFOLLOW says so too). */
static int create_artifact_at(int dfd, mode_t mode)
{
	int fd = openat(dfd, MT_ARTIFACT_FILE, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode), err;

	if (fd < 0)
		return -errno;
	err = write_header(fd);
	if (err) {
		close(fd);
		unlinkat(dfd, MT_ARTIFACT_FILE, 0);	/* ours (O_EXCL), and empty: it would only stop the next try */
		return err;
	}
	return fd;
}

/* Creates DIR (if missing) and DIR/events.mtz; openat keeps DIR's identity from the create to the clean-up. */
static int create_artifact_file(const char *dir, mode_t mode)
{
	int dfd, fd;

	if (mkdir(dir, MT_DIR_MODE) && errno != EEXIST)
		return -errno;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	fd = create_artifact_at(dfd, mode);
	close(dfd);
	return fd;
}

static void writer_free(struct mt_writer *w)
{
	ZSTD_freeCCtx(w->cctx);
	mt_encoder__free(w->enc);
	free(w->zbuf);
	free(w);
}

/* A writer around the file that create makes (dir, or dfd with fd -1), or around fd (header written here). */
static struct mt_writer *writer_new(const char *dir, int dfd, int fd, mode_t mode)
{
	struct mt_writer *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return NULL;
	w->ts_res = 1;
	w->enc = mt_encoder__new();
	err = w->enc ? writer_init_zstd(w) : -errno;
	if (err)
		goto err_free;
	if (fd >= 0)
		err = write_header(fd);
	w->fd = fd >= 0 ? fd : dir ? create_artifact_file(dir, mode) : create_artifact_at(dfd, mode);
	if (err || w->fd < 0) {
		err = err ? err : w->fd;
		goto err_free;
	}
	w->bytes = sizeof(struct mt_file_header);
	return w;

err_free:
	writer_free(w);
	errno = -err;
	return NULL;
}

struct mt_writer *mt_writer__open_flags(const char *dir, unsigned int flags)
{
	if (flags & ~MT_WRITER_PRIVATE) {
		errno = EINVAL;
		return NULL;
	}
	return writer_new(dir, -1, -1, flags & MT_WRITER_PRIVATE ? MT_FILE_MODE_PRIVATE : MT_FILE_MODE);
}

struct mt_writer *mt_writer__open_at(int dfd)
{
	return writer_new(NULL, dfd, -1, MT_FILE_MODE);
}

struct mt_writer *mt_writer__open_fd(int fd)
{
	return writer_new(NULL, -1, fd, 0);
}

struct mt_writer *mt_writer__open(const char *dir)
{
	return mt_writer__open_flags(dir, 0);
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
	copy->ts_ns = mt_encoder__round_ts(w->enc, copy->ts_ns);
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
	if (hdr.size != size || size < mt_rec_min_len(hdr.type))
		return -EINVAL;
	if (w->pending_len + size > MT_FRAME_MAX_CONTENT) {
		err = mt_writer__flush(w);
		if (err)
			return err;
	}
	mt_encoder__add(w->enc, rec, size);
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
	mt_encoder__reset(w->enc, ns);	/* the open frame is empty */
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
	__u8 header[MT_CONTENT_HEADER_MAX];
	size_t hlen = mt_encoder__header(w->enc, w->frames, header), total = hlen, cap, len;
	const __u8 *col;
	ZSTD_outBuffer out;
	int c, err;

	for (c = 0; c < COL__COUNT; c++) {
		mt_encoder__column(w->enc, c, &len);
		total += len;
	}
	cap = ZSTD_compressBound(total) + MT_ZSTD_BLOCK_HEADER * COL__COUNT + MT_ZSTD_HEADER_MAX;
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
	for (c = 0; c < COL__COUNT && !err; c++) {
		col = mt_encoder__column(w->enc, c, &len);
		if (len)
			err = compress_part(w, &out, col, len, ZSTD_e_flush);
	}
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
		/* A full disk (ENOSPC, EDQUOT) keeps what it took of the frame: cut it, so the file is whole again. */
		if (ftruncate(w->fd, w->bytes))
			pr_warn("cannot cut " MT_ARTIFACT_FILE " back to its last whole frame: %s\n", strerror(errno));
		w->err = err;
		return err;
	}
	w->bytes += n;
	w->frames++;
	w->pending_len = 0;
	mt_encoder__reset(w->enc, w->ts_res);
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
