/* test_artifact.c — round trips, truncation, corruption and fuzzing of the events.mtz writer and reader. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "artifact.h"

#define MAX_FRAMES 64
#define REC_BUF 4096

/* A byte stream of records plus where each frame ended, in records and in file bytes. */
struct expect {
	uint8_t *bytes;
	size_t len;
	size_t cap;
	uint64_t records;
	size_t nframes;
	uint64_t frame_end[MAX_FRAMES];		/* file offset after frame i */
	uint64_t frame_records[MAX_FRAMES];	/* records in frames 0..i */
	size_t frame_bytes[MAX_FRAMES];		/* record bytes in frames 0..i */
};

/* What the callback saw. */
struct got {
	struct expect e;
	uint64_t stop_after;	/* return 7 after this many records; 0: never */
};

struct fixture {
	char dir[64];
	char file[128];
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void expect_add(struct expect *e, const void *rec, size_t size)
{
	if (e->len + size > e->cap) {
		e->cap = (e->len + size) * 2;
		e->bytes = realloc(e->bytes, e->cap);
		assert_non_null(e->bytes);
	}
	memcpy(e->bytes + e->len, rec, size);
	e->len += size;
	e->records++;
}

static void expect_frame(struct expect *e, uint64_t end)
{
	assert_true(e->nframes < MAX_FRAMES);
	e->frame_end[e->nframes] = end;
	e->frame_records[e->nframes] = e->records;
	e->frame_bytes[e->nframes] = e->len;
	e->nframes++;
}

static int collect(const struct mt_rec_hdr *rec, void *ctx)
{
	struct got *g = ctx;

	assert_int_equal((uintptr_t)rec % 8, 0);
	assert_true(rec->size >= sizeof(*rec));
	expect_add(&g->e, rec, rec->size);
	return g->stop_after && g->e.records == g->stop_after ? 7 : 0;
}

static void fill_hdr(struct mt_rec_hdr *h, uint16_t type, size_t size)
{
	h->ts_ns = rnd();
	h->pid = rnd() % 100000;
	h->tid = rnd() % 100000;
	h->type = type;
	h->size = size;
	h->_pad = 0;
}

/* Small values and repeated strings, so frames compress the way real traces do. */
static size_t make_session(void *buf)
{
	struct mt_session *s = buf;
	char *p = (char *)(s + 1);
	unsigned int i;

	s->realtime_ns = rnd();
	s->tracer_pid = rnd() % 1000;
	s->argc = rnd() % 5;
	for (i = 0; i < s->argc; i++)
		p += sprintf(p, "arg%u-%.*s", i, (int)(rnd() % 40), "abcdefghijklmnopqrstuvwxyz0123456789ABCDEF") + 1;
	fill_hdr(&s->hdr, MT_REC_SESSION, p - (char *)buf);
	return s->hdr.size;
}

static size_t make_record(void *buf, unsigned int kind)
{
	union { struct mt_alloc a; struct mt_syscall s; struct mt_fork f; struct mt_exec x; struct mt_exit e;
		struct mt_end d; } *u = buf;
	static const size_t sizes[] = { sizeof(struct mt_alloc), sizeof(struct mt_syscall), sizeof(struct mt_fork),
					sizeof(struct mt_exec), sizeof(struct mt_exit), 0, sizeof(struct mt_end), 40 };
	size_t size;

	if (kind == 5)
		return make_session(buf);
	size = sizes[kind];
	memset(buf, 0, sizeof(*u));
	u->a.addr = 0x7f0000000000ull + (rnd() % 4096) * 16;
	u->a.size = rnd() % 512;
	u->a.func = 1 + rnd() % 10;
	if (kind == 3)
		snprintf(u->x.path, sizeof(u->x.path), "/usr/bin/prog%u", (unsigned int)(rnd() % 10));
	fill_hdr(&u->a.hdr, kind == 7 ? 99 : kind + 1, size);	/* kind 7: a type this reader does not know */
	return size;
}

static void append_random(struct mt_writer *w, struct expect *e)
{
	_Alignas(8) uint8_t buf[REC_BUF];
	size_t size = make_record(buf, rnd() % 8);

	assert_int_equal(mt_writer__append(w, buf, size), 0);
	expect_add(e, buf, size);
}

/* Writes nframes frames of per_frame random records, flushing by hand so frame boundaries are known. */
static void build(const struct fixture *f, struct expect *e, size_t nframes, size_t per_frame, uint64_t seed)
{
	struct mt_writer *w;
	size_t i, j;

	memset(e, 0, sizeof(*e));
	rng_state = seed;
	w = mt_writer__open(f->dir);
	assert_non_null(w);
	assert_int_equal(mt_writer__bytes(w), 32);
	for (i = 0; i < nframes; i++) {
		for (j = 0; j < per_frame; j++)
			append_random(w, e);
		assert_int_equal(mt_writer__flush(w), 0);
		expect_frame(e, mt_writer__bytes(w));
	}
	assert_int_equal(mt_writer__records(w), e->records);
	assert_int_equal(mt_writer__close(w), 0);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat sb;
	uint8_t *buf;
	int fd;

	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	buf = malloc(sb.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, sb.st_size), sb.st_size);
	close(fd);
	*len = sb.st_size;
	return buf;
}

