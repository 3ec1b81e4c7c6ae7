/* sites.h — allocation sites: an artifact's stacks merged by identical symbolized frames, ranked. */
#ifndef MEMTRACK_SITES_H
#define MEMTRACK_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/stacks.h"

struct mt_site_frame {
	char *name;		/* "func+0xOFF" */
	char *srcline;		/* "file.c:12" or NULL */
};

struct mt_site {
	uint64_t bytes;
	uint64_t count;
	uint64_t leaked_bytes;
	uint64_t stacks;	/* stack hashes merged into it */
	size_t order;		/* ties rank in the order the first of them was seen */
	size_t nframes;
	struct mt_site_frame *frames;
};

struct mt_sites {
	struct mt_site *sites;		/* sorted by bytes, then count, descending */
	size_t count;
	struct mt_site **by_count;	/* the same, sorted by count, then bytes, descending */
	uint64_t undefined_allocations;	/* allocations naming a stack whose definition is missing */
	uint64_t undefined_bytes;
	bool any;			/* stack definitions were seen */
	bool dwarf;			/* DWARF chains were used (DIR/unwind.mtz) */
};

/* NULL + errno (ENOMEM). */
struct mt_sites *mt_sites__build(struct mt_stacks *s);
void mt_sites__free(struct mt_sites *sites);

#endif /* MEMTRACK_SITES_H */
