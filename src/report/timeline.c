// SPDX-License-Identifier: GPL-2.0-only
/* timeline.c — live heap bytes over time from the model, record by record: the series, their JSON and an SVG. */
/*
 * The live bytes are the model's (src/model: inherited blocks count in each holder, an exec discards, libc's own
 * releases are no frees), read after each record through a replay (model/replay.h). Pass one counts the samples,
 * their time range and the fork/exec/exit events, and ends with each process's peak, which picks the processes
 * drawn apart; pass two fills the points. Resident memory (RSS records), when recorded, is a second plot of the same
 * kind, on points of its own; anonymous private mappings (program + allocator, the model's books) a third, sampled
 * at each record that may change them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/json.h"
#include "common/text.h"
#include "common/u64map.h"
#include "report/format.h"
#include "report/timeline.h"
#include "model/replay.h"

enum tl_kind { TL_FORK, TL_EXEC, TL_EXIT, TL_START, TL_STOP, TL_MARK };

struct tl_event {
	uint64_t t;
	uint32_t pid;
	uint32_t child;			/* TL_FORK */
	enum tl_kind kind;
	char path[MT_PATH_MAX];		/* TL_EXEC; TL_MARK: its label */
};

/* A line of a plot: its value at each of the plot's points, and whose it is. */
struct tl_series {
	uint64_t *v;
	size_t model_index;		/* a process's */
	uint32_t pid;			/* a process's */
	char exe[MT_PATH_MAX];		/* a live heap process's */
	uint64_t peak;			/* a live heap process's; a plot's total: the plot's (in the span, the window) */
};

/* Series on points in time of their own, filled sample by sample: the live heap's, or resident memory's. */
struct tl_plot {
	size_t npoints, cap;		/* pass two: the points filled, and those there is room for */
	uint64_t *t_ns;
	struct tl_series total;
	struct tl_series others;	/* .v NULL: every process with blocks is drawn apart (always, for RSS) */
	struct tl_series part;		/* .v NULL but mapped's: the program's part of its total */
	struct tl_series *procs;	/* the processes drawn apart, by their heap peak */
	size_t nprocs;
	uint64_t peak_ts;		/* the total's peak's */
	uint64_t samples, nsamples;	/* so far; pass one's count */
	uint64_t t_first, t_last;	/* of the samples (pass one) */
	size_t point;			/* pass two: the point being filled, + 1 (0: none yet) */
};

struct mt_timeline {
	struct tl_plot heap;
	struct tl_plot rss;		/* the heap's processes' RSS; nsamples 0: no RSS sample (in the window) */
	struct tl_plot mapped;		/* their mappings, program + allocator; nsamples 0: none mapped (in it) */
	struct tl_event *events;
	size_t nevents, cap_events;
	uint64_t t_end;			/* the last sample's or event's time */
};

/* What a pass keeps between records. */
struct tl_pass {
	struct mt_timeline *t;
	struct mt_u64map last;		/* model process → its live bytes at the last sample */
	uint64_t last_total;
	size_t max_points;
	const char *const *between;	/* --between's marks, or NULL */
	int span;			/* with them: 0 before mark A, 1 from it, 2 from mark B on */
	struct mt_filter filter;	/* --pid, --exe, --from, --to (no --between: the span above is that) */
	const struct mt_filter *f;	/* &filter, or NULL: everything */
};

/* The record lies in --between's span (the marks themselves included): a pass follows the marks. */
static bool tl_in_span(struct tl_pass *p, const struct mt_rec_hdr *rec)
{
	if (!p->between)
		return true;
	if (p->span == 0 && mt_filter__is_mark(rec, p->between[0]))
		p->span = 1;
	else if (p->span == 1 && mt_filter__is_mark(rec, p->between[1]))
		p->span = 2;
	return p->span == 1 || (p->span == 2 && mt_filter__is_mark(rec, p->between[1]));
}

static void tl_plot_release(struct tl_plot *pl)
{
	size_t i;

	for (i = 0; pl->procs && i < pl->nprocs; i++)
		free(pl->procs[i].v);
	free(pl->procs);
	free(pl->t_ns);
	free(pl->total.v);
	free(pl->others.v);
	free(pl->part.v);
}

/* ---- --pid, --exe, --from, --to ---- */

/* The options' filter, without its --between (the pass follows the marks itself). */
static void tl_filter(struct tl_pass *p, const struct mt_timeline_opts *o)
{
	if (!o || !o->filter)
		return;
	p->filter = *o->filter;
	p->filter.between[0] = p->filter.between[1] = NULL;
	p->f = &p->filter;
}

/* The process is drawn now: the filter takes its current image (a process runs one at a time). */
static bool tl_takes(const struct tl_pass *p, const struct mt_proc *proc)
{
	return !p->f || mt_filter__matches(p->f, proc->pid, proc->exe, proc->comm);
}

/* The fork, exec or exit is of a process drawn (a fork: the parent or the child). */
static bool tl_event_taken(const struct tl_pass *p, const struct mt_rec_hdr *rec, const struct mt_model *m)
{
	const struct mt_proc *proc = mt_model__find_proc(m, rec->pid), *child = NULL;

	if (rec->type == MT_REC_FORK && rec->size >= sizeof(struct mt_fork))
		child = mt_model__find_proc(m, ((const struct mt_fork *)rec)->child);
	return !p->f || (proc && tl_takes(p, proc)) || (child && tl_takes(p, child));
}

