// SPDX-License-Identifier: GPL-2.0-only
/* report.c — `memtrack report [--json] DIR`: totals and one row per process image, as text or one JSON object. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "common/log.h"
#include "common/plural.h"
#include "common/text.h"
#include "report/exes.h"
#include "report/format.h"
#include "report/leaks.h"
#include "report/metadata.h"
#include "report/report.h"
#include "report/sizes.h"
#include "report/sites.h"

#define HSIZE MT_HUMAN_MAX	/* buffer for a human size or a status word */

#define put_text mt_text__put

/* One argv word, single-quoted when a shell would need it. */
static void put_shell_word(FILE *f, const char *s)
{
	const char *p, *q;

	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-") == strlen(s)) {
		put_text(f, s);
		return;
	}
	fputc('\'', f);
	for (p = s; (q = strchr(p, '\'')); p = q + 1) {
		mt_text__put_n(f, p, q - p);
		fputs("'\\''", f);
	}
	put_text(f, p);
	fputc('\'', f);
}

/* ---- what a row is: an image, its command line, its status ---- */

static const struct mt_report_extra no_extra;

/* The session's argv as a command line. */
static const char *const *session_cmdline(const struct mt_model *m, size_t *argc)
{
	const struct mt_session_info *si = mt_model__session(m);

	*argc = si->argc;
	return si->present ? (const char *const *)si->argv : NULL;
}

/*
 * An image's command line: for an image an exec started, the metadata's read at that exec stop (counted back from
 * the process's last image; a file without them has only the last image's), the session's for the root's first,
 * the parent image's for a fork child's first; else NULL.
 */
static const char *const *image_cmdline(const struct mt_model *m, const struct mt_metadata *md, size_t idx,
					size_t *argc)
{
	const struct mt_image *img = mt_model__image(m, idx);
	const struct mt_proc *p;
	int depth;

	for (depth = 0; img && depth < 64; depth++) {
		p = mt_model__proc(m, img->proc);
		if (img->from_exec) {
			if (mt_model__find_proc(m, p->pid) == p &&
			    mt_metadata__exec_cmdline(md, p->pid, p->nr_images - 1 - img->image, argc))
				return mt_metadata__exec_cmdline(md, p->pid, p->nr_images - 1 - img->image, argc);
			if (img->image + 1 == p->nr_images && mt_model__find_proc(m, p->pid) == p &&
			    mt_metadata__cmdline(md, p->pid, argc))
				return mt_metadata__cmdline(md, p->pid, argc);
			if (img->proc == 0 && img->image == 0)
				return session_cmdline(m, argc);
			return NULL;
		}
		if (img->parent == SIZE_MAX)
			return img->proc == 0 ? session_cmdline(m, argc) : NULL;
		img = mt_model__image(m, img->parent);
	}
	return NULL;
}

static void put_cmdline(FILE *f, const char *const *argv, size_t argc)
{
	size_t i;

	for (i = 0; i < argc; i++) {
		if (i)
			fputc(' ', f);
		put_shell_word(f, argv[i]);
	}
}

/* "exit 0", "signal 9", "exec" (an exec replaced it), "running" (no exit record), "live" (past the window). */
static const char *status_text(char *buf, const struct mt_model *m, const struct mt_image *img)
{
	int32_t status = mt_model__proc(m, img->proc)->status;

	if (img->open_end)
		return img->end == MT_IMAGE_LIVE ? "running" : "live";
	if (img->end == MT_IMAGE_EXEC)
		return "exec";
	if (WIFEXITED(status))
		snprintf(buf, HSIZE, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, HSIZE, "signal %d", WTERMSIG(status));
	else
		snprintf(buf, HSIZE, "status %#x", (unsigned int)status);
	return buf;
}

/* The matched images, a process's together in order, processes in the order first seen. */
static size_t *row_order(const struct mt_model *m, size_t *n)
{
	size_t i, k, nimg = mt_model__nr_images(m), nproc = mt_model__nr_procs(m);
	size_t *first = calloc(nproc + 1, sizeof(size_t)), *rows = malloc((nimg + 1) * sizeof(size_t));

	*n = 0;
	if (!first || !rows) {
		free(first);
		free(rows);
		return NULL;
	}
	/* counting sort by process: first[p] is where process p's rows start */
	for (i = 0; i < nimg; i++)
		first[mt_model__image(m, i)->proc + 1] += mt_model__image(m, i)->matched;
	for (k = 1; k <= nproc; k++)
		first[k] += first[k - 1];
	for (i = 0; i < nimg; i++)
		if (mt_model__image(m, i)->matched)
			rows[first[mt_model__image(m, i)->proc]++] = i;
	*n = first[nproc];
	free(first);
	return rows;
}

/* ---- text ---- */

static void text_filter(FILE *f, const struct mt_filter *flt)
{
	size_t i;

	if (!mt_filter__selects(flt) && !mt_filter__has_window(flt))
		return;
	fputs("filter:     ", f);
	if (flt->npids)
		fputs(mt_plural__of(flt->npids, " pid", " pids"), f);
	for (i = 0; i < flt->npids; i++)
		fprintf(f, "%s %" PRIu32, i ? "," : "", flt->pids[i]);
	if (flt->nexes)
		fprintf(f, "%s%s", flt->npids ? ";" : "", mt_plural__of(flt->nexes, " exe", " exes"));
	for (i = 0; i < flt->nexes; i++) {
		fputs(i ? ", " : " ", f);
		put_text(f, flt->exes[i]);
	}
	if (mt_filter__has_window(flt)) {
		fprintf(f, "%s from %" PRIu64 ".%06" PRIu64 " s to ", flt->npids || flt->nexes ? ";" : "",
			flt->from_ns / 1000000000, flt->from_ns % 1000000000 / 1000);
		if (flt->to_ns == MT_FILTER_END)
			fputs("the end", f);
		else
			fprintf(f, "%" PRIu64 ".%06" PRIu64 " s", flt->to_ns / 1000000000, flt->to_ns % 1000000000 / 1000);
	}
	if (flt->between[0]) {
		fputs(" (between the marks ", f);
		put_text(f, flt->between[0]);
		fputs(" and ", f);
		put_text(f, flt->between[1]);
		fputc(')', f);
	}
	fputc('\n', f);
}

