// SPDX-License-Identifier: GPL-2.0-only
/* window.c — the model's time window (--from/--to, --between A B): counts at its start and end, peaks inside. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "model/filter.h"
#include "model/model_internal.h"

bool mt_window__peaks_counted(const struct mt_model *m)
{
	return !m->window || m->win == WIN_OPEN;
}

static void peak_note(struct mt_heap_stats *h, uint64_t rel)
{
	if (h->live_bytes > h->peak_live_bytes) {
		h->peak_live_bytes = h->live_bytes;
		h->peak_ts_ns = rel;
	}
}

void mt_window__note_peak(struct mt_model *m, struct proc *p, uint64_t ts)
{
	struct mt_blocks_acct a = image_acct(m, p);

	if (!mt_window__peaks_counted(m))
		return;
	peak_note(a.img, rel_ts(m, ts));
	peak_note(a.proc, rel_ts(m, ts));
	if (a.tot == &m->tot.heap)
		peak_note(a.tot, rel_ts(m, ts));
}

/* The window opens: the counts so far are its base, and its peak starts from what is live (an empty heap stays so). */
static void window_start(struct mt_heap_stats *start, struct mt_heap_stats *h, uint64_t from)
{
	*start = *h;
	h->peak_live_bytes = h->live_bytes;
	h->peak_ts_ns = h->live_bytes ? from : 0;
}

static void rss_window_start(struct mt_rss_stats *r, uint64_t from, const struct mt_rss_parts *now)
{
	r->peak_rss_bytes = r->rss_bytes;
	r->peak_rss_ts_ns = r->rss_bytes ? from : 0;
	r->at_peak = *now;
}

/* The resident memory's peaks start from what each process holds (an ended image: nothing). */
static void rss_window_open(struct mt_model *m)
{
	size_t i;

	static const struct mt_rss_parts none;
	struct mt_rss_parts now;

	for (i = 0; i < m->nr_images; i++) {
		m->images[i]->pub.rss.peak_rss_bytes = m->images[i]->pub.rss.peak_rss_ts_ns = 0;
		m->images[i]->pub.rss.at_peak = none;
	}
	for (i = 0; i < m->nr_procs; i++) {
		now = proc_rss_parts(m->procs[i]);
		rss_window_start(&m->procs[i]->pub.rss, m->filter.from_ns, &now);
		rss_window_start(&cur_image(m, m->procs[i])->pub.rss, m->filter.from_ns, &now);
	}
	now = tot_rss_parts(m);
	rss_window_start(&m->tot.rss, m->filter.from_ns, &now);
}

static void window_open(struct mt_model *m)
{
	size_t i;

	for (i = 0; i < m->nr_images; i++)
		window_start(&m->images[i]->win_start, &m->images[i]->pub.heap, m->filter.from_ns);
	for (i = 0; i < m->nr_procs; i++)
		window_start(&m->procs[i]->win_start, &m->procs[i]->pub.heap, m->filter.from_ns);
	window_start(&m->tot_start, &m->tot.heap, m->filter.from_ns);
	rss_window_open(m);
	m->win = WIN_OPEN;
}

static void window_close(struct mt_model *m)
{
	size_t i;

	for (i = 0; i < m->nr_images; i++)
		m->images[i]->win_end = m->images[i]->pub.heap;
	for (i = 0; i < m->nr_procs; i++)
		m->procs[i]->win_end = m->procs[i]->pub.heap;
	m->tot_end = m->tot.heap;
	m->win = WIN_CLOSED;
}

/* --between A B: the window is where the marks are in the records' order, its times are theirs. */
static void window_step_marks(struct mt_model *m, const struct mt_rec_hdr *rec)
{
	if (m->win == WIN_BEFORE && mt_filter__is_mark(rec, m->filter.between[0])) {
		m->filter.from_ns = rel_ts(m, rec->ts_ns);
		window_open(m);
		m->tot.between_open = true;
	} else if (m->win == WIN_OPEN && mt_filter__is_mark(rec, m->filter.between[1])) {
		m->filter.to_ns = rel_ts(m, rec->ts_ns);
		window_close(m);
		m->tot.between_closed = true;
	}
}

/* Before a record at ts is accounted. */
void mt_window__step(struct mt_model *m, const struct mt_rec_hdr *rec)
{
	uint64_t ts = rec->ts_ns;

	if (m->filter.between[0]) {
		window_step_marks(m, rec);
		return;
	}
	if (m->win == WIN_BEFORE && rel_ts(m, ts) >= m->filter.from_ns)
		window_open(m);
	if (m->win == WIN_OPEN && rel_ts(m, ts) >= m->filter.to_ns)
		window_close(m);
}

_Static_assert(sizeof(struct mt_heap_stats) % sizeof(uint64_t) == 0, "mt_heap_stats: uint64_t fields only");

/* h becomes what happened between start and end: what was live at the end is still live. */
static void window_diff(struct mt_heap_stats *h, const struct mt_heap_stats *start, const struct mt_heap_stats *end)
{
	const uint64_t *s = (const uint64_t *)start, *e = (const uint64_t *)end;
	struct mt_heap_stats d;
	uint64_t *o = (uint64_t *)&d;
	size_t i;

	for (i = 0; i < sizeof(d) / sizeof(uint64_t); i++)
		o[i] = e[i] - s[i];
	d.peak_live_bytes = end->peak_live_bytes;
	d.peak_ts_ns = end->peak_ts_ns;
	d.start_live_allocations = start->live_allocations;
	d.start_live_bytes = start->live_bytes;
	d.still_live_allocations += end->live_allocations;
	d.still_live_bytes += end->live_bytes;
	d.live_allocations = 0;
	d.live_bytes = 0;
	*h = d;
}

void mt_window__finish(struct mt_model *m)
{
	size_t i;

	if (!m->window)
		return;
	if (m->filter.between[0] && m->win == WIN_BEFORE)	/* no mark A: an empty window at the end */
		m->filter.from_ns = m->filter.to_ns = m->last_rel;
	if (m->win == WIN_BEFORE)
		window_open(m);
	if (m->win == WIN_OPEN)
		window_close(m);
	for (i = 0; i < m->nr_images; i++)
		window_diff(&m->images[i]->pub.heap, &m->images[i]->win_start, &m->images[i]->win_end);
	for (i = 0; i < m->nr_procs; i++)
		window_diff(&m->procs[i]->pub.heap, &m->procs[i]->win_start, &m->procs[i]->win_end);
	window_diff(&m->tot.heap, &m->tot_start, &m->tot_end);
}

/* The image lived in the window: it began before its end, and ended (if it did) after its start. */
bool mt_window__image_in(const struct mt_model *m, const struct image *img)
{
	if (!m->window)
		return true;
	if (rel_ts(m, img->pub.start_ns) >= m->filter.to_ns)
		return false;
	return img->pub.end == MT_IMAGE_LIVE || rel_ts(m, img->pub.end_ns) >= m->filter.from_ns;
}