static void spit(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static void spit_append(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_APPEND);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static int read_into(const char *path, struct got *g, struct mt_read_status *st)
{
	free(g->e.bytes);
	memset(&g->e, 0, sizeof(g->e));
	return mt_artifact__read(path, collect, g, st);
}

/* The delivered records are exactly the first nrec records written. */
static void assert_prefix(const struct got *g, const struct expect *e, uint64_t nrec, size_t nbytes)
{
	assert_int_equal(g->e.records, nrec);
	assert_int_equal(g->e.len, nbytes);
	assert_true(nbytes <= e->len);
	assert_memory_equal(g->e.bytes, e->bytes, nbytes);
}

static void assert_whole(const struct got *g, const struct expect *e, const struct mt_read_status *st)
{
	assert_false(st->damaged);
	assert_string_equal(st->reason, "");
	assert_int_equal(st->frames, e->nframes);
	assert_int_equal(st->records, e->records);
	assert_int_equal(st->good_bytes, e->nframes ? e->frame_end[e->nframes - 1] : 32);
	assert_prefix(g, e, e->records, e->len);
}

static void write_header(const char *path, uint32_t version, uint32_t header_size)
{
	uint8_t h[64] = "MEMTRACK";

	memcpy(h + 8, &version, 4);
	memcpy(h + 12, &header_size, 4);
	memset(h + 32, 0xaa, sizeof(h) - 32);	/* what a later version's longer header might hold */
	spit(path, h, header_size < 32 ? 32 : header_size < sizeof(h) ? header_size : sizeof(h));
}

/* A frame as another writer might produce it: any content, optionally without a content size. */
static void append_frame(const char *path, const void *content, size_t len, int content_size_flag)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	ZSTD_inBuffer in = { content, len, 0 };
	size_t cap = ZSTD_compressBound(len), ret;
	ZSTD_outBuffer out = { malloc(cap), cap, 0 };

	assert_non_null(out.dst);
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)));
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, content_size_flag)));
	ret = ZSTD_compressStream2(c, &out, &in, ZSTD_e_end);
	assert_int_equal(ret, 0);
	spit_append(path, out.dst, out.pos);
	free(out.dst);
	ZSTD_freeCCtx(c);
}

static void expect_free(struct expect *e)
{
	free(e->bytes);
	e->bytes = NULL;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/memtrack-test-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->file, sizeof(f->file), "%s/%s", f->dir, MT_ARTIFACT_FILE);
	*state = f;
	return 0;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int err = nftw(f->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);

	free(f);
	return err;
}