/* record --label's, when it was given: "labels:      KEY=VALUE KEY=VALUE". */
static void text_labels(FILE *f, const struct mt_labels *l)
{
	size_t i;

	if (!l->n)
		return;
	fputs("labels:     ", f);
	for (i = 0; i < l->n; i++) {
		fputc(' ', f);
		put_text(f, l->v[i].key);
		fputc('=', f);
		put_text(f, l->v[i].value);
	}
	fputc('\n', f);
}

static void text_header(FILE *f, const struct mt_model *m, const char *label, const struct mt_report_extra *x)
{
	const struct mt_session_info *si = mt_model__session(m);
	const struct mt_totals *t = mt_model__totals(m);
	size_t argc;
	const char *const *argv = session_cmdline(m, &argc);

	fputs("artifact:    ", f);
	put_text(f, label);
	fputs("\ncommand:     ", f);
	if (!argv)
		fputs("unknown (no session record)", f);
	put_cmdline(f, argv, argv ? argc : 0);
	if (si->present)
		fprintf(f, "\nroot pid:    %" PRIu32 "%s\n", si->root_pid,
			si->attached ? " (running when memtrack attached: record --pid)" : "");
	else
		fputs("\nroot pid:    unknown\n", f);
	fprintf(f, "processes:   %" PRIu64, t->processes);
	if (t->processes != mt_model__nr_procs(m))
		fprintf(f, " of %zu", mt_model__nr_procs(m));
	if (t->images != t->processes)
		fprintf(f, " (%" PRIu64 " images)", t->images);
	fputc('\n', f);
	text_labels(f, mt_metadata__labels(x->metadata));
	if (x->filter)
		text_filter(f, mt_model__filter(m));
}

static void text_dropped(FILE *f, const struct mt_totals *t)
{
	unsigned int i;
	bool first = true;

	fprintf(f, "  %-20s", "dropped events:");
	if (!t->complete) {
		fputs("unknown (run did not finish)\n", f);
		return;
	}
	fprintf(f, "%" PRIu64, t->dropped_events);
	for (i = 0; t->dropped_events && i < MT_DROP__COUNT; i++) {
		const char *name = mt_drop__name(i);

		if (!name && !t->drops[i])
			continue;
		fprintf(f, "%s%s %" PRIu64, first ? " (" : ", ", name ? name : "other", t->drops[i]);
		first = false;
	}
	fputs(first ? "\n" : ")\n", f);
}

/* Lines that only appear when something went wrong in the recording. */
static void text_anomalies(FILE *f, const struct mt_totals *t)
{
	const struct mt_heap_stats *h = &t->heap;

	if (h->replaced)
		fprintf(f, "  %-20s%" PRIu64 " %s at an address still live\n", "lost frees:", h->replaced,
			mt_plural__of(h->replaced, "allocation", "allocations"));
	if (h->failed_allocations)
		fprintf(f, "  %-20s%" PRIu64 " %s NULL\n", "failed calls:", h->failed_allocations,
			mt_plural__of(h->failed_allocations, "allocation returned", "allocations returned"));
	if (t->late_records)
		fprintf(f, "  %-20s%" PRIu64 " (beyond the reorder window)\n", "late records:", t->late_records);
	if (t->bad_records)
		fprintf(f, "  %-20s%" PRIu64 " (unknown or malformed)\n", "skipped records:", t->bad_records);
	if (t->attach_failed)
		fprintf(f, "  %-20s%" PRIu64 " (%s not probed: %s calls are missing; report --attach)\n",
			"attach failures:", t->attach_failed,
			mt_plural__of(t->attach_failed, "an allocator file", "allocator files"),
			mt_plural__of(t->attach_failed, "its", "their"));
}

#define size_text mt_format__size

/* "3 blocks, 1.5 KiB (1536 B)", and what follows on the line (NULL: nothing). */
static void blocks_text(FILE *f, const char *label, uint64_t n, uint64_t bytes, const char *why)
{
	char a[2 * HSIZE];

	fprintf(f, "  %-20s%" PRIu64 " %s, %s%s\n", label, n, mt_plural__of(n, "block", "blocks"), size_text(a, bytes),
		why ? why : "");
}

#define TOP_UNKNOWN 5	/* processes named on the unknown frees line */

