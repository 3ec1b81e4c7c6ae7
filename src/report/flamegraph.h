/* flamegraph.h — `memtrack flamegraph`: allocation stacks as collapsed lines or as a self-contained SVG. */
#ifndef MEMTRACK_FLAMEGRAPH_H
#define MEMTRACK_FLAMEGRAPH_H

#include <stdio.h>

#include "unwind/stacks.h"

enum mt_fg_weight {
	MT_FG_BYTES,	/* bytes allocated (the default) */
	MT_FG_COUNT,	/* allocation calls */
	MT_FG_LEAKED,	/* bytes of blocks still live at exit, exec or the end */
};

/* "outermost;...;innermost N" lines, sorted frame by frame, equal paths merged. 0, -EIO or -ENOMEM. */
int mt_flamegraph__collapsed(FILE *f, struct mt_stacks *s, enum mt_fg_weight w);
/* A standalone SVG flame graph (inline CSS and JS, no external files). 0, -EIO or -ENOMEM. */
int mt_flamegraph__svg(FILE *f, struct mt_stacks *s, enum mt_fg_weight w, const char *title);

#endif /* MEMTRACK_FLAMEGRAPH_H */
