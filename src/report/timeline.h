/* SPDX-License-Identifier: GPL-2.0-only */
/* timeline.h — `memtrack timeline`: live heap bytes over time, in total and per process, as JSON or an SVG. */
#ifndef MEMTRACK_TIMELINE_H
#define MEMTRACK_TIMELINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "artifact/artifact.h"
#include "model/filter.h"
#include "report/leaks.h"

struct mt_timeline_opts {
	size_t top;			/* processes drawn apart, by their peak (the rest are "others"); 0: the default */
	size_t max_points;		/* at most this many points; 0: the default */
	const char *between[2];		/* --between A B: only from the first mark A to the next mark B; NULL: all */
	const struct mt_filter *filter;	/* --pid, --exe: only their processes' series, the total their sum; --from,
					 * --to: only the samples and events in the window (its between is not
					 * read); NULL: all */
	bool exes;			/* a line per executable too (its processes' while they run it), for a big tree */
	const struct mt_suppressions *sup;	/* the leaks they take are apart from the leaked ones (NULL: no leak
					 * figures: the view has its own) */
};

#define MT_TIMELINE_TOP 5
#define MT_TIMELINE_POINTS 2000

struct mt_timeline;

/*
 * Two passes over the artifact at path through the model (model/replay.h): a sample after every record that changed
 * the live bytes of the total or of its process; when there are more samples than max_points, the time range is cut
 * into max_points buckets and each keeps the largest value of each series (and its first sample's time). Returns
 * what mt_artifact__read returned; *out is set on 0 and -EBADMSG. st may be NULL.
 */
int mt_timeline__build(const char *path, const struct mt_timeline_opts *o, struct mt_timeline **out,
		       struct mt_read_status *st);
void mt_timeline__free(struct mt_timeline *t);

/*
 * {"t_ns": [...], "total": [...], "processes": [{"pid", "exe", "peak_bytes", "live_bytes": [...]}], "others": [...]
 * (when more processes than top had blocks), "peak": {"t_ns", "bytes"}, "events": [{"t_ns", "pid", "event": "fork"
 * (with "child") | "exec" (with "path") | "exit" | "start" | "stop" | "mark" (with "label"): the control FIFO's
 * lines, whatever the pid filter}]}; times since the session start. 0 or -EIO.
 * With opts.exes, also "executables": [{"exe", "processes", "peak_bytes", "live_bytes": [...]}] on the same points.
 * When the recording has RSS records, also "rss": {"t_ns", "total", "processes": [{"pid", "rss_bytes"}], "peak"};
 * with anonymous mappings, "mapped": the same with "mapped_bytes" (program + allocator), and "program": the
 * program's part of the total. "leaked_allocations", "leaked_bytes" (what report calls leaked at exit: suppressed
 * leaks left out), "suppressed_allocations", "suppressed_bytes" (opts.sup's share; these four with opts.sup), and "labels" (record --label's,
 * when there are some) come after "peak".
 */
int mt_timeline__json(FILE *f, const struct mt_timeline *t);
/* A standalone SVG: one line per series, the peak marked, fork/exec/exit marks along the time axis, paused spans
 * shaded and each `mark LABEL` a dashed line; the title ends with the labels (" [KEY=VALUE ...]"), and under it
 * what leaked at exit and what was suppressed. 0 or -EIO.
 * RSS, when the recording has it, dotted, and the mappings dash-dotted, on a byte axis of their own (on the right). */
int mt_timeline__svg(FILE *f, const struct mt_timeline *t, const char *title);

#endif /* MEMTRACK_TIMELINE_H */
