// SPDX-License-Identifier: GPL-2.0-only
/* speedscope.c — stacks as speedscope's JSON: frames shared by (function, file), a sampled profile per weight. */
#include <errno.h>
#include <stdlib.h>

#include "common/array.h"
#include "common/json.h"
#include "common/strmap.h"
#include "report/flamegraph.h"
#include "report/sites.h"
#include "report/speedscope.h"

#define SS_SCHEMA "https://www.speedscope.app/file-format-schema.json"
#define SS_NOT_RECORDED "[stack not recorded]"

/* One stack as frame indices, outermost first. */
struct ss_sample {
	uint32_t *idx;
	size_t n;
	size_t cap;
};

struct ss_build {
	struct mt_strmap frames;	/* (name, file) by frame index; file NULL without one */
	struct ss_sample *cur;
};

static int sample_add(const struct mt_frame_line *fl, void *ctx)
{
	struct ss_build *b = ctx;
	struct ss_sample *sm = b->cur;
	int64_t idx = mt_strmap__intern_parts(&b->frames, (const char *const[]){ fl->name, fl->file }, 2, NULL);

	if (idx < 0)
		return (int)idx;
	if (mt_array__grow((void **)&sm->idx, &sm->cap, sm->n, sizeof(*sm->idx)))
		return -ENOMEM;
	sm->idx[sm->n++] = (uint32_t)idx;
	return 0;
}

/* The entry's frames as indices, innermost first as they come, then turned around. */
static int sample_fill(struct ss_build *b, struct mt_stacks *s, const struct mt_stack_entry *e, struct ss_sample *sm)
{
	size_t i;
	uint32_t t;
	int err = 0;

	b->cur = sm;
	if (!e->defined)
		err = sample_add(&(struct mt_frame_line){ .name = SS_NOT_RECORDED }, b);
	for (i = 0; !err && e->defined && i < e->nframes; i++)
		err = mt_sites__expand_frame(s, mt_stacks__frame(s, e->frames, i), false, sample_add, b);
	for (i = 0; i < sm->n / 2; i++) {
		t = sm->idx[i];
		sm->idx[i] = sm->idx[sm->n - 1 - i];
		sm->idx[sm->n - 1 - i] = t;
	}
	return err;
}

static void frames_write(struct mt_json *j, const struct ss_build *b)
{
	const char *file;
	size_t i;

	mt_json__key(j, "shared");
	mt_json__begin_object(j);
	mt_json__key(j, "frames");
	mt_json__begin_array(j);
	for (i = 0; i < b->frames.count; i++) {
		fputc('\n', j->f);
		mt_json__begin_object(j);
		mt_json__kv_string(j, "name", mt_strmap__part(&b->frames, i, 0));
		file = mt_strmap__part(&b->frames, i, 1);
		if (file)
			mt_json__kv_string(j, "file", file);
		mt_json__end_object(j);
	}
	mt_json__end_array(j);
	mt_json__end_object(j);
}

static void profile_write(struct mt_json *j, struct mt_stacks *s, const struct ss_sample *samples,
			  enum mt_fg_weight w)
{
	size_t i, k, n = mt_stacks__count(s);
	uint64_t total = 0;

	for (i = 0; i < n; i++)
		total += mt_fg_weight__of(s, mt_stacks__entry(s, i), w);
	fputc('\n', j->f);
	mt_json__begin_object(j);
	mt_json__kv_string(j, "type", "sampled");
	mt_json__kv_string(j, "name", mt_fg_weight__unit(w));
	mt_json__kv_string(j, "unit", w == MT_FG_COUNT ? "none" : "bytes");
	mt_json__kv_u64(j, "startValue", 0);
	mt_json__kv_u64(j, "endValue", total);
	mt_json__key(j, "samples");
	mt_json__begin_array(j);
	for (i = 0; i < n; i++) {
		if (!mt_fg_weight__of(s, mt_stacks__entry(s, i), w))
			continue;
		fputc('\n', j->f);
		mt_json__begin_array(j);
		for (k = 0; k < samples[i].n; k++)
			mt_json__u64(j, samples[i].idx[k]);
		mt_json__end_array(j);
	}
	mt_json__end_array(j);
	mt_json__key(j, "weights");
	mt_json__begin_array(j);
	for (i = 0; i < n; i++)
		if (mt_fg_weight__of(s, mt_stacks__entry(s, i), w))
			mt_json__u64(j, mt_fg_weight__of(s, mt_stacks__entry(s, i), w));
	mt_json__end_array(j);
	mt_json__end_object(j);
}

static void doc_write(FILE *f, struct mt_stacks *s, const struct ss_build *b, const struct ss_sample *samples,
		      const char *name)
{
	static const enum mt_fg_weight weights[] = { MT_FG_BYTES, MT_FG_COUNT, MT_FG_LEAKED };
	struct mt_json j;
	size_t i;

	mt_json__init(&j, f, 0);
	mt_json__begin_object(&j);
	mt_json__kv_string(&j, "$schema", SS_SCHEMA);
	mt_json__kv_string(&j, "name", name);
	mt_json__kv_string(&j, "exporter", "memtrack");
	mt_json__kv_u64(&j, "activeProfileIndex", 0);
	frames_write(&j, b);
	mt_json__key(&j, "profiles");
	mt_json__begin_array(&j);
	for (i = 0; i < sizeof(weights) / sizeof(weights[0]); i++)
		profile_write(&j, s, samples, weights[i]);
	mt_json__end_array(&j);
	mt_json__end_object(&j);
	fputc('\n', f);
}

int mt_speedscope__write(FILE *f, struct mt_stacks *s, const char *name)
{
	size_t i, n = mt_stacks__count(s);
	struct ss_sample *samples = calloc(n ? n : 1, sizeof(*samples));
	struct ss_build b = { 0 };
	int err = samples ? 0 : -ENOMEM;

	for (i = 0; !err && i < n; i++) {
		const struct mt_stack_entry *e = mt_stacks__entry(s, i);
		struct mt_stack_counts c;

		mt_stacks__counts(s, e, &c);
		if (c.allocations || c.leaked_bytes)	/* else in no profile: its frames would be noise */
			err = sample_fill(&b, s, e, &samples[i]);
	}
	if (!err)
		doc_write(f, s, &b, samples, name);
	for (i = 0; samples && i < n; i++)
		free(samples[i].idx);
	free(samples);
	mt_strmap__release(&b.frames);
	return err ? err : ferror(f) ? -EIO : 0;
}
