// SPDX-License-Identifier: GPL-2.0-only
/* test_rss.c — integration: resident memory records from the rss_stat tracepoint, their rate, model, dump, timeline. */
#include "kernel_test.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "artifact/artifact.h"
#include "model/model.h"
#include "report/timeline.h"

#define MIB (1ull << 20)

/* What the artifact's RSS records say, in its order, of one process (the root). */
struct rss_log {
	uint32_t pid;			/* 0 until the session record names it */
	uint64_t records, steps, periods, exits;
	uint64_t others;		/* of other processes: none here */
	uint64_t first_ns, last_ns;
	uint64_t last_bytes, max_bytes;
	bool after_exit;		/* a record followed the exit record */
	bool short_step;		/* a step record, not the first, moved by less than MT_RSS_STEP */
	bool bad_period;		/* a period record moved by MT_RSS_STEP or more, or by nothing */
};

static uint64_t rss__diff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

static void rss__check_rule(struct rss_log *l, const struct mt_rss *r, uint64_t bytes)
{
	uint64_t diff = rss__diff(bytes, l->last_bytes);

	l->after_exit |= l->exits != 0;
	if (r->why == MT_RSS_WHY_STEP) {
		l->steps++;
		l->short_step |= l->records > 0 && diff < MT_RSS_STEP;
	} else if (r->why == MT_RSS_WHY_PERIOD) {
		l->periods++;
		l->bad_period |= !diff || diff >= MT_RSS_STEP;
	} else {
		assert_int_equal(r->why, MT_RSS_WHY_EXIT);
		l->exits++;
	}
}

static int rss__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	const struct mt_rss *r = (const void *)h;
	struct rss_log *l = ctx;
	uint64_t bytes;

	if (h->type == MT_REC_SESSION && !l->pid)
		l->pid = h->pid;
	if (h->type != MT_REC_RSS)
		return 0;
	assert_int_equal(h->size, sizeof(*r));
	if (h->pid != l->pid) {
		l->others++;
		return 0;
	}
	bytes = r->anon + r->file + r->shmem;
	rss__check_rule(l, r, bytes);
	if (!l->records++)
		l->first_ns = h->ts_ns;
	l->last_ns = h->ts_ns;
	l->last_bytes = bytes;
	l->max_bytes = bytes > l->max_bytes ? bytes : l->max_bytes;
	return 0;
}

static void rss__read(const char *dir, struct rss_log *l)
{
	struct mt_read_status st;

	memset(l, 0, sizeof(*l));
	assert_int_equal(mt_artifact__read(dir, rss__on_record, l, &st), 0);
}

/* memtrack record -q -o DIR [OPT] -- rss_touch: its exit code. */
static int rss_run(const char *dir, const char *opt)
{
	char *argv[10] = { MT_BINARY, "record", "-q", "-o", (char *)dir }, out[512], err[512];
	int n = 5;

	if (opt)
		argv[n++] = (char *)opt;
	argv[n++] = "--";
	argv[n++] = PROG("rss_touch");
	assert_true(snprintf(out, sizeof(out), "%s.out", dir) < (int)sizeof(out));
	assert_true(snprintf(err, sizeof(err), "%s.err", dir) < (int)sizeof(err));
	return mt_test__run(argv, out, err);
}

