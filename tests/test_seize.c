// SPDX-License-Identifier: GPL-2.0-only
/* test_seize.c — tracer/seize.c on the real kernel: record --pid seizes a running process, counts exactly from
 * "attached", detaches. */
#include "kernel_test.h"

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "artifact/artifact.h"
#include "model/model.h"

/* attach_wait, started by the test (its parent), once it has made its block and waits for SIGUSR1. */
struct target {
	pid_t pid;
	pid_t memtrack;
	char dir[512];
	char err[600];
};

/* The program running and waiting, then memtrack attached to it. */
static void target__start(struct target *t, const char *name, const char *mode)
{
	char ready[600], pid[16];
	char *prog[] = { PROG("attach_wait"), ready, (char *)mode, NULL };
	char *rec[] = { MT_BINARY, "record", "-q", "--pid", pid, "-o", t->dir, NULL };

	snprintf(t->dir, sizeof(t->dir), "%s/%s", mt_test_root, name);
	snprintf(ready, sizeof(ready), "%s.ready", t->dir);
	snprintf(t->err, sizeof(t->err), "%s.err", t->dir);
	t->pid = mt_test__spawn(prog, "/dev/null", NULL);
	mt_test__wait_for(ready, "");
	snprintf(pid, sizeof(pid), "%d", t->pid);
	t->memtrack = mt_test__spawn(rec, "/dev/null", t->err);
	mt_test__wait_for(t->err, "attached");
}

/* The 4321-byte blocks the artifact holds: allocated, and freed among those. */
struct pairs {
	uint64_t allocs, frees;
	uint64_t live[64];
	size_t nlive;
};

static int pairs__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	const struct mt_alloc *a = (const void *)h;
	struct pairs *p = ctx;
	size_t i;

	if (h->type != MT_REC_ALLOC || !a->addr)
		return 0;
	if (a->func == MT_FN_MALLOC && a->size == 4321 && p->nlive < 64) {
		p->allocs++;
		p->live[p->nlive++] = a->addr;
	} else if (a->func == MT_FN_FREE) {
		for (i = 0; i < p->nlive && p->live[i] != a->addr; i++)
			;
		if (i < p->nlive) {
			p->frees++;
			p->live[i] = p->live[--p->nlive];
		}
	}
	return 0;
}

/* Two threads' 1,000 malloc(4321)+free counted exactly; the block made before the attach and freed after is a free
 * before the attach in the process's row; its exit status 7 is the process's and memtrack's. */
static void test_pid_counts(void **state)
{
	struct mt_read_status st;
	struct pairs p = { 0 };
	const struct mt_proc *proc;
	struct mt_model *m;
	struct target t;

	(void)state;
	target__start(&t, "counts", NULL);
	assert_int_equal(kill(t.pid, SIGUSR1), 0);
	assert_int_equal(mt_test__wait_code(t.pid), 7);
	assert_int_equal(mt_test__wait_code(t.memtrack), 7);
	assert_int_equal(mt_artifact__read(t.dir, pairs__on_record, &p, &st), 0);
	assert_int_equal(p.allocs, 1000);
	assert_int_equal(p.frees, 1000);
	assert_int_equal(mt_model__load(t.dir, &m, &st), 0);
	assert_true(mt_model__session(m)->attached);
	assert_true(mt_model__totals(m)->complete);
	proc = mt_model__find_proc(m, t.pid);
	assert_non_null(proc);
	assert_true(proc->exited);
	assert_true(WIFEXITED(proc->status));
	assert_int_equal(WEXITSTATUS(proc->status), 7);
	assert_int_equal(proc->heap.pre_attach_frees, 1);
	assert_int_equal(proc->heap.unknown_frees, 0);
	assert_string_equal(proc->exe, PROG("attach_wait"));
	assert_int_equal(proc->ppid, getpid());	/* its parent, not memtrack */
	mt_model__free(m);
}

/* Its state letter, its tracer, and the signals pending to it (its threads' and the process's). */
static char proc__state(pid_t pid, pid_t *tracer, unsigned long long *pending)
{
	char path[64], line[256], state = 0;
	unsigned long long p;
	FILE *f;

	*pending = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "State: %c", &state);
		sscanf(line, "TracerPid: %d", tracer);
		if (sscanf(line, "SigPnd: %llx", &p) == 1 || sscanf(line, "ShdPnd: %llx", &p) == 1)
			*pending |= p;
	}
	fclose(f);
	return state;
}

/* SIGINT to memtrack: it detaches and exits 0; the process, neither traced nor stopped, finishes as it would have. */
/* Let go, the process sleeps in pause() again: R only for the moment it takes to get back there. */
static void state__settled(pid_t pid, pid_t *tracer, unsigned long long *pending)
{
	int i, state = 0;

	for (i = 0; i < 200 && (state = proc__state(pid, tracer, pending)) == 'R'; i++)
		usleep(10000);
	assert_int_equal(state, 'S');
}

