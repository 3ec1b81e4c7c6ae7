// SPDX-License-Identifier: GPL-2.0-only
/* timeline_svg.c — the timeline as a standalone SVG: one line per series, marks, paused spans, the legend. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/plural.h"
#include "common/text.h"
#include "report/format.h"
#include "report/timeline.h"
#include "report/timeline_internal.h"

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

/* The end of the title: record --label's, " [KEY=VALUE ...]", as the flame graph's title has them. */
static void svg_labels(FILE *f, const struct mt_labels *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		fputs(i ? " " : " [", f);
		mt_text__put_xml(f, l->v[i].key, SIZE_MAX);
		fputc('=', f);
		mt_text__put_xml(f, l->v[i].value, SIZE_MAX);
	}
	if (l->n)
		fputc(']', f);
}

/* Under the title: what leaked at exit as report counts it, and the suppressed share when there is one. */
static void svg_leaks(const struct tl_svg *g)
{
	const struct mt_timeline *t = g->t;
	char a[MT_HUMAN_MAX], b[MT_HUMAN_MAX];

	if (!t->leaks)
		return;
	fprintf(g->f, "<text x=\"%d\" y=\"45\" text-anchor=\"middle\" font-size=\"11\" fill=\"#333\">leaked at exit "
		"%" PRIu64 " %s (%s)", SVG_W / 2, t->leaked_allocations,
		mt_plural__of(t->leaked_allocations, "block", "blocks"), mt_format__human(a, t->leaked_bytes));
	if (t->suppressed_allocations)
		fprintf(g->f, ", suppressed %" PRIu64 " %s (%s)", t->suppressed_allocations,
			mt_plural__of(t->suppressed_allocations, "block", "blocks"),
			mt_format__human(b, t->suppressed_bytes));
	fputs("</text>\n", g->f);
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
	svg_labels(f, mt_metadata__labels(t->md));
	fputs("</text>\n", f);
	svg_leaks(&g);
	svg_axes(&g);
	svg_control(&g);
	svg_lines(&g, &t->heap, 2.5, SOLID);
	svg_peak(&g);
	svg_marks(&g);
	svg_side(&g, svg_legend(&g));
	fputs("</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}
