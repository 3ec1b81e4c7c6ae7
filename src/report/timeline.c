/* timeline.c — live heap bytes over time from the model, record by record: the series, their JSON and an SVG. */
/*
 * The live bytes are the model's (src/model: inherited blocks count in each holder, an exec discards, libc's own
 * releases are no frees), read after each record through a replay (unwind/replay.h). Pass one counts the samples,
 * their time range and the fork/exec/exit events, and ends with each process's peak, which picks the processes
 * drawn apart; pass two fills the points.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/json.h"
#include "common/text.h"
#include "common/u64map.h"
#include "report/report.h"
#include "report/timeline.h"
#include "unwind/replay.h"

enum tl_kind { TL_FORK, TL_EXEC, TL_EXIT };

struct tl_event {
	uint64_t t;
	uint32_t pid;
	uint32_t child;			/* TL_FORK */
	enum tl_kind kind;
	char path[MT_PATH_MAX];		/* TL_EXEC */
};

struct tl_series {
	size_t model_index;
	uint32_t pid;
	char exe[MT_PATH_MAX];
	uint64_t peak;
	uint64_t *live;
};

struct mt_timeline {
	size_t npoints;
	uint64_t *t_ns;
	uint64_t *total;
	uint64_t *others;		/* NULL: every process with blocks is drawn apart */
	struct tl_series *procs;
	size_t nprocs;
	uint64_t peak_bytes, peak_ts;
	struct tl_event *events;
	size_t nevents, cap_events;
	uint64_t t_end;			/* the last sample's or event's time */
	struct tl_rss *rss;		/* NULL: the recording has no RSS records */
};

/* Resident memory over time (MT_REC_RSS records), on points of its own: the total, and each process drawn apart. */
struct tl_rss {
	size_t npoints, cap;
	uint64_t *t_ns;
	uint64_t *total;
	uint64_t **procs;		/* per t->procs, its RSS at each point */
	size_t nprocs;
	uint64_t peak_bytes, peak_ts;
	uint64_t samples, nsamples;	/* so far; pass one's count */
	uint64_t t_first, t_last;	/* of the samples (pass one) */
	size_t point;			/* pass two: the point being filled, + 1 (0: none yet) */
};

/* What a pass keeps between records. */
struct tl_pass {
	struct mt_timeline *t;
	struct mt_u64map last;		/* model process → its live bytes at the last sample */
	uint64_t last_total;
	uint64_t samples;		/* so far */
	uint64_t t_first, t_last;	/* of the samples (pass one) */
	size_t max_points;
	size_t cap;			/* pass two: the points there is room for */
	bool bucketed;			/* pass two: more samples than points */
	uint64_t nsamples;		/* pass two: pass one's count */
	size_t point;			/* pass two: the point being filled, + 1 (0: none yet) */
	const char *const *between;	/* --between's marks, or NULL */
	int span;			/* with them: 0 before mark A, 1 from it, 2 from mark B on */
	struct tl_rss rss;		/* pass one's count, copied to t->rss when there is any */
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

static void tl_rss_release(struct tl_rss *r)
{
	size_t i;

	for (i = 0; r->procs && i < r->nprocs; i++)
		free(r->procs[i]);
	free(r->procs);
	free(r->t_ns);
	free(r->total);
}

static void tl_rss_free(struct tl_rss *r)
{
	if (r)
		tl_rss_release(r);
	free(r);
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
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nprocs; i++)
		free(t->procs[i].live);
	free(t->procs);
	free(t->t_ns);
	free(t->total);
	free(t->others);
	free(t->events);
	tl_rss_free(t->rss);
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
	} else {
		e->kind = TL_EXIT;
	}
	t->t_end = ts > t->t_end ? ts : t->t_end;
	return 0;
}

/* ---- resident memory: a sample at each RSS record, and at each exit once there was one ---- */

static void point_put(uint64_t *v, size_t i, bool first, uint64_t x);

static bool tl_rss_sample(const struct mt_rec_hdr *rec, const struct mt_model *m)
{
	return (rec->type == MT_REC_RSS || rec->type == MT_REC_EXIT) && mt_model__totals(m)->rss.records;
}

static void tl_rss_count(struct tl_pass *p, const struct mt_rec_hdr *rec, const struct mt_model *m, uint64_t ts)
{
	if (!tl_rss_sample(rec, m))
		return;
	if (!p->rss.samples++)
		p->rss.t_first = ts;
	p->rss.t_last = ts;
	p->t->t_end = ts > p->t->t_end ? ts : p->t->t_end;
}

