// SPDX-License-Identifier: GPL-2.0-only
/* test_artifact.c — round trips, damage and fuzzing of the events.mtz writer, reader and column codec. */
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
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "artifact/artifact.h"
#include "helpers.h"

#define MAX_FRAMES 64
#define REC_BUF 4096
/*
 * test_golden_bytes: what the writer of 61ccadd (artifact.c, version 3, before its split into modules) made of the
 * stream: the frames' content without version 4's frame numbers; the file as version 4 writes it.
 */
#define GOLDEN_CONTENT_LEN 2494412
#define GOLDEN_CONTENT_HASH 0xde5363bbeec91420ull
#define GOLDEN_ZSTD_VERSION 10504	/* libzstd 1.5.4, Debian 12's */
#define GOLDEN_FILE_LEN 1154397
#define GOLDEN_FILE_HASH 0x899c572425080fdeull

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
	uint64_t stop_after;	/* return stop_with (7 when 0) after this many records; 0: never */
	int stop_with;
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
	return g->stop_after && g->e.records == g->stop_after ? (g->stop_with ? g->stop_with : 7) : 0;
}

static void fill_hdr(struct mt_rec_hdr *h, uint16_t type, size_t size)
{
	h->ts_ns = rnd();
	h->pid = rnd() % 100000;
	h->tid = rnd() % 100000;
	h->type = type;
	h->size = size;
	h->seq = 0;
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
	/* syscall records of the first writers' size: the golden stream (test_golden_bytes) predates the stack field */
	static const size_t sizes[] = { sizeof(struct mt_alloc), MT_SYSCALL_SIZE_V1, sizeof(struct mt_fork),
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

static void spit_append(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_APPEND);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* Who decodes in read_into: the tests named *_two_threads read on two, the others as mt_artifact__read does. */
static enum mt_read_threads read_threads = MT_READ_AUTO;

static int read_into(const char *path, struct got *g, struct mt_read_status *st)
{
	free(g->e.bytes);
	memset(&g->e, 0, sizeof(g->e));
	return mt_artifact__read_with(path, collect, g, st, read_threads);
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

/* Version 4's header checksum, as docs/FORMAT.md defines it: zlib's CRC-32 of the header, bytes 24-27 as 0. */
static uint32_t header_crc(const uint8_t *h, size_t header_size)
{
	static const uint8_t zero[4];
	uLong crc = crc32(0, h, 24);

	crc = crc32(crc, zero, 4);
	return crc32(crc, h + 28, header_size - 28);
}

static void write_header(const char *path, uint32_t version, uint32_t header_size)
{
	uint8_t h[64] = "MEMTRACK";
	uint32_t crc;
	size_t len = header_size < 32 ? 32 : header_size < sizeof(h) ? header_size : sizeof(h);

	memcpy(h + 8, &version, 4);
	memcpy(h + 12, &header_size, 4);
	memset(h + 32, 0xaa, sizeof(h) - 32);	/* what a later version's longer header might hold */
	if (version >= 4) {
		crc = header_crc(h, len);
		memcpy(h + 24, &crc, 4);
	}
	mt_test__write_file(path, h, len);
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

static int setup_two(void **state)
{
	read_threads = MT_READ_TWO;
	return setup(state);
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
	char mnt[160];
	int err;

	snprintf(mnt, sizeof(mnt), "%s/tiny", f->dir);
	umount2(mnt, MNT_DETACH);	/* test_disk_full's tmpfs, if it failed before unmounting it */
	err = nftw(f->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);

	free(f);
	read_threads = MT_READ_AUTO;
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
	buf = (uint8_t *)mt_test__read_bytes(f->file, &len);
	assert_int_equal(len, e.frame_end[e.nframes - 1]);
	assert_memory_equal(buf, "MEMTRACK\4\0\0\0\40\0\0\0", 16);
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
	buf = (uint8_t *)mt_test__read_bytes(f->file, &len);
	for (k = 0; k < e.nframes; k++) {
		start = k ? e.frame_end[k - 1] : 32;
		end = e.frame_end[k];
		for (pos = start; pos < end; pos++) {
			buf[pos] ^= 0xff;
			mt_test__write_file(f->file, buf, len);
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

	mt_test__write_file(f->file, "MEMTRACX\1\0\0\0\40\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 32);
	assert_int_equal(read_into(f->dir, &g, &st), -EINVAL);
	assert_string_equal(st.reason, "not a memtrack artifact (bad magic)");
	mt_test__write_file(f->file, "MEMTRACK\1\0", 10);
	assert_int_equal(read_into(f->dir, &g, &st), -EINVAL);
	assert_string_equal(st.reason, "not a memtrack artifact (file is 10 bytes, shorter than the header)");
	mt_test__write_file(f->file, "", 0);
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

	write_header(f->file, 5, 32);
	assert_int_equal(read_into(f->dir, &g, &st), -EPROTONOSUPPORT);
	assert_string_equal(st.reason, "unsupported artifact version 5 (this memtrack reads versions 1 to 4)");
	write_header(f->file, 0, 32);
	assert_int_equal(read_into(f->dir, &g, &st), -EPROTONOSUPPORT);
	write_header(f->file, 2, 32);
	assert_int_equal(read_into(f->dir, &g, &st), 0);
	assert_int_equal(st.frames, 0);
	write_header(f->file, 1, 16);
	assert_int_equal(read_into(f->dir, &g, &st), -EINVAL);
	write_header(f->file, 1, 1000);
	assert_int_equal(read_into(f->dir, &g, &st), -EINVAL);
	assert_non_null(strstr(st.reason, "header claims 1000 bytes"));
	expect_free(&g.e);
}

/* Version 4: a header with its checksum reads, any change to it is damage at byte 0 or not an artifact at all. */
static void test_header_checksum(void **state)
{
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };
	uint8_t *h;
	size_t len, pos;
	int rc;

	write_header(f->file, 4, 64);	/* longer than this version's: the checksum covers all 64 bytes */
	assert_int_equal(read_into(f->dir, &g, &st), 0);
	assert_int_equal(st.good_bytes, 64);
	write_header(f->file, 4, 5000);
	assert_int_equal(read_into(f->dir, &g, &st), -EBADMSG);
	assert_string_equal(st.reason, "corrupt header: header size 5000, at most 4096");
	write_header(f->file, 4, 32);
	assert_int_equal(read_into(f->dir, &g, &st), 0);
	h = (uint8_t *)mt_test__read_bytes(f->file, &len);
	for (pos = 0; pos < len; pos++) {
		h[pos] ^= 0xff;
		mt_test__write_file(f->file, h, len);
		h[pos] ^= 0xff;
		rc = read_into(f->dir, &g, &st);
		assert_int_not_equal(rc, 0);
		if (pos < 16)	/* magic, version, header_size: not an artifact this memtrack reads */
			continue;
		assert_int_equal(rc, -EBADMSG);
		assert_true(st.damaged);
		assert_int_equal(st.bad_offset, 0);
		assert_int_equal(st.good_bytes, 0);
		assert_memory_equal(st.reason, "corrupt header: checksum 0x", 27);
	}
	free(h);
	expect_free(&g.e);
}

/* A longer header, skippable frames and frames without a content size are all read (version 1 frames, by hand). */
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

/* Version 1 frames whose checksum is right but whose records do not parse deliver nothing. */
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
	mt_test__write_file(path, "x", 1);
	errno = 0;
	assert_null(mt_writer__open(path));
	assert_int_equal(errno, ENOTDIR);
}

/* Writes the file's header, then its frames in the order given (indices into e's frames, -1 ending the list). */
static void write_frames(const char *path, const uint8_t *file, const struct expect *e, const int *order)
{
	uint64_t start;

	mt_test__write_file(path, file, 32);
	for (; *order >= 0; order++) {
		start = *order ? e->frame_end[*order - 1] : 32;
		spit_append(path, file + start, e->frame_end[*order] - start);
	}
}

/* The frames before bad delivered, nothing after, damage at byte at for the reason given. */
static void assert_order_damage(const char *path, const struct expect *e, size_t good, uint64_t at, const char *why)
{
	struct mt_read_status st;
	struct got g = { 0 };
	char want[160];

	assert_int_equal(read_into(path, &g, &st), -EBADMSG);
	assert_true(st.damaged);
	assert_int_equal(st.frames, good);
	assert_int_equal(st.bad_offset, at);
	assert_int_equal(st.good_bytes, at);
	assert_prefix(&g, e, e->frame_records[good - 1], e->frame_bytes[good - 1]);
	snprintf(want, sizeof(want), "corrupt frame at byte %llu: %s", (unsigned long long)at, why);
	assert_string_equal(st.reason, want);
	expect_free(&g.e);
}

/* Whole frames dropped, repeated or swapped: damage where the order breaks, every frame before it kept. */
static void test_frame_order(void **state)
{
	static const int dropped[] = { 0, 1, 3, 4, 5, -1 }, repeated[] = { 0, 1, 2, 2, 3, 4, 5, -1 },
			 swapped[] = { 0, 1, 3, 2, 4, 5, -1 }, last_dropped[] = { 0, 1, 2, 3, 4, -1 };
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };
	struct expect e;
	uint32_t size, crc;
	uint8_t *file, *h;
	size_t len;

	build(f, &e, 6, 20, 21);
	file = (uint8_t *)mt_test__read_bytes(f->file, &len);
	write_frames(f->file, file, &e, dropped);
	assert_order_damage(f->file, &e, 2, e.frame_end[1], "frame number 3 where 2 was expected (1 missing before it)");
	write_frames(f->file, file, &e, repeated);
	assert_order_damage(f->file, &e, 3, e.frame_end[2],
			    "frame number 2 where 3 was expected (a frame repeated or moved)");
	write_frames(f->file, file, &e, swapped);
	assert_order_damage(f->file, &e, 2, e.frame_end[1], "frame number 3 where 2 was expected (1 missing before it)");
	/* The last frame dropped is a cut at a frame boundary: whole, as for truncation; MT_REC_END tells the rest. */
	write_frames(f->file, file, &e, last_dropped);
	assert_int_equal(read_into(f->file, &g, &st), 0);
	assert_int_equal(st.frames, 5);
	/* A header_size that skips frame 0: the checksum says so, and with a checksum made for it, the numbers do. */
	h = malloc(len);
	assert_non_null(h);
	memcpy(h, file, len);
	size = e.frame_end[0];
	memcpy(h + 12, &size, sizeof(size));
	mt_test__write_file(f->file, h, len);
	assert_int_equal(read_into(f->file, &g, &st), -EBADMSG);
	assert_int_equal(st.bad_offset, 0);
	assert_memory_equal(st.reason, "corrupt header: checksum", 24);
	crc = header_crc(h, size);
	memcpy(h + 24, &crc, sizeof(crc));
	mt_test__write_file(f->file, h, len);
	assert_int_equal(read_into(f->file, &g, &st), -EBADMSG);
	assert_int_equal(st.frames, 0);
	assert_int_equal(g.e.records, 0);
	assert_int_equal(st.bad_offset, e.frame_end[0]);
	assert_non_null(strstr(st.reason, "frame number 1 where 0 was expected (1 missing before it)"));
	free(h);
	free(file);
	expect_free(&e);
	expect_free(&g.e);
}

/* Anything but a regular file is refused at once (a FIFO must not block the reader), and so is a symbolic link. */
static void test_not_regular(void **state)
{
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };
	char want[300];

	alarm(10);	/* a reader that blocks on the FIFO fails the test instead of hanging it */
	assert_int_equal(mkfifo(f->file, 0600), 0);
	assert_int_equal(read_into(f->dir, &g, &st), -EINVAL);
	snprintf(want, sizeof(want), "cannot read %s: not a regular file (a FIFO)", f->file);
	assert_string_equal(st.reason, want);
	assert_int_equal(read_into(f->file, &g, &st), -EINVAL);
	assert_string_equal(st.reason, want);
	assert_false(st.damaged);
	alarm(0);
	assert_int_equal(unlink(f->file), 0);
	assert_int_equal(mkdir(f->file, 0700), 0);
	assert_int_equal(read_into(f->dir, &g, &st), -EINVAL);
	snprintf(want, sizeof(want), "cannot read %s: not a regular file (a directory)", f->file);
	assert_string_equal(st.reason, want);
	assert_int_equal(rmdir(f->file), 0);
	assert_int_equal(symlink("/dev/null", f->file), 0);
	assert_int_equal(read_into(f->dir, &g, &st), -ELOOP);
	snprintf(want, sizeof(want), "cannot open %s: a symbolic link (not followed)", f->file);
	assert_string_equal(st.reason, want);
	assert_int_equal(read_into(f->file, &g, &st), -EINVAL);	/* named itself, it is followed: a device */
	assert_non_null(strstr(st.reason, "not a regular file (a character device)"));
	expect_free(&g.e);
}

/* An existing DIR/events.mtz, whatever it is, is never overwritten nor followed: EEXIST, and it stays as it was. */
static void test_no_overwrite(void **state)
{
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };
	struct expect e;
	char target[160];
	struct stat sb;
	uint8_t *buf;
	size_t len;

	build(f, &e, 2, 10, 27);
	errno = 0;
	assert_null(mt_writer__open(f->dir));
	assert_int_equal(errno, EEXIST);
	assert_int_equal(read_into(f->dir, &g, &st), 0);
	assert_whole(&g, &e, &st);
	/* A link planted at the name, to a file the recording would clobber: refused, the file untouched. */
	snprintf(target, sizeof(target), "%s/victim", f->dir);
	mt_test__write_file(target, "keep", 4);
	assert_int_equal(unlink(f->file), 0);
	assert_int_equal(symlink(target, f->file), 0);
	errno = 0;
	assert_null(mt_writer__open_flags(f->dir, MT_WRITER_PRIVATE));
	assert_int_equal(errno, EEXIST);
	buf = (uint8_t *)mt_test__read_bytes(target, &len);
	assert_int_equal(len, 4);
	assert_memory_equal(buf, "keep", 4);
	assert_int_equal(lstat(f->file, &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));
	errno = 0;
	assert_null(mt_writer__open_flags(f->dir, 2));
	assert_int_equal(errno, EINVAL);
	free(buf);
	expect_free(&e);
	expect_free(&g.e);
}

/* 0644, or 0600 when the recording holds stack bytes (with the umask a user would have). */
static void test_file_mode(void **state)
{
	struct fixture *f = *state;
	struct mt_writer *w;
	struct stat sb;
	mode_t old = umask(022);

	w = mt_writer__open(f->dir);
	assert_non_null(w);
	assert_int_equal(mt_writer__close(w), 0);
	assert_int_equal(stat(f->file, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0644);
	assert_int_equal(unlink(f->file), 0);
	w = mt_writer__open_flags(f->dir, MT_WRITER_PRIVATE);
	assert_non_null(w);
	assert_int_equal(mt_writer__close(w), 0);
	assert_int_equal(stat(f->file, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);
	umask(old);
}

/* Records that zstd cannot shrink: a type the reader does not know, random bytes. */
static size_t make_noise(void *buf, size_t size)
{
	struct mt_rec_hdr *h = buf;
	size_t i;

	for (i = sizeof(*h); i < size; i++)
		((uint8_t *)buf)[i] = rnd();
	fill_hdr(h, 99, size);
	return size;
}

/*
 * A full disk (a 64 KiB tmpfs): the flush that does not fit returns -ENOSPC, not -EIO, and so does every call after
 * it; the file is cut back to its last whole frame, and reads back whole with every frame flushed before.
 */
static void test_disk_full(void **state)
{
	struct fixture *f = *state;
	_Alignas(8) uint8_t rec[REC_BUF];
	struct mt_read_status st;
	struct got g = { 0 };
	struct expect e = { 0 };
	struct mt_writer *w;
	char mnt[160], dir[200];
	uint64_t good = 0;
	int err = 0, i;

	snprintf(mnt, sizeof(mnt), "%s/tiny", f->dir);
	snprintf(dir, sizeof(dir), "%s/out", mnt);
	assert_int_equal(mkdir(mnt, 0700), 0);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k")) {
		if (getenv("CI"))
			fail_msg("cannot mount a tmpfs at %s: %s", mnt, strerror(errno));
		skip();
	}
	rng_state = 29;
	w = mt_writer__open(dir);
	assert_non_null(w);
	for (i = 0; i < 100 && !err; i++) {
		assert_int_equal(mt_writer__append(w, rec, make_noise(rec, 3000)), 0);
		err = mt_writer__flush(w);
		if (!err) {
			expect_add(&e, rec, 3000);
			good = mt_writer__bytes(w);
		}
	}
	assert_int_equal(err, -ENOSPC);
	assert_true(e.records > 5);
	assert_int_equal(mt_writer__append(w, rec, 3000), -ENOSPC);
	assert_int_equal(mt_writer__flush(w), -ENOSPC);
	assert_int_equal(mt_writer__close(w), -ENOSPC);
	assert_int_equal(read_into(dir, &g, &st), 0);
	assert_int_equal(st.good_bytes, good);
	assert_int_equal(st.frames, e.records);
	assert_prefix(&g, &e, e.records, e.len);
	assert_int_equal(umount2(mnt, MNT_DETACH), 0);
	expect_free(&e);
	expect_free(&g.e);
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

/* A callback that stops with 1 (a value the reader once used for itself): the read ends there, once. */
static void test_callback_stops_with_one(void **state)
{
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { .stop_after = 50, .stop_with = 1 };
	struct expect e;

	build(f, &e, 3, 30, 7);
	assert_int_equal(read_into(f->dir, &g, &st), 1);
	assert_int_equal(g.e.records, 50);
	assert_int_equal(st.records, 50);
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
	buf = (uint8_t *)mt_test__read_bytes(f->file, &len);
	copy = malloc(len);
	assert_non_null(copy);
	rng_state = 9;
	for (iter = 0; iter < 4000; iter++) {
		memcpy(copy, buf, len);
		cut = rnd() % 3 ? len : rnd() % (len + 1);
		for (n = rnd() % 4, i = 0; i < n; i++)
			copy[rnd() % len] ^= 1 + rnd() % 255;
		mt_test__write_file(f->file, copy, cut);
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

/* A churn as an allocator serves it: size-class free lists reused last-in first-out, a bump pointer, and noise. */
struct heap_sim {
	uint64_t top;
	uint64_t ts;
	uint64_t live[512], live_size[512];
	unsigned int nlive;
	uint64_t freed[64][8];
	unsigned int nfreed[64];
	uint32_t pid, tid;
	uint64_t stacks[8];
	bool with_stacks;
};

static uint64_t sim_chunk(uint64_t size)
{
	uint64_t c = (size + 23) & ~15ull;

	return c < 32 ? 32 : c;
}

static uint64_t sim_take(struct heap_sim *h, uint64_t size)
{
	unsigned int cls = sim_chunk(size) / 16 % 64;
	uint64_t addr;

	if (h->nfreed[cls] && rnd() % 8)
		return h->freed[cls][--h->nfreed[cls]];
	addr = h->top;
	h->top += sim_chunk(size) + (rnd() % 16 ? 0 : 16 * (rnd() % 100));	/* now and then a gap */
	return addr;
}

static void sim_give(struct heap_sim *h, uint64_t addr, uint64_t size)
{
	unsigned int cls = sim_chunk(size) / 16 % 64;

	if (h->nfreed[cls] < 8)
		h->freed[cls][h->nfreed[cls]++] = addr;
}

/* Takes block i out of the live set; returns its address. */
static uint64_t sim_release(struct heap_sim *h, unsigned int i, uint64_t *size)
{
	uint64_t addr = h->live[i];

	*size = h->live_size[i];
	sim_give(h, addr, *size);
	h->live[i] = h->live[--h->nlive];
	h->live_size[i] = h->live_size[h->nlive];
	return addr;
}

static void sim_keep(struct heap_sim *h, uint64_t addr, uint64_t size)
{
	if (addr && h->nlive < 512) {
		h->live[h->nlive] = addr;
		h->live_size[h->nlive++] = size;
	}
}

static void sim_thread(struct heap_sim *h, struct mt_alloc *a)
{
	unsigned int r = rnd() % 100;

	if (r < 3)
		h->tid = h->pid + rnd() % 4;		/* another thread of the process */
	else if (r < 4)
		h->pid = h->tid = 1000 + rnd() % 600;	/* over 256 threads: the table fills */
	a->hdr.pid = h->pid;
	a->hdr.tid = h->tid;
}

static void sim_free(struct heap_sim *h, struct mt_alloc *a)
{
	static const uint8_t funcs[] = { MT_FN_FREE, MT_FN_FREE, MT_FN_DELETE, MT_FN_DELETE_ARRAY, MT_FN_SDALLOCX };
	unsigned int r = rnd() % 100;
	uint64_t size;

	a->func = funcs[rnd() % sizeof(funcs)];
	if (r < 3) {
		a->addr = 0x7f0000000000ull + 16 * (rnd() % 100000);	/* a block from before the frame */
	} else if (r < 4 && h->nfreed[3]) {
		a->addr = h->freed[3][0];				/* a double free */
	} else {
		a->addr = sim_release(h, rnd() % h->nlive, &size);
		if (a->func == MT_FN_DELETE || a->func == MT_FN_SDALLOCX)
			a->size = size;
	}
}

static void sim_alloc(struct heap_sim *h, struct mt_alloc *a)
{
	unsigned int r = rnd() % 100;
	uint64_t old_size;

	a->size = 16 + rnd() % 4096;
	a->func = r < 70 ? MT_FN_MALLOC : r < 80 ? MT_FN_CALLOC : r < 85 ? MT_FN_NEW : r < 90 ? MT_FN_POSIX_MEMALIGN :
		  MT_FN_REALLOC;
	if (a->func == MT_FN_POSIX_MEMALIGN)
		a->align = 16ull << rnd() % 8;
	if (a->func == MT_FN_REALLOC && h->nlive) {
		a->old_addr = sim_release(h, rnd() % h->nlive, &old_size);
		a->addr = rnd() % 2 ? a->old_addr : sim_take(h, a->size);
	} else {
		a->addr = rnd() % 50 ? sim_take(h, a->size) : 0;	/* 0: the allocation failed */
	}
	sim_keep(h, a->addr, a->size);
}

static size_t sim_record(struct heap_sim *h, void *buf)
{
	struct mt_alloc *a = buf;

	memset(a, 0, sizeof(*a));
	h->ts += rnd() % 50 ? 500 + rnd() % 4000 : -(rnd() % 3000);	/* CPUs' rings interleave: now and then back */
	a->hdr.ts_ns = h->ts;
	a->hdr.type = MT_REC_ALLOC;
	a->hdr.size = sizeof(*a);
	a->allocator = rnd() % 20 ? MT_ALLOCATOR_GLIBC : MT_ALLOCATOR_LIBSTDCXX;
	sim_thread(h, a);
	if (h->nlive > 256 || (h->nlive && rnd() % 2))
		sim_free(h, a);
	else
		sim_alloc(h, a);
	if (h->with_stacks)
		a->stack = rnd() % 10 ? h->stacks[rnd() % 8] : rnd();
	return sizeof(*a);
}

static void sim_init(struct heap_sim *h, bool with_stacks)
{
	unsigned int i;

	memset(h, 0, sizeof(*h));
	h->top = 0x55550000a000ull;
	h->ts = 1000000000ull;
	h->pid = h->tid = 4242;
	h->with_stacks = with_stacks;
	for (i = 0; i < 8; i++)
		h->stacks[i] = rnd();
}

/* Allocation records the columns cannot hold exactly, and values at the edges of their fields. */
static size_t make_odd_alloc(void *buf, unsigned int kind)
{
	struct mt_alloc *a = buf;
	size_t size = sizeof(*a);

	memset(buf, 0, sizeof(*a) + 8);
	fill_hdr(&a->hdr, MT_REC_ALLOC, size);
	a->func = MT_FN_MALLOC;
	a->addr = rnd();
	a->size = rnd();
	switch (kind % 10) {
	case 0: a->_pad[rnd() % 6] = 1 + rnd() % 255; break;	/* padding that is not 0 */
	case 1: a->hdr.seq = 1; break;
	case 2: a->func = 0; a->allocator = 0; break;			/* tag 0 means verbatim */
	case 3: a->func = 32 + rnd() % 200; break;			/* a func past 5 bits */
	case 4: a->allocator = 8 + rnd() % 200; break;
	case 5: size += 8; a->hdr.size = size; break;			/* a longer, later record layout */
	case 6: a->func = 0; a->allocator = 3; break;			/* func 0 is coded when allocator is not */
	case 7: a->hdr.ts_ns = UINT64_MAX - rnd() % 3; a->size = UINT64_MAX; a->addr = UINT64_MAX - 15; break;
	case 8: a->func = 31; a->allocator = 7; a->old_addr = UINT64_MAX; a->align = UINT64_MAX; a->stack = 1; break;
	default: a->func = MT_FN_FREE; a->addr = rnd() % 2 ? 0 : UINT64_MAX; a->hdr.pid = a->hdr.tid = UINT32_MAX; break;
	}
	return size;
}

/* Writes n records: the churn mostly, other record types and odd allocations now and then. */
static void append_mixed(struct mt_writer *w, struct expect *e, struct heap_sim *h, size_t n, uint64_t ts_res)
{
	_Alignas(8) uint8_t buf[REC_BUF];
	struct mt_rec_hdr *hdr = (void *)buf;
	unsigned int r;
	size_t i, size;

	for (i = 0; i < n; i++) {
		r = rnd() % 100;
		size = r < 2 ? make_record(buf, rnd() % 8) : r < 4 ? make_odd_alloc(buf, rnd()) : sim_record(h, buf);
		assert_int_equal(mt_writer__append(w, buf, size), 0);
		hdr->ts_ns -= hdr->ts_ns % ts_res;	/* what the reader gives back, coded or verbatim */
		expect_add(e, buf, size);
	}
}

/* Every record back byte for byte, in order, through frames closed by size and by hand. */
static void test_alloc_round_trip(void **state)
{
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };
	struct expect e = { 0 };
	struct heap_sim h;
	struct mt_writer *w;
	int stacks;

	for (stacks = 0; stacks < 2; stacks++) {
		memset(&e, 0, sizeof(e));
		rng_state = 11 + stacks;
		sim_init(&h, stacks);
		unlink(f->file);	/* the writer never overwrites one */
		w = mt_writer__open(f->dir);
		assert_non_null(w);
		append_mixed(w, &e, &h, 40000, 1);	/* three frames closed by size */
		assert_int_equal(mt_writer__flush(w), 0);
		append_mixed(w, &e, &h, 300, 1);
		assert_int_equal(mt_writer__flush(w), 0);
		append_mixed(w, &e, &h, 1, 1);
		assert_int_equal(mt_writer__close(w), 0);
		assert_int_equal(read_into(f->dir, &g, &st), 0);
		assert_false(st.damaged);
		assert_int_equal(st.records, e.records);
		assert_prefix(&g, &e, e.records, e.len);
		expect_free(&e);
	}
	expect_free(&g.e);
}

/* Coarser times for the records that follow: each change closes a frame; exact ns are the default. */
static void test_ts_resolution(void **state)
{
	static const uint64_t res[] = { 1000, 3, 1ull << 40, 1 };
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };
	struct expect e = { 0 };
	struct heap_sim h;
	struct mt_writer *w;
	uint64_t bytes;
	size_t i;

	rng_state = 13;
	sim_init(&h, false);
	w = mt_writer__open(f->dir);
	assert_non_null(w);
	assert_int_equal(mt_writer__set_ts_resolution(w, 0), -EINVAL);
	append_mixed(w, &e, &h, 500, 1);
	for (i = 0; i < sizeof(res) / sizeof(res[0]); i++) {
		bytes = mt_writer__bytes(w);
		assert_int_equal(mt_writer__set_ts_resolution(w, res[i]), 0);
		assert_true(mt_writer__bytes(w) > bytes);
		append_mixed(w, &e, &h, 500, res[i]);
	}
	assert_int_equal(mt_writer__close(w), 0);
	assert_int_equal(read_into(f->dir, &g, &st), 0);
	assert_int_equal(st.frames, 5);
	assert_prefix(&g, &e, e.records, e.len);
	expect_free(&e);
	expect_free(&g.e);
}

/* A file as version 1 writers made it: records as they are in each frame. */
static void test_version1_file(void **state)
{
	struct fixture *f = *state;
	_Alignas(8) uint8_t rec[REC_BUF];
	struct mt_read_status st;
	struct got g = { 0 };
	struct expect e = { 0 };
	struct heap_sim h;
	size_t i, j, start, size;

	rng_state = 14;
	sim_init(&h, true);
	write_header(f->file, 1, 32);
	for (i = 0; i < 3; i++) {
		start = e.len;
		for (j = 0; j < 200; j++) {
			size = j % 4 ? sim_record(&h, rec) : make_record(rec, rnd() % 8);
			expect_add(&e, rec, size);
		}
		append_frame(f->file, e.bytes + start, e.len - start, (int)i % 2);
	}
	assert_int_equal(read_into(f->dir, &g, &st), 0);
	assert_int_equal(st.frames, 3);
	assert_prefix(&g, &e, e.records, e.len);
	expect_free(&e);
	expect_free(&g.e);
}

/* Column numbers of docs/FORMAT.md, written out again so that these tests check the document, not the code. */
enum {
	P_TAG, P_FLAGS_FREE, P_FLAGS_ALLOC, P_EXTRA, P_THREAD, P_THREAD_NEW, P_STACK_NEW, P_VERBATIM,
	P_TS_FREE, P_TS_ALLOC = P_TS_FREE + 2, P_SIZE = P_TS_ALLOC + 2, P_LIVE = P_SIZE + 2, P_FREED = P_LIVE + 2,
	P_AFTER = P_FREED + 2, P_DELTA = P_AFTER + 2, P_ALIGN = P_DELTA + 2, P_STACK = P_ALIGN + 2,
	P_V2_COUNT = P_STACK + 2,
	/* Version 3: P_FLAGS_FREE and P_FLAGS_ALLOC hold head bytes, P_FREED the big class's ranks. */
	P_MORE = P_V2_COUNT, P_CLASS, P_SMALL,
	P__COUNT = P_SMALL + 2,
};

/* A frame's content, built field by field as the document describes it. */
struct payload {
	uint8_t col[P__COUNT][512];
	size_t len[P__COUNT];
	uint64_t nrec;
	uint64_t ts_res;
	uint8_t layout;
	uint64_t ncol;		/* what the header claims */
	size_t ncols;		/* columns written: P_V2_COUNT or P__COUNT */
	int64_t seq;		/* version 4: the frame's number; -1 in earlier versions, which have none */
};

static void pl_u8(struct payload *p, int c, uint8_t v)
{
	p->col[c][p->len[c]++] = v;
}

static void pl_raw(struct payload *p, int c, const void *v, size_t n)
{
	memcpy(p->col[c] + p->len[c], v, n);
	p->len[c] += n;
}

static void pl_varint(struct payload *p, int c, uint64_t v)
{
	for (; v >= 0x80; v >>= 7)
		pl_u8(p, c, (v & 0x7f) | 0x80);
	pl_u8(p, c, v);
}

static void pl_number(struct payload *p, int lo, uint64_t v)
{
	pl_u8(p, lo, v & 0xff);
	pl_varint(p, lo + 1, v >> 8);
}

static uint64_t zz(int64_t v)
{
	return (uint64_t)v << 1 ^ (uint64_t)(v >> 63);
}

static void pl_init(struct payload *p)
{
	memset(p, 0, sizeof(*p));
	p->ts_res = 1;
	p->layout = 1;
	p->ncol = p->ncols = P_V2_COUNT;
	p->seq = -1;
}

static void pl_init3(struct payload *p)
{
	pl_init(p);
	p->ncol = p->ncols = P__COUNT;
}

/* Writes the content header and columns into out; returns the length. */
static size_t pl_content(const struct payload *p, uint8_t *out)
{
	struct payload h;
	size_t n, c;

	pl_init(&h);
	pl_u8(&h, 0, p->layout);
	if (p->seq >= 0)
		pl_varint(&h, 0, p->seq);
	pl_varint(&h, 0, p->nrec);
	pl_varint(&h, 0, p->ts_res);
	pl_varint(&h, 0, p->ncol);
	for (c = 0; c < p->ncols; c++)
		pl_varint(&h, 0, p->len[c]);
	memcpy(out, h.col[0], h.len[0]);
	n = h.len[0];
	for (c = 0; c < p->ncols; c++) {
		memcpy(out + n, p->col[c], p->len[c]);
		n += p->len[c];
	}
	return n;
}

static void pl_append_frame(const char *path, const struct payload *p)
{
	uint8_t content[P__COUNT * 520];

	append_frame(path, content, pl_content(p, content), 1);
}

static void alloc_rec(struct mt_alloc *a, uint64_t ts, uint32_t pid, uint32_t tid, uint8_t func, uint64_t addr,
		      uint64_t size)
{
	memset(a, 0, sizeof(*a));
	a->hdr = (struct mt_rec_hdr){ .ts_ns = ts, .pid = pid, .tid = tid, .type = MT_REC_ALLOC, .size = sizeof(*a) };
	a->func = func;
	a->allocator = MT_ALLOCATOR_GLIBC;
	a->addr = addr;
	a->size = size;
}

/* A coded record: expected, its tag (func | allocator << 5) and its head. */
static void pl_coded(struct payload *p, struct expect *e, const struct mt_alloc *a, uint8_t head)
{
	expect_add(e, a, sizeof(*a));
	pl_u8(p, P_TAG, a->func | a->allocator << 5);
	pl_u8(p, mt_func__is_free(a->func) ? P_FLAGS_FREE : P_FLAGS_ALLOC, head);
}

/* The examples' verbatim record. */
static void pl_verbatim_exit(struct payload *p, struct expect *e)
{
	struct mt_exit x = { .hdr = { .ts_ns = 1, .pid = 7, .tid = 7, .type = MT_REC_EXIT, .size = sizeof(x) } };

	expect_add(e, &x, sizeof(x));
	pl_u8(p, P_TAG, 0);
	pl_raw(p, P_VERBATIM, &x, sizeof(x));
}

/* The examples' realloc(0x1070, 500) = 0x2000 at 5300 ns by thread 9/10, align 64, stack 0xabcdef. */
static void example_realloc(struct mt_alloc *a)
{
	alloc_rec(a, 5300, 9, 10, MT_FN_REALLOC, 0x2000, 500);
	a->old_addr = 0x1070;
	a->align = 64;
	a->stack = 0xabcdef;
}

/* Tag, flags and fields of each record, as docs/FORMAT.md's worked example has them. */
static void pl_example(struct payload *p, struct expect *e)
{
	struct mt_alloc a;
	uint32_t thread[2] = { 7, 8 };

	pl_init(p);
	p->nrec = 7;
	/* 1: malloc(100) = 0x1000 at 5000 ns by a new thread 7/8: addr DELTA, size, THREAD_NEW */
	alloc_rec(&a, 5000, 7, 8, MT_FN_MALLOC, 0x1000, 100);
	pl_coded(p, e, &a, 3 | 0x10 | 2 << 5);
	pl_raw(p, P_THREAD_NEW, thread, sizeof(thread));
	pl_number(p, P_TS_ALLOC, zz(5000));
	pl_number(p, P_SIZE, 100);
	pl_number(p, P_DELTA, zz(0x1000));
	/* 2: malloc(40) = 0x1070, where a chunk after block 1 starts: AFTER live rank 0 */
	alloc_rec(&a, 5100, 7, 8, MT_FN_MALLOC, 0x1070, 40);
	pl_coded(p, e, &a, 2 | 0x10);
	pl_number(p, P_TS_ALLOC, zz(100));
	pl_number(p, P_SIZE, 40);
	pl_number(p, P_AFTER, 0);	/* live list 0x1000: block 1 is the newest */
	/* 3: free(0x1000): REF live rank 1 */
	alloc_rec(&a, 5150, 7, 8, MT_FN_FREE, 0x1000, 0);
	pl_coded(p, e, &a, 1);
	pl_number(p, P_TS_FREE, zz(50));
	pl_number(p, P_LIVE, 1);
	/* 4: malloc(100) = 0x1000 again: REF freed rank 0 */
	alloc_rec(&a, 5200, 7, 8, MT_FN_MALLOC, 0x1000, 100);
	pl_coded(p, e, &a, 1 | 0x10);
	pl_number(p, P_TS_ALLOC, zz(50));
	pl_number(p, P_SIZE, 100);
	pl_number(p, P_FREED, 0);
	/* 5: a record of another type, verbatim */
	pl_verbatim_exit(p, e);
	/* 6: realloc(0x1070, 500) = 0x2000 with align 64 and a new stack, by a new thread 9/10 */
	example_realloc(&a);
	pl_coded(p, e, &a, 3 | 1 << 2 | 0x10 | 2 << 5 | 0x80);
	pl_u8(p, P_EXTRA, 1 | 2 << 1);
	thread[0] = 9, thread[1] = 10;
	pl_raw(p, P_THREAD_NEW, thread, sizeof(thread));
	pl_number(p, P_TS_ALLOC, zz(100));
	pl_number(p, P_SIZE, 500);
	pl_number(p, P_LIVE, 1);			/* live list 0x1070, 0x1000 */
	pl_number(p, P_DELTA, zz(0x2000 - 0x1070));	/* from old_addr, decoded just before */
	pl_number(p, P_ALIGN, 64);
	pl_raw(p, P_STACK_NEW, &a.stack, sizeof(a.stack));
	/* 7: free(0x2000) by thread table entry 0, stack table entry 0, 10 ns earlier */
	alloc_rec(&a, 5290, 7, 8, MT_FN_FREE, 0x2000, 0);
	a.stack = 0xabcdef;
	pl_coded(p, e, &a, 1 | 1 << 5 | 0x80);
	pl_u8(p, P_EXTRA, 1 << 1);
	pl_u8(p, P_THREAD, 0);
	pl_number(p, P_TS_FREE, zz(-10));
	pl_number(p, P_LIVE, 0);			/* live list 0x1000, 0x2000 */
	pl_number(p, P_STACK, 0);
}

/* A frame of allocations that never repeat an address or a stack: the encoder's tables grow, nothing is lost. */
static void test_distinct_blocks(void **state)
{
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };
	struct expect e = { 0 };
	struct mt_writer *w;
	struct mt_alloc a;
	size_t i;

	rng_state = 17;
	w = mt_writer__open(f->dir);
	assert_non_null(w);
	for (i = 0; i < 2 * (MT_FRAME_MAX_CONTENT / sizeof(a)); i++) {	/* two full frames */
		alloc_rec(&a, 1000 * i, 1, 1, i % 3 ? MT_FN_MALLOC : MT_FN_REALLOC, rnd() & ~15ull, rnd() % 100000);
		a.old_addr = a.func == MT_FN_REALLOC ? rnd() & ~15ull : 0;
		a.stack = rnd();
		assert_int_equal(mt_writer__append(w, &a, sizeof(a)), 0);
		expect_add(&e, &a, sizeof(a));
	}
	assert_int_equal(mt_writer__close(w), 0);
	assert_int_equal(read_into(f->dir, &g, &st), 0);
	assert_int_equal(st.frames, 2);
	assert_prefix(&g, &e, e.records, e.len);
	expect_free(&e);
	expect_free(&g.e);
}

static void test_content_by_hand(void **state)
{
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };
	struct expect e = { 0 };
	struct payload p;
	struct mt_alloc a;

	write_header(f->file, 2, 32);
	pl_example(&p, &e);
	pl_append_frame(f->file, &p);
	/* A second frame starts from nothing, at 1 us: a stored time of 3 is 3000 ns. */
	pl_init(&p);
	p.nrec = 1;
	p.ts_res = 1000;
	alloc_rec(&a, 3000, 0, 0, MT_FN_MALLOC, 0, 0);
	expect_add(&e, &a, sizeof(a));
	pl_u8(&p, P_TAG, 0x21);
	pl_u8(&p, P_FLAGS_ALLOC, 0);
	pl_number(&p, P_TS_ALLOC, zz(3));
	pl_append_frame(f->file, &p);
	append_frame(f->file, "", 0, 1);	/* an empty frame holds no records */
	if (read_into(f->dir, &g, &st))
		fail_msg("%s", st.reason);
	assert_int_equal(st.frames, 3);
	assert_prefix(&g, &e, e.records, e.len);
	expect_free(&e);
	expect_free(&g.e);
}

/* Version 3: records 0-6 as in pl_example, with heads; 7-9 take a block of another class, free and take a big one. */
static void pl_example3(struct payload *p, struct expect *e)
{
	struct mt_alloc a;
	uint32_t thread[2] = { 7, 8 };

	pl_init3(p);
	p->nrec = 10;
	/* 0: malloc(100) = 0x1000 at 5000 ns by a new thread 7/8: ts number, DELTA, size, MORE: THREAD_NEW */
	alloc_rec(&a, 5000, 7, 8, MT_FN_MALLOC, 0x1000, 100);
	pl_coded(p, e, &a, 15 | 3 << 4 | 0x40 | 0x80);
	pl_u8(p, P_MORE, 2 << 2);
	pl_raw(p, P_THREAD_NEW, thread, sizeof(thread));
	pl_number(p, P_TS_ALLOC, zz(5000));
	pl_number(p, P_SIZE, 100);
	pl_number(p, P_DELTA, zz(0x1000));
	/* 1: malloc(40) = 0x1070 at 5003: step 3, AFTER live rank 0 */
	alloc_rec(&a, 5003, 7, 8, MT_FN_MALLOC, 0x1070, 40);
	pl_coded(p, e, &a, 3 | 2 << 4 | 0x40);
	pl_number(p, P_SIZE, 40);
	pl_number(p, P_AFTER, 0);
	/* 2: free(0x1000) at 5004: live rank 1, place 0; it joins class 5 (chunk 112) */
	alloc_rec(&a, 5004, 7, 8, MT_FN_FREE, 0x1000, 0);
	pl_coded(p, e, &a, 1);
	pl_u8(p, P_LIVE, 1);
	/* 3: malloc(100) = 0x1000 at 5004: rank 0 in its own class */
	alloc_rec(&a, 5004, 7, 8, MT_FN_MALLOC, 0x1000, 100);
	pl_coded(p, e, &a, 0x40);
	pl_number(p, P_SIZE, 100);
	pl_number(p, P_SMALL, 0);
	/* 4: a record of another type, verbatim */
	pl_verbatim_exit(p, e);
	/* 5: realloc(0x1070, 500) = 0x2000 at 5300 by a new thread 9/10, align 64, a new stack; 0x1070 joins class 1 */
	example_realloc(&a);
	pl_coded(p, e, &a, 15 | 3 << 4 | 0x40 | 0x80);
	pl_u8(p, P_MORE, 1 | 2 << 2 | 0x10);
	pl_u8(p, P_EXTRA, 1 | 2 << 1);
	thread[0] = 9, thread[1] = 10;
	pl_raw(p, P_THREAD_NEW, thread, sizeof(thread));
	pl_number(p, P_TS_ALLOC, zz(296));
	pl_number(p, P_SIZE, 500);
	pl_number(p, P_LIVE, 1);			/* live list 0x1070, 0x1000 */
	pl_number(p, P_DELTA, zz(0x2000 - 0x1070));
	pl_number(p, P_ALIGN, 64);
	pl_raw(p, P_STACK_NEW, &a.stack, sizeof(a.stack));
	/* 6: free(0x2000) at 5290 by table entry 0, stack entry 0: ts number, MORE; live rank 0; joins class 30 */
	alloc_rec(&a, 5290, 7, 8, MT_FN_FREE, 0x2000, 0);
	a.stack = 0xabcdef;
	pl_coded(p, e, &a, 15 | 0x80);
	pl_u8(p, P_MORE, 1 << 2 | 0x10);
	pl_u8(p, P_EXTRA, 1 << 1);
	pl_u8(p, P_THREAD, 0);
	pl_number(p, P_TS_FREE, zz(-10));
	pl_u8(p, P_LIVE, 0);				/* live list 0x1000, 0x2000 */
	pl_number(p, P_STACK, 0);
	/* 7: malloc(1000) = 0x1070 at 5291 (class 61): OTHER, class 1 rank 0 */
	alloc_rec(&a, 5291, 7, 8, MT_FN_MALLOC, 0x1070, 1000);
	pl_coded(p, e, &a, 1 | 1 << 4 | 0x40);
	pl_number(p, P_SIZE, 1000);
	pl_u8(p, P_CLASS, 1);
	pl_number(p, P_SMALL, 0);
	/* 8: free(0x5000), a block this frame never saw, at 5291: MORE's address field DELTA; it joins the big class */
	alloc_rec(&a, 5291, 7, 8, MT_FN_FREE, 0x5000, 0);
	pl_coded(p, e, &a, 0x80);
	pl_u8(p, P_MORE, 3 << 6);
	pl_number(p, P_DELTA, zz(0x5000 - 0x1070));
	/* 9: malloc(2000) = 0x5000 at 5292: rank 0 in the big class */
	alloc_rec(&a, 5292, 7, 8, MT_FN_MALLOC, 0x5000, 2000);
	pl_coded(p, e, &a, 1 | 0x40);
	pl_number(p, P_SIZE, 2000);
	pl_number(p, P_FREED, 0);
}

static void test_content_by_hand_v3(void **state)
{
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };
	struct expect e = { 0 };
	struct payload p;

	write_header(f->file, 3, 32);
	pl_example3(&p, &e);
	pl_append_frame(f->file, &p);
	if (read_into(f->dir, &g, &st))
		fail_msg("%s", st.reason);
	assert_int_equal(st.frames, 1);
	assert_prefix(&g, &e, e.records, e.len);
	expect_free(&e);
	expect_free(&g.e);
}

/* Version 4: version 3's frames, each numbered after its layout byte; a frame numbered otherwise is damage. */
static void test_content_by_hand_v4(void **state)
{
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };
	struct expect e = { 0 };
	struct payload p;
	struct mt_alloc a;
	int k;

	for (k = 0; k < 2; k++) {
		write_header(f->file, 4, 32);
		e.len = e.records = 0;
		pl_example3(&p, &e);
		p.seq = 0;
		pl_append_frame(f->file, &p);
		pl_init3(&p);
		p.seq = k ? 0 : 1;	/* the second time, frame 0 again */
		p.nrec = 1;
		alloc_rec(&a, 7, 0, 0, MT_FN_MALLOC, 0, 0);
		if (!k)
			expect_add(&e, &a, sizeof(a));
		pl_u8(&p, P_TAG, 0x21);
		pl_u8(&p, P_FLAGS_ALLOC, 7 | 0x80);	/* time step 7; MORE: address field 1, addr 0 */
		pl_u8(&p, P_MORE, 1 << 6);
		pl_append_frame(f->file, &p);
		assert_int_equal(read_into(f->dir, &g, &st), k ? -EBADMSG : 0);
		assert_int_equal(st.frames, k ? 1 : 2);
		assert_prefix(&g, &e, e.records, e.len);
	}
	assert_non_null(strstr(st.reason, "frame number 0 where 1 was expected (a frame repeated or moved)"));
	write_header(f->file, 4, 32);
	append_frame(f->file, "", 0, 1);	/* an empty frame: version 4 numbers every data frame */
	assert_int_equal(read_into(f->dir, &g, &st), -EBADMSG);
	assert_non_null(strstr(st.reason, "empty frame"));
	expect_free(&e);
	expect_free(&g.e);
}

