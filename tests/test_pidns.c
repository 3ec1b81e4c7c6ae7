// SPDX-License-Identifier: GPL-2.0-only
/* test_pidns.c — recording inside a nested PID namespace (unshare --pid): exact counts, the namespace's pids. */
#include "kernel_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/artifact.h"

#define tmp_root mt_test_root
#define SIZE0 3101	/* pidns_tree's sizes: the process, its thread, its child, the child's child */
#define NSIZES 4
#define MAX_RECS 8

/* What a run's artifact says of pidns_tree's four tasks: per size, the calls and the ids they came with. */
struct seen {
	uint32_t session_pid, tracer_pid;
	uint64_t n[NSIZES];
	uint32_t pid[NSIZES], tid[NSIZES];
	bool mixed[NSIZES];		/* calls of one size from more than one thread */
	uint32_t fork_parent[MAX_RECS], fork_child[MAX_RECS], nforks;
	uint32_t exit_pid[MAX_RECS], nexits;
	uint32_t mi_attach_tid;		/* the thread held at libmimalloc's mapping */
	uint64_t mi_resumed_ns;
};

static void seen__alloc(struct seen *s, const struct mt_alloc *a)
{
	uint64_t i = a->size - SIZE0;

	if (mt_func__is_free(a->func) || a->size < SIZE0 || i >= NSIZES)
		return;
	if (s->n[i]++ && (s->pid[i] != a->hdr.pid || s->tid[i] != a->hdr.tid))
		s->mixed[i] = true;
	s->pid[i] = a->hdr.pid;
	s->tid[i] = a->hdr.tid;
}

static int seen__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	struct seen *s = ctx;

	if (h->type == MT_REC_SESSION) {
		s->session_pid = h->pid;
		s->tracer_pid = ((const struct mt_session *)h)->tracer_pid;
	} else if (h->type == MT_REC_ALLOC) {
		seen__alloc(s, (const struct mt_alloc *)h);
	} else if (h->type == MT_REC_FORK && s->nforks < MAX_RECS) {
		s->fork_parent[s->nforks] = h->pid;
		s->fork_child[s->nforks++] = ((const struct mt_fork *)h)->child;
	} else if (h->type == MT_REC_EXIT && s->nexits < MAX_RECS) {
		s->exit_pid[s->nexits++] = h->pid;
	} else if (h->type == MT_REC_ATTACH && strstr(((const struct mt_attach *)h)->path, "libmimalloc")) {
		s->mi_attach_tid = h->tid;
		s->mi_resumed_ns = ((const struct mt_attach *)h)->resumed_ns;
	}
	return 0;
}

/* The number after "\nkey " (or at the start) in the program's output; 0 when absent. */
static uint32_t out_pid(const char *out, const char *key)
{
	char pat[32];
	const char *p;

	snprintf(pat, sizeof(pat), "%s ", key);
	for (p = out; (p = strstr(p, pat)); p++)
		if (p == out || p[-1] == '\n')
			return strtoul(p + strlen(pat), NULL, 10);
	return 0;
}

