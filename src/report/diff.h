/* SPDX-License-Identifier: GPL-2.0-only */
/* diff.h — `memtrack diff`: two runs compared, in total and per allocation site matched by its call path. */
#ifndef MEMTRACK_DIFF_H
#define MEMTRACK_DIFF_H

#include <stddef.h>
#include <stdio.h>

#include "model/model.h"
#include "report/metadata.h"
#include "report/sites.h"

struct mt_diff_site {
	const struct mt_site *before;	/* NULL: new in after */
	const struct mt_site *after;	/* NULL: gone from after */
	int64_t bytes_delta;
	int64_t count_delta;
	int64_t leaked_bytes_delta;
	size_t order;			/* ties rank by it: after's ranking, then before's */
};

struct mt_diff {
	struct mt_heap_stats before;	/* leaked_*: suppressed leaks left out (docs/REPORT.md, "Leak suppressions") */
	struct mt_heap_stats after;
	uint64_t suppressed_allocations[2];	/* before, after */
	uint64_t suppressed_bytes[2];
	struct mt_diff_site *sites;	/* by |bytes_delta|, then |count_delta|, |leaked_bytes_delta|, descending */
	size_t count;
	const struct mt_labels *labels[2];	/* record --label's of before and after (NULL: none); the caller's */
};

/*
 * Matches the sites of two runs by their frames' names (build them with mt_sites_opts.no_offsets, so that a call
 * path of functions matches across builds); the sites must outlive the diff. NULL + errno (ENOMEM).
 */
struct mt_diff *mt_diff__build(const struct mt_totals *before, const struct mt_sites *bs,
			       const struct mt_totals *after, const struct mt_sites *as);
void mt_diff__free(struct mt_diff *d);
/* Totals before, after (each DIR with its labels, " [KEY=VALUE ...]") and the change, then the top `top` sites by
 * change in bytes. 0 or -EIO. */
int mt_diff__text(FILE *f, const struct mt_diff *d, const char *before, const char *after, size_t top);
/* {"totals": {"before", "after", "*_delta"}, "sites": [{"frames", "bytes_delta", ...}]} and a newline; "before" and
 * "after" end with a "labels" object when that run has labels. 0 or -EIO. */
int mt_diff__json(FILE *f, const struct mt_diff *d, size_t top);

#endif /* MEMTRACK_DIFF_H */