/* "unknown frees: N (...; top pids P (n), ...)": the processes with the most, first seen first among equals. */
static void text_unknown_frees(FILE *f, const struct mt_model *m, const size_t *rows, size_t nrows)
{
	uint64_t top_n[TOP_UNKNOWN] = { 0 }, sum = 0, v;
	uint32_t top_pid[TOP_UNKNOWN] = { 0 };
	size_t i, j, shown = 0;

	fprintf(f, "  %-20s%" PRIu64 " (releases of blocks never seen allocated; top pids", "unknown frees:",
		mt_model__totals(m)->heap.unknown_frees);
	for (i = 0; i < nrows; i++) {
		const struct mt_image *img = mt_model__image(m, rows[i]);

		sum += img->heap.unknown_frees;	/* a process's rows are together: sum them */
		if (i + 1 < nrows && mt_model__image(m, rows[i + 1])->proc == img->proc)
			continue;
		v = sum;
		sum = 0;
		if (!v)
			continue;
		/* insertion into the sorted top, the last one falling out when it is full */
		j = shown < TOP_UNKNOWN ? shown++ : TOP_UNKNOWN;
		for (; j > 0 && top_n[j - 1] < v; j--)
			if (j < TOP_UNKNOWN) {
				top_n[j] = top_n[j - 1];
				top_pid[j] = top_pid[j - 1];
			}
		if (j < TOP_UNKNOWN) {
			top_n[j] = v;
			top_pid[j] = img->pid;
		}
	}
	for (i = 0; i < shown; i++)
		fprintf(f, "%s %" PRIu32 " (%" PRIu64 ")", i ? "," : "", top_pid[i], top_n[i]);
	fputs(")\n", f);
}

/* Why blocks are still live: the recording stopped, the window ended, or processes outlived the recording. */
static const char *still_live_why(const struct mt_totals *t, const struct mt_report_extra *x)
{
	if (!t->complete)
		return " (the recording did not finish: live when it stopped, not leaks)";
	if (x->filter && (x->filter->to_ns != MT_FILTER_END || x->filter->between[0]))
		return " (live at the end of the window, or of the recording)";
	return " (processes without an exit record: live when the recording ended)";
}

/* The heap lines of the totals block, leaks as the suppressions leave them. */
static void text_heap(FILE *f, const struct mt_model *m, const struct mt_report_extra *x)
{
	const struct mt_totals *t = mt_model__totals(m);
	const struct mt_heap_stats *h = &t->heap;
	bool window = x->filter && mt_filter__has_window(x->filter);
	uint64_t sup_n, sup_b;
	char a[2 * HSIZE];

	mt_leaks__suppressed(x->leaks, SIZE_MAX, &sup_n, &sup_b);
	if (window)
		blocks_text(f, "live at the start:", h->start_live_allocations, h->start_live_bytes,
			    " (allocated before the window)");
	fprintf(f, "  %-20s%" PRIu64 "\n", "allocations:", h->allocations);
	fprintf(f, "  %-20s%" PRIu64 "\n", "frees:", h->frees);
	if (window)
		fprintf(f, "  %-20s%" PRIu64 " %s, %s: blocks allocated before the window\n", "of which earlier:",
			h->early_frees, mt_plural__of(h->early_frees, "free", "frees"), size_text(a, h->early_freed_bytes));
	fprintf(f, "  %-20s%s\n", "allocated:", size_text(a, h->allocated_bytes));
	fprintf(f, "  %-20s%s\n", "average size:",
		mt_format__human(a, h->allocations ? h->allocated_bytes / h->allocations : 0));
	fprintf(f, "  %-20s%s at %" PRIu64 ".%06" PRIu64 " s\n", "peak live:", size_text(a, h->peak_live_bytes),
		h->peak_ts_ns / 1000000000, h->peak_ts_ns % 1000000000 / 1000);
	blocks_text(f, "inherited at fork:", h->inherited_allocations, h->inherited_bytes, NULL);
	blocks_text(f, "discarded at exec:", h->exec_discarded_allocations, h->exec_discarded_bytes, NULL);
	blocks_text(f, "leaked at exit:", h->leaked_allocations - sup_n, h->leaked_bytes - sup_b, NULL);
	if (sup_n) {
		fprintf(f, "  %-20s%" PRIu64 " %s, %s", "suppressed leaks:", sup_n, mt_plural__of(sup_n, "block", "blocks"),
			size_text(a, sup_b));
		mt_leaks__suppressions_text(f, x->leaks);
		fputc('\n', f);
	}
	if (h->inherited_live_allocations)
		blocks_text(f, "inherited, live:", h->inherited_live_allocations, h->inherited_live_bytes,
			    " (held at exit by fork children that never freed them: their parent's, not leaks)");
	if (h->still_live_allocations || !t->complete)
		blocks_text(f, "still live:", h->still_live_allocations, h->still_live_bytes, still_live_why(t, x));
}

static bool mapped_any(const struct mt_mapped_stats *s)
{
	return s->peak_program_bytes || s->peak_allocator_bytes;
}

/* Anonymous private mappings in total: the program's apart from the allocators' own, which hold the heap. */
static void text_mapped(FILE *f, const struct mt_mapped_stats *s)
{
	char a[HSIZE], b[HSIZE];

	if (!mapped_any(s))
		return;
	fprintf(f, "  %-20s%s at the end, peak %s at %" PRIu64 ".%06" PRIu64 " s (anonymous private)\n",
		"mapped by program:", size_text(a, s->end_program_bytes), size_text(b, s->peak_program_bytes),
		s->peak_program_ts_ns / 1000000000, s->peak_program_ts_ns % 1000000000 / 1000);
	fprintf(f, "  %-20s%s at the end, peak %s (mapped inside allocator calls, for the heap)\n",
		"allocator-held:", size_text(a, s->end_allocator_bytes), size_text(b, s->peak_allocator_bytes));
}

/* ---- where resident memory goes at its peak ---- */

