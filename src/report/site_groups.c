// SPDX-License-Identifier: GPL-2.0-only
/* site_groups.c — the text report's top allocation sites grouped by the executable whose processes made them. */
/*
 * By exe rather than by process: a build or a test suite runs hundreds of processes of a few programs, and a
 * heading per process would bury the report; the processes of one exe mostly share their sites. A site is in an
 * exe's group with what the processes running that exe allocated there (the image that made a process's first
 * allocation at the site names it).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/plural.h"
#include "common/text.h"
#include "report/format.h"
#include "report/sites.h"

/* One site's share in one exe's group. */
struct group_row {
	const struct mt_site *site;
	uint64_t bytes;
	uint64_t count;
};

struct group {
	const char *exe;
	struct group_row *rows;
	size_t nrows;
	uint64_t bytes, count, processes;
};

static const char *proc_exe(const struct mt_sites *sites, const struct mt_proc_peak *sp)
{
	return sp->image < sites->nimages ? sites->images[sp->image].exe : "";
}

static int by_bytes(const void *a, const void *b)
{
	const struct group_row *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->site->order < y->site->order ? -1 : x->site->order > y->site->order;
}

/* The sites exe's processes allocated at, with their share, ranked; its totals and how many processes. */
static int group_build(const struct mt_sites *sites, struct group *g)
{
	bool *seen = calloc(sites->nprocs ? sites->nprocs : 1, sizeof(*seen));
	const struct mt_proc_peak *sp;
	struct group_row r;
	size_t i, k;

	g->rows = malloc((sites->count ? sites->count : 1) * sizeof(*g->rows));
	if (!seen || !g->rows) {
		free(seen);
		return -ENOMEM;
	}
	for (i = 0; i < sites->count; i++) {
		r = (struct group_row){ &sites->sites[i], 0, 0 };
		for (k = 0; k < sites->sites[i].nprocs; k++) {
			sp = &sites->sites[i].procs[k];
			if (!sp->made_allocations || strcmp(proc_exe(sites, sp), g->exe))
				continue;
			r.bytes += sp->made_bytes;
			r.count += sp->made_allocations;
			g->processes += !seen[sp->proc];
			seen[sp->proc] = true;
		}
		if (r.count)
			g->rows[g->nrows++] = r;
		g->bytes += r.bytes;
		g->count += r.count;
	}
	free(seen);
	mt_array__sort(g->rows, g->nrows, sizeof(*g->rows), by_bytes);
	return 0;
}

static int by_group_bytes(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->count > y->count ? -1 : x->count < y->count;
}

static void group_text(FILE *f, const struct group *g, size_t top)
{
	char a[MT_HUMAN_MAX], b[32] = "";
	size_t i, n = g->nrows < top ? g->nrows : top;

	if (g->bytes >= 1024)
		snprintf(b, sizeof(b), " (%" PRIu64 " B)", g->bytes);
	fputs("  ", f);
	mt_text__put(f, g->exe[0] ? g->exe : "?");
	fprintf(f, ": %" PRIu64 " %s, %s%s in %" PRIu64 " %s at %zu %s\n", g->processes,
		mt_plural__of(g->processes, "process", "processes"), mt_format__human(a, g->bytes), b, g->count,
		mt_plural__of(g->count, "allocation", "allocations"), g->nrows, mt_plural__of(g->nrows, "site", "sites"));
	for (i = 0; i < n; i++) {
		fprintf(f, "  #%-3zu %s in %" PRIu64 " %s\n", i + 1, mt_format__human(a, g->rows[i].bytes),
			g->rows[i].count, mt_plural__of(g->rows[i].count, "allocation", "allocations"));
		mt_format__frames_text(f, g->rows[i].site, false);
	}
}

/* The exes that made allocations at some site. */
static size_t group_exes(const struct mt_sites *sites, struct group *g)
{
	const struct mt_proc_peak *sp;
	size_t i, k, e, n = 0;

	for (i = 0; i < sites->count; i++) {
		for (k = 0; k < sites->sites[i].nprocs; k++) {
			sp = &sites->sites[i].procs[k];
			for (e = 0; sp->made_allocations && e < n && strcmp(g[e].exe, proc_exe(sites, sp)); e++)
				;
			if (sp->made_allocations && e == n && n < sites->makers)
				g[n++].exe = proc_exe(sites, sp);
		}
	}
	return n;
}

int mt_sites__by_exe_text(FILE *f, const struct mt_sites *sites, size_t top)
{
	struct group *g;
	size_t i, n;
	int err = 0;

	if (!sites || sites->makers < 2 || !top)
		return ferror(f) ? -EIO : 0;
	g = calloc(sites->makers, sizeof(*g));
	if (!g)
		return -ENOMEM;
	n = group_exes(sites, g);
	for (i = 0; !err && i < n; i++)
		err = group_build(sites, &g[i]);
	if (!err) {
		mt_array__sort(g, n, sizeof(*g), by_group_bytes);
		fprintf(f, "\ntop allocation sites by executable (%zu executables, largest first; the top %zu sites of "
			"each):\n", n, top);
	}
	for (i = 0; !err && i < n; i++)
		group_text(f, &g[i], top);
	for (i = 0; i < n; i++)
		free(g[i].rows);
	free(g);
	return err ? err : ferror(f) ? -EIO : 0;
}