/* Lines of `memtrack dump DIR` that hold needle. */
static uint64_t dump_count(const char *dir, const char *needle)
{
	char *argv[] = { MT_BINARY, "dump", (char *)dir, NULL }, out[600], line[4096];
	uint64_t n = 0;
	FILE *f;

	snprintf(out, sizeof(out), "%s.dump", dir);
	assert_int_equal(mt_test__run(argv, out, NULL), 0);
	f = fopen(out, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

/*
 * rss_touch touches 64 MiB, holds it 150 ms, frees it. Its peak is the block and the program's own pages (a MiB or
 * two), within the kernel counters' slack; the records keep the rule: each step moved 1 MiB or more, each period
 * record moved less, at most one exit record and it is the last. RSS rises to the peak and falls back once, so the
 * steps are at most two per MiB of the peak (and the first), the periods one per 100 ms of the span (and one).
 */
static void test_rss_peak(void **state)
{
	const struct mt_proc *p;
	struct mt_model *m;
	struct rss_log l;
	char dir[512];

	(void)state;
	mt_test__path(dir, sizeof(dir), "touch");
	assert_int_equal(rss_run(dir, NULL), 0);
	rss__read(dir, &l);
	assert_int_equal(l.others, 0);
	assert_false(l.short_step);
	assert_false(l.bad_period);
	assert_false(l.after_exit);
	assert_true(l.exits <= 1);
	assert_true(l.max_bytes >= 64 * MIB && l.max_bytes <= 80 * MIB);
	assert_true(l.steps >= 32);	/* up by 64 MiB, a fault at a time: 2 MiB at most (a huge page) */
	assert_true(l.steps <= 2 * (l.max_bytes / MIB) + 1);
	assert_true(l.periods <= (l.last_ns - l.first_ns) / MT_RSS_PERIOD_NS + 1);

	assert_int_equal(mt_model__load(dir, &m, NULL), 0);
	p = mt_model__find_proc(m, l.pid);
	assert_non_null(p);
	assert_int_equal(p->rss.records, l.records);
	assert_int_equal(p->rss.peak_rss_bytes, l.max_bytes);
	assert_int_equal(mt_model__totals(m)->rss.peak_rss_bytes, l.max_bytes);
	assert_int_equal(p->rss.rss_bytes, 0);	/* it exited */
	mt_model__free(m);

	assert_int_equal(dump_count(dir, "\"event\":\"rss\""), l.records);
}

static size_t svg_count(const char *s, const char *needle)
{
	size_t n = 0;

	for (; (s = strstr(s, needle)); s++)
		n++;
	return n;
}

/* timeline: the RSS series on its own points, one per record and one at the exit, and the peak; drawn in the SVG. */
static void test_rss_timeline(void **state)
{
	struct mt_timeline_opts o = { 0 };
	struct mt_timeline *t;
	struct rss_log l;
	char dir[512], want[64], *json = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	mt_test__path(dir, sizeof(dir), "timeline");
	assert_int_equal(rss_run(dir, NULL), 0);
	rss__read(dir, &l);
	assert_int_equal(mt_timeline__build(dir, &o, &t, NULL), 0);
	f = open_memstream(&json, &len);
	assert_non_null(f);
	assert_int_equal(mt_timeline__json(f, t), 0);
	fclose(f);
	assert_non_null(strstr(json, "\"rss\":{\"t_ns\":["));
	snprintf(want, sizeof(want), "\"bytes\":%" PRIu64 "}}", l.max_bytes);
	assert_non_null(strstr(json, want));
	assert_non_null(strstr(json, ",0],\"processes\":[{\"pid\":"));	/* the total ends at 0: the exit */
	free(json);
	/* the SVG: the heap's line and two RSS lines (the total and the process's, dotted), the RSS legend */
	f = open_memstream(&json, &len);
	assert_non_null(f);
	assert_int_equal(mt_timeline__svg(f, t, "rss"), 0);
	fclose(f);
	mt_timeline__free(t);
	assert_non_null(strstr(json, ">RSS total (peak "));
	assert_non_null(strstr(json, "<text x=\"936\" y=\"444.0\" fill=\"#2060c0\">0 B</text>"));	/* its own axis */
	assert_int_equal(svg_count(json, "stroke-dasharray=\"2,3\" points="), 2);
	free(json);
}

/* The vfork child's records: none while it runs in its parent's memory (the first ones come from its exec's new
 * memory, which the kernel sets up before the exec's tracepoint: they may precede the exec record). */
struct vfork_log {
	uint32_t child;			/* the MT_FORK_SHARED_VM child */
	bool exec_seen;			/* its exec record */
	uint64_t records, max_bytes;
};

static int vfork__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	const struct mt_fork *fk = (const void *)h;
	struct vfork_log *v = ctx;

	if (h->type == MT_REC_FORK && (fk->flags & MT_FORK_SHARED_VM))
		v->child = fk->child;
	if (!v->child || h->pid != v->child)
		return 0;
	if (h->type == MT_REC_EXEC)
		v->exec_seen = true;
	if (h->type == MT_REC_RSS) {
		const struct mt_rss *r = (const void *)h;
		uint64_t bytes = r->anon + r->file + r->shmem;

		v->records++;
		v->max_bytes = bytes > v->max_bytes ? bytes : v->max_bytes;
	}
	return 0;
}

/*
 * rss_vfork holds 32 MiB, and its vfork child faults 4 MiB more of its parent's memory before it execs /bin/true:
 * those count in the parent (36 MiB and a little), never in the child, so the total's peak is not the parent's
 * counted twice.
 */
static void test_rss_vfork(void **state)
{
	char *argv[] = { MT_BINARY, "record", "-q", "-o", NULL, "--", PROG("rss_vfork"), NULL }, dir[512];
	const struct mt_session_info *si;
	struct vfork_log v = { 0 };
	struct mt_read_status st;
	struct mt_model *m;
	uint64_t parent;

	(void)state;
	mt_test__path(dir, sizeof(dir), "vfork");
	argv[4] = dir;
	assert_int_equal(mt_test__run(argv, NULL, NULL), 0);
	assert_int_equal(mt_artifact__read(dir, vfork__on_record, &v, &st), 0);
	assert_true(v.child && v.exec_seen);
	assert_true(v.records >= 1);
	assert_true(v.max_bytes < 8 * MIB);	/* /bin/true's, never its parent's 36 MiB */
	assert_int_equal(mt_model__load(dir, &m, NULL), 0);
	si = mt_model__session(m);
	parent = mt_model__find_proc(m, si->root_pid)->rss.peak_rss_bytes;
	assert_true(parent >= 36 * MIB && parent <= 44 * MIB);
	assert_true(mt_model__find_proc(m, v.child)->rss.peak_rss_bytes < 8 * MIB);
	assert_true(mt_model__totals(m)->rss.peak_rss_bytes < parent + 8 * MIB);
	mt_model__free(m);
}

/* What rss_credit printed: a point's /proc counters, in kB (status's RssAnon, RssFile, RssShmem; smaps_rollup's
 * Rss). */
struct credit_point {
	uint32_t pid;
	uint64_t anon, file, shmem, rss;
};

/* An RSS record as the series has it at a point. */
struct credit_rec {
	uint32_t tid;
	uint64_t seq, anon, file, shmem;
};

/* The artifact of a run of rss_credit: the parent, its fork child, their records and the series at each mark. */
struct credit_log {
	uint32_t parent, child;
	bool child_seen;		/* an RSS record of the child (after its fork's record) */
	struct credit_rec first;	/* the child's first RSS record */
	struct credit_rec last[2];	/* the latest RSS record of the parent, the child */
	struct credit_rec at[3];	/* the series at the marks P1, C1, C2 */
	uint64_t marks;			/* bit n: mark n seen */
	uint64_t child_records, child_by_parent;	/* between C1 and C2: all the parent's (the child slept) */
	uint64_t odd_units;		/* RSS values that are not a multiple of the page size */
};

static int credit__on_rss(struct credit_log *l, const struct mt_rss *r)
{
	struct credit_rec c = { r->hdr.tid, r->hdr.seq, r->anon, r->file, r->shmem };
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	bool child = r->hdr.pid == l->child;

	l->odd_units += (r->anon % page || r->file % page || r->shmem % page || r->swap % page);
	if (r->hdr.pid != l->parent && !child)
		return 0;
	if (child && !l->child_seen) {
		l->first = c;
		l->child_seen = true;
	}
	if (child && (l->marks & 2) && !(l->marks & 4)) {
		l->child_records++;
		l->child_by_parent += r->hdr.tid == l->parent;
	}
	l->last[child] = c;
	return 0;
}

static int credit__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	const struct mt_alloc *a = (const void *)h;
	const struct mt_fork *fk = (const void *)h;
	struct credit_log *l = ctx;

	if (h->type == MT_REC_SESSION && !l->parent)
		l->parent = h->pid;
	if (h->type == MT_REC_FORK && fk->hdr.pid == l->parent && !l->child)
		l->child = fk->child;
	if (h->type == MT_REC_RSS)
		return credit__on_rss(l, (const void *)h);
	if (h->type == MT_REC_ALLOC && a->func == MT_FN_MALLOC && a->size >= 1001 && a->size <= 1003) {
		unsigned int n = a->size - 1001;	/* the marks' sizes (rss_credit.c) */

		l->at[n] = l->last[n > 0];
		l->marks |= 1u << n;
	}
	return 0;
}

