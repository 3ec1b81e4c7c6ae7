// SPDX-License-Identifier: GPL-2.0-only
/* read.c — the model fed by the artifact reader, its time-order window run where the reader decodes. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "artifact/reader.h"
#include "model/model.h"
#include "model/model_internal.h"
#include "model/reorder.h"

/*
 * The window as the reader's stage (mt_read_stage): on a large file it runs on the decoding thread, and the model
 * takes its records in time order on the caller's. The time base is decided where the window runs, in file order,
 * as mt_model__add decides it; the caller's thread reads it once the first record reached it, through the reader's
 * hand-over.
 */
struct model_stage {
	struct mt_model *m;
	struct mt_read_out *out;	/* the read's, during a push or the end */
	bool based;
	uint64_t base;
};

/* The window's records go on through the reader; the first one out is the time base when no session was first. */
static int stage_emit(const struct mt_rec_hdr *rec, void *ctx)
{
	struct model_stage *s = ctx;

	if (!s->based) {
		s->based = true;
		s->base = rec->ts_ns;
	}
	return mt_read_out__emit(s->out, rec);
}

static int stage_push(const struct mt_rec_hdr *rec, struct mt_read_out *out, void *ctx)
{
	struct model_stage *s = ctx;

	s->out = out;
	/* as mt_model__add: the session's start is the time base, even when a record stamped earlier comes out first */
	if (!s->based && rec->type == MT_REC_SESSION) {
		s->based = true;
		s->base = rec->ts_ns;
	}
	return mt_reorder__push(s->m->reorder, rec);
}

static int stage_end(struct mt_read_out *out, void *ctx)
{
	struct model_stage *s = ctx;

	s->out = out;
	return mt_reorder__flush(s->m->reorder);
}

/* On the caller's thread: a record in time order, accounted. */
static int stage_apply(const struct mt_rec_hdr *rec, void *ctx)
{
	struct model_stage *s = ctx;
	struct mt_model *m = s->m;

	if (!m->have_base) {
		m->have_base = true;
		m->base_ts = s->base;
	}
	return mt_model__apply(rec, m);
}

int mt_model__read(struct mt_model *m, const char *path, struct mt_read_status *st)
{
	struct model_stage s = { .m = m };
	struct mt_read_stage stage = { stage_push, stage_end, &s };
	int err;

	if (m->fed || m->finished) {
		memset(st, 0, sizeof(*st));
		snprintf(st->reason, sizeof(st->reason), "%s", strerror(EINVAL));
		return -EINVAL;
	}
	m->fed = true;
	mt_reorder__set_fn(m->reorder, stage_emit, &s);
	err = mt_artifact__read_opts(path, stage_apply, &s, st, &(struct mt_read_opts){ .stage = &stage });
	mt_reorder__set_fn(m->reorder, mt_model__apply, m);
	if (!m->have_base && s.based) {	/* the read stopped before a record reached the model */
		m->have_base = true;
		m->base_ts = s.base;
	}
	return err;
}

int mt_model__load(const char *path, struct mt_model **out, struct mt_read_status *st)
{
	return mt_model__load_with(path, NULL, out, st);
}

int mt_model__load_with(const char *path, const struct mt_model_opts *opts, struct mt_model **out,
			struct mt_read_status *st)
{
	struct mt_read_status local;
	struct mt_model *m;
	int err, ferr;

	*out = NULL;
	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	m = mt_model__new_with(opts);
	if (!m) {
		err = -errno;
		snprintf(st->reason, sizeof(st->reason), "%s", strerror(-err));
		return err;
	}
	err = mt_model__read(m, path, st);
	if (err && err != -EBADMSG)
		goto err_free_model;
	ferr = mt_model__finish(m);
	if (ferr) {
		err = ferr;
		goto err_free_model;
	}
	*out = m;
	return err;

err_free_model:
	mt_model__free(m);
	if (!st->reason[0])
		snprintf(st->reason, sizeof(st->reason), "%s", strerror(-err));
	return err;
}