/* Spoils the version 3 example; returns the reason the reader must give. */
static const char *spoil3(struct payload *p, int k)
{
	switch (k) {
	case 0: p->ncol = P_V2_COUNT; return "bad frame header";
	case 1: p->col[P_CLASS][0] = 65; return "record 7: size class 65";
	case 2: p->col[P_SMALL][1] = 1; return "record 7: freed rank 1, the list has 1";
	case 3: p->col[P_FREED][0] = 1; return "record 9: freed rank 1, the list has 1";
	case 4: p->col[P_FLAGS_FREE][2] |= 1 << 4; return "record 8: place 1 with address field 3";
	case 5: p->col[P_MORE][0] |= 0x20; return "record 0: more 0x28 with head 0xff";
	case 6: p->col[P_MORE][0] |= 2 << 6; return "record 0: more 0x88 with head 0xff";
	case 7: p->col[P_LIVE][0] = 2; return "record 2: live rank 2, the list has 2";
	case 8: p->col[P_FLAGS_FREE][0] |= 7 << 4; return "record 2: live rank 1793, the list has 2";
	default: p->len[P_MORE]--; return "record 8: column more ends early";
	}
}

/* An example frame of a version, and the ways to spoil it. */
struct spoiling {
	uint32_t version;
	void (*example)(struct payload *p, struct expect *e);
	const char *(*spoil)(struct payload *p, int k);
	int cases;
	uint64_t nrec;
};

