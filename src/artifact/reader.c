// SPDX-License-Identifier: GPL-2.0-only
/* reader.c — events.mtz frame by frame: framing, checksums, decoding, record checks, and where damage starts. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <zstd.h>

#include "artifact/decoder.h"
#include "artifact/format.h"
#include "artifact/reader.h"
#include "common/log.h"
#include "common/openreg.h"

#define MT_READ_CHUNK (256u << 10)
/* Every record field is at most 8 bytes wide; records at other offsets are copied before delivery. */
#define MT_REC_ALIGN 8
/* A file this large is read on two threads when there are two CPUs: decoding beside the caller's work. */
#define MT_READ_PIPE_MIN (4u << 20)
/* Frames decoded ahead of the caller: enough to ride out one slow frame, little memory (a frame's records each). */
#define MT_PIPE_SLOTS 4

/* The reader's outcome for one frame position; errors are negative errno. */
enum frame_kind {
	FRAME_DATA = 1,		/* r->frame holds the complete, checksummed content */
	FRAME_SKIPPED,		/* a skippable frame was passed over */
	FRAME_EOF,		/* the file ends cleanly at a frame boundary */
};

struct mt_reader {
	int fd;			/* the file, or -1 when reading a buffer */
	const __u8 *buf;	/* mt_artifact__read_buffer: the file's bytes, buf_len of them */
	size_t buf_len;
	char name[256];		/* the file's path, for reasons */
	struct mt_read_status *st;
	mt_record_fn fn;
	void *ctx;
	ZSTD_DCtx *dctx;
	__u32 version;		/* the file's: 1, records as they are; 2 to 4, columns */
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
	struct mt_decoder *dec;	/* versions 2 to 4 */
	struct read_pipe *pipe;	/* on the decoding thread: frames go there, not to fn */
};

/* One frame's records on their way from the decoding thread to the caller's. */
struct read_batch {
	__u8 *recs;
	size_t len;
	size_t cap;
	uint64_t good_before;	/* good_bytes when the frame started (the header's, skipped frames') */
	uint64_t good_after;	/* and once it is delivered */
};

/*
 * The two threads' queue (single producer, single consumer): slots [head, tail) are decoded and not yet delivered.
 * The decoding thread's status is its own (pst), so that it may find damage ahead of a caller who stops earlier.
 */
struct read_pipe {
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* either side waits on it, for a slot or for a frame */
	struct read_batch slot[MT_PIPE_SLOTS];
	size_t head;
	size_t tail;
	bool done;			/* the decoding thread has ended: err and pst are final */
	bool stop;			/* the caller stopped: decode no more */
	int err;
	struct mt_read_status pst;
	struct mt_reader *r;
};

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

/* Damage at byte at: what was delivered before it stands; reason is prefix, then fmt. */
static int reader_damage(struct mt_reader *r, uint64_t at, const char *prefix, const char *fmt, va_list ap)
{
	struct mt_read_status *st = r->st;
	int n;

	st->damaged = true;
	st->bad_offset = at;
	n = snprintf(st->reason, sizeof(st->reason), "%s", prefix);
	set_reason(st, n, fmt, ap);
	return -EBADMSG;
}