/* The terms' names: the text's, the rows' columns', the JSON's keys; and what a term is, when it says more. */
static const struct {
	const char *label, *column, *key, *why, *why_negative;
} rss_terms[MT_RSS_TERM__COUNT] = {
	[MT_RSS_TERM_HEAP] = { "live heap:", "HEAP", "heap_bytes", " (the live blocks' sizes)", NULL },
	[MT_RSS_TERM_ALLOCATOR_HELD] = { "allocator-held:", "ALLOC-HELD", "allocator_held_bytes",
		" (mapped inside allocator calls, less the live heap: free blocks, metadata, rounding)",
		" (live blocks outside the allocator mappings seen: mapped before the recording, or not by a call)" },
	[MT_RSS_TERM_PROGRAM] = { "program mappings:", "PROG-MAP", "program_mapped_bytes",
		" (anonymous private, by the program and its loader)", NULL },
	[MT_RSS_TERM_FILE] = { "file-backed:", "FILE", "file_bytes", " (resident pages of files: code, data, mmap)",
		NULL },
	[MT_RSS_TERM_SHMEM] = { "shmem:", "SHMEM", "shmem_bytes", NULL, NULL },
	[MT_RSS_TERM_REST] = { "the rest:", "REST", "rest_bytes",
		" (anonymous, in no mapping above: stacks, copy-on-write pages of files, older mappings)",
		" (mapped but not resident: of the mappings above, pages never touched or swapped out)" },
};

/* "-1.5 KiB" for a term below 0, as mt_format__human otherwise. */
static const char *signed_human(char buf[HSIZE], int64_t v)
{
	char h[HSIZE];

	if (v >= 0)
		return mt_format__human(buf, (uint64_t)v);
	snprintf(buf, HSIZE, "-%s", mt_format__human(h, -(uint64_t)v));
	return buf;
}

/* "-1.5 KiB (-1536 B)" likewise, as mt_format__size. */
static const char *signed_size(char buf[2 * HSIZE], int64_t v)
{
	char h[HSIZE];

	if (v >= 0)
		return size_text(buf, (uint64_t)v);
	if (-(uint64_t)v < 1024)
		return signed_human(buf, v);
	snprintf(buf, 2 * HSIZE, "-%s (%" PRId64 " B)", mt_format__human(h, -(uint64_t)v), v);
	return buf;
}

/* "Where RSS goes at its peak (WHO, T s):", each term with its share of the peak, when there was one. */
static void text_rss_terms(FILE *f, const struct mt_rss_stats *r, const char *who)
{
	int64_t terms[MT_RSS_TERM__COUNT];
	uint64_t rss = mt_rss_parts__terms(&r->at_peak, terms);
	const char *why;
	char a[2 * HSIZE], b[HSIZE], c[HSIZE];
	int i;

	if (!r->records || !r->peak_rss_bytes)
		return;
	fprintf(f, "\nWhere RSS goes at its peak (%s, %" PRIu64 ".%06" PRIu64 " s):\n", who,
		r->peak_rss_ts_ns / 1000000000, r->peak_rss_ts_ns % 1000000000 / 1000);
	for (i = 0; i < MT_RSS_TERM__COUNT; i++) {
		why = terms[i] < 0 && rss_terms[i].why_negative ? rss_terms[i].why_negative : rss_terms[i].why;
		fprintf(f, "  %-20s%-27s %6.1f%%%s\n", rss_terms[i].label, signed_size(a, terms[i]),
			rss ? 100.0 * (double)terms[i] / (double)rss : 0.0, why ? why : "");
	}
	fprintf(f, "  %-20s%-27s %6.1f%% (anon %s + file + shmem; swapped out, not in it: %s)\n", "= peak RSS:",
		size_text(a, rss), 100.0, mt_format__human(b, r->at_peak.anon), mt_format__human(c, r->at_peak.swap));
}

/* The totals' block: "pid N" for one process, "N processes" summed at the total's peak. */
static void text_rss_total(FILE *f, const struct mt_model *m, const size_t *rows, size_t nrows)
{
	const struct mt_totals *t = mt_model__totals(m);
	char who[64];

	if (t->processes == 1 && nrows)
		snprintf(who, sizeof(who), "pid %" PRIu32, mt_model__image(m, rows[0])->pid);
	else
		snprintf(who, sizeof(who), "%" PRIu64 " processes summed", t->processes);
	text_rss_terms(f, &t->rss, who);
}

static void text_totals(FILE *f, const struct mt_model *m, const size_t *rows, size_t nrows,
			const struct mt_report_extra *x)
{
	const struct mt_totals *t = mt_model__totals(m);
	const struct mt_heap_stats *h = &t->heap;
	char a[2 * HSIZE], b[HSIZE];

	fputs("\ntotals:\n", f);
	text_heap(f, m, x);
	if (h->unknown_frees)
		text_unknown_frees(f, m, rows, nrows);
	if (h->paused_frees)
		fprintf(f, "  %-20s%" PRIu64 " (after a start mark: of blocks allocated while recording was off)\n",
			"of which paused:", h->paused_frees);
	if (mt_model__session(m)->attached)
		fprintf(f, "  %-20s%" PRIu64 " (releases of blocks allocated before memtrack attached)\n",
			"pre-attach frees:", h->pre_attach_frees);
	fprintf(f, "  %-20smmap %" PRIu64 " (%s), ", "mappings:", h->mmap_calls, mt_format__human(a, h->mmap_bytes));
	fprintf(f, "munmap %" PRIu64 " (%s), mremap %" PRIu64 ", brk %" PRIu64 " (not heap)\n",
		h->munmap_calls, mt_format__human(b, h->munmap_bytes), h->mremap_calls, h->brk_calls);
	text_mapped(f, &t->mapped);
	if (t->rss.records)
		fprintf(f, "  %-20s%s at %" PRIu64 ".%06" PRIu64 " s (resident: anon + file + shmem, summed over "
			"processes)\n", "peak RSS:", size_text(a, t->rss.peak_rss_bytes),
			t->rss.peak_rss_ts_ns / 1000000000, t->rss.peak_rss_ts_ns % 1000000000 / 1000);
	text_anomalies(f, t);
	text_dropped(f, t);
	if (t->stacks_withheld)
		fprintf(f, "  %-20s%" PRIu64 " (privileged process: no stack bytes, code addresses of the chain only)\n",
			"stacks withheld:", t->stacks_withheld);
}