/*
 * Each process's peak, by model index: without pid or exe filters its own; with them the highest of its images
 * that are rows (taken and alive in the window; 0 without any), as its series draws those only. NULL on ENOMEM.
 */
static uint64_t *tl_peaks(const struct tl_pass *p, const struct mt_model *m)
{
	size_t i, n = mt_model__nr_procs(m);
	uint64_t *peak = calloc(n ? n : 1, sizeof(*peak));
	const struct mt_image *img;

	for (i = 0; peak && !mt_filter__selects(p->f) && i < n; i++)
		peak[i] = mt_model__proc(m, i)->heap.peak_live_bytes;
	for (i = 0; peak && mt_filter__selects(p->f) && i < mt_model__nr_images(m); i++) {
		img = mt_model__image(m, i);
		if (img->matched && img->heap.peak_live_bytes > peak[img->proc])
			peak[img->proc] = img->heap.peak_live_bytes;
	}
	return peak;
}

void mt_timeline__free(struct mt_timeline *t)
{
	if (!t)
		return;
	tl_plot_release(&t->heap);
	tl_plot_release(&t->rss);
	tl_plot_release(&t->mapped);
	free(t->events);
	free(t);
}

/* The record changed the live bytes of the total or of its process (a fork: the child's). */
static bool tl_changed(struct tl_pass *p, const struct mt_rec_hdr *rec, const struct mt_model *m)
{
	uint64_t total = mt_model__totals(m)->heap.live_bytes, *last;
	const struct mt_proc *proc;
	bool changed = total != p->last_total;
	uint32_t pid = rec->pid;

	if (rec->type == MT_REC_FORK && rec->size >= sizeof(struct mt_fork))
		pid = ((const struct mt_fork *)rec)->child;
	else if (rec->type != MT_REC_ALLOC && rec->type != MT_REC_EXEC && rec->type != MT_REC_EXIT)
		return false;
	p->last_total = total;
	proc = mt_model__find_proc(m, pid);
	if (!proc || !tl_takes(p, proc))
		return changed;
	last = mt_u64map__find(&p->last, (uintptr_t)proc);
	if (last ? *last == proc->heap.live_bytes : !proc->heap.live_bytes)
		return changed;
	if (last)
		*last = proc->heap.live_bytes;
	else if (mt_u64map__put(&p->last, (uintptr_t)proc, proc->heap.live_bytes, NULL) < 0)
		return true;	/* no memory to remember it: one sample too many at worst */
	return true;
}

/* A control FIFO line: start and stop bound the paused spans, a label is drawn as it is. */
static void tl_mark(struct tl_event *e, const struct mt_mark *k)
{
	size_t n = k->len < MT_MARK_LABEL_MAX ? k->len : MT_MARK_LABEL_MAX;

	e->kind = k->kind == MT_MARK_START ? TL_START : k->kind == MT_MARK_STOP ? TL_STOP : TL_MARK;
	if (e->kind == TL_MARK)
		memcpy(e->path, k->label, n < sizeof(e->path) - 1 ? n : sizeof(e->path) - 1);
}

static int tl_event(struct mt_timeline *t, const struct mt_rec_hdr *rec, uint64_t ts)
{
	struct tl_event *e;

	if (rec->size < mt_rec__min_size(rec->type))
		return 0;
	if (mt_array__grow((void **)&t->events, &t->cap_events, t->nevents, sizeof(*t->events)))
		return -ENOMEM;
	e = &t->events[t->nevents++];
	memset(e, 0, sizeof(*e));
	e->t = ts;
	e->pid = rec->pid;
	if (rec->type == MT_REC_FORK) {
		e->kind = TL_FORK;
		e->child = ((const struct mt_fork *)rec)->child;
	} else if (rec->type == MT_REC_EXEC) {
		e->kind = TL_EXEC;
		memcpy(e->path, ((const struct mt_exec *)rec)->path, sizeof(e->path) - 1);
	} else if (rec->type == MT_REC_MARK) {
		tl_mark(e, (const struct mt_mark *)rec);
	} else {
		e->kind = TL_EXIT;
	}
	t->t_end = ts > t->t_end ? ts : t->t_end;
	return 0;
}

/* ---- the points: pass one counts a plot's samples, pass two puts each in its point ---- */

/* A heap sample after each record that changed live bytes; an RSS one at each RSS record, and at each exit once
 * there was one. */
static bool tl_rss_sample(const struct mt_rec_hdr *rec, const struct mt_model *m)
{
	return (rec->type == MT_REC_RSS || rec->type == MT_REC_EXIT) && mt_model__totals(m)->rss.records;
}

/* Mapped bytes, program + allocator: of the totals, of a process. */
static uint64_t mapped_sum(const struct mt_mapped_stats *s)
{
	return s->program_bytes + s->allocator_bytes;
}

/* A mapped sample after each record that may change a process's mappings (a thread's end: its process's last),
 * once something was mapped. */