/* Each case: the example, then it spoiled. The second frame is refused, nothing of it delivered. */
static void check_spoiled(const struct fixture *f, const struct spoiling *sp)
{
	struct mt_read_status st;
	struct got g = { 0 };
	struct expect e = { 0 };
	struct payload p;
	const char *why;
	int k;

	for (k = 0; k < sp->cases; k++) {
		write_header(f->file, sp->version, 32);
		e.len = e.records = 0;
		sp->example(&p, &e);
		pl_append_frame(f->file, &p);
		why = sp->spoil(&p, k);
		pl_append_frame(f->file, &p);
		assert_int_equal(read_into(f->dir, &g, &st), -EBADMSG);
		assert_int_equal(st.frames, 1);
		assert_int_equal(st.records, sp->nrec);
		assert_int_equal(st.bad_offset, st.good_bytes);
		assert_prefix(&g, &e, sp->nrec, e.len);
		assert_memory_equal(st.reason, "corrupt frame at byte ", 22);
		if (!strstr(st.reason, why))
			fail_msg("version %u case %d: '%s' does not say '%s'", sp->version, k, st.reason, why);
	}
	expect_free(&e);
	expect_free(&g.e);
}

static void test_bad_content_v3(void **state)
{
	check_spoiled(*state, &(struct spoiling){ 3, pl_example3, spoil3, 10, 10 });
}

