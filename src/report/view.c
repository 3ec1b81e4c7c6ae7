// SPDX-License-Identifier: GPL-2.0-only
/* view.c — `memtrack view`'s page: report's, timeline's and the stacks' numbers as JSON inside one HTML file. */
#include "report/view.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/json.h"
#include "common/strmap.h"
#include "common/text.h"
#include "report/view_page.h"
#include "stacks/stack_heap.h"

#define VIEW_STEP_FIELDS 5	/* edge, stack, allocations, bytes, live bytes: each a change since the edge before */

struct view_prev {
	uint64_t allocations;
	uint64_t bytes;
	int64_t live_bytes;
};

/* One series of changes: by stack, or by process and stack (a cell of the per-stack accounting). */
struct view_series {
	struct view_prev *prev;		/* by stack index + 1 (0: no stack), or by cell */
	size_t nprev, cap_prev;
	int64_t *steps;			/* VIEW_STEP_FIELDS a change */
	size_t nsteps, cap_steps;	/* in int64_t */
};

struct mt_view_steps {
	uint64_t *edges;		/* nedges + 1 instants, since the session start */
	size_t nedges;
	size_t next;			/* the first edge not sampled yet */
	struct view_series stacks, cells;
};

struct mt_view_steps *mt_view_steps__new(uint64_t end_ns, size_t nedges)
{
	struct mt_view_steps *v = calloc(1, sizeof(*v));
	size_t i;

	if (!v)
		return NULL;
	v->nedges = nedges ? nedges : MT_VIEW_EDGES;
	v->edges = calloc(v->nedges + 1, sizeof(*v->edges));
	if (!v->edges) {
		free(v);
		errno = ENOMEM;
		return NULL;
	}
	/* rounded up, so that a record at end_ns * i / nedges is before edge i ... and the last edge past them all */
	for (i = 0; i <= v->nedges; i++)
		v->edges[i] = (uint64_t)(((unsigned __int128)end_ns * i + v->nedges - 1) / v->nedges) + (i == v->nedges);
	return v;
}

void mt_view_steps__free(struct mt_view_steps *v)
{
	if (!v)
		return;
	free(v->edges);
	free(v->stacks.prev);
	free(v->stacks.steps);
	free(v->cells.prev);
	free(v->cells.steps);
	free(v);
}

static int64_t counts_live_bytes(const struct mt_stack_counts *c)
{
	return (int64_t)(c->inherited_bytes + c->bytes) -
	       (int64_t)(c->freed_bytes + c->replaced_bytes + c->discarded_bytes + c->leaked_bytes);
}

static int steps_add(struct view_series *v, size_t edge, size_t idx, const struct view_prev *now)
{
	const struct view_prev *p = &v->prev[idx];
	int64_t *s;

	if (!memcmp(p, now, sizeof(*p)))
		return 0;
	if (mt_array__grow((void **)&v->steps, &v->cap_steps, v->nsteps + VIEW_STEP_FIELDS, sizeof(*v->steps)))
		return -ENOMEM;
	s = &v->steps[v->nsteps];
	s[0] = (int64_t)edge;
	s[1] = (int64_t)idx;
	s[2] = (int64_t)(now->allocations - p->allocations);
	s[3] = (int64_t)(now->bytes - p->bytes);
	s[4] = now->live_bytes - p->live_bytes;
	v->nsteps += VIEW_STEP_FIELDS;
	v->prev[idx] = *now;
	return 0;
}

/* Room for n previous values, the new ones zero. 0 or -ENOMEM. */
static int series_reserve(struct view_series *v, size_t n)
{
	if (n <= v->nprev)
		return 0;
	while (v->cap_prev < n)	/* mt_array__grow doubles once: the stacks may have grown more */
		if (mt_array__grow((void **)&v->prev, &v->cap_prev, v->cap_prev, sizeof(*v->prev)))
			return -ENOMEM;
	memset(&v->prev[v->nprev], 0, (n - v->nprev) * sizeof(*v->prev));
	v->nprev = n;
	return 0;
}