static void test_pid_sigint(void **state)
{
	struct mt_read_status st;
	const struct mt_proc *proc;
	struct mt_model *m;
	struct target t;
	unsigned long long pending;
	pid_t tracer = -1;

	(void)state;
	target__start(&t, "sigint", NULL);
	assert_int_equal(kill(t.memtrack, SIGINT), 0);
	assert_int_equal(mt_test__wait_code(t.memtrack), 0);
	assert_true(mt_test__file_has(t.err, "detached"));
	state__settled(t.pid, &tracer, &pending);
	assert_int_equal(tracer, 0);
	assert_int_equal(pending, 0);	/* no SIGSTOP (nor any hold) left to deliver */
	assert_int_equal(kill(t.pid, SIGUSR1), 0);
	assert_int_equal(mt_test__wait_code(t.pid), 7);
	assert_int_equal(mt_model__load(t.dir, &m, &st), 0);
	assert_true(mt_model__totals(m)->complete);
	proc = mt_model__find_proc(m, t.pid);
	assert_non_null(proc);
	assert_false(proc->exited);
	mt_model__free(m);
}

/* A child forked after the attach is recorded: its 100 pairs, its status, and the block it inherited from before
 * the attach and freed as its pre-attach free. */
static void test_pid_child(void **state)
{
	struct mt_read_status st;
	const struct mt_proc *parent, *child = NULL;
	struct pairs p = { 0 };
	struct mt_model *m;
	struct target t;
	size_t i;

	(void)state;
	target__start(&t, "child", "fork");
	assert_int_equal(kill(t.pid, SIGUSR1), 0);
	assert_int_equal(mt_test__wait_code(t.pid), 7);
	assert_int_equal(mt_test__wait_code(t.memtrack), 7);
	assert_int_equal(mt_artifact__read(t.dir, pairs__on_record, &p, &st), 0);
	assert_int_equal(p.allocs, 100);
	assert_int_equal(p.frees, 100);
	assert_int_equal(mt_model__load(t.dir, &m, &st), 0);
	for (i = 0; i < mt_model__nr_procs(m); i++)
		if (mt_model__proc(m, i)->ppid == (uint32_t)t.pid)
			child = mt_model__proc(m, i);
	assert_non_null(child);
	assert_true(child->exited);
	assert_int_equal(WEXITSTATUS(child->status), 3);
	assert_int_equal(child->heap.allocations, 100);
	assert_int_equal(child->heap.pre_attach_frees, 1);
	assert_int_equal(child->heap.unknown_frees, 0);
	parent = mt_model__find_proc(m, t.pid);
	assert_non_null(parent);
	assert_int_equal(parent->heap.pre_attach_frees, 0);
	mt_model__free(m);
}

/* A pid no process has, and --pid with a command: one line each, exit 2, nothing recorded. */
static void test_pid_errors(void **state)
{
	char pid[32], dir[512], err[600], buf[512];
	char *none[] = { MT_BINARY, "record", "--pid", pid, "-o", dir, NULL };
	char *both[] = { MT_BINARY, "record", "--pid", "1", "-o", dir, "--", "true", NULL };
	unsigned long max = 0;
	FILE *f;

	(void)state;
	f = fopen("/proc/sys/kernel/pid_max", "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lu", &max), 1);
	fclose(f);
	snprintf(pid, sizeof(pid), "%lu", max);	/* pids are below pid_max */
	snprintf(dir, sizeof(dir), "%s/none", mt_test_root);
	snprintf(err, sizeof(err), "%s.err", dir);
	assert_int_equal(mt_test__run(none, "/dev/null", err), 2);
	f = fopen(err, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	assert_null(fgets(buf + 256, 256, f));
	fclose(f);
	assert_non_null(strstr(buf, "no such process"));
	assert_int_equal(access(dir, F_OK), -1);
	assert_int_equal(mt_test__run(both, "/dev/null", err), 2);
	assert_true(mt_test__file_has(err, "--pid excludes a command"));
	assert_int_equal(access(dir, F_OK), -1);
	snprintf(pid, sizeof(pid), "2");	/* kthreadd */
	assert_int_equal(mt_test__run(none, "/dev/null", err), 2);
	assert_true(mt_test__file_has(err, "a kernel thread"));
	assert_int_equal(access(dir, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pid_counts),
		cmocka_unit_test(test_pid_sigint),
		cmocka_unit_test(test_pid_child),
		cmocka_unit_test(test_pid_errors),
	};

	return mt_test__main("test_seize", tests, sizeof(tests) / sizeof(tests[0]));
}