/* Thousands of blocks live at once: a release's live rank past the head's place (7 * 256) still round-trips. */
static void test_many_live(void **state)
{
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };
	struct expect e = { 0 };
	static uint64_t live[3000];
	struct mt_writer *w;
	struct mt_alloc a;
	size_t i, j;

	rng_state = 23;
	w = mt_writer__open(f->dir);
	assert_non_null(w);
	for (i = 0; i < 3000; i++) {
		live[i] = 0x100000 + 64 * i;
		alloc_rec(&a, i, 1, 1, MT_FN_MALLOC, live[i], 40);
		assert_int_equal(mt_writer__append(w, &a, sizeof(a)), 0);
		expect_add(&e, &a, sizeof(a));
	}
	for (i = 3000; i; i--) {
		j = rnd() % i;
		alloc_rec(&a, 6000 - i, 1, 1, MT_FN_FREE, live[j], 0);
		live[j] = live[i - 1];
		assert_int_equal(mt_writer__append(w, &a, sizeof(a)), 0);
		expect_add(&e, &a, sizeof(a));
	}
	assert_int_equal(mt_writer__close(w), 0);
	assert_int_equal(read_into(f->dir, &g, &st), 0);
	assert_prefix(&g, &e, e.records, e.len);
	expect_free(&e);
	expect_free(&g.e);
}