static bool tl_mapped_sample(const struct mt_rec_hdr *rec, const struct mt_model *m)
{
	const struct mt_mapped_stats *s = &mt_model__totals(m)->mapped;

	if (!mapped_sum(s) && !s->peak_program_bytes && !s->peak_allocator_bytes)
		return false;
	return rec->type == MT_REC_SYSCALL || rec->type == MT_REC_FORK || rec->type == MT_REC_EXEC ||
	       rec->type == MT_REC_EXIT || rec->type == MT_REC_THREAD_EXIT;
}

/* Pass one: a sample of the plot at ts, counted. */
static void tl_count(struct mt_timeline *t, struct tl_plot *pl, uint64_t ts)
{
	if (!pl->samples++)
		pl->t_first = ts;
	pl->t_last = ts;
	t->t_end = ts > t->t_end ? ts : t->t_end;
}

static int pass_one(const struct mt_rec_hdr *rec, const struct mt_replay *r, void *ctx)
{
	struct tl_pass *p = ctx;
	uint64_t ts = mt_replay__rel_ts(r, rec->ts_ns);
	int err;

	if (!tl_in_span(p, rec) || !mt_filter__in_window(p->f, ts))
		return 0;
	if ((rec->type == MT_REC_MARK ||
	     ((rec->type == MT_REC_FORK || rec->type == MT_REC_EXEC || rec->type == MT_REC_EXIT) &&
	      tl_event_taken(p, rec, mt_replay__model(r))))) {
		err = tl_event(p->t, rec, ts);
		if (err)
			return err;
	}
	if (tl_rss_sample(rec, mt_replay__model(r)))
		tl_count(p->t, &p->t->rss, ts);
	if (tl_mapped_sample(rec, mt_replay__model(r)))
		tl_count(p->t, &p->t->mapped, ts);
	if (tl_changed(p, rec, mt_replay__model(r)))
		tl_count(p->t, &p->t->heap, ts);
	return 0;
}

/* The point a sample goes to: its own, or its time's bucket when there are more samples than points. */
static size_t point_of(const struct tl_plot *pl, uint64_t ts)
{
	if (pl->nsamples <= pl->cap)
		return pl->samples;
	ts = ts < pl->t_first ? pl->t_first : ts;
	return (size_t)((unsigned __int128)(ts - pl->t_first) * pl->cap / (pl->t_last - pl->t_first + 1));
}

static void point_put(uint64_t *v, size_t i, bool first, uint64_t x)
{
	if (first || x > v[i])
		v[i] = x;
}

/* What a process drawn apart has in a plot now: its live heap bytes while the filter takes it, its RSS. */
typedef uint64_t tl_value_fn(const struct tl_pass *p, const struct mt_proc *proc);

static uint64_t tl_heap_of(const struct tl_pass *p, const struct mt_proc *proc)
{
	return proc && tl_takes(p, proc) ? proc->heap.live_bytes : 0;
}

static uint64_t tl_rss_of(const struct tl_pass *p, const struct mt_proc *proc)
{
	(void)p;
	return proc ? proc->rss.rss_bytes : 0;
}

static uint64_t tl_mapped_of(const struct tl_pass *p, const struct mt_proc *proc)
{
	return proc && tl_takes(p, proc) ? mapped_sum(&proc->mapped) : 0;
}

/*
 * Pass two: a sample at ts in its point, each series keeping its largest value there; others the rest of total,
 * part what the plot draws of it apart.
 */
static void tl_fill(struct tl_pass *p, struct tl_plot *pl, const struct mt_model *m, uint64_t ts, uint64_t total,
		    uint64_t part, tl_value_fn *value_of)
{
	uint64_t sum = 0, x;
	size_t i, at;
	bool first;

	if (pl->samples >= pl->nsamples)
		return;
	at = point_of(pl, ts);
	pl->samples++;
	/* a record later than the reorder window could absorb may fall in an earlier bucket: the last point takes it */
	first = (!pl->point || pl->point - 1 != at) && pl->npoints < pl->cap;
	if (first) {
		pl->point = at + 1;
		pl->t_ns[pl->npoints++] = ts;
	}
	point_put(pl->total.v, pl->npoints - 1, first, total);
	if (pl->part.v)
		point_put(pl->part.v, pl->npoints - 1, first, part);
	if ((p->between || pl == &p->t->mapped) && (pl->samples == 1 || total > pl->total.peak)) {
		/* the span's own peak; mapped's, which the model keeps by maker only */
		pl->total.peak = total;
		pl->peak_ts = ts;
	}
	for (i = 0; i < pl->nprocs; i++) {
		x = value_of(p, mt_model__proc(m, pl->procs[i].model_index));
		sum += x;
		point_put(pl->procs[i].v, pl->npoints - 1, first, x);
	}
	if (pl->others.v)
		point_put(pl->others.v, pl->npoints - 1, first, total - sum);
}

