/* artifact.c — writes and reads DIR/events.mtz: a fixed header, then records in independent, checksummed zstd frames. */
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

#include "artifact.h"
#include "log.h"

/* Records are stored as host structs and the format is defined as little-endian: the two must agree. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "events.mtz is little-endian");
/* Any record must fit in one frame, and the reader must accept every frame the writer makes. */
_Static_assert(MT_FRAME_MAX_CONTENT >= UINT16_MAX, "a record fits in a frame");
_Static_assert(MT_FRAME_MAX_CONTENT <= MT_FRAME_READ_LIMIT, "the reader accepts the writer's frames");

#define MT_ZSTD_LEVEL 3
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

struct mt_file_header {
	char magic[8];		/* MT_ARTIFACT_MAGIC, no NUL */
	__u32 version;		/* MT_ARTIFACT_VERSION */
	__u32 header_size;	/* readers skip this many bytes, so a later version may append fields */
	__u64 flags;		/* 0 */
	__u64 reserved;		/* 0 */
};

_Static_assert(sizeof(struct mt_file_header) == 32, "mt_file_header size");

struct mt_writer {
	int fd;
	int err;		/* first I/O or zstd failure; sticky, so a half-written frame is never followed by more */
	ZSTD_CCtx *cctx;
	__u8 *pending;		/* records of the open frame; MT_FRAME_MAX_CONTENT bytes */
	size_t pending_len;
	void *zbuf;		/* one compressed frame; sized by ZSTD_compressBound so compression cannot run short */
	size_t zbuf_cap;
	uint64_t records;
	uint64_t bytes;
};

/* The reader's outcome for one frame position; errors are negative errno. */
enum frame_kind {
	FRAME_DATA = 1,		/* r->frame holds the complete, checksummed content */
	FRAME_SKIPPED,		/* a skippable frame was passed over */
	FRAME_EOF,		/* the file ends cleanly at a frame boundary */
};

struct mt_reader {
	int fd;
	char name[256];		/* the file's path, for reasons */
	struct mt_read_status *st;
	mt_record_fn fn;
	void *ctx;
	ZSTD_DCtx *dctx;
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
	free(w->zbuf);
	free(w->pending);
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
	w->zbuf_cap = ZSTD_compressBound(MT_FRAME_MAX_CONTENT);
	w->pending = malloc(MT_FRAME_MAX_CONTENT);
	w->zbuf = malloc(w->zbuf_cap);
	err = w->pending && w->zbuf ? writer_init_zstd(w) : -ENOMEM;
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
	memcpy(w->pending + w->pending_len, rec, size);
	w->pending_len += size;
	w->records++;
	return 0;
}

int mt_writer__flush(struct mt_writer *w)
{
	size_t n;
	int err;

	if (w->err || !w->pending_len)
		return w->err;
	n = ZSTD_compress2(w->cctx, w->zbuf, w->zbuf_cap, w->pending, w->pending_len);
	if (ZSTD_isError(n)) {
		pr_warn("cannot compress a frame of %zu bytes: %s\n", w->pending_len, ZSTD_getErrorName(n));
		w->err = -EIO;
		return w->err;
	}
	err = write_full(w->fd, w->zbuf, n);
	if (err) {
		w->err = err;
		return err;
	}
	w->bytes += n;
	w->pending_len = 0;
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
	if (h.version != MT_ARTIFACT_VERSION)
		return reader_fail(r, -EPROTONOSUPPORT, "unsupported artifact version %u (this memtrack reads version %u)",
				   h.version, MT_ARTIFACT_VERSION);
	if (h.header_size < sizeof(h))
		return reader_fail(r, -EINVAL, "not a memtrack artifact (header size %u, at least %zu expected)",
				   h.header_size, sizeof(h));
	err = reader_skip(r, h.header_size);
	if (err > 0)
		return reader_fail(r, -EINVAL, "not a memtrack artifact (header claims %u bytes, file is %llu)",
				   h.header_size, (unsigned long long)reader_offset(r));
	if (err)
		return err;
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
static int check_frame(struct mt_reader *r)
{
	struct mt_rec_hdr h;
	size_t off, left;

	for (off = 0; off < r->frame_len; off += h.size) {
		left = r->frame_len - off;
		if (left < sizeof(h))
			return reader_corrupt(r, "%zu stray bytes at the end of the content", left);
		memcpy(&h, r->frame + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > left)
			return reader_corrupt(r, "record at content byte %zu has size %u (type %u, %zu bytes left)",
					      off, h.size, h.type, left);
		if (h.size < rec_min_size(h.type))
			return reader_corrupt(r, "record at content byte %zu is %u bytes, type %u needs %zu",
					      off, h.size, h.type, rec_min_size(h.type));
	}
	return 0;
}

static int deliver_frame(struct mt_reader *r)
{
	const struct mt_rec_hdr *rec;
	struct mt_rec_hdr h;
	size_t off;
	int err;

	for (off = 0; off < r->frame_len; off += h.size) {
		memcpy(&h, r->frame + off, sizeof(h));
		rec = (const void *)(r->frame + off);
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
		err = check_frame(r);
		if (!err)
			err = deliver_frame(r);
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

static void reader_close(struct mt_reader *r)
{
	ZSTD_freeDCtx(r->dctx);
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