/* Spoils the example; returns the reason the reader must give (its start). */
static const char *spoil(struct payload *p, int k)
{
	switch (k) {
	case 0: p->layout = 2; return "unknown frame layout 2";
	case 1: p->ncol = P_V2_COUNT - 1; return "bad frame header";
	case 2: p->ts_res = 0; return "bad frame header";
	case 3: p->nrec = 6; return "6 records but 7 tags";
	case 4: pl_u8(p, P_TAG, 0x21); p->nrec = 8; return "record 7: column flags_alloc ends early";
	case 5: p->col[P_LIVE][0] = 2; return "record 2: live rank 2, the list has 2";
	case 6: p->col[P_FREED][0] = 1; return "record 3: freed rank 1, the list has 1";
	case 7: p->col[P_AFTER][0] = 2; return "record 1: after rank 2, the list has 1";
	case 8: p->col[P_THREAD][0] = 2; return "record 6: thread index 2, the table has 2";
	case 9: p->col[P_FLAGS_ALLOC][1] |= 3 << 5; return "record 1: reserved thread mode 3";
	case 10: p->col[P_EXTRA][1] |= 0x08; return "record 6: reserved extra bits 0x0a";
	case 11: p->col[P_EXTRA][1] |= 6; return "record 6: reserved stack mode 3";
	case 12: p->col[P_STACK][0] = 1; return "record 6: stack index 1, the table has 1";
	case 13: p->len[P_FLAGS_FREE]--; return "record 6: column flags_free ends early";
	case 14: pl_u8(p, P_SIZE, 0); return "column size_lo has 1 bytes left over";
	case 15: p->col[P_SIZE + 1][p->len[P_SIZE + 1] - 1] |= 0x80; return "record 5: column size_hi: bad number";
	case 16:
		p->len[P_ALIGN + 1] = 0;	/* align 64 << 56: past 64 bits */
		pl_varint(p, P_ALIGN + 1, 64ull << 56 >> 8 | 1ull << 56);
		return "record 5: column align_hi: bad number";
	case 17: p->col[P_VERBATIM][18] = 23; return "record 4: verbatim record of size 23";
	case 18: p->col[P_VERBATIM][16] = MT_REC_EXEC; return "record at byte 288 of the frame's records is 32 bytes";
	case 19:
		memmove(p->col[P_TS_ALLOC + 1] + 9, p->col[P_TS_ALLOC + 1], p->len[P_TS_ALLOC + 1]);
		memset(p->col[P_TS_ALLOC + 1], 0xff, 9);	/* ten bytes, the last one past bit 63 */
		p->col[P_TS_ALLOC + 1][9] = 2;
		p->len[P_TS_ALLOC + 1] += 9;
		return "record 0: column ts_alloc_hi: bad number";
	default: p->len[P_THREAD_NEW]--; return "record 5: column thread_new ends early";
	}
}

