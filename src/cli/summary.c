// SPDX-License-Identifier: GPL-2.0-only
/* summary.c — the lines `memtrack record` prints on stderr when the command ends. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "cli/summary.h"
#include "common/plural.h"
#include "report/format.h"
#include "report/leaks.h"
#include "report/report.h"
#include "report/sites.h"

/*
 * The leaks the built-in suppressions take, by report's rule (mt_suppressions__apply): only when something leaked
 * and the recording has stacks, which are then unwound (and cached in DIR for report) as report would.
 */
static void summary_suppressed(const struct mt_heap_stats *h, const char *dir, uint64_t *count, uint64_t *bytes)
{
	struct mt_suppressions *sup;
	struct mt_stacks *s = NULL;

	*count = *bytes = 0;
	if (!h->leaked_allocations || mt_stacks__probe(dir) != 1)
		return;
	sup = mt_suppressions__new(true);
	if (sup)
		mt_stacks__load(dir, NULL, &s, NULL);
	if (s) {
		mt_suppressions__apply(sup, s);
		mt_sites__suppressed_total(s, count, bytes);
	}
	mt_stacks__free(s);
	mt_suppressions__free(sup);
}

/* The few lines `record` prints on stderr when the command ends. */
int mt_summary__write(FILE *f, const struct mt_model *m, const char *dir)
{
	const struct mt_totals *t = mt_model__totals(m);
	const struct mt_heap_stats *h = &t->heap;
	char a[MT_HUMAN_MAX], b[MT_HUMAN_MAX], c[MT_HUMAN_MAX];
	size_t procs = mt_model__nr_procs(m);
	uint64_t sup_n, sup_b;

	summary_suppressed(h, dir, &sup_n, &sup_b);

	fprintf(f, "memtrack: %" PRIu64 " %s (%s), %" PRIu64 " %s, peak %s live at %" PRIu64 ".%03" PRIu64
		   " s, %zu %s\n", h->allocations, mt_plural__of(h->allocations, "allocation", "allocations"),
		mt_format__human(a, h->allocated_bytes), h->frees, mt_plural__of(h->frees, "free", "frees"),
		mt_format__human(b, h->peak_live_bytes), h->peak_ts_ns / 1000000000, h->peak_ts_ns % 1000000000 / 1000000,
		procs, mt_plural__of(procs, "process", "processes"));
	fprintf(f, "memtrack: leaked at exit %" PRIu64 " %s (%s)", h->leaked_allocations - sup_n,
		mt_plural__of(h->leaked_allocations - sup_n, "block", "blocks"),
		mt_format__human(c, h->leaked_bytes - sup_b));
	if (sup_n)
		fprintf(f, ", suppressed %" PRIu64 " %s (%s: runtime one-offs)", sup_n,
			mt_plural__of(sup_n, "block", "blocks"), mt_format__human(c, sup_b));
	if (h->inherited_live_allocations)
		fprintf(f, ", inherited and still live %" PRIu64 " %s (%s: fork children's, their parent's blocks)",
			h->inherited_live_allocations, mt_plural__of(h->inherited_live_allocations, "block", "blocks"),
			mt_format__human(c, h->inherited_live_bytes));
	if (h->still_live_allocations)
		fprintf(f, ", still live %" PRIu64 " %s (%s: processes without an exit record)",
			h->still_live_allocations, mt_plural__of(h->still_live_allocations, "block", "blocks"),
			mt_format__human(c, h->still_live_bytes));
	fprintf(f, "; dropped events %" PRIu64 "%s\n", t->dropped_events,
		t->dropped_events ? " (the counts above miss them)" : "");
	if (t->attach_failed)
		fprintf(f, "memtrack: %" PRIu64 " attach %s: calls into %s allocator %s are missing "
			"(`memtrack report --attach %s`)\n", t->attach_failed,
			mt_plural__of(t->attach_failed, "failure", "failures"), mt_plural__of(t->attach_failed, "that", "those"),
			mt_plural__of(t->attach_failed, "file", "files"), dir);
	fprintf(f, "memtrack: artifact %s: `memtrack report %s` for more\n", dir, dir);
	return ferror(f) ? -EIO : 0;
}
