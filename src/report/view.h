/* SPDX-License-Identifier: GPL-2.0-only */
/* view.h — `memtrack view`: one self-contained HTML page (timeline, flame graph, sites) of a recording. */
#ifndef MEMTRACK_VIEW_H
#define MEMTRACK_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"
#include "report/report.h"
#include "report/sites.h"
#include "report/timeline.h"
#include "stacks/stacks.h"

#define MT_VIEW_EDGES 256	/* the instants a window or a click snaps to, evenly over the recording */

/*
 * Every stack's allocations, bytes and live bytes at nedges + 1 instants (edge i at end_ns * i / nedges, the last
 * one past end_ns): the counts of the records before each, as a --from/--to window of the report counts them.
 */
struct mt_view_steps;

/* NULL + errno (ENOMEM). end_ns: the time of the recording's last record, since the session start. */
struct mt_view_steps *mt_view_steps__new(uint64_t end_ns, size_t nedges);
/* An mt_stack_observe_fn over a struct mt_view_steps (stacks.h's opts.observe). 0 or -ENOMEM. */
int mt_view_steps__observe(void *ctx, const struct mt_stacks *s, uint64_t rel_ts);
/* After the load: the edges no record reached. 0 or -ENOMEM. */
int mt_view_steps__finish(struct mt_view_steps *v, const struct mt_stacks *s);
void mt_view_steps__free(struct mt_view_steps *v);

/* The last fork, exec or exit of m, since the session start: where the edges end. */
uint64_t mt_view__end_ns(const struct mt_model *m);

/* What the page shows; all of it made by the caller from one DIR. */
struct mt_view_input {
	const char *dir;
	const struct mt_model *m;
	struct mt_stacks *stacks;
	const struct mt_sites *sites;
	const struct mt_report_extra *extra;
	const struct mt_timeline *timeline;
	const struct mt_view_steps *steps;
};

/*
 * The page: its data as one JSON object ({"dir", "report": report --json's object, "report_text": report's text,
 * "timeline": timeline --json's object, "edges", "frames", "stacks", "steps"}, docs/REPORT.md) in a <script>
 * element, then the page's own CSS and JS (src/report/view/). Nothing is fetched when it is opened. 0, -EIO, -ENOMEM.
 */
int mt_view__html(FILE *f, const struct mt_view_input *in);

#endif /* MEMTRACK_VIEW_H */