static int pass_two(const struct mt_rec_hdr *rec, const struct mt_replay *r, void *ctx)
{
	struct tl_pass *p = ctx;
	const struct mt_model *m = mt_replay__model(r);
	uint64_t ts = mt_replay__rel_ts(r, rec->ts_ns);

	if (!tl_in_span(p, rec) || !mt_filter__in_window(p->f, ts))
		return 0;
	if (tl_rss_sample(rec, m))
		tl_fill(p, &p->t->rss, m, ts, mt_model__totals(m)->rss.rss_bytes, 0, tl_rss_of);
	if (tl_mapped_sample(rec, m))
		tl_fill(p, &p->t->mapped, m, ts, mapped_sum(&mt_model__totals(m)->mapped),
			mt_model__totals(m)->mapped.program_bytes, tl_mapped_of);
	if (tl_changed(p, rec, m))
		tl_fill(p, &p->t->heap, m, ts, mt_model__totals(m)->heap.live_bytes, 0, tl_heap_of);
	return 0;
}

static int by_peak(const void *a, const void *b)
{
	const struct tl_series *x = a, *y = b;

	if (x->peak != y->peak)
		return x->peak > y->peak ? -1 : 1;
	return x->model_index < y->model_index ? -1 : x->model_index > y->model_index;
}

/*
 * The processes drawn apart: the top ones by peak (by model index, tl_peaks), of those that had blocks; *more when
 * others had some too.
 */
static int pick_procs(struct tl_plot *h, const struct mt_model *m, const uint64_t *peak, size_t top, bool *more)
{
	size_t i, n = mt_model__nr_procs(m), k = 0;
	const struct mt_proc *proc;
	struct tl_series *v = calloc(n ? n : 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		proc = mt_model__proc(m, i);
		if (!peak[i])
			continue;
		v[k] = (struct tl_series){ .model_index = i, .pid = proc->pid, .peak = peak[i] };
		memcpy(v[k++].exe, proc->exe, sizeof(v->exe));
	}
	mt_array__sort(v, k, sizeof(*v), by_peak);
	*more = k > top;
	h->procs = v;
	h->nprocs = k < top ? k : top;
	h->total.peak = mt_model__totals(m)->heap.peak_live_bytes;
	h->peak_ts = mt_model__totals(m)->heap.peak_ts_ns;
	return 0;
}

/* Room for pass two's points after pass one's count, at most max_points: the total's, others' if asked, each
 * process's. */
static int tl_plot_alloc(struct tl_plot *pl, size_t max_points, bool others)
{
	size_t i, n;

	pl->nsamples = pl->samples;
	pl->samples = 0;
	pl->cap = pl->nsamples > max_points ? max_points : pl->nsamples;
	n = pl->cap ? pl->cap : 1;
	pl->t_ns = calloc(n, sizeof(uint64_t));
	pl->total.v = calloc(n, sizeof(uint64_t));
	pl->others.v = others ? calloc(n, sizeof(uint64_t)) : NULL;
	if (!pl->t_ns || !pl->total.v || (others && !pl->others.v))
		return -ENOMEM;
	for (i = 0; i < pl->nprocs; i++)
		if (!(pl->procs[i].v = calloc(n, sizeof(uint64_t))))
			return -ENOMEM;
	return 0;
}

/* A plot beside the heap's, when pass one counted any sample: the heap's processes drawn apart, in the same order. */
static int tl_side_alloc(struct mt_timeline *t, struct tl_plot *r, size_t max_points)
{
	size_t i;

	if (!r->samples)
		return 0;
	r->procs = calloc(t->heap.nprocs ? t->heap.nprocs : 1, sizeof(*r->procs));
	if (!r->procs)
		return -ENOMEM;
	r->nprocs = t->heap.nprocs;
	for (i = 0; i < r->nprocs; i++)
		r->procs[i] = (struct tl_series){ .model_index = t->heap.procs[i].model_index,
						  .pid = t->heap.procs[i].pid };
	return tl_plot_alloc(r, max_points, false);
}

/* RSS's plot with the model's peak; mapped's with the program's part (its peak: pass two's). */
static int tl_rss_alloc(struct mt_timeline *t, const struct mt_model *m, size_t max_points)
{
	int err = tl_side_alloc(t, &t->rss, max_points);

	if (t->rss.nsamples) {
		t->rss.total.peak = mt_model__totals(m)->rss.peak_rss_bytes;
		t->rss.peak_ts = mt_model__totals(m)->rss.peak_rss_ts_ns;
	}
	if (!err)
		err = tl_side_alloc(t, &t->mapped, max_points);
	if (!err && t->mapped.nsamples) {
		t->mapped.part.v = calloc(t->mapped.cap ? t->mapped.cap : 1, sizeof(uint64_t));
		err = t->mapped.part.v ? 0 : -ENOMEM;
	}
	return err;
}

/* Pass one, then the processes picked and room for the points. Returns what the read returned. */
static int build_first(const char *path, const struct mt_timeline_opts *o, struct tl_pass *p,
		       struct mt_read_status *st)
{
	struct mt_model_opts mo = { .filter = p->f };
	struct mt_replay *r;
	uint64_t *peak;
	bool more;
	int err, aerr = -ENOMEM;

