/* report.c — `memtrack report [--json] DIR`: totals and one row per process, as text or as one JSON object. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "common/log.h"
#include "report/report.h"
#include "report/sites.h"

#define HSIZE MT_HUMAN_MAX	/* buffer for a human size or a status word */

const char *mt_report__human(char *buf, uint64_t bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(buf, HSIZE, "%" PRIu64 " B", bytes);
		return buf;
	}
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	if (v >= 1023.95 && u < 3) {	/* would print as "1024.0" */
		v /= 1024;
		u++;
	}
	snprintf(buf, HSIZE, "%.1f %s", v, units[u]);
	return buf;
}

/* Text output is for a terminal: control characters and bytes that are not UTF-8 become '?'. */
static void put_text_n(FILE *f, const char *s, size_t left)
{
	size_t n;

	while (left) {
		n = mt_json__utf8_len(s, left);
		if (!n || (n == 1 && ((unsigned char)*s < 0x20 || *s == 0x7f))) {
			fputc('?', f);
			n = 1;
		} else {
			fwrite(s, 1, n, f);
		}
		s += n;
		left -= n;
	}
}

static void put_text(FILE *f, const char *s)
{
	put_text_n(f, s, strlen(s));
}

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
		put_text_n(f, p, q - p);
		fputs("'\\''", f);
	}
	put_text(f, p);
	fputc('\'', f);
}

static const char *status_text(char *buf, const struct mt_proc *p)
{
	if (!p->exited)
		return "running";
	if (WIFEXITED(p->status))
		snprintf(buf, HSIZE, "exit %d", WEXITSTATUS(p->status));
	else if (WIFSIGNALED(p->status))
		snprintf(buf, HSIZE, "signal %d", WTERMSIG(p->status));
	else
		snprintf(buf, HSIZE, "status %#x", (unsigned int)p->status);
	return buf;
}

static void text_header(FILE *f, const struct mt_model *m, const char *label)
{
	const struct mt_session_info *si = mt_model__session(m);
	uint32_t i;

	fputs("artifact:    ", f);
	put_text(f, label);
	fputs("\ncommand:     ", f);
	if (!si->present)
		fputs("unknown (no session record)", f);
	for (i = 0; si->present && i < si->argc; i++) {
		if (i)
			fputc(' ', f);
		put_shell_word(f, si->argv[i]);
	}
	if (si->present)
		fprintf(f, "\nroot pid:    %" PRIu32 "\n", si->root_pid);
	else
		fputs("\nroot pid:    unknown\n", f);
	fprintf(f, "processes:   %zu\n", mt_model__nr_procs(m));
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
		fprintf(f, "  %-20s%" PRIu64 " allocations at an address still live\n", "lost frees:", h->replaced);
	if (h->failed_allocations)
		fprintf(f, "  %-20s%" PRIu64 " allocations returned NULL\n", "failed calls:", h->failed_allocations);
	if (t->late_records)
		fprintf(f, "  %-20s%" PRIu64 " (beyond the reorder window)\n", "late records:", t->late_records);
	if (t->bad_records)
		fprintf(f, "  %-20s%" PRIu64 " (unknown or malformed)\n", "skipped records:", t->bad_records);
	if (t->attach_failed)
		fprintf(f, "  %-20s%" PRIu64 " (allocator files not probed: their calls are missing; "
			"report --attach)\n", "attach failures:", t->attach_failed);
}

/* "1.5 KiB (1536 B)", or just "100 B" when that is exact already. */
static const char *size_text(char *buf, uint64_t bytes)
{
	char h[HSIZE];

	if (bytes < 1024)
		return mt_report__human(buf, bytes);
	snprintf(buf, 2 * HSIZE, "%s (%" PRIu64 " B)", mt_report__human(h, bytes), bytes);
	return buf;
}

/* "3 blocks, 1.5 KiB (1536 B)" */
static void blocks_text(FILE *f, const char *label, uint64_t n, uint64_t bytes)
{
	char a[2 * HSIZE];

	fprintf(f, "  %-20s%" PRIu64 " %s, %s\n", label, n, n == 1 ? "block" : "blocks", size_text(a, bytes));
}

#define TOP_UNKNOWN 5	/* processes named on the unknown frees line */

