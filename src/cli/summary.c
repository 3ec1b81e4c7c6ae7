/* summary.c — the lines `memtrack record` prints on stderr when the command ends. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "cli/summary.h"
#include "report/report.h"

/* The few lines `record` prints on stderr when the command ends. */
int mt_summary__write(FILE *f, const struct mt_model *m, const char *dir)
{
	const struct mt_totals *t = mt_model__totals(m);
	const struct mt_heap_stats *h = &t->heap;
	char a[MT_HUMAN_MAX], b[MT_HUMAN_MAX], c[MT_HUMAN_MAX];

	fprintf(f, "memtrack: %" PRIu64 " allocations (%s), %" PRIu64 " frees, peak %s live at %" PRIu64 ".%03" PRIu64
		   " s, %zu processes\n",
		h->allocations, mt_report__human(a, h->allocated_bytes), h->frees, mt_report__human(b, h->peak_live_bytes),
		h->peak_ts_ns / 1000000000, h->peak_ts_ns % 1000000000 / 1000000, mt_model__nr_procs(m));
	fprintf(f, "memtrack: leaked at exit %" PRIu64 " blocks (%s); dropped events %" PRIu64 "%s\n",
		h->leaked_allocations, mt_report__human(c, h->leaked_bytes), t->dropped_events,
		t->dropped_events ? " (the counts above miss them)" : "");
	if (t->attach_failed)
		fprintf(f, "memtrack: %" PRIu64 " attach failures: calls into those allocator files are missing "
			"(`memtrack report --attach %s`)\n", t->attach_failed, dir);
	fprintf(f, "memtrack: artifact %s: `memtrack report %s` for more\n", dir, dir);
	return ferror(f) ? -EIO : 0;
}