	err = mt_replay__run_with(path, &mo, pass_one, p, &r, st);
	if (err && err != -EBADMSG)
		return err;
	peak = tl_peaks(p, mt_replay__model(r));
	if (peak)
		aerr = pick_procs(&p->t->heap, mt_replay__model(r), peak, o && o->top ? o->top : MT_TIMELINE_TOP, &more);
	free(peak);
	if (!aerr)
		aerr = tl_rss_alloc(p->t, mt_replay__model(r), p->max_points);
	mt_replay__free(r);
	if (!aerr)
		aerr = tl_plot_alloc(&p->t->heap, p->max_points, more);
	return aerr ? aerr : err;
}

/* --between's marks are not both there, A then B: no span to draw (report refuses the same). -ENOENT. */
static int tl_span_missing(const struct tl_pass *p, struct mt_read_status *st)
{
	if (p->span == 1)
		snprintf(st->reason, sizeof(st->reason), "no `mark %.64s` line after `mark %.64s`", p->between[1],
			 p->between[0]);
	else
		snprintf(st->reason, sizeof(st->reason), "no `mark %.64s` line", p->between[0]);
	return -ENOENT;
}

int mt_timeline__build(const char *path, const struct mt_timeline_opts *o, struct mt_timeline **out,
		       struct mt_read_status *st)
{
	struct tl_pass p = { .max_points = o && o->max_points ? o->max_points : MT_TIMELINE_POINTS,
			     .between = o && o->between[0] ? o->between : NULL };
	struct mt_read_status local;
	int err, err2;

	*out = NULL;
	st = st ? st : &local;
	p.t = calloc(1, sizeof(*p.t));
	if (!p.t)
		return -ENOMEM;
	tl_filter(&p, o);
	err = build_first(path, o, &p, st);
	if (err && err != -EBADMSG)
		goto err_free;
	mt_u64map__release(&p.last);
	p.last_total = 0;
	p.span = 0;
	/* the same records again: pass two sees what pass one saw (and no more, were the file to grow) */
	err2 = mt_replay__run_with(path, &(struct mt_model_opts){ .filter = p.f }, pass_two, &p, NULL, st);
	if (err2 && err2 != -EBADMSG) {
		err = err2;
		goto err_free;
	}
	mt_u64map__release(&p.last);
	if (p.between && p.span != 2) {
		err = tl_span_missing(&p, st);
		goto err_free;
	}
	*out = p.t;
	return err;

err_free:
	mt_u64map__release(&p.last);
	mt_timeline__free(p.t);
	if (!st->reason[0])
		snprintf(st->reason, sizeof(st->reason), "%s", strerror(-err));
	return err;
}

/* ---- JSON ---- */

static void json_series(struct mt_json *j, const char *key, const uint64_t *v, size_t n)
{
	size_t i;

	mt_json__key(j, key);
	mt_json__begin_array(j);
	for (i = 0; i < n; i++)
		mt_json__u64(j, v[i]);
	mt_json__end_array(j);
}

static void json_events(struct mt_json *j, const struct mt_timeline *t)
{
	static const char *const names[] = { "fork", "exec", "exit", "start", "stop", "mark" };
	const struct tl_event *e;
	size_t i;

	mt_json__key(j, "events");
	mt_json__begin_array(j);
	for (i = 0; i < t->nevents; i++) {
		e = &t->events[i];
		mt_json__begin_object(j);
		mt_json__kv_u64(j, "t_ns", e->t);
		mt_json__kv_u64(j, "pid", e->pid);
		mt_json__kv_string(j, "event", names[e->kind]);
		if (e->kind == TL_FORK)
			mt_json__kv_u64(j, "child", e->child);
		if (e->kind == TL_EXEC)
			mt_json__kv_string_n(j, "path", e->path, sizeof(e->path));
		if (e->kind == TL_MARK)
			mt_json__kv_string_n(j, "label", e->path, sizeof(e->path));
		mt_json__end_object(j);
	}
	mt_json__end_array(j);
}

/* A plot's series (each process's under key, with its exe and peak when detailed), and its total's peak. */
static void json_plot(struct mt_json *j, const struct tl_plot *pl, const char *key, bool detailed)
{
	const struct tl_series *s;
	size_t i;

	json_series(j, "t_ns", pl->t_ns, pl->npoints);
	json_series(j, "total", pl->total.v, pl->npoints);
	mt_json__key(j, "processes");
	mt_json__begin_array(j);
	for (i = 0; i < pl->nprocs; i++) {
		s = &pl->procs[i];
		mt_json__begin_object(j);
		mt_json__kv_u64(j, "pid", s->pid);
		if (detailed) {
			mt_json__kv_string_n(j, "exe", s->exe, sizeof(s->exe));
			mt_json__kv_u64(j, "peak_bytes", s->peak);
		}
		json_series(j, key, s->v, pl->npoints);
		mt_json__end_object(j);
	}
	mt_json__end_array(j);
	if (pl->others.v)
		json_series(j, "others", pl->others.v, pl->npoints);
	mt_json__key(j, "peak");
	mt_json__begin_object(j);
	mt_json__kv_u64(j, "t_ns", pl->peak_ts);
	mt_json__kv_u64(j, "bytes", pl->total.peak);
	mt_json__end_object(j);
}