/* "unknown frees: N (...; top pids P (n), ...)": the processes with the most, first seen first among equals. */
static void text_unknown_frees(FILE *f, const struct mt_model *m)
{
	const struct mt_proc *top[TOP_UNKNOWN] = { NULL };
	size_t i, j, n = mt_model__nr_procs(m), shown = 0;

	fprintf(f, "  %-20s%" PRIu64 " (releases of blocks never seen allocated; top pids", "unknown frees:",
		mt_model__totals(m)->heap.unknown_frees);
	for (i = 0; i < n; i++) {
		const struct mt_proc *p = mt_model__proc(m, i);

		if (!p->heap.unknown_frees)
			continue;
		/* insertion into the sorted top, the last one falling out when it is full */
		j = shown < TOP_UNKNOWN ? shown++ : TOP_UNKNOWN;
		for (; j > 0 && top[j - 1]->heap.unknown_frees < p->heap.unknown_frees; j--)
			if (j < TOP_UNKNOWN)
				top[j] = top[j - 1];
		if (j < TOP_UNKNOWN)
			top[j] = p;
	}
	for (i = 0; i < shown; i++)
		fprintf(f, "%s %" PRIu32 " (%" PRIu64 ")", i ? "," : "", top[i]->pid, top[i]->heap.unknown_frees);
	fputs(")\n", f);
}

static void text_totals(FILE *f, const struct mt_model *m)
{
	const struct mt_totals *t = mt_model__totals(m);
	const struct mt_heap_stats *h = &t->heap;
	char a[2 * HSIZE], b[HSIZE];

	fputs("\ntotals:\n", f);
	fprintf(f, "  %-20s%" PRIu64 "\n", "allocations:", h->allocations);
	fprintf(f, "  %-20s%" PRIu64 "\n", "frees:", h->frees);
	fprintf(f, "  %-20s%s\n", "allocated:", size_text(a, h->allocated_bytes));
	fprintf(f, "  %-20s%s\n", "average size:",
		mt_report__human(a, h->allocations ? h->allocated_bytes / h->allocations : 0));
	fprintf(f, "  %-20s%s at %" PRIu64 ".%06" PRIu64 " s\n", "peak live:", size_text(a, h->peak_live_bytes),
		h->peak_ts_ns / 1000000000, h->peak_ts_ns % 1000000000 / 1000);
	blocks_text(f, "inherited at fork:", h->inherited_allocations, h->inherited_bytes);
	blocks_text(f, "discarded at exec:", h->exec_discarded_allocations, h->exec_discarded_bytes);
	blocks_text(f, "leaked at exit:", h->leaked_allocations, h->leaked_bytes);
	if (h->unknown_frees)
		text_unknown_frees(f, m);
	fprintf(f, "  %-20smmap %" PRIu64 " (%s), ", "mappings:", h->mmap_calls, mt_report__human(a, h->mmap_bytes));
	fprintf(f, "munmap %" PRIu64 " (%s), mremap %" PRIu64 ", brk %" PRIu64 " (not heap)\n",
		h->munmap_calls, mt_report__human(b, h->munmap_bytes), h->mremap_calls, h->brk_calls);
	text_anomalies(f, t);
	text_dropped(f, t);
}

static void text_procs(FILE *f, const struct mt_model *m)
{
	char st[HSIZE], a[HSIZE], b[HSIZE], c[HSIZE];
	size_t i, n = mt_model__nr_procs(m);

	fprintf(f, "\n%7s %7s  %-11s %7s %9s %9s %10s %10s %7s %7s %10s  %s\n", "PID", "PPID", "STATUS", "INHERIT",
		"ALLOCS", "FREES", "ALLOCATED", "PEAK", "DISCARD", "LEAKS", "LEAKED", "EXE");
	for (i = 0; i < n; i++) {
		const struct mt_proc *p = mt_model__proc(m, i);
		const struct mt_heap_stats *h = &p->heap;

		fprintf(f, "%7" PRIu32 " %7" PRIu32 "  %-11s %7" PRIu64 " %9" PRIu64 " %9" PRIu64 " %10s %10s %7" PRIu64
			" %7" PRIu64 " %10s  ", p->pid, p->ppid, status_text(st, p), h->inherited_allocations,
			h->allocations, h->frees, mt_report__human(a, h->allocated_bytes),
			mt_report__human(b, h->peak_live_bytes), h->exec_discarded_allocations, h->leaked_allocations,
			mt_report__human(c, h->leaked_bytes));
		if (p->exe[0]) {
			put_text(f, p->exe);
		} else if (p->comm[0]) {
			fputc('[', f);
			put_text(f, p->comm);
			fputc(']', f);
		} else {
			fputc('-', f);
		}
		fputc('\n', f);
	}
}

