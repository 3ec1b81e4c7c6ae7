/* replay.c — the model fed record by record, and a mirror of its window that says which record it just accounted. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "unwind/replay.h"

#define FILLER_TYPE 0xffff	/* no record type: the model counts it as a bad record and changes nothing else */
#define ALIGN8(n) (((size_t)(n) + 7) & ~(size_t)7)

/*
 * The mirror while records come in time order: then the model's window hands them out in arrival order (its ties go
 * by arrival too), and a queue does the same at no cost. The first record earlier than one before it turns the
 * mirror into a window like the model's, fed what the queue holds, in order.
 */
struct fifo {
	unsigned char *buf;
	size_t cap, head, tail;		/* the held records are the bytes [head, tail), each 8-aligned */
	size_t n;
	uint64_t max_ts;
};

struct mt_replay {
	struct mt_model *model;
	struct fifo fifo;		/* the mirror, while records are in time order */
	struct mt_reorder *mirror;	/* after: the same window as the model's, fed the same records */
	mt_replay_fn fn;
	void *ctx;
	uint64_t pushed;		/* real records pushed */
	uint64_t emitted;		/* real records the mirror handed out */
	bool have_base;
	uint64_t base_ts;		/* as the model's: the session's ts_ns, else the first record's */
	bool finished;
};

static int mirror_emit(const struct mt_rec_hdr *rec, void *ctx)
{
	struct mt_replay *r = ctx;

	if (r->emitted == r->pushed)
		return 0;	/* a filler: every real record came out before it */
	r->emitted++;
	if (!r->have_base) {
		r->have_base = true;
		r->base_ts = rec->ts_ns;
	}
	if (mt_model__totals(r->model)->records != r->emitted) {
		pr_err("replay: the model and its mirror window are out of step at record %llu\n",
		       (unsigned long long)r->emitted);
		return -EPROTO;
	}
	return r->fn(rec, r, r->ctx);
}

struct mt_replay *mt_replay__new(mt_replay_fn fn, void *ctx)
{
	struct mt_replay *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->fn = fn;
	r->ctx = ctx;
	r->model = mt_model__new();
	if (!r->model) {
		mt_replay__free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

void mt_replay__free(struct mt_replay *r)
{
	if (!r)
		return;
	mt_reorder__free(r->mirror);
	free(r->fifo.buf);
	mt_model__free(r->model);
	free(r);
}

static int fifo_push(struct fifo *f, const struct mt_rec_hdr *rec)
{
	size_t need = ALIGN8(rec->size), cap;
	unsigned char *buf;

	if (f->tail + need > f->cap && f->head) {
		memmove(f->buf, f->buf + f->head, f->tail - f->head);
		f->tail -= f->head;
		f->head = 0;
	}
	if (f->tail + need > f->cap) {
		cap = f->cap ? f->cap * 2 : 1 << 16;
		while (cap < f->tail + need)
			cap *= 2;
		buf = realloc(f->buf, cap);
		if (!buf)
			return -ENOMEM;
		f->buf = buf;
		f->cap = cap;
	}
	memcpy(f->buf + f->tail, rec, rec->size);
	f->tail += need;
	f->n++;
	if (rec->ts_ns > f->max_ts)
		f->max_ts = rec->ts_ns;
	return 0;
}

/* The oldest record held; valid until the next push. */
static const struct mt_rec_hdr *fifo_pop(struct fifo *f)
{
	const struct mt_rec_hdr *rec = (const void *)(f->buf + f->head);

	f->head += ALIGN8(rec->size);
	f->n--;
	return rec;
}

/* A record out of time order: from now on the mirror is a window like the model's, holding what the queue held. */
static int mirror_to_window(struct mt_replay *r)
{
	int err = 0;

	r->mirror = mt_reorder__new(MT_REORDER_WINDOW, mirror_emit, r);
	if (!r->mirror)
		return -ENOMEM;
	while (!err && r->fifo.n)
		err = mt_reorder__push(r->mirror, fifo_pop(&r->fifo));	/* at most the window: none comes out */
	free(r->fifo.buf);
	memset(&r->fifo, 0, sizeof(r->fifo));
	return err;
}

static int mirror_push(struct mt_replay *r, const struct mt_rec_hdr *rec)
{
	int err;

	if (!r->mirror && rec->ts_ns < r->fifo.max_ts) {
		err = mirror_to_window(r);
		if (err)
			return err;
	}
	if (r->mirror)
		return mt_reorder__push(r->mirror, rec);
	err = fifo_push(&r->fifo, rec);
	if (err || r->fifo.n <= MT_REORDER_WINDOW)
		return err;
	return mirror_emit(fifo_pop(&r->fifo), r);
}

/* The model reads no stack definition's chain or bytes: it gets the fixed part only (no malloc'd window slot). */
static int model_add(struct mt_model *m, const struct mt_rec_hdr *rec)
{
	struct mt_stack st;

	if (rec->type != MT_REC_STACK || rec->size <= sizeof(st))
		return mt_model__add(m, rec);
	memcpy(&st, rec, sizeof(st));
	st.hdr.size = sizeof(st);
	st.nfp = 0;
	st.nbytes = 0;
	return mt_model__add(m, &st.hdr);
}

int mt_replay__push(struct mt_replay *r, const struct mt_rec_hdr *rec)
{
	int err;

	if (rec->size < sizeof(*rec) || r->finished)
		return -EINVAL;
	if (!r->have_base && rec->type == MT_REC_SESSION) {
		r->have_base = true;	/* as mt_model__add does */
		r->base_ts = rec->ts_ns;
	}
	err = model_add(r->model, rec);
	if (err)
		return err;
	r->pushed++;
	return mirror_push(r, rec);
}

int mt_replay__finish(struct mt_replay *r)
{
	struct mt_rec_hdr filler = { .ts_ns = UINT64_MAX, .type = FILLER_TYPE, .size = sizeof(filler) };
	int err = 0;

	if (r->finished)
		return 0;
	/* each filler pushes one record out of both windows, so the callbacks stay one record at a time */
	while (!err && r->emitted < r->pushed) {
		err = mt_model__add(r->model, &filler);
		if (!err)
			err = mirror_push(r, &filler);
	}
	if (!err)
		err = mt_model__finish(r->model);
	r->finished = !err;
	return err;
}

const struct mt_model *mt_replay__model(const struct mt_replay *r)
{
	return r->model;
}

uint64_t mt_replay__rel_ts(const struct mt_replay *r, uint64_t ts_ns)
{
	return ts_ns > r->base_ts ? ts_ns - r->base_ts : 0;
}

static int run_push(const struct mt_rec_hdr *rec, void *ctx)
{
	return mt_replay__push(ctx, rec);
}

int mt_replay__run(const char *path, mt_replay_fn fn, void *ctx, struct mt_replay **out, struct mt_read_status *st)
{
	struct mt_read_status local;
	struct mt_replay *r = mt_replay__new(fn, ctx);
	int err, ferr;

	if (out)
		*out = NULL;
	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	if (!r) {
		snprintf(st->reason, sizeof(st->reason), "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	err = mt_artifact__read(path, run_push, r, st);
	if (!err || err == -EBADMSG) {
		ferr = mt_replay__finish(r);
		if (ferr)
			err = ferr;
	}
	if (err && err != -EBADMSG && !st->reason[0])
		snprintf(st->reason, sizeof(st->reason), "%s", strerror(-err));
	if (out && (!err || err == -EBADMSG))
		*out = r;
	else
		mt_replay__free(r);
	return err;
}