static void test_round_trip(void **state)
{
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };
	struct expect e;
	size_t len;
	uint8_t *buf;

	build(f, &e, 8, 300, 1);
	assert_int_equal(read_into(f->dir, &g, &st), 0);
	assert_whole(&g, &e, &st);
	assert_int_equal(read_into(f->file, &g, &st), 0);
	assert_whole(&g, &e, &st);
	buf = slurp(f->file, &len);
	assert_int_equal(len, e.frame_end[e.nframes - 1]);
	assert_memory_equal(buf, "MEMTRACK\1\0\0\0\40\0\0\0", 16);
	free(buf);
	expect_free(&e);
	expect_free(&g.e);
}

/* Without explicit flushes the writer closes a frame only when the next record would not fit. */
static void test_frames_close_at_max_content(void **state)
{
	struct fixture *f = *state;
	_Alignas(8) uint8_t rec[REC_BUF];
	struct mt_read_status st;
	struct got g = { 0 };
	struct expect e = { 0 };
	struct mt_writer *w;
	uint64_t bytes;
	size_t size, open_len = 0;

	rng_state = 2;
	w = mt_writer__open(f->dir);
	assert_non_null(w);
	while (e.len < 3 * MT_FRAME_MAX_CONTENT + 1000) {
		size = make_record(rec, rnd() % 8);
		bytes = mt_writer__bytes(w);
		assert_int_equal(mt_writer__append(w, rec, size), 0);
		if (mt_writer__bytes(w) != bytes) {
			assert_true(open_len <= MT_FRAME_MAX_CONTENT);
			assert_true(open_len + size > MT_FRAME_MAX_CONTENT);
			expect_frame(&e, mt_writer__bytes(w));
			open_len = 0;
		}
		expect_add(&e, rec, size);
		open_len += size;
	}
	assert_int_equal(e.nframes, 3);
	assert_int_equal(mt_writer__close(w), 0);
	assert_int_equal(read_into(f->dir, &g, &st), 0);
	assert_int_equal(st.frames, 4);
	assert_int_equal(st.records, e.records);
	assert_false(st.damaged);
	assert_prefix(&g, &e, e.records, e.len);
	expect_free(&e);
	expect_free(&g.e);
}

/* Every cut: the frames ending before it are delivered exactly, the cut frame is reported. */
static void test_truncation(void **state)
{
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };
	struct expect e;
	uint64_t cut, size;
	size_t k;
	int rc;

	build(f, &e, 6, 20, 3);
	size = e.frame_end[e.nframes - 1];
	for (cut = size + 1; cut-- > 0;) {
		assert_int_equal(truncate(f->file, cut), 0);
		rc = read_into(f->dir, &g, &st);
		if (cut < 32) {
			assert_int_equal(rc, -EINVAL);
			assert_non_null(strstr(st.reason, "shorter than the header"));
			assert_int_equal(g.e.records, 0);
			continue;
		}
		for (k = 0; k < e.nframes && e.frame_end[k] <= cut; k++)
			;
		assert_int_equal(st.frames, k);
		assert_prefix(&g, &e, k ? e.frame_records[k - 1] : 0, k ? e.frame_bytes[k - 1] : 0);
		assert_int_equal(st.good_bytes, k ? e.frame_end[k - 1] : 32);
		if (cut == st.good_bytes) {
			assert_int_equal(rc, 0);
			assert_false(st.damaged);
			continue;
		}
		assert_int_equal(rc, -EBADMSG);
		assert_true(st.damaged);
		assert_int_equal(st.bad_offset, st.good_bytes);
		assert_memory_equal(st.reason, "truncated: ", 11);
	}
	expect_free(&e);
	expect_free(&g.e);
}

/*
 * One flipped byte in frame k: frames before k are delivered, frame k is reported, nothing after. zstd ignores a few
 * bits of its entropy tables, so a rare flip is harmless; the checksum then proves the content identical.
 */