int mt_report__text(FILE *f, const struct mt_model *m, const char *label)
{
	text_header(f, m, label);
	text_totals(f, m);
	text_procs(f, m);
	return ferror(f) ? -EIO : 0;
}

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

static void json_heap(struct mt_json *j, const struct mt_heap_stats *h)
{
	mt_json__kv_u64(j, "inherited_allocations", h->inherited_allocations);
	mt_json__kv_u64(j, "inherited_bytes", h->inherited_bytes);
	mt_json__kv_u64(j, "allocations", h->allocations);
	mt_json__kv_u64(j, "frees", h->frees);
	mt_json__kv_u64(j, "allocated_bytes", h->allocated_bytes);
	mt_json__kv_u64(j, "freed_bytes", h->freed_bytes);
	mt_json__kv_u64(j, "peak_live_bytes", h->peak_live_bytes);
	mt_json__kv_u64(j, "peak_ts_ns", h->peak_ts_ns);
	mt_json__kv_u64(j, "average_size", h->allocations ? h->allocated_bytes / h->allocations : 0);
	mt_json__kv_u64(j, "exec_discarded_allocations", h->exec_discarded_allocations);
	mt_json__kv_u64(j, "exec_discarded_bytes", h->exec_discarded_bytes);
	mt_json__kv_u64(j, "leaked_allocations", h->leaked_allocations);
	mt_json__kv_u64(j, "leaked_bytes", h->leaked_bytes);
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

static void json_totals(struct mt_json *j, const struct mt_model *m)
{
	const struct mt_session_info *si = mt_model__session(m);
	const struct mt_totals *t = mt_model__totals(m);
	uint32_t i;

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
	json_heap(j, &t->heap);
	mt_json__kv_u64(j, "dropped_events", t->dropped_events);
	mt_json__key(j, "drops");
	mt_report__json_drops(j, t->drops);
	mt_json__kv_u64(j, "records", t->records);
	mt_json__kv_u64(j, "late_records", t->late_records);
	mt_json__kv_u64(j, "bad_records", t->bad_records);
	mt_json__kv_u64(j, "attach_failed", t->attach_failed);
	mt_json__kv_u64(j, "thread_exits", t->thread_exits);
	mt_json__end_object(j);
}

static void json_proc(struct mt_json *j, const struct mt_proc *p)
{
	mt_json__begin_object(j);
	mt_json__kv_u64(j, "pid", p->pid);
	mt_json__kv_u64(j, "ppid", p->ppid);
	mt_json__kv_string_n(j, "exe", p->exe, sizeof(p->exe));
	mt_json__kv_string_n(j, "comm", p->comm, sizeof(p->comm));
	mt_json__kv_bool(j, "exited", p->exited);
	if (p->exited)
		mt_json__kv_i64(j, "status", mt_status__shell(p->status));
	else
		mt_json__kv_null(j, "status");
	if (p->exited && mt_status__signal(p->status))
		mt_json__kv_i64(j, "signal", mt_status__signal(p->status));
	else
		mt_json__kv_null(j, "signal");
	json_heap(j, &p->heap);
	mt_json__end_object(j);
}

static int report_json(FILE *f, const struct mt_model *m, const struct mt_sites *sites, size_t top, bool with_sites)
{
	struct mt_json j;
	size_t i, n = mt_model__nr_procs(m);

	mt_json__init(&j, f, 2);
	mt_json__begin_object(&j);
	json_totals(&j, m);
	mt_json__key(&j, "processes");
	mt_json__begin_array(&j);
	for (i = 0; i < n; i++)
		json_proc(&j, mt_model__proc(m, i));
	mt_json__end_array(&j);
	if (with_sites)
		mt_report__sites_json(&j, sites, top);
	mt_json__end_object(&j);
	fputc('\n', f);
	return mt_json__error(&j);
}

int mt_report__json(FILE *f, const struct mt_model *m)
{
	return report_json(f, m, NULL, 0, false);
}

/* ---- top allocation sites (stacks.h): begin ---- */

int mt_report__json_sites(FILE *f, const struct mt_model *m, const struct mt_sites *sites, size_t top)
{
	return report_json(f, m, sites, top, true);
}

static void text_site(FILE *f, size_t rank, const struct mt_site *site, bool by_count)
{
	char a[2 * HSIZE], b[HSIZE];
	size_t i;

	if (by_count)
		fprintf(f, "  #%-3zu %" PRIu64 " allocations, %s", rank, site->count, size_text(a, site->bytes));
	else
		fprintf(f, "  #%-3zu %s in %" PRIu64 " allocations", rank, size_text(a, site->bytes), site->count);
	if (site->leaked_bytes)
		fprintf(f, ", %s leaked", mt_report__human(b, site->leaked_bytes));
	fputc('\n', f);
	if (!site->nframes)
		fputs("        (no frames)\n", f);
	for (i = 0; i < site->nframes; i++) {
		fputs("        ", f);
		put_text(f, site->frames[i].name);
		if (site->frames[i].srcline) {
			fputs(" (", f);
			put_text(f, site->frames[i].srcline);
			fputc(')', f);
		}
		fputc('\n', f);
	}
}

int mt_report__sites_text(FILE *f, const struct mt_sites *sites, size_t top)
{
	char a[2 * HSIZE];
	size_t i, n;

	if (!sites || !sites->any)
		return ferror(f) ? -EIO : 0;
	n = sites->count < top ? sites->count : top;
	fprintf(f, "\ntop allocation sites by bytes (%zu of %zu sites, %s chains):\n", n, sites->count,
		sites->dwarf ? "DWARF" : "frame-pointer");
	for (i = 0; i < n; i++)
		text_site(f, i + 1, &sites->sites[i], false);
	fprintf(f, "\ntop allocation sites by count (%zu of %zu sites):\n", n, sites->count);
	for (i = 0; i < n; i++)
		text_site(f, i + 1, sites->by_count[i], true);
	if (sites->undefined_allocations)
		fprintf(f, "  (%" PRIu64 " allocations, %s, name a stack that was never defined)\n",
			sites->undefined_allocations, size_text(a, sites->undefined_bytes));
	return ferror(f) ? -EIO : 0;
}

static void json_site(struct mt_json *j, const struct mt_site *site)
{
	size_t i;

	mt_json__begin_object(j);
	mt_json__kv_u64(j, "bytes", site->bytes);
	mt_json__kv_u64(j, "count", site->count);
	mt_json__kv_u64(j, "leaked_bytes", site->leaked_bytes);
	mt_json__kv_u64(j, "stacks", site->stacks);
	mt_json__key(j, "frames");
	mt_json__begin_array(j);
	for (i = 0; i < site->nframes; i++)
		mt_json__string(j, site->frames[i].name);
	mt_json__end_array(j);
	mt_json__key(j, "srclines");
	mt_json__begin_array(j);
	for (i = 0; i < site->nframes; i++) {
		if (site->frames[i].srcline)
			mt_json__string(j, site->frames[i].srcline);
		else
			mt_json__null(j);
	}
	mt_json__end_array(j);
	mt_json__end_object(j);
}

void mt_report__sites_json(struct mt_json *j, const struct mt_sites *sites, size_t top)
{
	size_t i, n = sites ? (sites->count < top ? sites->count : top) : 0;

	mt_json__key(j, "sites");
	mt_json__begin_array(j);
	for (i = 0; i < n; i++)
		json_site(j, &sites->sites[i]);
	mt_json__end_array(j);
	if (!sites || !sites->any)
		return;
	mt_json__key(j, "sites_by_count");
	mt_json__begin_array(j);
	for (i = 0; i < n; i++)
		json_site(j, sites->by_count[i]);
	mt_json__end_array(j);
	mt_json__kv_u64(j, "sites_total", sites->count);
	mt_json__kv_string(j, "sites_chains", sites->dwarf ? "dwarf" : "fp");
	mt_json__kv_u64(j, "undefined_stack_allocations", sites->undefined_allocations);
}

/* ---- top allocation sites: end ---- */

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