int mt_timeline__json(FILE *f, const struct mt_timeline *t)
{
	struct mt_json j;

	mt_json__init(&j, f, 0);
	mt_json__begin_object(&j);
	json_plot(&j, &t->heap, "live_bytes", true);
	json_events(&j, t);
	if (t->rss.nsamples) {
		mt_json__key(&j, "rss");
		mt_json__begin_object(&j);
		json_plot(&j, &t->rss, "rss_bytes", false);
		mt_json__end_object(&j);
	}
	if (t->mapped.nsamples) {
		mt_json__key(&j, "mapped");
		mt_json__begin_object(&j);
		json_plot(&j, &t->mapped, "mapped_bytes", false);
		json_series(&j, "program", t->mapped.part.v, t->mapped.npoints);
		mt_json__end_object(&j);
	}
	mt_json__end_object(&j);
	fputc('\n', f);
	return mt_json__error(&j);
}

/* ---- SVG ---- */

#define SVG_W 1400		/* the legend's rows fit: up to 20 characters of an exe's name */
#define SVG_H 520
#define PLOT_X0 90.0
#define PLOT_X1 930.0
#define PLOT_Y0 50.0
#define PLOT_Y1 440.0
#define MARK_Y 452.0		/* the row of fork/exec/exit marks, under the time axis */

#define SOLID ""
#define DASHED " stroke-dasharray=\"6,3\""	/* others */
#define DOTTED " stroke-dasharray=\"2,3\""	/* resident memory */
#define DASHDOT " stroke-dasharray=\"8,3,2,3\""	/* mapped: program + allocator */


struct tl_svg {
	FILE *f;
	const struct mt_timeline *t;
	double t_max;			/* ns at the right edge */
	double y_max;			/* bytes at the top: the heap's axis, on the left */
	double r_max;			/* RSS's and mapped's, on the right: their own, so that the heap's lines do not
					 * hug the axis */
	uint64_t t_step, y_step, r_step;	/* between the axes' ticks */
};

/* The byte axis in power-of-two steps (1 KiB, 2 KiB, ...), at most 4 of them to the top, which holds v. */
static uint64_t bytes_step(uint64_t v)
{
	uint64_t step = 1;

	while (step * 4 < v)
		step *= 2;
	return step;
}

/* The time axis in steps of 1, 2 or 5 times a power of ten nanoseconds, at most 5 of them to the end, t. */
static uint64_t time_step(uint64_t t)
{
	static const uint64_t m[] = { 1, 2, 5 };
	uint64_t p = 1;
	size_t i;

	for (;; p *= 10)
		for (i = 0; i < 3; i++)
			if (m[i] * p * 5 >= t)
				return m[i] * p;
}

static double sx(const struct tl_svg *g, uint64_t t)
{
	return PLOT_X0 + (PLOT_X1 - PLOT_X0) * (double)t / g->t_max;
}

static double sy(const struct tl_svg *g, uint64_t v)
{
	return PLOT_Y1 - (PLOT_Y1 - PLOT_Y0) * (double)v / g->y_max;
}

#define COLOR_MAX 24

/* A process's colour, from its pid alone: the same in every plot and in `memtrack view`'s page (pidColour). */
static const char *color_of(char buf[COLOR_MAX], uint32_t pid)
{
	snprintf(buf, COLOR_MAX, "hsl(%" PRIu32 ",65%%,42%%)", (uint32_t)((uint64_t)pid * 137 % 360));
	return buf;
}

/* A series as steps: 0 until its plot's first point, each value held until the next, the last until the end. */
static void svg_series(const struct tl_svg *g, const struct tl_plot *pl, const uint64_t *v, const char *color,
		       double width, const char *dash)
{
	double y = sy(g, 0);
	size_t i;

	fprintf(g->f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s points=\"%.1f,%.1f", color, width,
		dash, PLOT_X0, y);
	for (i = 0; i < pl->npoints; i++) {
		fprintf(g->f, " %.1f,%.1f", sx(g, pl->t_ns[i]), y);
		y = sy(g, v[i]);
		fprintf(g->f, " %.1f,%.1f", sx(g, pl->t_ns[i]), y);
	}
	fprintf(g->f, " %.1f,%.1f\"/>\n", sx(g, g->t->t_end), y);
}

/* A plot's lines, the total's last (on top): others dashed, each process in its colour, in dash. */
static void svg_lines(const struct tl_svg *g, const struct tl_plot *pl, double total_width, const char *dash)
{
	char c[COLOR_MAX];
	size_t i;

	if (pl->others.v)
		svg_series(g, pl, pl->others.v, "#888", 1.5, DASHED);
	for (i = pl->nprocs; i-- > 0;)
		svg_series(g, pl, pl->procs[i].v, color_of(c, pl->procs[i].pid), 1.5, dash);
	svg_series(g, pl, pl->total.v, "#000", total_width, dash);
}