/* Content that a checksum vouches for but that does not decode: the frame is refused, nothing of it delivered. */
static void test_bad_content(void **state)
{
	check_spoiled(*state, &(struct spoiling){ 2, pl_example, spoil, 21, 7 });
}

/* More coded records than the read limit allows decoded, refused before any is decoded. */
static void test_decoded_limit(void **state)
{
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };
	size_t n = MT_FRAME_READ_LIMIT / sizeof(struct mt_alloc) + 1, len = 0;
	uint8_t *content = malloc(n + 64);
	struct payload h;

	assert_non_null(content);
	pl_init(&h);
	pl_u8(&h, 0, 1);
	pl_varint(&h, 0, n);
	pl_varint(&h, 0, 1);
	pl_varint(&h, 0, P_V2_COUNT);
	pl_varint(&h, 0, n);
	for (len = 1; len < P_V2_COUNT; len++)
		pl_varint(&h, 0, 0);
	memcpy(content, h.col[0], h.len[0]);
	memset(content + h.len[0], 0x21, n);
	write_header(f->file, 2, 32);
	append_frame(f->file, content, h.len[0] + n, 1);
	free(content);
	assert_int_equal(read_into(f->dir, &g, &st), -EBADMSG);
	assert_non_null(strstr(st.reason, "decoded records exceed the limit"));
	assert_int_equal(g.e.records, 0);
	expect_free(&g.e);
}

struct frames {
	uint8_t *file;
	size_t len;
	size_t n;
	size_t start[MAX_FRAMES + 1];	/* file offsets; start[n] is the end */
};

static void split_frames(struct frames *fr, const char *path)
{
	size_t off = 32, size;

	fr->file = (uint8_t *)mt_test__read_bytes(path, &fr->len);
	for (fr->n = 0; off < fr->len; fr->n++) {
		assert_true(fr->n < MAX_FRAMES);
		size = ZSTD_findFrameCompressedSize(fr->file + off, fr->len - off);
		assert_false(ZSTD_isError(size));
		fr->start[fr->n] = off;
		off += size;
	}
	fr->start[fr->n] = off;
}

/* One frame's content changed at random and compressed again with a good checksum: the decoder's own checks. */
static void fuzz_one(const struct fixture *f, const struct frames *fr, const struct expect *e, size_t k)
{
	size_t clen = ZSTD_getFrameContentSize(fr->file + fr->start[k], fr->start[k + 1] - fr->start[k]), i, n;
	uint8_t *content = malloc(clen + 1);
	struct mt_read_status st;
	struct got g = { 0 };
	int rc;

	assert_non_null(content);
	assert_int_equal(ZSTD_decompress(content, clen, fr->file + fr->start[k], fr->start[k + 1] - fr->start[k]),
			 clen);
	for (n = 1 + rnd() % 3, i = 0; i < n; i++)
		content[rnd() % clen] ^= rnd() % 4 ? 1u << rnd() % 8 : 1 + rnd() % 255;
	if (!(rnd() % 8))
		clen = rnd() % clen;
	mt_test__write_file(f->file, fr->file, fr->start[k]);
	append_frame(f->file, content, clen, 1);
	spit_append(f->file, fr->file + fr->start[k + 1], fr->len - fr->start[k + 1]);
	free(content);
	rc = read_into(f->dir, &g, &st);
	assert_true(rc == 0 || rc == -EBADMSG);
	assert_int_equal(st.records, g.e.records);
	assert_true(st.records >= (k ? e->frame_records[k - 1] : 0));
	assert_true(g.e.len >= (k ? e->frame_bytes[k - 1] : 0));
	assert_memory_equal(g.e.bytes, e->bytes, k ? e->frame_bytes[k - 1] : 0);
	if (rc)
		assert_int_equal(st.bad_offset, fr->start[k]);
	else
		assert_int_equal(st.frames, fr->n);
	expect_free(&g.e);
}

static void test_content_fuzz(void **state)
{
	struct fixture *f = *state;
	struct expect e = { 0 };
	struct frames fr;
	struct heap_sim h;
	struct mt_writer *w;
	size_t i;
	int iter;

	rng_state = 15;
	sim_init(&h, true);
	w = mt_writer__open(f->dir);
	assert_non_null(w);
	for (i = 0; i < 4; i++) {
		append_mixed(w, &e, &h, 150, 1);
		assert_int_equal(mt_writer__flush(w), 0);
		expect_frame(&e, mt_writer__bytes(w));
	}
	assert_int_equal(mt_writer__close(w), 0);
	split_frames(&fr, f->file);
	assert_int_equal(fr.n, 4);
	for (iter = 0; iter < 3000; iter++)
		fuzz_one(f, &fr, &e, rnd() % fr.n);
	free(fr.file);
	expect_free(&e);
}

static double seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static int count_only(const struct mt_rec_hdr *rec, void *ctx)
{
	(void)rec;
	(*(uint64_t *)ctx)++;
	return 0;
}

/* Writes the records at ts_res and reads them back; prints sizes and rates (a benchmark, nothing asserted on time). */
static void speed_run(const struct fixture *f, const char *what, const uint8_t *recs, size_t len, uint64_t ts_res)
{
	uint64_t nrec = 0, events = 0, seen = 0;
	struct mt_read_status st;
	struct mt_writer *w;
	double t0, t1, t2;
	size_t off;

	unlink(f->file);
	w = mt_writer__open(f->dir);
	assert_non_null(w);
	assert_int_equal(mt_writer__set_ts_resolution(w, ts_res), 0);
	t0 = seconds();
	for (off = 0; off < len; off += ((const struct mt_rec_hdr *)(recs + off))->size, nrec++) {
		events += ((const struct mt_rec_hdr *)(recs + off))->type == MT_REC_ALLOC;
		assert_int_equal(mt_writer__append(w, recs + off, ((const struct mt_rec_hdr *)(recs + off))->size), 0);
	}
	assert_int_equal(mt_writer__flush(w), 0);
	t1 = seconds();
	assert_int_equal(mt_artifact__read(f->file, count_only, &seen, &st), 0);
	t2 = seconds();
	printf("  %s, ts to %llu ns: %.3f bytes/event (%llu events, %llu bytes); encode %.1f M records/s, "
	       "decode %.1f M records/s\n", what, (unsigned long long)ts_res,
	       (double)mt_writer__bytes(w) / (events ? events : 1), (unsigned long long)events,
	       (unsigned long long)mt_writer__bytes(w), nrec / (t1 - t0) / 1e6, nrec / (t2 - t1) / 1e6);
	assert_int_equal(seen, nrec);
	assert_int_equal(mt_writer__close(w), 0);
}

