// SPDX-License-Identifier: GPL-2.0-only
/* attach_report.c — `memtrack report --attach DIR`: the attach log as a table, for debugging attach races. */
#include <inttypes.h>
#include <stdio.h>

#include "report/report.h"

struct attach_table {
	FILE *f;
	uint64_t base;		/* the session's start: times are relative to it */
	uint64_t rows, held_ns_max, held_ns_sum;
	uint64_t wrappers;	/* rows of kind wrapper: explained once under the table */
};

static int attach__row(const struct mt_rec_hdr *h, void *ctx)
{
	const struct mt_attach *a = (const void *)h;
	struct attach_table *t = ctx;
	const char *kind, *reason;
	uint64_t held;

	if (h->type == MT_REC_SESSION && !t->base)
		t->base = h->ts_ns;
	if (h->type != MT_REC_ATTACH)
		return 0;
	kind = mt_allocator__name(a->kind);
	reason = mt_attach_reason__name(a->reason);
	held = a->resumed_ns > h->ts_ns ? a->resumed_ns - h->ts_ns : 0;
	fprintf(t->f, "%12.6f %7" PRIu32 " %7" PRIu32 "  %-6s %-9s %6" PRIu32 " %10.1f  %s%s\n",
		(double)(h->ts_ns - (t->base && t->base < h->ts_ns ? t->base : h->ts_ns)) / 1e9, h->pid, h->tid,
		reason ? reason : "?", kind ? kind : "-", a->probes, a->resumed_ns ? held / 1e3 : -1.0,
		a->path, a->err ? "  (attach failed)" : "");
	t->rows++;
	t->wrappers += a->kind == MT_ALLOCATOR_WRAPPER;
	t->held_ns_sum += held;
	if (held > t->held_ns_max)
		t->held_ns_max = held;
	return 0;
}

int mt_report__attach(FILE *f, const char *dir, struct mt_read_status *st)
{
	struct attach_table t = { .f = f };
	int err;

	fprintf(f, "%12s %7s %7s  %-6s %-9s %6s %10s  %s\n", "MAPPED_S", "PID", "TID", "WHY", "KIND", "PROBES",
		"HELD_US", "PATH");
	err = mt_artifact__read(dir, attach__row, &t, st);
	fprintf(f, "%" PRIu64 " files looked at; threads held %.1f us at most, %.1f us on average "
		   "(HELD_US -1: the thread ended while held)\n",
		t.rows, t.held_ns_max / 1e3, t.rows ? t.held_ns_sum / 1e3 / t.rows : 0.0);
	if (t.wrappers)
		fprintf(f, "KIND wrapper: defines malloc (a leak checker's or libmemusage.so's, forwarding to another "
			   "allocator): each of its calls counts once, as the program made it, and what it calls inside "
			   "is not counted again\n");
	return err;
}