static void svg_axes(const struct tl_svg *g)
{
	char h[MT_HUMAN_MAX];
	uint64_t v;
	double y;

	fprintf(g->f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"#fafafa\" stroke=\"#999\"/>\n",
		PLOT_X0, PLOT_Y0, PLOT_X1 - PLOT_X0, PLOT_Y1 - PLOT_Y0);
	for (v = 0; v <= g->y_max; v += g->y_step) {
		y = sy(g, v);
		fprintf(g->f, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", PLOT_X0, y,
			PLOT_X1, y);
		fprintf(g->f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", PLOT_X0 - 6, y + 4,
			mt_format__human(h, v));
	}
	for (v = 0; v <= g->t_max; v += g->t_step)
		fprintf(g->f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%g s</text>\n", sx(g, v),
			MARK_Y + 34, v / 1e9);
	fprintf(g->f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" fill=\"#555\">time since the start; marks: "
		"fork \xe2\x96\xb2 exec \xe2\x97\x86 exit \xe2\x96\xbc</text>\n", (PLOT_X0 + PLOT_X1) / 2, MARK_Y + 54);
}

static void svg_marks(const struct tl_svg *g)
{
	static const char *const colors[] = { "#2ca02c", "#1f77b4", "#d62728" };
	static const char *const shapes[] = { "l 5,9 l -10,0 z", "l 5,5 l -5,5 l -5,-5 z", "m -5,0 l 10,0 l -5,9 z" };
	const struct tl_event *e;
	size_t i;

	for (i = 0; i < g->t->nevents; i++) {
		e = &g->t->events[i];
		if (e->kind > TL_EXIT)
			continue;
		fprintf(g->f, "<path d=\"M %.1f,%.0f %s\" fill=\"%s\"><title>", sx(g, e->t), MARK_Y, shapes[e->kind],
			colors[e->kind]);
		if (e->kind == TL_FORK)
			fprintf(g->f, "fork: pid %" PRIu32 " → %" PRIu32, e->pid, e->child);
		else if (e->kind == TL_EXIT)
			fprintf(g->f, "exit: pid %" PRIu32, e->pid);
		else {
			fprintf(g->f, "exec: pid %" PRIu32 " ", e->pid);
			mt_text__put_xml(g->f, e->path, sizeof(e->path));
		}
		fprintf(g->f, " at %.6f s</title></path>\n", e->t / 1e9);
	}
}

/* A paused span (recording off: no allocation recorded) from a stop to the next start, or to the end. */
static void svg_paused(const struct tl_svg *g, uint64_t from, uint64_t to)
{
	fprintf(g->f, "<rect class=\"paused\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%.0f\" fill=\"#999\" "
		"fill-opacity=\"0.2\"><title>paused from %.6f s to %.6f s</title></rect>\n", sx(g, from), PLOT_Y0,
		sx(g, to) - sx(g, from), PLOT_Y1 - PLOT_Y0, from / 1e9, to / 1e9);
}

/* The control FIFO's lines: paused spans shaded, each `mark LABEL` a dashed line with its label. */
static void svg_control(const struct tl_svg *g)
{
	const struct tl_event *e;
	uint64_t stop = 0;
	bool paused = false, seen = false;	/* a first start with no stop before: record --paused, off from 0 */
	size_t i;

	for (i = 0; i < g->t->nevents; i++) {
		e = &g->t->events[i];
		if (e->kind == TL_STOP && !paused)
			stop = e->t, paused = true;
		else if (e->kind == TL_START && (paused || !seen))
			svg_paused(g, stop, e->t), paused = false;
		seen |= e->kind == TL_START || e->kind == TL_STOP;
		if (e->kind != TL_MARK)
			continue;
		fprintf(g->f, "<line class=\"mark\" x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#555\"%s/>\n"
			"<text x=\"%.1f\" y=\"%.0f\" font-size=\"10\" fill=\"#555\">", sx(g, e->t), PLOT_Y0, sx(g, e->t),
			PLOT_Y1, DASHED, sx(g, e->t) + 2, PLOT_Y0 + 10);
		mt_text__put_xml(g->f, e->path, sizeof(e->path));
		fputs("</text>\n", g->f);
	}
	if (paused)
		svg_paused(g, stop, g->t->t_end);
}

/* A legend row: the series' line, its label (and exe's base name, the whole path on hover), its peak unless 0. */
static void svg_legend_row(const struct tl_svg *g, size_t row, const char *color, double width, const char *dash,
			   const char *label, const char *exe, uint64_t peak)
{
	double y = PLOT_Y0 + 8 + row * 20.0;
	const char *base = exe && strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	char h[MT_HUMAN_MAX];

	fprintf(g->f, "<line x1=\"1010\" y1=\"%.0f\" x2=\"1035\" y2=\"%.0f\" stroke=\"%s\" stroke-width=\"%g\"%s/>\n",
		y, y, color, width, dash);
	fprintf(g->f, "<text x=\"1042\" y=\"%.0f\">%s", y + 4, label);
	if (exe) {
		fputc(' ', g->f);
		mt_text__put_xml(g->f, base[0] ? base : "?", 20);
	}
	if (peak)
		fprintf(g->f, " (peak %s)", mt_format__human(h, peak));
	if (exe && exe[0]) {
		fputs("<title>", g->f);
		mt_text__put_xml(g->f, exe, MT_PATH_MAX);
		fputs("</title>", g->f);
	}
	fputs("</text>\n", g->f);
}

