/* SPDX-License-Identifier: GPL-2.0-only */
/* flamegraph.h — `memtrack flamegraph`: allocation stacks as collapsed lines or as an interactive SVG. */
#ifndef MEMTRACK_FLAMEGRAPH_H
#define MEMTRACK_FLAMEGRAPH_H

#include <stdio.h>

#include "stacks/stacks.h"

enum mt_fg_weight {
	MT_FG_BYTES,	/* bytes allocated (the default) */
	MT_FG_COUNT,	/* allocation calls */
	MT_FG_LEAKED,	/* bytes leaked at exit, suppressed leaks left out (mt_suppressions__apply) */
	MT_FG_PEAK,	/* bytes live when the total live bytes first reached their peak */
	MT_FG_LIVE,	/* bytes still live at the end of the recording or of the window: not leaks */
	MT_FG_WEIGHT_MASK = 0x0f,
	/* or'ed in: what the stacks hold (without either, their heap allocations) */
	MT_FG_MAPPED = 0x10,	/* the program's mappings (struct mt_stack_mapped): bytes mapped, mapping calls,
				 * bytes at the mappings' peak, held at the end; nothing leaks */
	MT_FG_ALL = 0x20,	/* both, summed */
};

/* "bytes", "allocations", "leaked bytes", "bytes live at the peak" or "bytes still live at the end"; with
 * MT_FG_MAPPED "mapped bytes", "mapping calls", ...; with MT_FG_ALL "bytes (heap + mapped)", .... */
const char *mt_fg_weight__unit(enum mt_fg_weight w);
/* --kind's argument (heap, mapped or all) as MT_FG_MAPPED, MT_FG_ALL or 0 in *kind; cmd names the command in the
 * error line. 0 or -EINVAL. */
int mt_fg_kind__parse(const char *cmd, const char *arg, enum mt_fg_weight *kind);
/* The weight of one stack of s. */
uint64_t mt_fg_weight__of(const struct mt_stacks *s, const struct mt_stack_entry *e, enum mt_fg_weight w);

/*
 * "outermost;...;innermost N" lines, sorted frame by frame, equal paths merged; each return address stands for its
 * inline chain (DWARF), so inlined functions are frames of their own. 0, -EIO or -ENOMEM.
 */
int mt_flamegraph__collapsed(FILE *f, struct mt_stacks *s, enum mt_fg_weight w);
/*
 * A standalone SVG flame graph, flamegraph.pl's way: its own CSS and JS, click to zoom, reset, search with the
 * matched share; frames narrower than 0.1 px are merged into one "..." frame per parent. 0, -EIO or -ENOMEM.
 */
int mt_flamegraph__svg(FILE *f, struct mt_stacks *s, enum mt_fg_weight w, const char *title);
/* The paths of both, "path BEFORE AFTER" (difffolded.pl's format), the union of their paths. 0, -EIO, -ENOMEM. */
int mt_flamegraph__diff_collapsed(FILE *f, struct mt_stacks *before, struct mt_stacks *after, enum mt_fg_weight w);
/* A flame graph of after whose frames are red where they grew since before, blue where they shrank. */
int mt_flamegraph__diff_svg(FILE *f, struct mt_stacks *before, struct mt_stacks *after, enum mt_fg_weight w,
			    const char *title);

#endif /* MEMTRACK_FLAMEGRAPH_H */