/* rss_credit's output: each point's line. */
static void credit__points(const char *out, struct credit_point pt[3])
{
	static const char *const names[] = { "P1", "C1", "C2" };
	char *text = mt_test__read_file(out), name[8];
	struct credit_point p;
	const char *line;
	int n = 0;

	assert_non_null(text);
	for (line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		assert_int_equal(sscanf(line, "%7s %" SCNu32 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64, name,
					&p.pid, &p.anon, &p.file, &p.shmem, &p.rss), 6);
		for (int i = 0; i < 3; i++)
			if (!strcmp(name, names[i])) {
				pt[i] = p;
				n++;
			}
	}
	assert_int_equal(n, 3);
	free(text);
}

/* The series at a point, against the kernel's counters then: each part, and their sum against smaps_rollup's Rss,
 * within one page. */
static void credit__check(const struct credit_rec *r, const struct credit_point *p)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	assert_true(rss__diff(r->anon, p->anon * 1024) <= page);
	assert_true(rss__diff(r->file, p->file * 1024) <= page);
	assert_true(rss__diff(r->shmem, p->shmem * 1024) <= page);
	assert_true(rss__diff(r->anon + r->file + r->shmem, p->rss * 1024) <= page);
}

/*
 * rss_credit: the parent touches 600 pages (P1), forks; the child touches 300 more and reads a 512-page file (C1),
 * then sleeps while the parent pages the file out of it with process_madvise(MADV_PAGEOUT) and, after a pause, a
 * page more (C2). The child's first record is its copy of the parent's pages, written by the parent at the fork;
 * the drop is in the child's series although the child did not run, each record written by the parent; at P1, C1
 * and C2 the series is the kernel's /proc counters within a page, each part apart.
 */