/* The heap's legend: the total, each process drawn apart, others; the rows after it are free. */
static size_t svg_legend(const struct tl_svg *g)
{
	const struct tl_plot *h = &g->t->heap;
	char label[32], c[COLOR_MAX];
	size_t i;

	svg_legend_row(g, 0, "#000", 2.5, SOLID, "total", NULL, h->total.peak);
	for (i = 0; i < h->nprocs; i++) {
		snprintf(label, sizeof(label), "pid %" PRIu32, h->procs[i].pid);
		svg_legend_row(g, i + 1, color_of(c, h->procs[i].pid), 2.5, SOLID, label, h->procs[i].exe,
			       h->procs[i].peak);
	}
	if (h->others.v)
		svg_legend_row(g, h->nprocs + 1, "#888", 2.5, DASHED, "others", NULL, 0);
	return h->nprocs + 1 + (h->others.v != NULL);
}

static void svg_peak(const struct tl_svg *g)
{
	double x = sx(g, g->t->heap.peak_ts), y = sy(g, g->t->heap.total.peak);
	char h[MT_HUMAN_MAX];

	mt_format__human(h, g->t->heap.total.peak);
	fprintf(g->f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\">"
		"<title>peak: %s at %.6f s</title></circle>\n", x, y, h, g->t->heap.peak_ts / 1e9);
	fprintf(g->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" fill=\"#d62728\">peak %s at %.3f s</text>\n",
		x + (x > (PLOT_X0 + PLOT_X1) / 2 ? -8 : 8), y - 8 < PLOT_Y0 + 12 ? PLOT_Y0 + 12 : y - 8,
		x > (PLOT_X0 + PLOT_X1) / 2 ? "end" : "start", h, g->t->heap.peak_ts / 1e9);
}

/* The right axis's labels, when RSS or mapped is drawn on it. */
static void svg_right_axis(const struct tl_svg *g, const struct tl_svg *rg)
{
	char h[MT_HUMAN_MAX];
	uint64_t v;

	if (!g->t->rss.nsamples && !g->t->mapped.nsamples)
		return;
	for (v = 0; v <= rg->y_max; v += g->r_step)
		fprintf(g->f, "<text x=\"%.0f\" y=\"%.1f\" fill=\"#2060c0\">%s</text>\n", PLOT_X1 + 6,
			sy(rg, v) + 4, mt_format__human(h, v));
}

/*
 * The RSS lines dotted and the mapped ones dash-dotted, on the right axis, over the heap's (in the processes'
 * colours), and their legend from row `row` on.
 */
static void svg_side(const struct tl_svg *g, size_t row)
{
	const struct tl_plot *r = &g->t->rss, *mp = &g->t->mapped;
	struct tl_svg rg = *g;

	rg.y_max = g->r_max;
	svg_right_axis(g, &rg);
	if (mp->nsamples) {
		svg_lines(&rg, mp, 2.0, DASHDOT);
		svg_series(&rg, mp, mp->part.v, "#888", 1.5, DASHDOT);
		svg_legend_row(g, row++, "#000", 2.0, DASHDOT, "mapped total", NULL, mp->total.peak);
		svg_legend_row(g, row++, "#888", 1.5, DASHDOT, "of which the program's", NULL, 0);
	}
	if (r->nsamples) {
		svg_lines(&rg, r, 2.0, DOTTED);
		svg_legend_row(g, row++, "#000", 2.0, DOTTED, "RSS total", NULL, r->total.peak);
	}
	if (mp->nsamples)
		svg_legend_row(g, row++, "#000", 2.0, DASHDOT, "dash-dot: mapped (right axis), per pid", NULL, 0);
	if (r->nsamples)
		svg_legend_row(g, row, "#000", 2.0, DOTTED, "dotted: RSS (right axis), per pid", NULL, 0);
}

int mt_timeline__svg(FILE *f, const struct mt_timeline *t, const char *title)
{
	uint64_t r_peak = t->rss.total.peak > t->mapped.total.peak ? t->rss.total.peak : t->mapped.total.peak;
	struct tl_svg g = { .f = f, .t = t, .y_step = bytes_step(t->heap.total.peak), .t_step = time_step(t->t_end),
			    .r_step = bytes_step(r_peak) };

	/* the top: the tick above the peak, or the next one when the peak sits on it (room for its label) */
	g.y_max = (double)((t->heap.total.peak / g.y_step + 1) * g.y_step);
	g.r_max = (double)((r_peak / g.r_step + 1) * g.r_step);
	g.t_max = (double)((t->t_end + g.t_step - 1) / g.t_step * g.t_step);
	g.t_max = g.t_max ? g.t_max : 1.0;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-family=\"Verdana, sans-serif\" font-size=\"12\">\n", SVG_W, SVG_H, SVG_W, SVG_H);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"%d\" y=\"28\" "
		"text-anchor=\"middle\" font-size=\"16\">", SVG_W / 2);
	mt_text__put_xml(f, title, SIZE_MAX);
	fputs("</text>\n", f);
	svg_axes(&g);
	svg_control(&g);
	svg_lines(&g, &t->heap, 2.5, SOLID);
	svg_peak(&g);
	svg_marks(&g);
	svg_side(&g, svg_legend(&g));
	fputs("</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}
