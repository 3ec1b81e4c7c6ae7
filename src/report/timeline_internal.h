/* SPDX-License-Identifier: GPL-2.0-only */
/* timeline_internal.h — the timeline's series, shared by its builder (timeline.c) and its SVG (timeline_svg.c). */
#ifndef MEMTRACK_TIMELINE_INTERNAL_H
#define MEMTRACK_TIMELINE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/memtrack.h"
#include "report/metadata.h"

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

/* An executable's line (with opts.exes): the live bytes of the processes whose current image runs it. */
struct tl_exe {
	char exe[MT_PATH_MAX];
	uint64_t *v;			/* at the heap plot's points */
	uint64_t live, peak;		/* now, and the largest at a sample */
	size_t procs;			/* processes that ran it */
};

struct mt_timeline {
	struct tl_plot heap;
	struct tl_plot rss;		/* the heap's processes' RSS; nsamples 0: no RSS sample (in the window) */
	struct tl_plot mapped;		/* their mappings, program + allocator; nsamples 0: none mapped (in it) */
	struct tl_event *events;
	size_t nevents, cap_events;
	uint64_t t_end;			/* the last sample's or event's time */
	struct tl_exe *exes;		/* opts.exes: in the order they were first run */
	size_t nexes, cap_exes;
	struct mt_metadata *md;		/* DIR's, for record --label's labels (NULL: none) */
	bool leaks;			/* the four below were counted (opts.sup given) */
	uint64_t leaked_allocations, leaked_bytes;	/* at exit, report's: the suppressed ones left out */
	uint64_t suppressed_allocations, suppressed_bytes;
};

#endif /* MEMTRACK_TIMELINE_INTERNAL_H */