static void test_flipped_bytes(void **state)
{
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };
	struct expect e;
	uint64_t start, end, pos, harmless = 0;
	size_t k, len;
	uint8_t *buf;

	build(f, &e, 5, 30, 4);
	buf = slurp(f->file, &len);
	for (k = 0; k < e.nframes; k++) {
		start = k ? e.frame_end[k - 1] : 32;
		end = e.frame_end[k];
		for (pos = start; pos < end; pos++) {
			buf[pos] ^= 0xff;
			spit(f->file, buf, len);
			buf[pos] ^= 0xff;
			if (read_into(f->file, &g, &st) == 0 && pos >= start + 4 && pos < end - 4) {
				assert_whole(&g, &e, &st);
				harmless++;
				continue;
			}
			assert_true(st.damaged);
			assert_int_equal(st.bad_offset, start);
			assert_int_equal(st.good_bytes, start);
			assert_int_equal(st.frames, k);
			assert_prefix(&g, &e, k ? e.frame_records[k - 1] : 0, k ? e.frame_bytes[k - 1] : 0);
			assert_memory_equal(st.reason, "corrupt frame at byte ", 22);
		}
	}
	assert_true(harmless * 100 < len);
	free(buf);
	expect_free(&e);
	expect_free(&g.e);
}

static void test_bad_magic(void **state)
{
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };

	spit(f->file, "MEMTRACX\1\0\0\0\40\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 32);
	assert_int_equal(read_into(f->dir, &g, &st), -EINVAL);
	assert_string_equal(st.reason, "not a memtrack artifact (bad magic)");
	spit(f->file, "MEMTRACK\1\0", 10);
	assert_int_equal(read_into(f->dir, &g, &st), -EINVAL);
	assert_string_equal(st.reason, "not a memtrack artifact (file is 10 bytes, shorter than the header)");
	spit(f->file, "", 0);
	assert_int_equal(read_into(f->dir, &g, &st), -EINVAL);
	assert_string_equal(st.reason, "not a memtrack artifact (file is 0 bytes, shorter than the header)");
	assert_int_equal(g.e.records, 0);
	assert_false(st.damaged);
	expect_free(&g.e);
}

static void test_header_fields(void **state)
{
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };

	write_header(f->file, 2, 32);
	assert_int_equal(read_into(f->dir, &g, &st), -EPROTONOSUPPORT);
	assert_string_equal(st.reason, "unsupported artifact version 2 (this memtrack reads version 1)");
	write_header(f->file, 1, 16);
	assert_int_equal(read_into(f->dir, &g, &st), -EINVAL);
	write_header(f->file, 1, 1000);
	assert_int_equal(read_into(f->dir, &g, &st), -EINVAL);
	assert_non_null(strstr(st.reason, "header claims 1000 bytes"));
	expect_free(&g.e);
}

/* A longer header, skippable frames and frames without a content size are all read. */
static void test_compatible_extensions(void **state)
{
	static const uint8_t skippable[] = { 0x5e, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 'i', 'd', 'x' };
	struct fixture *f = *state;
	_Alignas(8) uint8_t rec[REC_BUF];
	struct mt_read_status st;
	struct got g = { 0 };
	struct expect e = { 0 };
	size_t i, len = 0;

	rng_state = 5;
	write_header(f->file, 1, 64);
	spit_append(f->file, skippable, sizeof(skippable));
	for (i = 0; i < 10; i++) {
		len = make_record(rec, i % 8);
		expect_add(&e, rec, len);
	}
	append_frame(f->file, e.bytes, e.len, 0);
	spit_append(f->file, skippable, sizeof(skippable));
	append_frame(f->file, e.bytes, 0, 1);
	append_frame(f->file, rec, len, 1);
	expect_add(&e, rec, len);
	assert_int_equal(read_into(f->dir, &g, &st), 0);
	assert_false(st.damaged);
	assert_int_equal(st.frames, 3);
	assert_prefix(&g, &e, e.records, e.len);
	/* A skippable frame cut short is damage like any other. */
	spit_append(f->file, skippable, sizeof(skippable) - 1);
	assert_int_equal(read_into(f->dir, &g, &st), -EBADMSG);
	assert_int_equal(st.frames, 3);
	assert_int_equal(st.bad_offset, st.good_bytes);
	expect_free(&e);
	expect_free(&g.e);
}