static void test_rss_credit(void **state)
{
	char *argv[] = { MT_BINARY, "record", "-q", "-o", NULL, "--", PROG("rss_credit"), mt_test_root, NULL };
	struct statfs fs;
	struct credit_point pt[3] = { 0 };
	struct credit_log l = { 0 };
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct mt_read_status st;
	char dir[512], out[600];

	(void)state;
	mt_test__path(dir, sizeof(dir), "credit");
	argv[4] = dir;
	/* its file's pages must be a file's, paged out without swap: not tmpfs's, which are shmem */
	if (!statfs(mt_test_root, &fs) && fs.f_type == TMPFS_MAGIC)
		argv[7] = MT_PROGS;
	snprintf(out, sizeof(out), "%s.out", dir);
	assert_int_equal(mt_test__run(argv, out, NULL), 0);
	credit__points(out, pt);
	assert_int_equal(mt_artifact__read(dir, credit__on_record, &l, &st), 0);
	assert_int_equal(l.marks, 7);
	assert_true(l.child && pt[1].pid == l.child && pt[2].pid == l.child && pt[0].pid == l.parent);
	assert_int_equal(l.odd_units, 0);
	/* the fork's copy: the parent's anonymous pages, in the child's first record, by the parent */
	assert_true(l.child_seen);
	assert_int_equal(l.first.tid, l.parent);
	assert_true(rss__diff(l.first.anon, pt[0].anon * 1024) <= page);
	/* the page-out: the file's 512 pages and more gone from the child's series, by the parent alone */
	assert_true(l.child_records >= 2);
	assert_int_equal(l.child_by_parent, l.child_records);
	assert_int_equal(l.at[2].tid, l.parent);
	assert_true(l.at[1].file - l.at[2].file >= 512 * page);
	for (int i = 0; i < 3; i++)
		credit__check(&l.at[i], &pt[i]);
}

/* --no-rss: no rss_stat program, no records, and the report has no RSS keys. */
static void test_no_rss(void **state)
{
	struct mt_model *m;
	struct rss_log l;
	char dir[512];

	(void)state;
	mt_test__path(dir, sizeof(dir), "no_rss");
	assert_int_equal(rss_run(dir, "--no-rss"), 0);
	rss__read(dir, &l);
	assert_int_equal(l.records + l.others, 0);
	assert_int_equal(mt_model__load(dir, &m, NULL), 0);
	assert_int_equal(mt_model__totals(m)->rss.records, 0);
	assert_int_equal(mt_model__totals(m)->heap.peak_live_bytes, 64 * MIB);
	mt_model__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rss_peak),
		cmocka_unit_test(test_rss_timeline),
		cmocka_unit_test(test_rss_vfork),
		cmocka_unit_test(test_rss_credit),
		cmocka_unit_test(test_no_rss),
	};

	return mt_test__main("test_rss", tests, sizeof(tests) / sizeof(tests[0]));
}
