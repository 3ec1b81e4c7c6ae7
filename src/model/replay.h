/* SPDX-License-Identifier: GPL-2.0-only */
/* replay.h — the model fed record by record, with a callback right after it has accounted each record. */
#ifndef MEMTRACK_REPLAY_H
#define MEMTRACK_REPLAY_H

#include <stdint.h>

#include "artifact/artifact.h"
#include "model/model.h"

/* The model's observer (mt_model__set_observer) hands each record to fn just after the model accounted it. */
struct mt_replay;

/*
 * rec in time order, the replay's model (mt_replay__model) just after accounting it; rec is valid only during the
 * call. A non-zero return stops the replay.
 */
typedef int (*mt_replay_fn)(const struct mt_rec_hdr *rec, const struct mt_replay *r, void *ctx);

/* NULL + errno (ENOMEM). */
struct mt_replay *mt_replay__new(mt_replay_fn fn, void *ctx);
/* The same, its model made with opts (NULL: the defaults; a filter must outlive the replay). */
struct mt_replay *mt_replay__new_with(mt_replay_fn fn, void *ctx, const struct mt_model_opts *opts);
/* One record in artifact order. 0, -EINVAL (shorter than a header), -ENOMEM, fn's return. */
int mt_replay__push(struct mt_replay *r, const struct mt_rec_hdr *rec);
/* Every record handed out, then the model finished (what is still live is leaked). 0 or as mt_replay__push. */
int mt_replay__finish(struct mt_replay *r);
/* The model: its heap and process state is right at every callback and after finish. */
const struct mt_model *mt_replay__model(const struct mt_replay *r);
/* The finished model, now the caller's (mt_model__free); the replay keeps none. NULL before finish. */
struct mt_model *mt_replay__take_model(struct mt_replay *r);
/* ts_ns relative to the model's time base (the session record's, else the first record's), clamped at 0. */
uint64_t mt_replay__rel_ts(const struct mt_replay *r, uint64_t ts_ns);
/*
 * Reads the artifact at path through a replay and finishes it; *out (when out is not NULL) gets the finished replay
 * on 0 and -EBADMSG, for its model. Returns what mt_artifact__read returned, or a replay error; st may be NULL.
 */
int mt_replay__run(const char *path, mt_replay_fn fn, void *ctx, struct mt_replay **out, struct mt_read_status *st);
/* The same with the model's options (opts may be NULL). */
int mt_replay__run_with(const char *path, const struct mt_model_opts *opts, mt_replay_fn fn, void *ctx,
			struct mt_replay **out, struct mt_read_status *st);
void mt_replay__free(struct mt_replay *r);

#endif /* MEMTRACK_REPLAY_H */