/* The width of the numbers before the per-process rows' last column. */
#define ROWS_PREFIX 111

/*
 * The last column: the exe ("→ exe" for an image an exec started in a process's later rows), its command line, cut
 * to the terminal's width (exes.h).
 */
static void text_exe(FILE *out, const struct mt_model *m, size_t idx, const struct mt_report_extra *x)
{
	const struct mt_image *img = mt_model__image(m, idx);
	const char *const *argv;
	size_t argc, len = 0;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return;

	if (img->image)
		fputs("→ ", f);
	if (img->exe[0]) {
		put_text(f, img->exe);
	} else if (img->comm[0]) {
		fputc('[', f);
		put_text(f, img->comm);
		fputc(']', f);
	} else {
		fputc('-', f);
	}
	argv = image_cmdline(m, x->metadata, idx, &argc);
	if (argv && argc && (argc > 1 || strcmp(argv[0], img->exe))) {	/* not the exe once more */
		fputs("  ", f);
		put_cmdline(f, argv, argc);
	}
	if (!fclose(f))
		mt_exes__put_cut(out, buf, mt_exes__column(x->columns, ROWS_PREFIX));
	free(buf);
	fputc('\n', out);
}

static void text_rows(FILE *f, const struct mt_model *m, const size_t *rows, size_t nrows,
		      const struct mt_report_extra *x)
{
	char st[HSIZE], a[HSIZE], b[HSIZE], c[HSIZE];
	uint64_t sup_n, sup_b;
	bool open = false;
	size_t i;

	fprintf(f, "\n%7s %7s %3s  %-11s %7s %9s %9s %10s %10s %7s %7s %10s  %s\n", "PID", "PPID", "IMG", "STATUS",
		"INHERIT", "ALLOCS", "FREES", "ALLOCATED", "PEAK", "DISCARD", "LEAKS", "LEAKED", "EXE  COMMAND");
	for (i = 0; i < nrows; i++) {
		const struct mt_image *img = mt_model__image(m, rows[i]);
		const struct mt_heap_stats *h = &img->heap;

		mt_leaks__suppressed(x->leaks, rows[i], &sup_n, &sup_b);
		open |= img->open_end && h->still_live_allocations;
		fprintf(f, "%7" PRIu32 " %7" PRIu32 " %3" PRIu32 "  %-11s %7" PRIu64 " %9" PRIu64 " %9" PRIu64
			" %10s %10s %7" PRIu64 " %7" PRIu64 " %10s  ", img->pid, mt_model__proc(m, img->proc)->ppid,
			img->image, status_text(st, m, img), h->inherited_allocations, h->allocations, h->frees,
			mt_format__human(a, h->allocated_bytes), mt_format__human(b, h->peak_live_bytes),
			h->exec_discarded_allocations, h->leaked_allocations - sup_n + h->still_live_allocations,
			mt_format__human(c, h->leaked_bytes - sup_b + h->still_live_bytes));
		text_exe(f, m, rows[i], x);
	}
	if (open)
		fputs("(rows `running` or `live`: LEAKS and LEAKED are the blocks still live at the end, not leaks)\n", f);
}

/* Each row's resident memory peak and its terms then, when the recording has RSS records. */
static void text_rss_rows(FILE *f, const struct mt_model *m, const size_t *rows, size_t nrows)
{
	int64_t terms[MT_RSS_TERM__COUNT];
	const struct mt_rss_stats *r;
	char a[HSIZE];
	size_t i;
	int k;

	if (!mt_model__totals(m)->rss.records)
		return;
	fputs("\nresident memory (RSS: anon + file + shmem), and where it went at the row's peak:\n", f);
	fprintf(f, "%7s %3s %10s %14s", "PID", "IMG", "PEAK RSS", "AT s");
	for (k = 0; k < MT_RSS_TERM__COUNT; k++)
		fprintf(f, " %10s", rss_terms[k].column);
	fputs("  EXE\n", f);
	for (i = 0; i < nrows; i++) {
		const struct mt_image *img = mt_model__image(m, rows[i]);

		r = &img->rss;
		fprintf(f, "%7" PRIu32 " %3" PRIu32 " %10s %7" PRIu64 ".%06" PRIu64, img->pid, img->image,
			mt_format__human(a, r->peak_rss_bytes), r->peak_rss_ts_ns / 1000000000,
			r->peak_rss_ts_ns % 1000000000 / 1000);
		mt_rss_parts__terms(&r->at_peak, terms);
		for (k = 0; k < MT_RSS_TERM__COUNT; k++)
			fprintf(f, " %10s", r->peak_rss_bytes ? signed_human(a, terms[k]) : "-");
		fputs("  ", f);
		put_text(f, img->exe[0] ? img->exe : "-");
		fputc('\n', f);
	}
	fputs("(the terms add up to PEAK RSS; REST < 0: mapped but not resident. docs/REPORT.md, \"Where RSS goes\")\n",
	      f);
}