/* Room for pass two's points of the processes drawn apart, and the model's peak; t->rss stays NULL without any. */
static int tl_rss_alloc(struct tl_pass *p, const struct mt_model *m, size_t max_points)
{
	struct tl_rss *r;
	size_t i, n;

	if (!p->rss.samples)
		return 0;
	r = p->t->rss = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	*r = p->rss;
	r->nsamples = r->samples;
	r->samples = 0;
	r->cap = n = r->nsamples > max_points ? max_points : r->nsamples;
	r->nprocs = p->t->nprocs;
	r->peak_bytes = mt_model__totals(m)->rss.peak_rss_bytes;
	r->peak_ts = mt_model__totals(m)->rss.peak_rss_ts_ns;
	r->t_ns = calloc(n, sizeof(uint64_t));
	r->total = calloc(n, sizeof(uint64_t));
	r->procs = calloc(r->nprocs ? r->nprocs : 1, sizeof(*r->procs));
	if (!r->t_ns || !r->total || !r->procs)
		return -ENOMEM;
	for (i = 0; i < r->nprocs; i++)
		if (!(r->procs[i] = calloc(n, sizeof(uint64_t))))
			return -ENOMEM;
	return 0;
}

/* The point a sample goes to: its own, or its time's bucket when there are more samples than points. */
static size_t tl_rss_point_of(const struct tl_rss *r, uint64_t ts)
{
	if (r->nsamples <= r->cap)
		return r->samples;
	ts = ts < r->t_first ? r->t_first : ts;
	return (size_t)((unsigned __int128)(ts - r->t_first) * r->cap / (r->t_last - r->t_first + 1));
}

static void tl_rss_fill(struct tl_pass *p, const struct mt_rec_hdr *rec, const struct mt_model *m, uint64_t ts)
{
	struct tl_rss *r = p->t->rss;
	const struct mt_proc *proc;
	uint64_t total;
	size_t i, at;
	bool first;

	if (!r || !tl_rss_sample(rec, m) || r->samples >= r->nsamples)
		return;
	at = tl_rss_point_of(r, ts);
	r->samples++;
	first = (!r->point || r->point - 1 != at) && r->npoints < r->cap;
	if (first) {
		r->point = at + 1;
		r->t_ns[r->npoints++] = ts;
	}
	total = mt_model__totals(m)->rss.rss_bytes;
	point_put(r->total, r->npoints - 1, first, total);
	if (p->between && (r->samples == 1 || total > r->peak_bytes)) {	/* the span's own peak */
		r->peak_bytes = total;
		r->peak_ts = ts;
	}
	for (i = 0; i < r->nprocs; i++) {
		proc = mt_model__proc(m, p->t->procs[i].model_index);
		point_put(r->procs[i], r->npoints - 1, first, proc ? proc->rss.rss_bytes : 0);
	}
}

static int pass_one(const struct mt_rec_hdr *rec, const struct mt_replay *r, void *ctx)
{
	struct tl_pass *p = ctx;
	uint64_t ts = mt_replay__rel_ts(r, rec->ts_ns);
	int err;

	if (!tl_in_span(p, rec) || !mt_filter__in_window(p->f, ts))
		return 0;
	if ((rec->type == MT_REC_FORK || rec->type == MT_REC_EXEC || rec->type == MT_REC_EXIT) &&
	    tl_event_taken(p, rec, mt_replay__model(r))) {
		err = tl_event(p->t, rec, ts);
		if (err)
			return err;
	}
	tl_rss_count(p, rec, mt_replay__model(r), ts);
	if (!tl_changed(p, rec, mt_replay__model(r)))
		return 0;
	if (!p->samples++)
		p->t_first = ts;
	p->t_last = ts;
	p->t->t_end = ts > p->t->t_end ? ts : p->t->t_end;
	return 0;
}

/* The point a sample goes to: its own, or its time's bucket. */
static size_t point_of(const struct tl_pass *p, uint64_t ts)
{
	uint64_t span = p->t_last - p->t_first + 1;

	if (!p->bucketed)
		return p->samples;
	if (ts < p->t_first)
		ts = p->t_first;
	return (size_t)((unsigned __int128)(ts - p->t_first) * p->max_points / span);
}

static void point_put(uint64_t *v, size_t i, bool first, uint64_t x)
{
	if (first || x > v[i])
		v[i] = x;
}