/* Edge v->next: every stack's counts now, and every process's part of them, as changes since the edge before. */
static int steps_sample(struct mt_view_steps *v, const struct mt_stacks *s)
{
	const struct mt_stack_heap *h = mt_stacks__heap(s);
	size_t n = mt_stacks__count(s) + 1, ncells = mt_stack_heap__nr_cells(h), i;
	struct mt_stack_counts c;
	struct mt_heap_cell cell;
	struct view_prev now;
	int err;

	if (series_reserve(&v->stacks, n) || series_reserve(&v->cells, ncells))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		mt_stack_heap__counts(h, (uint32_t)i, &c);
		now = (struct view_prev){ c.allocations, c.bytes, counts_live_bytes(&c) };
		err = steps_add(&v->stacks, v->next, i, &now);
		if (err)
			return err;
	}
	for (i = 0; i < ncells; i++) {
		mt_stack_heap__cell(h, i, &cell);
		now = (struct view_prev){ cell.made_allocations, cell.made_bytes, cell.live_bytes };
		err = steps_add(&v->cells, v->next, i, &now);
		if (err)
			return err;
	}
	v->next++;
	return 0;
}

int mt_view_steps__observe(void *ctx, const struct mt_stacks *s, uint64_t rel_ts)
{
	struct mt_view_steps *v = ctx;
	int err;

	while (v->next <= v->nedges && rel_ts >= v->edges[v->next]) {
		err = steps_sample(v, s);
		if (err)
			return err;
	}
	return 0;
}

int mt_view_steps__finish(struct mt_view_steps *v, const struct mt_stacks *s)
{
	int err;

	while (v->next <= v->nedges) {
		err = steps_sample(v, s);
		if (err)
			return err;
	}
	return 0;
}

/* ---- the stacks' frames, as a table of distinct frames ---- */

struct view_frames {
	struct mt_json *j;		/* "frames": written as they are first seen */
	struct mt_strmap index;		/* (name, srcline, module) by index */
	size_t *path;			/* one stack's, innermost first */
	size_t npath, cap_path;
	const char *module;		/* of the return address being expanded */
};

static void frame_json(struct mt_json *j, const char *name, const char *srcline, const char *module)
{
	mt_json__begin_array(j);
	mt_json__string(j, name);
	if (srcline)
		mt_json__string(j, srcline);
	else
		mt_json__null(j);
	if (module)
		mt_json__string(j, module);
	else
		mt_json__null(j);
	mt_json__end_array(j);
}

/* An mt_frame_line_fn: the frame's index (a new one written to "frames") onto the path. */
static int frame_add(const struct mt_frame_line *fl, void *ctx)
{
	struct view_frames *vf = ctx;
	char srcline[4096];
	const char *base = fl->file ? strrchr(fl->file, '/') : NULL;
	const char *key[3] = { fl->name, fl->file ? srcline : NULL, vf->module };
	int64_t idx;
	bool added;

	if (fl->file)
		snprintf(srcline, sizeof(srcline), "%s:%d", base ? base + 1 : fl->file, fl->line);
	idx = mt_strmap__intern_parts(&vf->index, key, 3, &added);
	if (idx < 0)
		return (int)idx;
	if (added)
		frame_json(vf->j, fl->name, key[1], vf->module);
	if (mt_array__grow((void **)&vf->path, &vf->cap_path, vf->npath, sizeof(*vf->path)))
		return -ENOMEM;
	vf->path[vf->npath++] = (size_t)idx;
	return 0;
}

static int stack_path(struct mt_stacks *s, const struct mt_stack_entry *e, struct view_frames *vf)
{
	const struct mt_frame *f;
	size_t i;
	int err = 0;

	vf->npath = 0;
	if (!e->defined) {
		vf->module = NULL;
		return frame_add(&(struct mt_frame_line){ .name = "[stack not recorded]" }, vf);
	}
	for (i = 0; !err && i < e->nframes; i++) {
		f = mt_stacks__frame(s, e->frames, i);
		vf->module = f->mod ? f->mod->name : NULL;
		err = mt_sites__expand_frame(s, f, false, frame_add, vf);
	}
	return err;
}