/* Stops at the current frame: everything before it has been delivered. */
__attribute__((format(printf, 2, 3)))
static int reader_corrupt(struct mt_reader *r, const char *fmt, ...)
{
	char prefix[48];
	va_list ap;
	int err;

	snprintf(prefix, sizeof(prefix), "corrupt frame at byte %llu: ", (unsigned long long)r->frame_start);
	va_start(ap, fmt);
	err = reader_damage(r, r->frame_start, prefix, fmt, ap);
	va_end(ap);
	return err;
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

/* The file's next bytes: read(2), or a copy from the buffer a read of memory is over. */
static ssize_t reader_read(struct mt_reader *r, void *to, size_t n)
{
	size_t at = r->in_off + r->in_len;

	if (r->fd >= 0)
		return read(r->fd, to, n);
	if (n > r->buf_len - at)
		n = r->buf_len - at;
	memcpy(to, r->buf + at, n);
	return n;
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
		n = reader_read(r, r->in + r->in_len, MT_READ_CHUNK - r->in_len);
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

/* The header is damaged: nothing of the file can be trusted, nothing is delivered. */
__attribute__((format(printf, 2, 3)))
static int reader_bad_header(struct mt_reader *r, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = reader_damage(r, 0, "corrupt header: ", fmt, ap);
	va_end(ap);
	return err;
}

/* Version 4: the checksum covers header_size and whatever fields a later writer appends. */
static int check_header(struct mt_reader *r, const struct mt_file_header *h)
{
	ssize_t avail;
	__u32 crc;

	if (h->version < MT_VERSION_CHECKED)
		return 0;
	if (h->header_size > MT_HEADER_SIZE_MAX)
		return reader_bad_header(r, "header size %u, at most %u", h->header_size, MT_HEADER_SIZE_MAX);
	avail = reader_fill(r, h->header_size);
	if (avail < 0)
		return avail;
	if (avail < h->header_size)
		return reader_fail(r, -EINVAL, "not a memtrack artifact (header claims %u bytes, file is %zd)",
				   h->header_size, avail);
	crc = mt_file_header__crc(r->in, h->header_size);
	if (crc != h->checksum)
		return reader_bad_header(r, "checksum 0x%08x, the header says 0x%08x", crc, h->checksum);
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
	err = check_header(r, &h);
	if (!err)
		err = reader_skip(r, h.header_size);
	if (err > 0)
		return reader_fail(r, -EINVAL, "not a memtrack artifact (header claims %u bytes, file is %llu)",
				   h.header_size, (unsigned long long)reader_offset(r));
	if (err)
		return err;
	r->version = h.version;
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

/* The whole frame is checked before any record is delivered, so a bad frame delivers nothing. */
static int check_records(struct mt_reader *r, const __u8 *recs, size_t len, uint64_t *n)
{
	struct mt_rec_hdr h;
	size_t off, left;

	*n = 0;
	for (off = 0; off < len; off += h.size, ++*n) {
		left = len - off;
		if (left < sizeof(h))
			return reader_corrupt(r, "%zu stray bytes at the end of the frame's records", left);
		memcpy(&h, recs + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > left)
			return reader_corrupt(r, "record at byte %zu of the frame's records has size %u (type %u, %zu bytes left)",
					      off, h.size, h.type, left);
		if (h.size < mt_rec_min_len(h.type))
			return reader_corrupt(r, "record at byte %zu of the frame's records is %u bytes, type %u needs %zu",
					      off, h.size, h.type, mt_rec_min_len(h.type));
	}
	return 0;
}

/* Hands the frame's records to fn in order, each aligned; st counts them as they go. */
static int deliver(const __u8 *recs, size_t len, mt_record_fn fn, void *ctx, struct mt_read_status *st, void *aligned)
{
	const struct mt_rec_hdr *rec;
	struct mt_rec_hdr h;
	size_t off;
	int err;

	for (off = 0; off < len; off += h.size) {
		memcpy(&h, recs + off, sizeof(h));
		rec = (const void *)(recs + off);
		if ((uintptr_t)rec % MT_REC_ALIGN)
			rec = memcpy(aligned, rec, h.size);
		st->records++;
		err = fn ? fn(rec, ctx) : 0;
		if (err)
			return err;
	}
	st->frames++;
	return 0;
}

static int deliver_records(struct mt_reader *r, const __u8 *recs, size_t len)
{
	int err = deliver(recs, len, r->fn, r->ctx, r->st, r->aligned);

	if (!err)
		r->st->good_bytes = reader_offset(r);
	return err;
}

/* On the decoding thread: the checked frame into a free slot (waiting for one). -ECANCELED once the caller stopped. */
static int pipe_put(struct mt_reader *r, const __u8 *recs, size_t len, uint64_t n)
{
	struct read_pipe *p = r->pipe;
	struct read_batch *b;
	void *grown;
	bool stop;

	pthread_mutex_lock(&p->lock);
	while (p->tail - p->head == MT_PIPE_SLOTS && !p->stop)
		pthread_cond_wait(&p->cond, &p->lock);
	stop = p->stop;
	pthread_mutex_unlock(&p->lock);
	if (stop)
		return -ECANCELED;
	b = &p->slot[p->tail % MT_PIPE_SLOTS];	/* the caller is done with it: it moved head past it */
	if (len > b->cap) {
		grown = realloc(b->recs, len);
		if (!grown)
			return reader_fail(r, -ENOMEM, "out of memory");
		b->recs = grown;
		b->cap = len;
	}
	if (len)	/* an empty frame has no buffer yet: memcpy wants one even for no bytes */
		memcpy(b->recs, recs, len);
	b->len = len;
	b->good_before = r->st->good_bytes;
	r->st->records += n;
	r->st->frames++;
	r->st->good_bytes = b->good_after = reader_offset(r);
	pthread_mutex_lock(&p->lock);
	p->tail++;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

/* Version 1 frames hold the records themselves; later ones hold columns that decode to them. */
static int handle_frame(struct mt_reader *r)
{
	const __u8 *recs = r->frame;
	size_t len = r->frame_len;
	uint64_t n;
	int err;

	if (r->version >= 2) {
		err = mt_decoder__decode(r->dec, r->version, r->st->frames, r->frame, r->frame_len);
		if (err == -EBADMSG)
			return reader_corrupt(r, "%s", mt_decoder__reason(r->dec));
		if (err)
			return reader_fail(r, err, "%s", mt_decoder__reason(r->dec));
		recs = mt_decoder__records(r->dec, &len);
	}
	err = check_records(r, recs, len, &n);
	if (err)
		return err;
	return r->pipe ? pipe_put(r, recs, len, n) : deliver_records(r, recs, len);
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

/*
 * Opens name (in dfd) without blocking, since a FIFO would wait for a writer for ever, and keeps it only when it is
 * a regular file or, with dir_ok, a directory; *is_dir says which. Returns the descriptor or -errno (reason set).
 */
static int open_regular(struct mt_reader *r, int dfd, const char *name, int flags, bool dir_ok, bool *is_dir)
{
	struct stat sb;
	char why[64];
	int fd = mt_openreg__at(dfd, name, flags, &sb);

	*is_dir = fd == -EISDIR;
	if (*is_dir && dir_ok) {
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | flags);
		if (fd < 0)
			return reader_fail(r, -errno, "cannot open %s: %s", r->name, strerror(errno));
		return fd;
	}
	if (fd >= 0)
		return fd;
	if (fd == -EINVAL || fd == -EISDIR)
		return reader_fail(r, -EINVAL, "cannot read %s: %s", r->name, mt_openreg__why(fd, &sb, why, sizeof(why)));
	return reader_fail(r, fd, "cannot open %s: %s", r->name, mt_openreg__why(fd, &sb, why, sizeof(why)));
}

/* Opens PATH, or PATH/events.mtz (never through a symbolic link) when PATH is a directory. */
static int open_artifact_file(struct mt_reader *r, const char *path)
{
	bool is_dir;
	int fd, dfd;

	snprintf(r->name, sizeof(r->name), "%s", path);
	dfd = open_regular(r, AT_FDCWD, path, 0, true, &is_dir);
	if (dfd < 0 || !is_dir)
		return dfd;
	snprintf(r->name, sizeof(r->name), "%s/%s", path, MT_ARTIFACT_FILE);
	fd = open_regular(r, dfd, MT_ARTIFACT_FILE, O_NOFOLLOW, false, &is_dir);
	close(dfd);
	return fd;
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

static int reader_alloc(struct mt_reader *r)
{
	r->in = malloc(MT_READ_CHUNK);
	r->frame_cap = MT_READ_CHUNK;
	r->frame = malloc(r->frame_cap);
	r->aligned = malloc(UINT16_MAX);
	r->dec = mt_decoder__new();
	if (!r->in || !r->frame || !r->aligned || !r->dec)
		return reader_fail(r, -ENOMEM, "out of memory");
	return reader_init_zstd(r);
}

static void reader_close(struct mt_reader *r)
{
	ZSTD_freeDCtx(r->dctx);
	mt_decoder__free(r->dec);
	free(r->aligned);
	free(r->frame);
	free(r->in);
	if (r->fd >= 0)
		close(r->fd);
}

static int reader_run(struct mt_reader *r)
{
	int err = reader_alloc(r);

	if (!err)
		err = read_header(r);
	if (!err)
		err = read_frames(r);
	reader_close(r);
	return err;
}

/* The decoding thread: the whole read, frames into the pipe; then done, with its outcome. */
static void *pipe_decode(void *arg)
{
	struct read_pipe *p = arg;
	int err = reader_run(p->r);

	pthread_mutex_lock(&p->lock);
	p->err = err;
	p->done = true;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* The next decoded frame, or NULL once the decoding thread has ended and every frame was taken. */
static struct read_batch *pipe_take(struct read_pipe *p)
{
	struct read_batch *b = NULL;

	pthread_mutex_lock(&p->lock);
	while (p->head == p->tail && !p->done)
		pthread_cond_wait(&p->cond, &p->lock);
	if (p->head != p->tail)
		b = &p->slot[p->head % MT_PIPE_SLOTS];
	pthread_mutex_unlock(&p->lock);
	return b;
}

static void pipe_release(struct read_pipe *p, bool stop)
{
	pthread_mutex_lock(&p->lock);
	if (stop)
		p->stop = true;
	else
		p->head++;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/*
 * On the caller's thread: the frames to fn as the decoding thread hands them over. st is as a one-thread read leaves
 * it: counts of what fn was given when fn stops the read, else the decoding thread's final status.
 */
static int pipe_deliver(struct read_pipe *p, mt_record_fn fn, void *ctx, struct mt_read_status *st, void *aligned)
{
	struct read_batch *b;
	int err;

	while ((b = pipe_take(p))) {
		st->good_bytes = b->good_before;
		err = deliver(b->recs, b->len, fn, ctx, st, aligned);
		if (err) {
			pipe_release(p, true);
			return err;
		}
		st->good_bytes = b->good_after;
		pipe_release(p, false);
	}
	*st = p->pst;	/* the decoding thread has ended: reading it needs no lock */
	return p->err;
}

/*
 * The read on two threads: the read's outcome, fn's own (which may be any value) included. *piped false when a thread
 * cannot be had (r untouched: read on one).
 */
static int read_piped(struct mt_reader *r, bool *piped)
{
	struct read_pipe *p = calloc(1, sizeof(*p));
	void *aligned = malloc(UINT16_MAX);
	struct mt_read_status *st = r->st;
	pthread_t tid;
	int err = 0;
	size_t i;

	*piped = false;
	if (!p || !aligned)
		goto out_free;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->r = r;
	r->st = &p->pst;
	r->pipe = p;
	if (pthread_create(&tid, NULL, pipe_decode, p)) {
		r->st = st;
		r->pipe = NULL;
		goto out_destroy;
	}
	*piped = true;
	err = pipe_deliver(p, r->fn, r->ctx, st, aligned);
	pthread_join(tid, NULL);
out_destroy:
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	for (i = 0; i < MT_PIPE_SLOTS; i++)
		free(p->slot[i].recs);
out_free:
	free(aligned);
	free(p);
	return err;
}

/* Two threads pay off on a large file (see MT_READ_PIPE_MIN) with a second CPU to run on. */
static bool read_on_two(int fd)
{
	struct stat sb;

	return !fstat(fd, &sb) && sb.st_size >= MT_READ_PIPE_MIN && sysconf(_SC_NPROCESSORS_ONLN) >= 2;
}

int mt_artifact__read(const char *path, mt_record_fn fn, void *ctx, struct mt_read_status *st)
{
	return mt_artifact__read_with(path, fn, ctx, st, MT_READ_AUTO);
}

int mt_artifact__read_with(const char *path, mt_record_fn fn, void *ctx, struct mt_read_status *st,
			   enum mt_read_threads threads)
{
	struct mt_reader r = { .fd = -1, .st = st, .fn = fn, .ctx = ctx };
	bool piped = false;
	int err;

	memset(st, 0, sizeof(*st));
	r.fd = open_artifact_file(&r, path);
	if (r.fd < 0)
		return r.fd;
	if (threads == MT_READ_TWO || (threads == MT_READ_AUTO && read_on_two(r.fd))) {
		err = read_piped(&r, &piped);
		if (piped)
			return err;
	}
	return reader_run(&r);
}

int mt_artifact__read_fd(int fd, const char *name, mt_record_fn fn, void *ctx, struct mt_read_status *st)
{
	struct mt_reader r = { .fd = fd, .st = st, .fn = fn, .ctx = ctx };

	memset(st, 0, sizeof(*st));
	snprintf(r.name, sizeof(r.name), "%s", name);
	return reader_run(&r);
}

int mt_artifact__read_buffer(const void *buf, size_t len, mt_record_fn fn, void *ctx, struct mt_read_status *st)
{
	struct mt_reader r = { .fd = -1, .buf = buf, .buf_len = len, .st = st, .fn = fn, .ctx = ctx };

	memset(st, 0, sizeof(*st));
	snprintf(r.name, sizeof(r.name), "(memory)");
	return reader_run(&r);
}