static int pass_two(const struct mt_rec_hdr *rec, const struct mt_replay *r, void *ctx)
{
	struct tl_pass *p = ctx;
	struct mt_timeline *t = p->t;
	const struct mt_model *m = mt_replay__model(r);
	uint64_t ts = mt_replay__rel_ts(r, rec->ts_ns), sum = 0, live, total;
	size_t i, at;
	bool first;

	if (!tl_in_span(p, rec) || !mt_filter__in_window(p->f, ts))
		return 0;
	tl_rss_fill(p, rec, m, ts);
	if (!tl_changed(p, rec, m) || p->samples >= p->nsamples)
		return 0;
	at = point_of(p, ts);
	p->samples++;
	/* a record later than the reorder window could absorb may fall in an earlier bucket: the last point takes it */
	first = (!p->point || p->point - 1 != at) && t->npoints < p->cap;
	if (first) {
		p->point = at + 1;
		t->t_ns[t->npoints++] = ts;
	}
	total = mt_model__totals(m)->heap.live_bytes;
	point_put(t->total, t->npoints - 1, first, total);
	if (p->between && (p->samples == 1 || total > t->peak_bytes)) {	/* the span's own peak */
		t->peak_bytes = total;
		t->peak_ts = ts;
	}
	for (i = 0; i < t->nprocs; i++) {
		live = t->procs[i].model_index < mt_model__nr_procs(m) &&
		       tl_takes(p, mt_model__proc(m, t->procs[i].model_index)) ?
		       mt_model__proc(m, t->procs[i].model_index)->heap.live_bytes : 0;
		sum += live;
		point_put(t->procs[i].live, t->npoints - 1, first, live);
	}
	if (t->others)
		point_put(t->others, t->npoints - 1, first, total - sum);
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
static int pick_procs(struct mt_timeline *t, const struct mt_model *m, const uint64_t *peak, size_t top, bool *more)
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
	t->procs = v;
	t->nprocs = k < top ? k : top;
	t->peak_bytes = mt_model__totals(m)->heap.peak_live_bytes;
	t->peak_ts = mt_model__totals(m)->heap.peak_ts_ns;
	return 0;
}

static int series_alloc(struct mt_timeline *t, size_t n, bool others)
{
	size_t i;

	t->t_ns = calloc(n ? n : 1, sizeof(uint64_t));
	t->total = calloc(n ? n : 1, sizeof(uint64_t));
	t->others = others ? calloc(n ? n : 1, sizeof(uint64_t)) : NULL;
	if (!t->t_ns || !t->total || (others && !t->others))
		return -ENOMEM;
	for (i = 0; i < t->nprocs; i++)
		if (!(t->procs[i].live = calloc(n ? n : 1, sizeof(uint64_t))))
			return -ENOMEM;
	return 0;
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
		aerr = pick_procs(p->t, mt_replay__model(r), peak, o && o->top ? o->top : MT_TIMELINE_TOP, &more);
	free(peak);
	if (!aerr)
		aerr = tl_rss_alloc(p, mt_replay__model(r), p->max_points);
	mt_replay__free(r);
	p->nsamples = p->samples;
	p->bucketed = p->samples > p->max_points;
	p->cap = p->bucketed ? p->max_points : p->samples;
	if (!aerr)
		aerr = series_alloc(p->t, p->cap, more);
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
	p.samples = 0;
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
	static const char *const names[] = { "fork", "exec", "exit" };
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
		mt_json__end_object(j);
	}
	mt_json__end_array(j);
}

/* "rss": its own points, the total, the processes drawn apart (in the same order), the total's peak. */
static void json_rss(struct mt_json *j, const struct mt_timeline *t)
{
	const struct tl_rss *r = t->rss;
	size_t i;

	if (!r)
		return;
	mt_json__key(j, "rss");
	mt_json__begin_object(j);
	json_series(j, "t_ns", r->t_ns, r->npoints);
	json_series(j, "total", r->total, r->npoints);
	mt_json__key(j, "processes");
	mt_json__begin_array(j);
	for (i = 0; i < r->nprocs; i++) {
		mt_json__begin_object(j);
		mt_json__kv_u64(j, "pid", t->procs[i].pid);
		json_series(j, "rss_bytes", r->procs[i], r->npoints);
		mt_json__end_object(j);
	}
	mt_json__end_array(j);
	mt_json__key(j, "peak");
	mt_json__begin_object(j);
	mt_json__kv_u64(j, "t_ns", r->peak_ts);
	mt_json__kv_u64(j, "bytes", r->peak_bytes);
	mt_json__end_object(j);
	mt_json__end_object(j);
}