/* "frames": [[name, srcline, module]], then "stacks": [[frame, ...] outermost first], index 0 the no-stack one. */
static int view_stacks_json(struct mt_json *j, struct mt_stacks *s)
{
	struct view_frames vf = { .j = j };
	size_t n = mt_stacks__count(s), i, k, first;
	int err = 0;

	mt_json__key(j, "frames");
	mt_json__begin_array(j);
	vf.module = NULL;
	err = frame_add(&(struct mt_frame_line){ .name = "[no stack]" }, &vf);
	first = 0;
	for (i = 0; !err && i < n; i++)
		err = stack_path(s, mt_stacks__entry(s, i), &vf);
	mt_json__end_array(j);
	/* the paths again, now that every frame has its index */
	mt_json__key(j, "stacks");
	mt_json__begin_array(j);
	for (i = 0; !err && i <= n; i++) {
		if (i)
			err = stack_path(s, mt_stacks__entry(s, i - 1), &vf);
		else
			vf.path[0] = first, vf.npath = 1;
		mt_json__begin_array(j);
		for (k = vf.npath; !err && k > 0; k--)
			mt_json__u64(j, vf.path[k - 1]);
		mt_json__end_array(j);
	}
	mt_json__end_array(j);
	mt_strmap__release(&vf.index);
	free(vf.path);
	return err;
}

/*
 * The per-stack counts the page shows whole-run, each an array by stack index + 1: the entries' (leaks without the
 * suppressed ones, as report's sites), index 0's from the per-stack accounting (no stack: nothing to suppress).
 */
#define VIEW_FIELD(key, field) { key, offsetof(struct mt_stack_counts, field) }
static const struct {
	const char *key;
	size_t counts_off;
} view_stack_fields[] = {
	VIEW_FIELD("stack_peak", peak_bytes),
	VIEW_FIELD("stack_leaked", leaked_bytes),
	VIEW_FIELD("stack_leaked_allocations", leaked_allocations),
	VIEW_FIELD("stack_temporary_allocations", temporary_allocations),
	VIEW_FIELD("stack_temporary_bytes", temporary_bytes),
};

static uint64_t stack_field(const struct mt_stacks *s, size_t i, size_t k)
{
	struct mt_stack_counts c;
	uint64_t v;

	if (i)
		mt_stacks__counts(s, mt_stacks__entry(s, i - 1), &c);
	else
		mt_stack_heap__counts(mt_stacks__heap(s), 0, &c);
	memcpy(&v, (const char *)&c + view_stack_fields[k].counts_off, sizeof(v));
	return v;
}

/* The arrays above, "edges" and "steps". */
static void view_counts_json(struct mt_json *j, const struct mt_stacks *s, const struct mt_view_steps *v)
{
	size_t n = mt_stacks__count(s), i, k;

	for (k = 0; k < sizeof(view_stack_fields) / sizeof(view_stack_fields[0]); k++) {
		mt_json__key(j, view_stack_fields[k].key);
		mt_json__begin_array(j);
		for (i = 0; i <= n; i++)
			mt_json__u64(j, stack_field(s, i, k));
		mt_json__end_array(j);
	}
	mt_json__key(j, "edges");
	mt_json__begin_array(j);
	for (i = 0; i <= v->nedges; i++)
		mt_json__u64(j, v->edges[i]);
	mt_json__end_array(j);
	/* with cells (more than one process), the page adds them up by stack: no need for both */
	mt_json__key(j, "steps");
	mt_json__begin_array(j);
	for (i = 0; mt_stack_heap__nr_procs(mt_stacks__heap(s)) < 2 && i < v->stacks.nsteps; i++)
		mt_json__i64(j, v->stacks.steps[i]);
	mt_json__end_array(j);
}

/*
 * With more than one process: "procs": [[pid, exe]] (the per-stack accounting's, exe its last image's), "cells":
 * [process, stack, bytes at the peak, leaked bytes] flat, "cell_steps" as "steps" by cell: the flame graph's roots
 * per process or executable.
 */
