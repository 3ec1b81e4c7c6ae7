/* unwind_run.h — DWARF-unwinding every stack of an artifact: in memory (check-fp's fallback) or into unwind.mtz. */
#ifndef MEMTRACK_UNWIND_RUN_H
#define MEMTRACK_UNWIND_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "unwind/stacks.h"

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
 * written). Returns what mt_stacks__load does; st may be NULL. */
int mt_unwind__load(const char *path, struct mt_stacks **out, struct mt_read_status *st);

/*
 * Unwinds every stack of the artifact at path into its DIR/unwind.mtz (written in a scratch directory, then
 * renamed into place). *read_err gets what mt_stacks__load returned; the return is 0 or the -errno of writing.
 */
int mt_unwind__write(const char *path, const struct mt_unwind_opts *o, struct mt_unwind_summary *sum,
		     struct mt_read_status *st, int *read_err);

#endif /* MEMTRACK_UNWIND_RUN_H */