int mt_timeline__json(FILE *f, const struct mt_timeline *t)
{
	struct mt_json j;
	size_t i;

	mt_json__init(&j, f, 0);
	mt_json__begin_object(&j);
	json_series(&j, "t_ns", t->t_ns, t->npoints);
	json_series(&j, "total", t->total, t->npoints);
	mt_json__key(&j, "processes");
	mt_json__begin_array(&j);
	for (i = 0; i < t->nprocs; i++) {
		mt_json__begin_object(&j);
		mt_json__kv_u64(&j, "pid", t->procs[i].pid);
		mt_json__kv_string_n(&j, "exe", t->procs[i].exe, sizeof(t->procs[i].exe));
		mt_json__kv_u64(&j, "peak_bytes", t->procs[i].peak);
		json_series(&j, "live_bytes", t->procs[i].live, t->npoints);
		mt_json__end_object(&j);
	}
	mt_json__end_array(&j);
	if (t->others)
		json_series(&j, "others", t->others, t->npoints);
	mt_json__key(&j, "peak");
	mt_json__begin_object(&j);
	mt_json__kv_u64(&j, "t_ns", t->peak_ts);
	mt_json__kv_u64(&j, "bytes", t->peak_bytes);
	mt_json__end_object(&j);
	json_events(&j, t);
	json_rss(&j, t);
	mt_json__end_object(&j);
	fputc('\n', f);
	return mt_json__error(&j);
}

/* ---- SVG ---- */

#define SVG_W 1200
#define SVG_H 520
#define PLOT_X0 90.0
#define PLOT_X1 930.0
#define PLOT_Y0 50.0
#define PLOT_Y1 440.0
#define MARK_Y 452.0		/* the row of fork/exec/exit marks, under the time axis */

static const char *const palette[] = { "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
				       "#e377c2", "#bcbd22", "#17becf" };