static void view_cells_json(struct mt_json *j, const struct mt_stacks *s, const struct mt_view_steps *v)
{
	const struct mt_stack_heap *h = mt_stacks__heap(s);
	size_t nprocs = mt_stack_heap__nr_procs(h), i;
	struct mt_heap_cell c;

	if (nprocs < 2)
		return;
	mt_json__key(j, "procs");
	mt_json__begin_array(j);
	for (i = 0; i < nprocs; i++) {
		mt_json__begin_array(j);
		mt_json__u64(j, mt_stack_heap__proc(h, i)->pid);
		mt_json__string(j, mt_stack_heap__proc(h, i)->exe);
		mt_json__end_array(j);
	}
	mt_json__end_array(j);
	mt_json__key(j, "cells");
	mt_json__begin_array(j);
	for (i = 0; i < mt_stack_heap__nr_cells(h); i++) {
		mt_stack_heap__cell(h, i, &c);
		mt_json__u64(j, c.proc);
		mt_json__u64(j, c.stack);
		mt_json__u64(j, c.peak_bytes);
		mt_json__u64(j, c.leaked_bytes);
	}
	mt_json__end_array(j);
	mt_json__key(j, "cell_steps");
	mt_json__begin_array(j);
	for (i = 0; i < v->cells.nsteps; i++)
		mt_json__i64(j, v->cells.steps[i]);
	mt_json__end_array(j);
}

/* What report --json (sites: the top 50) and report print, and timeline --json, each as written to a FILE. */
static int view_embedded(FILE *f, const struct mt_view_input *in, int which)
{
	switch (which) {
	case 0: return mt_report__json_with(f, in->m, in->extra, in->sites, 50);
	case 1: return mt_report__text_with(f, in->m, in->dir, in->extra);
	default: return mt_timeline__json(f, in->timeline);
	}
}

/* The data object into f: the embedded outputs as values of its keys, then the stacks. */
static int view_data(FILE *f, const struct mt_view_input *in)
{
	static const char *const keys[] = { "report", "report_text", "timeline" };
	struct mt_json j;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *mf;
	int err = 0;

	fputs("{\"dir\":", f);
	mt_json__write_string(f, in->dir, strlen(in->dir));
	for (i = 0; !err && i < 3; i++) {
		mf = open_memstream(&buf, &len);
		if (!mf)
			return -ENOMEM;
		err = view_embedded(mf, in, (int)i);
		if (fclose(mf) && !err)
			err = -ENOMEM;
		while (!err && len && buf[len - 1] == '\n')
			len--;
		fprintf(f, ",\"%s\":", keys[i]);
		if (!err && i == 1)
			mt_json__write_string(f, buf, len);
		else if (!err)
			fwrite(buf, 1, len, f);
		free(buf);
		buf = NULL;
	}
	if (err)
		return err;
	mt_json__init(&j, f, 0);
	j.depth = 1;	/* the keys below go into the object opened above, after its first: a comma first */
	j.has_items[1] = true;
	err = view_stacks_json(&j, in->stacks);
	view_counts_json(&j, in->stacks, in->steps);
	view_cells_json(&j, in->stacks, in->steps);
	fputc('}', f);
	return err ? err : mt_json__error(&j);
}

static int view_data_fn(FILE *f, const void *ctx)
{
	return view_data(f, ctx);
}

int mt_view__html(FILE *f, const struct mt_view_input *in)
{
	return mt_view_page__html(f, MT_VIEW_PAGE_RUN, in->dir, view_data_fn, in);
}

uint64_t mt_view__end_ns(const struct mt_model *m)
{
	const struct mt_session_info *si = mt_model__session(m);
	const struct mt_proc *p;
	uint64_t end = 0, base = si->present ? si->ts_ns : 0;
	size_t i;

	for (i = 0; i < mt_model__nr_procs(m); i++) {
		p = mt_model__proc(m, i);
		end = p->exit_ns > end ? p->exit_ns : end;
		end = p->start_ns > end ? p->start_ns : end;
	}
	for (i = 0; i < mt_model__nr_images(m); i++)
		end = mt_model__image(m, i)->end_ns > end ? mt_model__image(m, i)->end_ns : end;
	return end > base ? end - base : 0;
}