static int keep_record(const struct mt_rec_hdr *rec, void *ctx)
{
	expect_add(ctx, rec, rec->size);
	return 0;
}

/*
 * Encoder and decoder speed on the simulated churn; with MT_ARTIFACT_BENCH=DIR also on a real recording, e.g.
 * `memtrack record -o DIR -- build/bench/churn 2000000`. The encoder runs on the tracer's consumer thread.
 */
static void test_codec_speed(void **state)
{
	static const uint64_t res[] = { 1, 64, 1000 };
	const char *dir = getenv("MT_ARTIFACT_BENCH");
	struct fixture *f = *state;
	struct mt_read_status st;
	struct expect e = { 0 };
	struct heap_sim h;
	size_t i;

	rng_state = 16;
	sim_init(&h, false);
	for (i = 0; i < 1000000; i++) {
		_Alignas(8) uint8_t buf[sizeof(struct mt_alloc)];

		expect_add(&e, buf, sim_record(&h, buf));
	}
	for (i = 0; i < sizeof(res) / sizeof(res[0]); i++)
		speed_run(f, "simulated churn", e.bytes, e.len, res[i]);
	expect_free(&e);
	if (!dir)
		return;
	memset(&e, 0, sizeof(e));
	assert_true(mt_artifact__read(dir, keep_record, &e, &st) >= 0);
	for (i = 0; i < sizeof(res) / sizeof(res[0]); i++)
		speed_run(f, dir, e.bytes, e.len, res[i]);
	expect_free(&e);
}

/*
 * bench/churn's pattern as glibc serves it, simulated so that the stream is the same on every machine: N rounds of
 * free(pool[k]) then malloc(16 + r % 4096) into pool[k], k one of 1024 at random (xorshift, bench/churn's seed). Freed
 * chunks of tcache sizes are reused last-in first-out by size class; larger ones first fit among the 8 most recently
 * freed; otherwise the chunk comes from the top. Times advance by 250-750 ns a call, and 50 us every 4096 calls.
 */
#define CHURN_POOL 1024
#define CHURN_BIG_RECENT 8

struct churn_sim {
	uint64_t x, ts, top;
	uint64_t pool[CHURN_POOL], pool_size[CHURN_POOL];
	uint64_t *small[64];			/* freed chunks by tcache class, a stack each */
	size_t nsmall[64], capsmall[64];
	uint64_t big[4096], big_chunk[4096];	/* freed larger chunks, newest last */
	size_t nbig;
	uint64_t calls;
};

static uint64_t churn_chunk(uint64_t size)
{
	uint64_t c = (size + 23) & ~15ull;

	return c < 32 ? 32 : c;
}

static uint64_t churn_take(struct churn_sim *c, uint64_t size)
{
	uint64_t chunk = churn_chunk(size), addr;
	unsigned int cls = (chunk - 32) / 16;
	size_t i;

	if (size <= 1032 && c->nsmall[cls])
		return c->small[cls][--c->nsmall[cls]];
	for (i = c->nbig; size > 1032 && i-- > 0 && i + CHURN_BIG_RECENT >= c->nbig;) {
		if (c->big_chunk[i] < chunk)
			continue;
		addr = c->big[i];
		memmove(c->big + i, c->big + i + 1, (c->nbig - i - 1) * sizeof(c->big[0]));
		memmove(c->big_chunk + i, c->big_chunk + i + 1, (c->nbig - i - 1) * sizeof(c->big_chunk[0]));
		c->nbig--;
		return addr;
	}
	addr = c->top;
	c->top += chunk;
	return addr;
}

static void churn_give(struct churn_sim *c, uint64_t addr, uint64_t size)
{
	uint64_t chunk = churn_chunk(size);
	unsigned int cls = (chunk - 32) / 16;

	if (size <= 1032) {
		if (c->nsmall[cls] == c->capsmall[cls]) {
			c->capsmall[cls] = c->capsmall[cls] ? 2 * c->capsmall[cls] : 16;
			c->small[cls] = realloc(c->small[cls], c->capsmall[cls] * sizeof(uint64_t));
			assert_non_null(c->small[cls]);
		}
		c->small[cls][c->nsmall[cls]++] = addr;
		return;
	}
	if (c->nbig == sizeof(c->big) / sizeof(c->big[0])) {	/* the oldest are not looked at any more */
		memmove(c->big, c->big + c->nbig / 2, c->nbig / 2 * sizeof(c->big[0]));
		memmove(c->big_chunk, c->big_chunk + c->nbig / 2, c->nbig / 2 * sizeof(c->big_chunk[0]));
		c->nbig -= c->nbig / 2;
	}
	c->big[c->nbig] = addr;
	c->big_chunk[c->nbig++] = chunk;
}

static void churn_rec(struct churn_sim *c, struct mt_alloc *a, uint8_t func, uint64_t addr, uint64_t size)
{
	c->ts += 250 + c->x % 501 + (++c->calls % 4096 ? 0 : 50000);
	alloc_rec(a, c->ts, 4242, 4242, func, addr, size);
}

/* One round: the free of pool[k] (none while it is empty) and the malloc that refills it. Returns the records. */
static size_t churn_round(struct churn_sim *c, struct mt_alloc out[2])
{
	size_t n = 0, k;
	uint64_t size;

	c->x ^= c->x << 13;
	c->x ^= c->x >> 7;
	c->x ^= c->x << 17;
	k = c->x % CHURN_POOL;
	if (c->pool[k]) {
		churn_rec(c, &out[n++], MT_FN_FREE, c->pool[k], 0);
		churn_give(c, c->pool[k], c->pool_size[k]);
	}
	size = 16 + (c->x >> 32) % 4096;
	c->pool[k] = churn_take(c, size);
	c->pool_size[k] = size;
	churn_rec(c, &out[n++], MT_FN_MALLOC, c->pool[k], size);
	return n;
}

static void churn_free(struct churn_sim *c)
{
	unsigned int i;

	for (i = 0; i < 64; i++)
		free(c->small[i]);
}

/* The first n records of the synthetic churn, back to back. */
static uint8_t *churn_records(size_t n, size_t *len)
{
	struct churn_sim *c = calloc(1, sizeof(*c));
	uint8_t *buf = malloc(n * sizeof(struct mt_alloc));
	struct mt_alloc two[2];
	size_t got = 0, k, i;

	assert_non_null(c);
	assert_non_null(buf);
	c->x = 88172645463325252ull;
	c->ts = 1000000000ull;
	c->top = 0x55555555a000ull;
	while (got < n) {
		k = churn_round(c, two);
		for (i = 0; i < k && got < n; i++, got++)
			memcpy(buf + got * sizeof(two[0]), &two[i], sizeof(two[0]));
	}
	churn_free(c);
	free(c);
	*len = n * sizeof(struct mt_alloc);
	return buf;
}

/* The figures docs/FORMAT.md states for the synthetic churn ("Bytes per event"), one per resolution of its table. */
static void format_md_limits(double *limit, size_t n)
{
	static const char row[] = "| bytes per event, synthetic churn (`test_bytes_per_event`), at most |";
	char line[512], *p;
	FILE *md = fopen(MT_SOURCE_DIR "/docs/FORMAT.md", "r");
	size_t i;

	assert_non_null(md);
	while (fgets(line, sizeof(line), md) && strncmp(line, row, sizeof(row) - 1))
		;
	fclose(md);
	if (strncmp(line, row, sizeof(row) - 1))
		fail_msg("docs/FORMAT.md has no row '%s'", row);
	for (p = line + sizeof(row) - 1, i = 0; i < n; i++, p++) {
		limit[i] = strtod(p, &p);
		p += strspn(p, " ");
		assert_true(limit[i] > 0 && *p == '|');
	}
}

/*
 * Bytes per event of 1,000,000 records of the synthetic churn, at each resolution of docs/FORMAT.md's table: at
 * most what the document states, so that a change that costs bytes cannot go unseen.
 */
static void test_bytes_per_event(void **state)
{
	static const uint64_t res[] = { 1, 64, 256, 1000, 4000, 16000 };
	double bpe, limit[sizeof(res) / sizeof(res[0])];
	struct fixture *f = *state;
	struct mt_writer *w;
	size_t len, off, i;
	uint8_t *recs;

	format_md_limits(limit, sizeof(res) / sizeof(res[0]));
	recs = churn_records(1000000, &len);
	for (i = 0; i < sizeof(res) / sizeof(res[0]); i++) {
		unlink(f->file);
		w = mt_writer__open(f->dir);
		assert_non_null(w);
		assert_int_equal(mt_writer__set_ts_resolution(w, res[i]), 0);
		for (off = 0; off < len; off += sizeof(struct mt_alloc))
			assert_int_equal(mt_writer__append(w, recs + off, sizeof(struct mt_alloc)), 0);
		assert_int_equal(mt_writer__flush(w), 0);
		bpe = (double)mt_writer__bytes(w) / 1000000;
		printf("  synthetic churn at %llu ns: %.4f bytes/event, at most %.2f\n", (unsigned long long)res[i], bpe,
		       limit[i]);
		assert_int_equal(mt_writer__close(w), 0);
		if (bpe > limit[i])
			fail_msg("%.4f bytes/event at %llu ns, docs/FORMAT.md says at most %.2f", bpe,
				 (unsigned long long)res[i], limit[i]);
	}
	free(recs);
}

/* A read over the file's bytes in memory finds what a read of the file finds, whole or cut. */
static void test_read_buffer(void **state)
{
	struct fixture *f = *state;
	struct mt_read_status st, fst;
	struct got g = { 0 }, fg = { 0 };
	struct expect e;
	size_t len, cut;
	uint8_t *buf;

	build(f, &e, 4, 50, 33);
	buf = (uint8_t *)mt_test__read_bytes(f->file, &len);
	assert_int_equal(mt_artifact__read_buffer(buf, len, collect, &g, &st), 0);
	assert_whole(&g, &e, &st);
	for (cut = 0; cut < len; cut += 1 + cut / 3) {
		free(g.e.bytes);
		memset(&g.e, 0, sizeof(g.e));
		mt_test__write_file(f->file, buf, cut);
		assert_int_equal(mt_artifact__read_buffer(buf, cut, collect, &g, &st), read_into(f->file, &fg, &fst));
		assert_int_equal(st.records, fst.records);
		assert_int_equal(st.bad_offset, fst.bad_offset);
		assert_int_equal(st.good_bytes, fst.good_bytes);
		if (cut >= 32)	/* the file's reasons name its path, the buffer's "(memory)" */
			assert_string_equal(st.reason, fst.reason);
	}
	free(buf);
	expect_free(&e);
	expect_free(&g.e);
	expect_free(&fg.e);
}