int mt_report__text_with(FILE *f, const struct mt_model *m, const char *label, const struct mt_report_extra *x)
{
	size_t nrows, *rows = row_order(m, &nrows);

	if (!rows)
		return -ENOMEM;
	x = x ? x : &no_extra;
	text_header(f, m, label, x);
	if (!nrows && x->filter)
		fputs("\nnothing matched the filter: no process image of the recording passes it\n", f);
	if (nrows || !x->filter) {
		text_totals(f, m, rows, nrows, x);
		text_rss_total(f, m, rows, nrows);
		if (mt_exes__wanted(x, nrows)) {
			mt_exes__text(f, m, rows, nrows, x);
		} else {
			text_rows(f, m, rows, nrows, x);
			text_rss_rows(f, m, rows, nrows);
		}
	}
	free(rows);
	return ferror(f) ? -EIO : 0;
}

int mt_report__text(FILE *f, const struct mt_model *m, const char *label)
{
	return mt_report__text_with(f, m, label, NULL);
}

/* ---- JSON ---- */

void mt_report__json_drops(struct mt_json *j, const uint64_t drops[MT_DROP__COUNT])
{
	char key[16];
	unsigned int i;

	mt_json__begin_object(j);
	for (i = 0; i < MT_DROP__COUNT; i++) {
		const char *name = mt_drop__name(i);

		if (name) {
			mt_json__kv_u64(j, name, drops[i]);
		} else if (drops[i]) {
			snprintf(key, sizeof(key), "drop_%u", i);
			mt_json__kv_u64(j, key, drops[i]);
		}
	}
	mt_json__end_object(j);
}

/* The stats; leaks as the suppressions (sup_n, sup_b) leave them; the window's keys with one. */
static void json_heap(struct mt_json *j, const struct mt_heap_stats *h, uint64_t sup_n, uint64_t sup_b, bool window)
{
	if (window) {
		mt_json__kv_u64(j, "start_live_allocations", h->start_live_allocations);
		mt_json__kv_u64(j, "start_live_bytes", h->start_live_bytes);
	}
	mt_json__kv_u64(j, "inherited_allocations", h->inherited_allocations);
	mt_json__kv_u64(j, "inherited_bytes", h->inherited_bytes);
	mt_json__kv_u64(j, "allocations", h->allocations);
	mt_json__kv_u64(j, "frees", h->frees);
	mt_json__kv_u64(j, "allocated_bytes", h->allocated_bytes);
	mt_json__kv_u64(j, "freed_bytes", h->freed_bytes);
	if (window) {
		mt_json__kv_u64(j, "frees_before_window", h->early_frees);
		mt_json__kv_u64(j, "freed_bytes_before_window", h->early_freed_bytes);
	}
	mt_json__kv_u64(j, "peak_live_bytes", h->peak_live_bytes);
	mt_json__kv_u64(j, "peak_ts_ns", h->peak_ts_ns);
	mt_json__kv_u64(j, "average_size", h->allocations ? h->allocated_bytes / h->allocations : 0);
	mt_json__kv_u64(j, "exec_discarded_allocations", h->exec_discarded_allocations);
	mt_json__kv_u64(j, "exec_discarded_bytes", h->exec_discarded_bytes);
	mt_json__kv_u64(j, "leaked_allocations", h->leaked_allocations - sup_n);
	mt_json__kv_u64(j, "leaked_bytes", h->leaked_bytes - sup_b);
	mt_json__kv_u64(j, "suppressed_allocations", sup_n);
	mt_json__kv_u64(j, "suppressed_bytes", sup_b);
	mt_json__kv_u64(j, "inherited_live_allocations", h->inherited_live_allocations);
	mt_json__kv_u64(j, "inherited_live_bytes", h->inherited_live_bytes);
	mt_json__kv_u64(j, "still_live_allocations", h->still_live_allocations);
	mt_json__kv_u64(j, "still_live_bytes", h->still_live_bytes);
	mt_json__kv_u64(j, "unknown_frees", h->unknown_frees);
	mt_json__kv_u64(j, "internal_releases", h->internal_releases);
	mt_json__kv_u64(j, "replaced", h->replaced);
	mt_json__kv_u64(j, "replaced_bytes", h->replaced_bytes);
	mt_json__kv_u64(j, "failed_allocations", h->failed_allocations);
	mt_json__kv_u64(j, "mmap_calls", h->mmap_calls);
	mt_json__kv_u64(j, "mmap_bytes", h->mmap_bytes);
	mt_json__kv_u64(j, "munmap_calls", h->munmap_calls);
	mt_json__kv_u64(j, "munmap_bytes", h->munmap_bytes);
	mt_json__kv_u64(j, "mremap_calls", h->mremap_calls);
	mt_json__kv_u64(j, "brk_calls", h->brk_calls);
}

static void json_filter(struct mt_json *j, const struct mt_filter *flt)
{
	size_t i;

	mt_json__key(j, "filter");
	mt_json__begin_object(j);
	mt_json__key(j, "pids");
	mt_json__begin_array(j);
	for (i = 0; i < flt->npids; i++)
		mt_json__u64(j, flt->pids[i]);
	mt_json__end_array(j);
	mt_json__key(j, "exes");
	mt_json__begin_array(j);
	for (i = 0; i < flt->nexes; i++)
		mt_json__string(j, flt->exes[i]);
	mt_json__end_array(j);
	mt_json__kv_u64(j, "from_ns", flt->from_ns);
	if (flt->to_ns == MT_FILTER_END)
		mt_json__kv_null(j, "to_ns");
	else
		mt_json__kv_u64(j, "to_ns", flt->to_ns);
	if (flt->between[0]) {
		mt_json__key(j, "between");
		mt_json__begin_array(j);
		mt_json__string(j, flt->between[0]);
		mt_json__string(j, flt->between[1]);
		mt_json__end_array(j);
	}
	mt_json__end_object(j);
}