/* A row of `memtrack report` with this PID and PPID. */
static bool report_has_row(const char *report, uint32_t pid, uint32_t ppid)
{
	const char *line;
	unsigned int a, b;

	for (line = report; line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (sscanf(line, " %u %u ", &a, &b) == 2 && a == pid && b == ppid)
			return true;
	return false;
}

/* Inside `unshare --pid --fork --mount-proc`, memtrack is the namespace's init; the artifact and the report give
 * the pids and tids the program printed, and every call counts. */
static void test_pidns_tree(void **state)
{
	char dir[256], out[1024], report[8192];
	char *argv[] = { "/usr/bin/unshare", "--pid", "--fork", "--mount-proc", MT_BINARY, "record", "-q", "-o", dir,
			 "--", PROG("pidns_tree"), NULL };
	char *rargv[] = { MT_BINARY, "report", dir, NULL };
	uint32_t self, thread, child, grandchild, i;
	struct mt_read_status st;
	struct seen s = { 0 };

	(void)state;
	snprintf(dir, sizeof(dir), "%s/tree", tmp_root);
	assert_int_equal(mt_test__run_named("tree", argv), 0);
	mt_test__read_named("tree", "out", out, sizeof(out));
	self = out_pid(out, "self");
	thread = out_pid(out, "thread");
	child = out_pid(out, "child");
	grandchild = out_pid(out, "grandchild");
	assert_int_equal(out_pid(out, "fork"), child);
	assert_int_equal(out_pid(out, "forked"), grandchild);
	assert_int_equal(mt_artifact__read(dir, seen__on_record, &s, &st), 0);
	assert_int_equal(s.tracer_pid, 1);	/* the namespace's init: the numbers below are the namespace's */
	assert_int_equal(s.session_pid, self);
	assert_true(thread != self && child != self && grandchild != child);
	assert_int_equal(s.n[0], 3);
	assert_int_equal(s.n[1], 4);
	assert_int_equal(s.n[2], 5);
	assert_int_equal(s.n[3], 6);
	for (i = 0; i < NSIZES; i++)
		assert_false(s.mixed[i]);
	assert_int_equal(s.pid[0], self);
	assert_int_equal(s.tid[0], self);
	assert_int_equal(s.pid[1], self);
	assert_int_equal(s.tid[1], thread);
	assert_int_equal(s.pid[2], child);
	assert_int_equal(s.tid[2], child);
	assert_int_equal(s.pid[3], grandchild);
	assert_int_equal(s.tid[3], grandchild);
	assert_int_equal(s.nforks, 2);
	assert_int_equal(s.fork_parent[0], self);
	assert_int_equal(s.fork_child[0], child);
	assert_int_equal(s.fork_parent[1], child);
	assert_int_equal(s.fork_child[1], grandchild);
	assert_int_equal(s.nexits, 3);
	assert_int_equal(s.exit_pid[0] + s.exit_pid[1] + s.exit_pid[2], self + child + grandchild);
	assert_int_equal(s.mi_attach_tid, thread);	/* held by its namespace tid, and resumed */
	assert_true(s.mi_resumed_ns != 0);
	assert_int_equal(mt_test__run_named("tree_report", rargv), 0);
	mt_test__read_named("tree_report", "out", report, sizeof(report));
	assert_true(report_has_row(report, self, 1));
	assert_true(report_has_row(report, child, self));
	assert_true(report_has_row(report, grandchild, child));
}

/* unshare --pid without --mount-proc keeps the parent namespace's /proc, where memtrack's pids name other
 * processes: refused, with what to do. */
static void test_pidns_foreign_proc(void **state)
{
	char dir[256], err[1024];
	char *argv[] = { "/usr/bin/unshare", "--pid", "--fork", MT_BINARY, "record", "-q", "-o", dir, "--",
			 PROG("alloc_glibc"), NULL };

	(void)state;
	snprintf(dir, sizeof(dir), "%s/foreign_proc", tmp_root);
	assert_int_equal(mt_test__run_named("foreign_proc", argv), 2);
	mt_test__read_named("foreign_proc", "err", err, sizeof(err));
	assert_non_null(strstr(err, "memtrack: /proc belongs to another PID namespace than memtrack's"));
	assert_int_equal(strchr(err, '\n') + 1 - err, strlen(err));	/* one line */
}

/* A user namespace's root has no capability in the initial one, where BPF asks for them: refused, saying so. */
static void test_pidns_user_ns(void **state)
{
	char dir[256], err[1024];
	char *argv[] = { "/usr/bin/unshare", "--user", "--map-root-user", "--pid", "--fork", "--mount-proc", MT_BINARY,
			 "record", "-q", "-o", dir, "--", PROG("alloc_glibc"), NULL };

	(void)state;
	snprintf(dir, sizeof(dir), "%s/user_ns", tmp_root);
	assert_int_equal(mt_test__run_named("user_ns", argv), 2);
	mt_test__read_named("user_ns", "err", err, sizeof(err));
	assert_non_null(strstr(err, "memtrack: recording needs CAP_BPF and CAP_PERFMON in the host's user namespace"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pidns_tree),
		cmocka_unit_test(test_pidns_foreign_proc),
		cmocka_unit_test(test_pidns_user_ns),
	};

	return mt_test__main("test_pidns", tests, sizeof(tests) / sizeof(tests[0]));
}
