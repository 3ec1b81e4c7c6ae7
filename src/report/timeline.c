// SPDX-License-Identifier: GPL-2.0-only
/* timeline.c — live heap bytes over time from the model, record by record: the series and their JSON. */
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
#include "report/timeline_internal.h"
#include "model/replay.h"

/* What an executable's line knows of a process: the line it counts in, with how many bytes. */
struct tl_exe_proc {
	size_t exe;
	uint64_t live;
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
	bool exes;			/* opts.exes: pass two fills t->exes */
	struct mt_u64map exe_procs;	/* model process → its index in exe_proc */
	struct tl_exe_proc *exe_proc;
	size_t nexe_proc, cap_exe_proc;
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
	size_t i;

	if (!t)
		return;
	tl_plot_release(&t->heap);
	tl_plot_release(&t->rss);
	tl_plot_release(&t->mapped);
	for (i = 0; i < t->nexes; i++)
		free(t->exes[i].v);
	free(t->exes);
	free(t->events);
	mt_metadata__free(t->md);
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

/* ---- an executable's line (opts.exes): a big tree's processes grouped, sample by sample as the processes' ---- */

/*
 * The index of exe's line in t->exes, a new one (zero until now) the first time. SIZE_MAX on ENOMEM. A scan: it is
 * looked up at a process's first record and at its execs only, and a tree runs few executables.
 */
static size_t tl_exe_of(struct mt_timeline *t, const char *exe)
{
	size_t i;

	for (i = 0; i < t->nexes; i++)
		if (!strncmp(t->exes[i].exe, exe, sizeof(t->exes[i].exe)))
			return i;
	if (mt_array__grow((void **)&t->exes, &t->cap_exes, t->nexes, sizeof(*t->exes)))
		return SIZE_MAX;
	memset(&t->exes[t->nexes], 0, sizeof(*t->exes));
	t->exes[t->nexes].v = calloc(t->heap.cap ? t->heap.cap : 1, sizeof(uint64_t));
	if (!t->exes[t->nexes].v)
		return SIZE_MAX;
	snprintf(t->exes[t->nexes].exe, sizeof(t->exes[t->nexes].exe), "%s", exe);
	return t->nexes++;
}

/* The record's process (a fork's child) counted in its current image's line now, with its bytes now. 0, -ENOMEM. */
static int tl_exe_track(struct tl_pass *p, const struct mt_rec_hdr *rec, const struct mt_model *m)
{
	const struct mt_proc *proc;
	struct tl_exe_proc *ep;
	uint64_t *k;
	size_t exe = SIZE_MAX;

	if (rec->type == MT_REC_FORK && rec->size >= sizeof(struct mt_fork))
		proc = mt_model__find_proc(m, ((const struct mt_fork *)rec)->child);
	else if (rec->type == MT_REC_ALLOC || rec->type == MT_REC_EXEC || rec->type == MT_REC_EXIT)
		proc = mt_model__find_proc(m, rec->pid);
	else
		return 0;
	if (!proc)
		return 0;
	k = mt_u64map__find(&p->exe_procs, (uintptr_t)proc);
	if (!k) {
		if (mt_array__grow((void **)&p->exe_proc, &p->cap_exe_proc, p->nexe_proc, sizeof(*p->exe_proc)) ||
		    mt_u64map__put(&p->exe_procs, (uintptr_t)proc, p->nexe_proc, NULL) < 0)
			return -ENOMEM;
		p->exe_proc[p->nexe_proc] = (struct tl_exe_proc){ SIZE_MAX, 0 };
		k = mt_u64map__find(&p->exe_procs, (uintptr_t)proc);
		p->nexe_proc++;
	}
	ep = &p->exe_proc[*k];
	exe = ep->exe == SIZE_MAX || rec->type == MT_REC_EXEC ? tl_exe_of(p->t, proc->exe) : ep->exe;
	if (exe == SIZE_MAX)
		return -ENOMEM;
	if (ep->exe != SIZE_MAX)
		p->t->exes[ep->exe].live -= ep->live;
	if (ep->exe != exe)
		p->t->exes[exe].procs++;
	ep->exe = exe;
	ep->live = tl_heap_of(p, proc);
	p->t->exes[exe].live += ep->live;
	return 0;
}

/* What pass two kept to fill the executables' lines. */
static void tl_exes_release(struct tl_pass *p)
{
	mt_u64map__release(&p->exe_procs);
	free(p->exe_proc);
	p->exe_proc = NULL;
}

/* A heap sample: each executable's bytes now in its point, as tl_fill puts the processes'. */
static void tl_exe_fill(struct mt_timeline *t, bool first)
{
	size_t i;

	for (i = 0; i < t->nexes; i++) {
		point_put(t->exes[i].v, t->heap.npoints - 1, first, t->exes[i].live);
		if (t->exes[i].live > t->exes[i].peak)
			t->exes[i].peak = t->exes[i].live;
	}
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
	if (pl == &p->t->heap)
		tl_exe_fill(p->t, first);
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
	if (p->exes && tl_exe_track(p, rec, m))
		return -ENOMEM;
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
	p->t->leaked_allocations = mt_model__totals(mt_replay__model(r))->heap.leaked_allocations;
	p->t->leaked_bytes = mt_model__totals(mt_replay__model(r))->heap.leaked_bytes;
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

/* The leaks sup suppresses, out of the leaked ones (report's rule, mt_suppressions__dir_total's count). */
static void tl_suppressed(struct mt_timeline *t, const char *path, const struct mt_filter *f,
			  const struct mt_suppressions *sup)
{
	t->leaks = sup != NULL;
	if (!sup || !t->leaked_allocations)
		return;
	mt_suppressions__dir_total(path, f, sup, &t->suppressed_allocations, &t->suppressed_bytes);
	t->leaked_allocations -= t->suppressed_allocations;
	t->leaked_bytes -= t->suppressed_bytes;
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
	p.exes = o && o->exes;
	err = build_first(path, o, &p, st);
	if (err && err != -EBADMSG)
		goto err_free;
	tl_suppressed(p.t, path, p.f, o ? o->sup : NULL);
	p.t->md = mt_metadata__load(path, "the timeline has no labels");
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
	tl_exes_release(&p);
	if (p.between && p.span != 2) {
		err = tl_span_missing(&p, st);
		goto err_free;
	}
	*out = p.t;
	return err;

err_free:
	mt_u64map__release(&p.last);
	tl_exes_release(&p);
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

/* With opts.exes: "executables": [{"exe", "processes", "peak_bytes", "live_bytes"}], in the order first run. */
static void json_exes(struct mt_json *j, const struct mt_timeline *t)
{
	size_t i;

	if (!t->exes)
		return;
	mt_json__key(j, "executables");
	mt_json__begin_array(j);
	for (i = 0; i < t->nexes; i++) {
		mt_json__begin_object(j);
		mt_json__kv_string(j, "exe", t->exes[i].exe);
		mt_json__kv_u64(j, "processes", t->exes[i].procs);
		mt_json__kv_u64(j, "peak_bytes", t->exes[i].peak);
		json_series(j, "live_bytes", t->exes[i].v, t->heap.npoints);
		mt_json__end_object(j);
	}
	mt_json__end_array(j);
}

/* What leaked at exit as report counts it, and the suppressed share, when they were counted. */
static void json_leaks(struct mt_json *j, const struct mt_timeline *t)
{
	if (!t->leaks)
		return;
	mt_json__kv_u64(j, "leaked_allocations", t->leaked_allocations);
	mt_json__kv_u64(j, "leaked_bytes", t->leaked_bytes);
	mt_json__kv_u64(j, "suppressed_allocations", t->suppressed_allocations);
	mt_json__kv_u64(j, "suppressed_bytes", t->suppressed_bytes);
}

int mt_timeline__json(FILE *f, const struct mt_timeline *t)
{
	struct mt_json j;

	mt_json__init(&j, f, 0);
	mt_json__begin_object(&j);
	json_plot(&j, &t->heap, "live_bytes", true);
	json_leaks(&j, t);
	if (mt_metadata__labels(t->md)->n)
		mt_labels__json(&j, mt_metadata__labels(t->md));
	json_exes(&j, t);
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