/* Seed k of the fuzz target's corpus (tests/fuzz/corpus) into f->file; returns its name, NULL past the last. */
static const char *corpus_seed(const struct fixture *f, int k)
{
	static const uint8_t skippable[] = { 0x50, 0x2a, 0x4d, 0x18, 2, 0, 0, 0, 'i', 'x' };
	_Alignas(8) uint8_t rec[REC_BUF];
	struct expect e = { 0 };
	struct heap_sim h;
	struct payload p;
	struct mt_writer *w;
	size_t i, len;

	unlink(f->file);
	rng_state = 40 + k;
	sim_init(&h, k == 2);
	switch (k) {
	case 0: case 1: case 2: case 3:
		w = mt_writer__open(f->dir);
		assert_non_null(w);
		for (i = 0; k && i < 3; i++) {
			if (k == 3)
				assert_int_equal(mt_writer__set_ts_resolution(w, 1000 * i + 1), 0);
			if (k == 1)
				while (e.records < 12 * (i + 1))
					append_random(w, &e);
			else
				append_mixed(w, &e, &h, 60, k == 3 ? 1000 * i + 1 : 1);
			assert_int_equal(mt_writer__flush(w), 0);
		}
		assert_int_equal(mt_writer__close(w), 0);
		expect_free(&e);
		return (const char *[]){ "v4-header-only", "v4-records", "v4-churn-stacks", "v4-resolutions" }[k];
	case 4: case 5: case 6:
		write_header(f->file, (const uint32_t[]){ 3, 2, 4 }[k - 4], 32);
		(k == 5 ? pl_example : pl_example3)(&p, &e);
		p.seq = k == 6 ? 0 : -1;
		pl_append_frame(f->file, &p);
		expect_free(&e);
		return (const char *[]){ "v3-by-hand", "v2-by-hand", "v4-by-hand" }[k - 4];
	case 7:
		write_header(f->file, 1, 40);
		spit_append(f->file, skippable, sizeof(skippable));
		for (i = 0; i < 8; i++) {
			len = make_record(rec, i);
			append_frame(f->file, rec, len, i % 2);
		}
		return "v1-records-skippable";
	case 8:	/* over 7 * 256 blocks live: live ranks past the head's place */
		w = mt_writer__open(f->dir);
		assert_non_null(w);
		for (i = 0; i < 2 * 2000; i++) {
			len = i < 2000 ? i : 2000 + (i * 7919) % 2000;	/* frees in a scattered order */
			alloc_rec((struct mt_alloc *)rec, i, 1, 1, i < 2000 ? MT_FN_MALLOC : MT_FN_FREE,
				  0x100000 + 64 * (len % 2000), i < 2000 ? 40 : 0);
			assert_int_equal(mt_writer__append(w, rec, sizeof(struct mt_alloc)), 0);
		}
		assert_int_equal(mt_writer__close(w), 0);
		return "v4-many-live";
	default:
		return NULL;
	}
}

/*
 * The fuzz target's other form of the same seed (tests/fuzz/fuzz_reader.c): the version, then each frame's content
 * as a u16 length and its bytes, so that its mutations reach the decoder behind valid checksums.
 */
static void write_seed_contents(const char *path, const uint8_t *file, size_t len)
{
	uint8_t *out = malloc(1 + 3 * len + 64 * 1024), *content;
	size_t off = 32, n = 1, frame, clen;
	uint32_t version;

	assert_non_null(out);
	memcpy(&version, file + 8, sizeof(version));
	out[0] = version - 1;
	for (; off < len; off += frame) {
		frame = ZSTD_findFrameCompressedSize(file + off, len - off);
		assert_false(ZSTD_isError(frame));
		clen = ZSTD_getFrameContentSize(file + off, frame);
		assert_true(clen < 0x10000);
		content = out + n + 2;
		assert_int_equal(ZSTD_decompress(content, clen, file + off, frame), clen);
		out[n] = clen & 0xff;
		out[n + 1] = clen >> 8;
		n += 2 + clen;
	}
	mt_test__write_file(path, out, n);
	free(out);
}

/*
 * The committed seed corpus reads whole and stays small; MT_WRITE_FUZZ_CORPUS=DIR writes it again there (after a
 * format change: `MT_WRITE_FUZZ_CORPUS=tests/fuzz/corpus build/tests/test_artifact`): each seed as a file, and those
 * of versions 2 to 4 as frame contents too (NAME.frames).
 */
static void test_fuzz_corpus(void **state)
{
	const char *out = getenv("MT_WRITE_FUZZ_CORPUS"), *name;
	struct fixture *f = *state;
	struct mt_read_status st;
	struct got g = { 0 };
	char path[4200];
	size_t len, total = 0;
	bool contents;
	uint8_t *buf;
	int k;

	for (k = 0; (name = corpus_seed(f, k)); k++) {
		snprintf(path, sizeof(path), "%s/%s", out ? out : MT_SOURCE_DIR "/tests/fuzz/corpus", name);
		if (out) {
			buf = (uint8_t *)mt_test__read_bytes(f->file, &len);
			mt_test__write_file(path, buf, len);
			free(buf);
		}
		buf = (uint8_t *)mt_test__read_bytes(path, &len);
		total += len;
		if (mt_artifact__read_buffer(buf, len, collect, &g, &st))
			fail_msg("%s: %s", path, st.reason);
		contents = buf[8] >= 2;
		strcat(path, ".frames");
		if (out && contents)
			write_seed_contents(path, buf, len);
		free(buf);
		if (contents) {
			buf = (uint8_t *)mt_test__read_bytes(path, &len);
			total += len;
			free(buf);
		}
	}
	assert_int_equal(k, 9);
	assert_true(total < 50000);
	expect_free(&g.e);
}

static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t len)
{
	while (len--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

/*
 * A fixed record stream encodes to fixed bytes: the frames' content (the codec's own output) on any libzstd, the
 * whole file with the libzstd the numbers were taken with. Refactoring the writer must not change either.
 */
static void test_golden_bytes(void **state)
{
	struct fixture *f = *state;
	struct expect e = { 0 };
	uint64_t content_hash = 0xcbf29ce484222325ull, file_hash;
	size_t k, clen, total = 0;
	struct heap_sim h;
	struct mt_writer *w;
	struct frames fr;
	uint8_t *content;

	rng_state = 31;
	sim_init(&h, true);
	w = mt_writer__open(f->dir);
	assert_non_null(w);
	append_mixed(w, &e, &h, 150000, 1);	/* a frame closed by size, then one by the change of resolution */
	assert_int_equal(mt_writer__set_ts_resolution(w, 1000), 0);
	append_mixed(w, &e, &h, 20000, 1000);
	assert_int_equal(mt_writer__close(w), 0);
	split_frames(&fr, f->file);
	for (k = 0; k < fr.n; k++) {
		clen = ZSTD_getFrameContentSize(fr.file + fr.start[k], fr.start[k + 1] - fr.start[k]);
		content = malloc(clen + 1);
		assert_non_null(content);
		assert_int_equal(ZSTD_decompress(content, clen, fr.file + fr.start[k], fr.start[k + 1] - fr.start[k]),
				 clen);
		/* Version 4 added the frame's number, one byte after the layout here: the rest is version 3's */
		assert_int_equal(content[1], k);
		content_hash = fnv1a(content_hash, content, 1);
		content_hash = fnv1a(content_hash, content + 2, clen - 2);
		total += clen - 1;
		free(content);
	}
	file_hash = fnv1a(0xcbf29ce484222325ull, fr.file, fr.len);
	printf("  %zu frames, %zu content bytes %016llx, %zu file bytes %016llx (zstd %u)\n", fr.n, total,
	       (unsigned long long)content_hash, fr.len, (unsigned long long)file_hash, ZSTD_versionNumber());
	assert_int_equal(fr.n, 3);
	assert_int_equal(total, GOLDEN_CONTENT_LEN);
	assert_int_equal(content_hash, GOLDEN_CONTENT_HASH);
	if (ZSTD_versionNumber() == GOLDEN_ZSTD_VERSION) {
		assert_int_equal(fr.len, GOLDEN_FILE_LEN);
		assert_int_equal(file_hash, GOLDEN_FILE_HASH);
	}
	free(fr.file);
	expect_free(&e);
}

#define TWO_THREADS(t) { #t "_two_threads", t, setup_two, teardown, NULL }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frames_close_at_max_content, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flipped_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_magic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_header_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_header_checksum, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frame_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_regular, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compatible_extensions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frame_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_header_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writer_rejects, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_overwrite, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disk_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_callback_stops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_callback_stops_with_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fuzz_corpus, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fuzz, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alloc_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_distinct_blocks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ts_resolution, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version1_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_content_by_hand, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_content, setup, teardown),
		cmocka_unit_test_setup_teardown(test_content_by_hand_v3, setup, teardown),
		cmocka_unit_test_setup_teardown(test_content_by_hand_v4, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_content_v3, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_decoded_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_content_fuzz, setup, teardown),
		cmocka_unit_test_setup_teardown(test_golden_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bytes_per_event, setup, teardown),
		cmocka_unit_test_setup_teardown(test_codec_speed, setup, teardown),
		/* the same records, counts and reasons when a second thread decodes (what a large file gets) */
		TWO_THREADS(test_round_trip),
		TWO_THREADS(test_frames_close_at_max_content),
		TWO_THREADS(test_truncation),
		TWO_THREADS(test_flipped_bytes),
		TWO_THREADS(test_bad_magic),
		TWO_THREADS(test_frame_order),
		TWO_THREADS(test_compatible_extensions),
		TWO_THREADS(test_bad_records),
		TWO_THREADS(test_frame_limit),
		TWO_THREADS(test_missing_file),
		TWO_THREADS(test_header_only),
		TWO_THREADS(test_callback_stops),
		TWO_THREADS(test_callback_stops_with_one),
		TWO_THREADS(test_fuzz),
		TWO_THREADS(test_many_live),
		TWO_THREADS(test_bad_content),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