static bool has_filter(const struct mt_report_extra *x)
{
	return x->filter && (mt_filter__selects(x->filter) || mt_filter__has_window(x->filter));
}

/* "rss_at_peak": the terms of the peak and the counters and books they come from. */
static void json_rss_terms(struct mt_json *j, const struct mt_rss_stats *r)
{
	const struct mt_rss_parts *p = &r->at_peak;
	int64_t terms[MT_RSS_TERM__COUNT];
	uint64_t rss = mt_rss_parts__terms(p, terms);
	int k;

	mt_json__key(j, "rss_at_peak");
	mt_json__begin_object(j);
	mt_json__kv_u64(j, "ts_ns", r->peak_rss_ts_ns);
	mt_json__kv_u64(j, "rss_bytes", rss);
	for (k = 0; k < MT_RSS_TERM__COUNT; k++)
		mt_json__kv_i64(j, rss_terms[k].key, terms[k]);
	mt_json__kv_u64(j, "anon_bytes", p->anon);
	mt_json__kv_u64(j, "swap_bytes", p->swap);
	mt_json__kv_u64(j, "allocator_mapped_bytes", p->allocator_bytes);
	mt_json__end_object(j);
}

/* Resident memory's keys, when the recording has RSS records (a row's: its image's own). */
static void json_rss(struct mt_json *j, const struct mt_rss_stats *r, bool any)
{
	if (!any)
		return;
	mt_json__kv_u64(j, "peak_rss_bytes", r->peak_rss_bytes);
	mt_json__kv_u64(j, "peak_rss_ts_ns", r->peak_rss_ts_ns);
	mt_json__kv_u64(j, "rss_records", r->records);
	json_rss_terms(j, r);
}

/* Anonymous private mappings' keys, each term: now, peaks, held at the end (a row's: its image's own). */
static void json_mapped(struct mt_json *j, const struct mt_mapped_stats *s)
{
	mt_json__key(j, "mapped");
	mt_json__begin_object(j);
	mt_json__kv_u64(j, "program_bytes", s->program_bytes);
	mt_json__kv_u64(j, "allocator_bytes", s->allocator_bytes);
	mt_json__kv_u64(j, "end_program_bytes", s->end_program_bytes);
	mt_json__kv_u64(j, "end_allocator_bytes", s->end_allocator_bytes);
	mt_json__kv_u64(j, "peak_program_bytes", s->peak_program_bytes);
	mt_json__kv_u64(j, "peak_program_ts_ns", s->peak_program_ts_ns);
	mt_json__kv_u64(j, "peak_allocator_bytes", s->peak_allocator_bytes);
	mt_json__end_object(j);
}

static void json_totals(struct mt_json *j, const struct mt_model *m, const struct mt_report_extra *x)
{
	const struct mt_session_info *si = mt_model__session(m);
	const struct mt_totals *t = mt_model__totals(m);
	uint64_t sup_n, sup_b;
	uint32_t i;

	mt_leaks__suppressed(x->leaks, SIZE_MAX, &sup_n, &sup_b);
	mt_json__key(j, "totals");
	mt_json__begin_object(j);
	mt_json__kv_bool(j, "complete", t->complete);
	if (si->present)
		mt_json__kv_u64(j, "root_pid", si->root_pid);
	else
		mt_json__kv_null(j, "root_pid");
	mt_json__key(j, "command");
	mt_json__begin_array(j);
	for (i = 0; i < si->argc; i++)
		mt_json__string(j, si->argv[i]);
	mt_json__end_array(j);
	mt_json__kv_u64(j, "processes", t->processes);
	mt_json__kv_u64(j, "images", t->images);
	if (has_filter(x))
		json_filter(j, mt_model__filter(m));
	json_heap(j, &t->heap, sup_n, sup_b, x->filter && mt_filter__has_window(x->filter));
	if (si->attached) {	/* record --pid */
		mt_json__kv_bool(j, "attached", true);
		mt_json__kv_u64(j, "pre_attach_frees", t->heap.pre_attach_frees);
	}
	if (t->marks) {	/* the control FIFO was written to */
		mt_json__kv_u64(j, "marks", t->marks);
		mt_json__kv_u64(j, "unknown_frees_after_start", t->heap.paused_frees);
	}
	mt_leaks__suppressions_json(j, x->leaks);
	mt_json__kv_u64(j, "dropped_events", t->dropped_events);
	mt_json__key(j, "drops");
	mt_report__json_drops(j, t->drops);
	mt_json__kv_u64(j, "records", t->records);
	mt_json__kv_u64(j, "late_records", t->late_records);
	mt_json__kv_u64(j, "bad_records", t->bad_records);
	mt_json__kv_u64(j, "attach_failed", t->attach_failed);
	mt_json__kv_u64(j, "thread_exits", t->thread_exits);
	if (t->stacks)
		mt_json__kv_u64(j, "stacks_withheld", t->stacks_withheld);
	json_rss(j, &t->rss, t->rss.records);
	json_mapped(j, &t->mapped);
	mt_json__end_object(j);
}

