// SPDX-License-Identifier: GPL-2.0-only
/* replay.c — the model fed record by record, with a callback right after it has accounted each record. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/replay.h"

struct mt_replay {
	struct mt_model *model;
	mt_replay_fn fn;
	void *ctx;
	bool have_base;
	uint64_t base_ts;		/* as the model's: the session's ts_ns, else the first record's */
	bool finished;
};

static int replay_observe(const struct mt_rec_hdr *rec, const struct mt_model *m, void *ctx)
{
	struct mt_replay *r = ctx;

	(void)m;
	if (!r->have_base) {
		r->have_base = true;
		r->base_ts = rec->ts_ns;
	}
	return r->fn(rec, r, r->ctx);
}

struct mt_replay *mt_replay__new(mt_replay_fn fn, void *ctx)
{
	return mt_replay__new_with(fn, ctx, NULL);
}

struct mt_replay *mt_replay__new_with(mt_replay_fn fn, void *ctx, const struct mt_model_opts *opts)
{
	struct mt_replay *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->fn = fn;
	r->ctx = ctx;
	r->model = mt_model__new_with(opts);
	if (!r->model) {
		mt_replay__free(r);
		errno = ENOMEM;
		return NULL;
	}
	mt_model__set_observer(r->model, replay_observe, r);
	return r;
}

void mt_replay__free(struct mt_replay *r)
{
	if (!r)
		return;
	mt_model__free(r->model);
	free(r);
}

int mt_replay__push(struct mt_replay *r, const struct mt_rec_hdr *rec)
{
	if (rec->size < sizeof(*rec) || r->finished)
		return -EINVAL;
	if (!r->have_base && rec->type == MT_REC_SESSION) {
		r->have_base = true;	/* as mt_model__add does */
		r->base_ts = rec->ts_ns;
	}
	return mt_model__add(r->model, rec);
}

int mt_replay__finish(struct mt_replay *r)
{
	int err;

	if (r->finished)
		return 0;
	err = mt_model__finish(r->model);
	r->finished = !err;
	return err;
}

const struct mt_model *mt_replay__model(const struct mt_replay *r)
{
	return r->model;
}

struct mt_model *mt_replay__take_model(struct mt_replay *r)
{
	struct mt_model *m = r->finished ? r->model : NULL;

	if (m) {
		mt_model__set_observer(m, NULL, NULL);	/* it would call this replay back */
		r->model = NULL;
	}
	return m;
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
	return mt_replay__run_with(path, NULL, fn, ctx, out, st);
}

int mt_replay__run_with(const char *path, const struct mt_model_opts *opts, mt_replay_fn fn, void *ctx,
			struct mt_replay **out, struct mt_read_status *st)
{
	struct mt_read_status local;
	struct mt_replay *r = mt_replay__new_with(fn, ctx, opts);
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