struct tl_svg {
	FILE *f;
	const struct mt_timeline *t;
	double t_max;			/* ns at the right edge */
	double y_max;			/* bytes at the top */
	uint64_t t_step, y_step;	/* between the axes' ticks */
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

/* A series as steps: 0 until its first point, each value held until the next, the last until the end. */
static void svg_series(const struct tl_svg *g, const uint64_t *v, const char *color, double width, bool dashed)
{
	const struct mt_timeline *t = g->t;
	double y = sy(g, 0);
	size_t i;

	fprintf(g->f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s points=\"%.1f,%.1f", color, width,
		dashed ? " stroke-dasharray=\"6,3\"" : "", PLOT_X0, y);
	for (i = 0; i < t->npoints; i++) {
		fprintf(g->f, " %.1f,%.1f", sx(g, t->t_ns[i]), y);
		y = sy(g, v[i]);
		fprintf(g->f, " %.1f,%.1f", sx(g, t->t_ns[i]), y);
	}
	fprintf(g->f, " %.1f,%.1f\"/>\n", sx(g, t->t_end), y);
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
			mt_report__human(h, v));
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

/* A legend row: the series' line, its label (and exe's base name, the whole path on hover), its peak unless 0. */
static void svg_legend_row(const struct tl_svg *g, size_t row, const char *color, bool dashed, const char *label,
			   const char *exe, uint64_t peak)
{
	double y = PLOT_Y0 + 8 + row * 20.0;
	const char *base = exe && strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	char h[MT_HUMAN_MAX];

	fprintf(g->f, "<line x1=\"950\" y1=\"%.0f\" x2=\"975\" y2=\"%.0f\" stroke=\"%s\" stroke-width=\"2.5\"%s/>\n",
		y, y, color, dashed ? " stroke-dasharray=\"6,3\"" : "");
	fprintf(g->f, "<text x=\"982\" y=\"%.0f\">%s", y + 4, label);
	if (exe) {
		fputc(' ', g->f);
		mt_text__put_xml(g->f, base[0] ? base : "?", 32);
	}
	if (peak)
		fprintf(g->f, " (peak %s)", mt_report__human(h, peak));
	if (exe && exe[0]) {
		fputs("<title>", g->f);
		mt_text__put_xml(g->f, exe, MT_PATH_MAX);
		fputs("</title>", g->f);
	}
	fputs("</text>\n", g->f);
}

static void svg_peak(const struct tl_svg *g)
{
	double x = sx(g, g->t->peak_ts), y = sy(g, g->t->peak_bytes);
	char h[MT_HUMAN_MAX];

	mt_report__human(h, g->t->peak_bytes);
	fprintf(g->f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\">"
		"<title>peak: %s at %.6f s</title></circle>\n", x, y, h, g->t->peak_ts / 1e9);
	fprintf(g->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" fill=\"#d62728\">peak %s at %.3f s</text>\n",
		x + (x > (PLOT_X0 + PLOT_X1) / 2 ? -8 : 8), y - 8 < PLOT_Y0 + 12 ? PLOT_Y0 + 12 : y - 8,
		x > (PLOT_X0 + PLOT_X1) / 2 ? "end" : "start", h, g->t->peak_ts / 1e9);
}

/* RSS as steps on its own points, dotted: 0 until its first point, each value held until the next. */
static void svg_rss_series(const struct tl_svg *g, const uint64_t *v, const char *color, double width)
{
	const struct tl_rss *r = g->t->rss;
	double y = sy(g, 0);
	size_t i;

	fprintf(g->f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\" stroke-dasharray=\"2,3\" "
		"points=\"%.1f,%.1f", color, width, PLOT_X0, y);
	for (i = 0; i < r->npoints; i++) {
		fprintf(g->f, " %.1f,%.1f", sx(g, r->t_ns[i]), y);
		y = sy(g, v[i]);
		fprintf(g->f, " %.1f,%.1f", sx(g, r->t_ns[i]), y);
	}
	fprintf(g->f, " %.1f,%.1f\"/>\n", sx(g, g->t->t_end), y);
}

/* A legend row with a dotted line: an RSS one. */
static void svg_rss_legend_row(const struct tl_svg *g, size_t row, const char *text, uint64_t peak)
{
	double y = PLOT_Y0 + 8 + row * 20.0;
	char h[MT_HUMAN_MAX];

	fprintf(g->f, "<line x1=\"950\" y1=\"%.0f\" x2=\"975\" y2=\"%.0f\" stroke=\"#000\" stroke-width=\"2\" "
		"stroke-dasharray=\"2,3\"/>\n<text x=\"982\" y=\"%.0f\">%s", y, y, y + 4, text);
	if (peak)
		fprintf(g->f, " (peak %s)", mt_report__human(h, peak));
	fputs("</text>\n", g->f);
}

/* The RSS lines under the heap's, in the same colours, and their legend from row `row` on. */
static void svg_rss(const struct tl_svg *g, size_t row)
{
	const struct tl_rss *r = g->t->rss;
	size_t i;

	if (!r)
		return;
	for (i = r->nprocs; i-- > 0;)
		svg_rss_series(g, r->procs[i], palette[i % (sizeof(palette) / sizeof(palette[0]))], 1.5);
	svg_rss_series(g, r->total, "#000", 2.0);
	svg_rss_legend_row(g, row, "RSS total", r->peak_bytes);
	svg_rss_legend_row(g, row + 1, "dotted: RSS, per pid in its colour", 0);
}

/* The top of the byte axis's scale: the heap's peak, or RSS's when higher. */
static uint64_t svg_top(const struct mt_timeline *t)
{
	return t->rss && t->rss->peak_bytes > t->peak_bytes ? t->rss->peak_bytes : t->peak_bytes;
}

int mt_timeline__svg(FILE *f, const struct mt_timeline *t, const char *title)
{
	struct tl_svg g = { .f = f, .t = t, .y_step = bytes_step(svg_top(t)), .t_step = time_step(t->t_end) };
	char label[32];
	size_t i;

	/* the top: the tick above the peak, or the next one when the peak sits on it (room for its label) */
	g.y_max = (double)((svg_top(t) / g.y_step + 1) * g.y_step);
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
	if (t->others)
		svg_series(&g, t->others, "#888", 1.5, true);
	for (i = t->nprocs; i-- > 0;)
		svg_series(&g, t->procs[i].live, palette[i % (sizeof(palette) / sizeof(palette[0]))], 1.5, false);
	svg_series(&g, t->total, "#000", 2.5, false);
	svg_peak(&g);
	svg_marks(&g);
	svg_legend_row(&g, 0, "#000", false, "total", NULL, t->peak_bytes);
	for (i = 0; i < t->nprocs; i++) {
		snprintf(label, sizeof(label), "pid %" PRIu32, t->procs[i].pid);
		svg_legend_row(&g, i + 1, palette[i % (sizeof(palette) / sizeof(palette[0]))], false, label,
			       t->procs[i].exe, t->procs[i].peak);
	}
	if (t->others)
		svg_legend_row(&g, t->nprocs + 1, "#888", true, "others", NULL, 0);
	svg_rss(&g, t->nprocs + 1 + (t->others != NULL));
	fputs("</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}