/* record --label's, when it was given. */
static void json_labels(struct mt_json *j, const struct mt_report_extra *x)
{
	if (mt_metadata__labels(x->metadata)->n)
		mt_labels__json(j, mt_metadata__labels(x->metadata));
}

static void json_cmdline(struct mt_json *j, const struct mt_model *m, size_t idx, const struct mt_report_extra *x)
{
	size_t i, argc;
	const char *const *argv = image_cmdline(m, x->metadata, idx, &argc);

	mt_json__key(j, "cmdline");
	if (!argv) {
		mt_json__null(j);
		return;
	}
	mt_json__begin_array(j);
	for (i = 0; i < argc; i++)
		mt_json__string(j, argv[i]);
	mt_json__end_array(j);
}

static void json_row(struct mt_json *j, const struct mt_model *m, size_t idx, const struct mt_report_extra *x)
{
	const struct mt_image *img = mt_model__image(m, idx);
	const struct mt_proc *p = mt_model__proc(m, img->proc);
	bool exited = !img->open_end && img->end == MT_IMAGE_EXIT;
	uint64_t sup_n, sup_b;

	mt_leaks__suppressed(x->leaks, idx, &sup_n, &sup_b);
	mt_json__begin_object(j);
	mt_json__kv_u64(j, "pid", img->pid);
	mt_json__kv_u64(j, "ppid", p->ppid);
	mt_json__kv_u64(j, "image", img->image);
	mt_json__kv_string_n(j, "exe", img->exe, sizeof(img->exe));
	mt_json__kv_string_n(j, "comm", img->comm, sizeof(img->comm));
	json_cmdline(j, m, idx, x);
	if (img->open_end)
		mt_json__kv_null(j, "ended_by");
	else
		mt_json__kv_string(j, "ended_by", img->end == MT_IMAGE_EXEC ? "exec" : "exit");
	mt_json__kv_bool(j, "exited", exited);
	if (exited)
		mt_json__kv_i64(j, "status", mt_status__shell(p->status));
	else
		mt_json__kv_null(j, "status");
	if (exited && mt_status__signal(p->status))
		mt_json__kv_i64(j, "signal", mt_status__signal(p->status));
	else
		mt_json__kv_null(j, "signal");
	json_heap(j, &img->heap, sup_n, sup_b, x->filter && mt_filter__has_window(x->filter));
	json_rss(j, &img->rss, mt_model__totals(m)->rss.records);
	json_mapped(j, &img->mapped);
	if (mt_model__session(m)->attached)	/* record --pid */
		mt_json__kv_u64(j, "pre_attach_frees", img->heap.pre_attach_frees);
	mt_json__end_object(j);
}

int mt_report__json_with(FILE *f, const struct mt_model *m, const struct mt_report_extra *x,
			 const struct mt_sites *sites, size_t top)
{
	size_t i, nrows, *rows = row_order(m, &nrows);
	struct mt_json j;
	int err;

	if (!rows)
		return -ENOMEM;
	x = x ? x : &no_extra;
	mt_json__init(&j, f, 2);
	mt_json__begin_object(&j);
	json_labels(&j, x);
	json_totals(&j, m, x);
	mt_json__key(&j, "processes");
	mt_json__begin_array(&j);
	for (i = 0; i < nrows; i++)
		json_row(&j, m, rows[i], x);
	mt_json__end_array(&j);
	err = mt_exes__json(&j, m, rows, nrows, x);
	free(rows);
	if (err)
		return err;
	if (x->with_sites)
		mt_report__sites_json(&j, sites, top);
	if (x->with_sites && sites && sites->any)
		mt_sites__json_sections(&j, sites, top);
	if (x->sizes && sites)
		mt_sizes__json(&j, sites);
	mt_json__end_object(&j);
	fputc('\n', f);
	return mt_json__error(&j);
}

int mt_report__json(FILE *f, const struct mt_model *m)
{
	return mt_report__json_with(f, m, NULL, NULL, 0);
}

/* ---- report --leaks ---- */

int mt_report__leaks_text(FILE *f, const struct mt_model *m, const char *label, const struct mt_report_extra *x,
			  size_t top)
{
	size_t nrows, *rows = row_order(m, &nrows);

	if (!rows)
		return -ENOMEM;
	text_header(f, m, label, x);
	free(rows);
	if (!nrows && x->filter) {
		fputs("\nnothing matched the filter: no process image of the recording passes it\n", f);
		return ferror(f) ? -EIO : 0;
	}
	fputs("\ntotals:\n", f);
	text_heap(f, m, x);
	return mt_leaks__text(f, x->leaks, top);
}

int mt_report__leaks_json(FILE *f, const struct mt_model *m, const struct mt_report_extra *x, size_t top)
{
	struct mt_json j;

	mt_json__init(&j, f, 2);
	mt_json__begin_object(&j);
	json_labels(&j, x);
	json_totals(&j, m, x);
	mt_leaks__json(&j, x->leaks, top);
	mt_json__end_object(&j);
	fputc('\n', f);
	return mt_json__error(&j);
}

int mt_report__exit_status(const char *dir, int err, const struct mt_read_status *st, const char *what)
{
	if (!err)
		return 0;
	if (err == -EBADMSG) {
		pr_warn("%s: %s; the %s covers the %" PRIu64 " records before byte %" PRIu64 "\n",
			dir, st->reason, what, st->records, st->bad_offset);
		return 1;
	}
	pr_err("%s: %s\n", dir, st->reason[0] ? st->reason : strerror(-err));
	return 2;
}
