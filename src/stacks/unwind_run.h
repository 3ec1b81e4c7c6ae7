/* SPDX-License-Identifier: GPL-2.0-only */
/* unwind_run.h — DWARF-unwinding every stack of an artifact: in memory, into unwind.mtz, or cached on first use. */
#ifndef MEMTRACK_UNWIND_RUN_H
#define MEMTRACK_UNWIND_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "stacks/stacks.h"

struct mt_unwind_opts {
	unsigned long repeat;		/* unwind each stack this many times (for the rate); at least 1 */
	bool list;			/* a line for every stack, not only the first that stopped early */
	FILE *out;			/* per-stack lines, or NULL */
};

struct mt_unwind_summary {
	uint64_t reasons[MT_STOP__COUNT];	/* stacks by why their unwinding stopped */
	uint64_t stacks;
	uint64_t frames;
	uint64_t unwinds;		/* repeats included */
	uint64_t cpu_ns;		/* the unwinder's CPU time */
};

/* Loads the artifact's stacks with DWARF chains unwound now, in memory (DIR/unwind.mtz is neither read nor
 * written). Returns what mt_stacks__read does; st may be NULL. */
int mt_unwind__load(const char *path, struct mt_stacks **out, struct mt_read_status *st);

/*
 * Unwinds every stack of the artifact at path into its DIR/unwind.mtz (written in a scratch directory, then
 * renamed into place). *read_err gets what mt_stacks__read returned; the return is 0 or the -errno of writing.
 */
int mt_unwind__write(const char *path, const struct mt_unwind_opts *o, struct mt_unwind_summary *sum,
		     struct mt_read_status *st, int *read_err);

/*
 * The cache behind DWARF by default: a run that unwinds the stacks a load hands its hook (as mt_stacks_opts.hook)
 * and writes them for DIR/unwind.mtz, from the first stack on, when DIR is writable (else they are only used now).
 * with_index: they are also kept as an index (mt_unwind_run__take_index). NULL + errno (ENOMEM).
 */
struct mt_unwind_run *mt_unwind_run__cache(const char *dir, bool with_index);
const struct mt_unwind_rec *mt_unwind_run__hook(void *ctx, const struct mt_stack *rec, uint32_t rec_size,
						struct mt_aspace *as, int *err);
/*
 * After the load: when it read the artifact (read_err 0 or -EBADMSG) and stacks were written, DIR/unwind.mtz is put
 * in place; a failure to write only means no cache. Frees r (NULL-safe).
 */
void mt_unwind_run__finish(struct mt_unwind_run *r, int read_err);
/* The index the run kept (with_index), complete; the caller frees it. NULL when there is none. */
struct mt_unwind_index *mt_unwind_run__take_index(struct mt_unwind_run *r);

#endif /* MEMTRACK_UNWIND_RUN_H */