/* Frames whose checksum is right but whose content does not parse into records deliver nothing. */
static void test_bad_records(void **state)
{
	struct fixture *f = *state;
	_Alignas(8) uint8_t good[REC_BUF], bad[REC_BUF];
	struct mt_rec_hdr *h = (struct mt_rec_hdr *)bad;
	struct mt_read_status st;
	struct got g = { 0 };
	size_t glen, i;
	/* record size, bytes in the frame */
	static const struct { uint16_t type, size; size_t len; } cases[] = {
		{ MT_REC_SESSION, 24, 24 },	/* shorter than struct mt_session */
		{ MT_REC_EXEC, 300, 300 },	/* shorter than struct mt_exec */
		{ MT_REC_STACK, 100, 100 },	/* shorter than struct mt_stack */
		{ 99, 16, 16 },			/* shorter than the common header */
		{ 99, 0, 64 },			/* size 0 would never advance */
		{ 99, 200, 100 },		/* runs past the frame */
		{ 99, 40, 50 },			/* 10 stray bytes after the record */
	};

	rng_state = 6;
	glen = make_record(good, 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(bad, 0, sizeof(bad));
		fill_hdr(h, cases[i].type, cases[i].size);
		write_header(f->file, 1, 32);
		append_frame(f->file, good, glen, 1);
		append_frame(f->file, bad, cases[i].len, 1);
		assert_int_equal(read_into(f->dir, &g, &st), -EBADMSG);
		assert_true(st.damaged);
		assert_int_equal(st.frames, 1);
		assert_int_equal(st.records, 1);
		assert_int_equal(st.bad_offset, st.good_bytes);
		assert_memory_equal(g.e.bytes, good, glen);
		assert_memory_equal(st.reason, "corrupt frame at byte ", 22);
	}
	expect_free(&g.e);
}

static void test_frame_limit(void **state)
{
	/* magic, descriptor (8-byte content size, single segment, checksum), content size 100 MiB */
	static const uint8_t big[] = { 0x28, 0xb5, 0x2f, 0xfd, 0xe4, 0, 0, 0x40, 0x06, 0, 0, 0, 0, 1, 0, 0 };
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };
	size_t len = MT_FRAME_READ_LIMIT + 4096;
	void *zeros;

	write_header(f->file, 1, 32);
	spit_append(f->file, big, sizeof(big));
	assert_int_equal(read_into(f->dir, &g, &st), -EBADMSG);
	assert_non_null(strstr(st.reason, "frame claims 104857600 bytes"));
	assert_int_equal(st.bad_offset, 32);

	zeros = calloc(1, len);
	assert_non_null(zeros);
	write_header(f->file, 1, 32);
	append_frame(f->file, zeros, len, 0);
	free(zeros);
	assert_int_equal(read_into(f->dir, &g, &st), -EBADMSG);
	assert_non_null(strstr(st.reason, "exceeds the limit"));
	assert_int_equal(st.bad_offset, 32);
	assert_int_equal(g.e.records, 0);
	expect_free(&g.e);
}

static void test_missing_file(void **state)
{
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };
	char path[160];

	assert_int_equal(read_into(f->dir, &g, &st), -ENOENT);
	snprintf(path, sizeof(path), "cannot open %s: %s", f->file, strerror(ENOENT));
	assert_string_equal(st.reason, path);
	snprintf(path, sizeof(path), "%s/nope", f->dir);
	assert_int_equal(read_into(path, &g, &st), -ENOENT);
	assert_false(st.damaged);
	expect_free(&g.e);
}

