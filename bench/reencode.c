// SPDX-License-Identifier: GPL-2.0-only
/*
 * reencode.c — writes the records of an existing artifact again with this build's writer, to try encodings without
 * tracing: bytes per allocation event, the encoder's rate on one core, and a check that the new file reads back to
 * the same records. Usage: reencode ARTIFACT TS_RES [OUT_DIR]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "artifact/artifact.h"

struct recs {
	unsigned char *buf;
	size_t len, cap;
	size_t allocs;		/* MT_REC_ALLOC records */
	size_t count;
	size_t cmp_off;		/* reading back: where the next record should match */
	size_t mismatches;
};

static int recs_add(const struct mt_rec_hdr *rec, void *ctx)
{
	struct recs *r = ctx;
	unsigned char *p;

	if (r->len + rec->size > r->cap) {
		r->cap = 2 * (r->len + rec->size);
		p = realloc(r->buf, r->cap);
		if (!p)
			return -ENOMEM;
		r->buf = p;
	}
	memcpy(r->buf + r->len, rec, rec->size);
	r->len += rec->size;
	r->allocs += rec->type == MT_REC_ALLOC;
	r->count++;
	return 0;
}

static int recs_cmp(const struct mt_rec_hdr *rec, void *ctx)
{
	struct recs *r = ctx;

	if (r->cmp_off + rec->size > r->len || memcmp(r->buf + r->cmp_off, rec, rec->size))
		r->mismatches++;
	r->cmp_off += rec->size;
	return 0;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Appends every record into DIR (an earlier run's copy replaced); returns the seconds it took, or -1. */
static double write_all(const struct recs *r, const char *dir, uint64_t ts_res, uint64_t *bytes)
{
	struct mt_writer *w;
	const struct mt_rec_hdr *h;
	char path[4096];
	double t0;
	size_t off;
	int err;

	snprintf(path, sizeof(path), "%s/" MT_ARTIFACT_FILE, dir);
	unlink(path);	/* the writer never overwrites one */
	w = mt_writer__open(dir);
	if (!w)
		return -1;
	t0 = now();
	err = mt_writer__set_ts_resolution(w, ts_res);
	for (off = 0; !err && off < r->len; off += h->size) {
		h = (const void *)(r->buf + off);
		err = mt_writer__append(w, h, h->size);
	}
	if (!err)
		err = mt_writer__flush(w);
	t0 = now() - t0;
	*bytes = mt_writer__bytes(w);
	return mt_writer__close(w) || err ? -1 : t0;
}

int main(int argc, char **argv)
{
	struct recs r = { 0 };
	struct mt_read_status st;
	const char *out = argc > 3 ? argv[3] : "/tmp/reencode.mt";
	uint64_t bytes = 0;
	double secs;
	int err;

	if (argc < 3) {
		fprintf(stderr, "usage: reencode ARTIFACT TS_RES [OUT_DIR]\n");
		return 2;
	}
	err = mt_artifact__read(argv[1], recs_add, &r, &st);
	if (err) {
		fprintf(stderr, "%s: %s\n", argv[1], st.reason);
		return 1;
	}
	secs = write_all(&r, out, strtoull(argv[2], NULL, 0), &bytes);
	if (secs < 0) {
		fprintf(stderr, "cannot write %s\n", out);
		return 1;
	}
	err = mt_artifact__read(out, recs_cmp, &r, &st);
	printf("%zu allocation events, %llu bytes: %.3f B/event, %.2f M records/s, read back %s (%zu mismatches)\n",
	       r.allocs, (unsigned long long)bytes, (double)bytes / r.allocs, r.count / secs / 1e6,
	       err ? st.reason : "whole", r.mismatches);
	free(r.buf);
	return err || r.mismatches || r.cmp_off != r.len;
}
