/* SPDX-License-Identifier: GPL-2.0-only */
/* view_diff.h — `memtrack view BEFORE AFTER`: one HTML page of two runs compared, as `memtrack diff` compares them. */
#ifndef MEMTRACK_VIEW_DIFF_H
#define MEMTRACK_VIEW_DIFF_H

#include <stdio.h>

#include "model/model.h"
#include "report/diff.h"
#include "report/timeline.h"

/* One run: its DIR, model and timeline. */
struct mt_view_run {
	const char *dir;
	const struct mt_model *m;
	const struct mt_timeline *timeline;
};

/* What the diff page shows: both runs, and diff's comparison of their sites (built with no_offsets, as diff's). */
struct mt_view_diff_input {
	struct mt_view_run runs[2];	/* before, after */
	const struct mt_diff *diff;
};

/*
 * The page: {"before", "after": {"dir", "report": report --json's totals and processes, "timeline": timeline
 * --json's object}, "diff": diff --json's totals, "frames": [[name, srcline]], "sites": [[[frame, ...] outermost
 * first, [bytes, count, leaked bytes] before or 0, the same after or 0]] in diff's order} (docs/REPORT.md), then
 * view_diff.js. 0, -EIO, -ENOMEM.
 */
int mt_view_diff__html(FILE *f, const struct mt_view_diff_input *in);

#endif /* MEMTRACK_VIEW_DIFF_H */