static void test_header_only(void **state)
{
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };
	struct mt_writer *w;

	w = mt_writer__open(f->dir);
	assert_non_null(w);
	assert_int_equal(mt_writer__flush(w), 0);
	assert_int_equal(mt_writer__bytes(w), 32);
	assert_int_equal(mt_writer__close(w), 0);
	assert_int_equal(read_into(f->dir, &g, &st), 0);
	assert_int_equal(st.frames, 0);
	assert_int_equal(st.records, 0);
	assert_int_equal(st.good_bytes, 32);
	assert_false(st.damaged);
	assert_string_equal(st.reason, "");
	expect_free(&g.e);
}

static void test_writer_rejects(void **state)
{
	struct fixture *f = *state;
	_Alignas(8) uint8_t rec[REC_BUF];
	struct mt_rec_hdr *h = (struct mt_rec_hdr *)rec;
	struct mt_writer *w;
	char path[160];

	assert_int_equal(mt_writer__close(NULL), 0);
	snprintf(path, sizeof(path), "%s/sub", f->dir);
	w = mt_writer__open(path);
	assert_non_null(w);
	memset(rec, 0, sizeof(rec));
	fill_hdr(h, MT_REC_FORK, sizeof(struct mt_fork));
	assert_int_equal(mt_writer__append(w, rec, 16), -EINVAL);
	assert_int_equal(mt_writer__append(w, rec, 40), -EINVAL);
	fill_hdr(h, MT_REC_ALLOC, 32);
	assert_int_equal(mt_writer__append(w, rec, 32), -EINVAL);
	fill_hdr(h, MT_REC_FORK, sizeof(struct mt_fork));
	assert_int_equal(mt_writer__append(w, rec, sizeof(struct mt_fork)), 0);
	assert_int_equal(mt_writer__records(w), 1);
	assert_int_equal(mt_writer__close(w), 0);

	snprintf(path, sizeof(path), "%s/file", f->dir);
	spit(path, "x", 1);
	errno = 0;
	assert_null(mt_writer__open(path));
	assert_int_equal(errno, ENOTDIR);
}

static void test_callback_stops(void **state)
{
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { .stop_after = 50 };
	struct expect e;

	build(f, &e, 3, 30, 7);
	assert_int_equal(read_into(f->dir, &g, &st), 7);
	assert_int_equal(st.records, 50);
	assert_int_equal(st.frames, 1);
	assert_false(st.damaged);
	assert_prefix(&g, &e, 50, g.e.len);
	expect_free(&e);
	expect_free(&g.e);
}

/* Random cuts and flips: never a crash, and whatever is delivered is a prefix of what was written. */
static void test_fuzz(void **state)
{
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };
	struct expect e;
	size_t len, cut, n, i;
	uint8_t *buf, *copy;
	int rc, iter;

	build(f, &e, 4, 25, 8);
	buf = slurp(f->file, &len);
	copy = malloc(len);
	assert_non_null(copy);
	rng_state = 9;
	for (iter = 0; iter < 4000; iter++) {
		memcpy(copy, buf, len);
		cut = rnd() % 3 ? len : rnd() % (len + 1);
		for (n = rnd() % 4, i = 0; i < n; i++)
			copy[rnd() % len] ^= 1 + rnd() % 255;
		spit(f->file, copy, cut);
		rc = read_into(f->dir, &g, &st);
		assert_true(rc == 0 || rc == -EBADMSG || rc == -EINVAL || rc == -EPROTONOSUPPORT);
		assert_int_equal(st.damaged, rc == -EBADMSG);
		assert_int_equal(st.records, g.e.records);
		assert_true(st.good_bytes <= cut);
		if (st.damaged)
			assert_true(st.bad_offset >= st.good_bytes && st.bad_offset < cut);
		assert_prefix(&g, &e, g.e.records, g.e.len);
	}
	free(copy);
	free(buf);
	expect_free(&e);
	expect_free(&g.e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frames_close_at_max_content, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flipped_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_magic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_header_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compatible_extensions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frame_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_header_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writer_rejects, setup, teardown),
		cmocka_unit_test_setup_teardown(test_callback_stops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fuzz, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
