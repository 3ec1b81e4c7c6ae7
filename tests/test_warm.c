// SPDX-License-Identifier: GPL-2.0-only
/* test_warm.c — the warm start (on unless MEMTRACK_WARM=0): cold then warm, same counts; busy, stale, foreign sets */
#include "kernel_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "artifact/artifact.h"
#include "model/model.h"

#define tmp_root mt_test_root
#define PINS "/sys/fs/bpf/memtrack"
#define MAX_PIDS 64

/* What a run's artifact counts. sized: alloc_tree's own sizes (3001..3005) alone. */
struct counts {
	uint64_t allocs, frees, bytes, sized, sized_bytes, threads_pairs;
	uint32_t pids[MAX_PIDS], npids;
	uint32_t sized_pids[MAX_PIDS], nsized_pids;
};

static void pids__add(uint32_t *pids, uint32_t *n, uint32_t pid)
{
	uint32_t i;

	for (i = 0; i < *n && pids[i] != pid; i++)
		;
	if (i == *n && *n < MAX_PIDS)
		pids[(*n)++] = pid;
}

static int counts__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	const struct mt_alloc *a = (const void *)h;
	struct counts *c = ctx;

	if (h->type != MT_REC_ALLOC)
		return 0;
	if (mt_func__is_free(a->func)) {
		c->frees++;
		return 0;
	}
	c->allocs++;
	c->bytes += a->size;
	if (a->size >= 3001 && a->size <= 3005) {
		c->sized++;
		c->sized_bytes += a->size;
		pids__add(c->sized_pids, &c->nsized_pids, h->pid);
	}
	pids__add(c->pids, &c->npids, h->pid);
	return 0;
}

/* `memtrack record -v -q -o DIR -- argv` as NAME (stderr: NAME.err), MEMTRACK_WARM=warm (NULL: unset, the default,
 * warm); its counts. */
static struct counts record_counts_opt(const char *name, const char *warm, const char *opt, char *const *prog)
{
	char dir[256], *argv[17] = { MT_BINARY, "record", "-v", "-q", "-o", dir };
	struct mt_read_status st;
	struct counts c = { 0 };
	int n = 6;

	if (opt)
		argv[n++] = (char *)opt;
	argv[n++] = "--";
	for (int i = 0; prog[i] && i < 8; i++)
		argv[n++] = prog[i];
	snprintf(dir, sizeof(dir), "%s/%s", tmp_root, name);
	if (warm)
		setenv("MEMTRACK_WARM", warm, 1);
	else
		unsetenv("MEMTRACK_WARM");
	assert_int_equal(mt_test__run_named(name, argv), 0);
	unsetenv("MEMTRACK_WARM");
	assert_int_equal(mt_artifact__read(dir, counts__on_record, &c, &st), 0);
	return c;
}

static struct counts record_counts(const char *name, const char *warm, char *const *prog)
{
	return record_counts_opt(name, warm, NULL, prog);
}

/* Until the last run's closer has let the kept programs go (it holds their directory's lock until its links are
 * closed, which may outlast memtrack's 20 ms wait on a busy machine): the next run then finds them free. */
static void pins__settle(void)
{
	DIR *d = opendir(PINS);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		int fd = e->d_name[0] == '.' ? -1 : openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0)
			continue;
		assert_int_equal(flock(fd, LOCK_EX), 0);
		close(fd);
	}
	closedir(d);
}

static void counts__same(const struct counts *a, const struct counts *b)
{
	assert_int_equal(a->allocs, b->allocs);
	assert_int_equal(a->frees, b->frees);
	assert_int_equal(a->bytes, b->bytes);
	assert_int_equal(a->npids, b->npids);
	assert_int_equal(a->nsized_pids, b->nsized_pids);
	assert_int_equal(a->sized, b->sized);
	assert_int_equal(a->sized_bytes, b->sized_bytes);
}

/* alloc_tree's own: 3 + 5 + 7 + 2 + 9 calls of sizes 3001..3005, in four processes. */
static void counts__tree(const struct counts *c)
{
	assert_int_equal(c->sized, 26);
	assert_int_equal(c->sized_bytes, 3 * 3001 + 5 * 3002 + 7 * 3003 + 2 * 3005 + 9 * 3004);
	assert_int_equal(c->nsized_pids, 4);
}

static void pins__remove(void)
{
	char *argv[] = { "/bin/rm", "-rf", PINS, NULL };

	assert_int_equal(mt_test__run(argv, NULL, NULL), 0);
}

static bool err_has(const char *name, const char *what)
{
	char *err = mt_test__read_output(name, "err");
	bool has = strstr(err, what) != NULL;

	free(err);
	return has;
}

#define TAKEN "warm start: the programs kept by a past run taken"
#define KEPT_NONE "warm start: no programs kept yet"

/* The same workloads cold (MEMTRACK_WARM=0), then warm (by default, and with MEMTRACK_WARM=1): the first loads cold
 * and keeps the programs, the next two take them; every count the same. The threads' 80,000 pairs pass the task
 * storage of past runs' threads. */
static void test_warm_exact(void **state)
{
	char *tree[] = { PROG("alloc_tree"), NULL }, *threads[] = { PROG("alloc_threads"), NULL };
	const char *names[] = { "pin", "warm1", "warm2" };
	struct counts cold, cold_threads, c;
	struct stat st;

	(void)state;
	pins__remove();
	cold = record_counts("cold", "0", tree);
	cold_threads = record_counts("cold_threads", "0", threads);
	assert_int_equal(lstat(PINS, &st), -1);	/* with MEMTRACK_WARM=0 nothing is kept */
	counts__tree(&cold);
	assert_true(cold_threads.allocs >= 80008 && cold_threads.frees >= 80000);	/* 8 threads' pairs, TLS */
	for (int i = 0; i < 3; i++) {
		char name[64];

		pins__settle();
		c = record_counts(names[i], i == 1 ? "1" : NULL, tree);
		counts__same(&c, &cold);
		assert_true(err_has(names[i], i ? TAKEN : KEPT_NONE));
		snprintf(name, sizeof(name), "%s_threads", names[i]);
		pins__settle();
		c = record_counts(name, NULL, threads);
		counts__same(&c, &cold_threads);
		assert_true(err_has(name, TAKEN));
	}
}

/* PINS's set of slot `slot` (HASH-SLOT), locked as a run would: the lock's fd. */
static int pins__hold_slot(int slot)
{
	char suffix[8], path[600] = "";
	DIR *d = opendir(PINS);
	struct dirent *e;
	int fd;

	assert_non_null(d);
	snprintf(suffix, sizeof(suffix), "-%d", slot);
	while ((e = readdir(d)))
		if (strlen(e->d_name) > 2 && !strcmp(e->d_name + strlen(e->d_name) - 2, suffix))
			snprintf(path, sizeof(path), PINS "/%s", e->d_name);
	closedir(d);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	return fd;
}

/* A run of alloc_tree as NAME that waits for the file go before its exec, stderr in NAME.err. */
static pid_t holder__spawn(const char *name, const char *go)
{
	char script[512], dir[256], err[256];
	char *argv[] = { MT_BINARY, "record", "-v", "-q", "-o", dir, "--", "/bin/sh", "-c", script, NULL };

	snprintf(script, sizeof(script), "while [ ! -e %s ]; do sleep 0.01; done; exec %s", go, PROG("alloc_tree"));
	snprintf(dir, sizeof(dir), "%s/%s", tmp_root, name);
	mt_test__path(err, sizeof(err), name);
	strcat(err, ".err");
	return mt_test__spawn(argv, NULL, err);
}

/* NAME's wait for the go file, its artifact's counts: alloc_tree's. */
static void holder__wait(const char *name, pid_t pid)
{
	char dir[256];
	struct counts c = { 0 };
	struct mt_read_status st;

	assert_int_equal(mt_test__wait_code(pid), 0);
	snprintf(dir, sizeof(dir), "%s/%s", tmp_root, name);
	assert_int_equal(mt_artifact__read(dir, counts__on_record, &c, &st), 0);
	counts__tree(&c);
}

/*
 * Runs at once: while one holds the kept set, a second loads cold and keeps a second set (slot 1); a third, while
 * both are held, loads cold and keeps nothing. Every count exact; each set is taken afterwards (the first one held
 * by the test for the second's turn).
 */
static void test_warm_concurrent(void **state)
{
	char go[256], err[256], *tree[] = { PROG("alloc_tree"), NULL };
	struct counts cold, c;
	pid_t first, second;

	(void)state;
	cold = record_counts("conc_cold", "0", tree);
	pins__remove();
	record_counts("conc_pin", NULL, tree);	/* slot 0 kept */
	assert_int_equal(mt_test__dir_entries(PINS), 1);
	mt_test__path(go, sizeof(go), "go");
	pins__settle();
	first = holder__spawn("first", go);
	mt_test__path(err, sizeof(err), "first.err");
	mt_test__wait_for(err, TAKEN);
	second = holder__spawn("second", go);
	mt_test__path(err, sizeof(err), "second.err");
	mt_test__wait_for(err, KEPT_NONE);
	mt_test__wait_for(err, "entry points probed");	/* after its set was kept */
	assert_int_equal(mt_test__dir_entries(PINS), 2);
	c = record_counts("third", NULL, tree);
	counts__same(&c, &cold);
	assert_true(err_has("third", "warm start: every set of programs kept is another memtrack's: loading cold"));
	mt_test__write_text(go, "");
	holder__wait("first", first);
	holder__wait("second", second);
	assert_int_equal(mt_test__dir_entries(PINS), 2);
	for (int i = 0; i < 2; i++) {
		char name[32];
		int held = -1;

		pins__settle();
		if (i)
			held = pins__hold_slot(0);
		snprintf(name, sizeof(name), "after%d", i);
		c = record_counts(name, NULL, tree);	/* the holders' locks let go with their links */
		counts__same(&c, &cold);
		assert_true(err_has(name, TAKEN));
		if (held >= 0)
			close(held);
	}
}

/* PINS's one entry other than skip (and other than also), in name ("" when none). */
static void pins__other(char *name, size_t size, const char *skip, const char *also)
{
	DIR *d = opendir(PINS);
	struct dirent *e;

	assert_non_null(d);
	name[0] = 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && strcmp(e->d_name, skip) && strcmp(e->d_name, also)) {
			assert_int_equal(name[0], 0);
			snprintf(name, size, "%s", e->d_name);
		}
	closedir(d);
}

/* The kept `calls` task storage (PINS/HASH-SLOT/m_calls, the one set a run made): its fd. */
static int pins__calls(void)
{
	char set[256], path[600];
	int fd;

	pins__other(set, sizeof(set), "", "");
	snprintf(path, sizeof(path), PINS "/%s/m_calls", set);
	fd = bpf_obj_get(path);
	assert_true(fd >= 0);
	return fd;
}

#define CALL_BYTES 168		/* bpf/calls.bpf.h's struct mt_call */
#define CALL_SP_AT 0		/* its outermost call's stack pointer: above it, an entry is nested (not counted) */
#define CALL_DEPTH_AT 112	/* its depth (allocator entries not yet returned) */
#define CALL_SESSION_AT 124	/* its session number */

/*
 * A task that a past run left with a call in flight in task storage (as --pid would leave one detached inside
 * malloc): attach_wait's main thread, written so through the kept map, then recorded warm with --pid. Its free of
 * the block made before the attach is on the task storage path: it counts only if the entry is taken as new.
 */
static void test_warm_stale_storage(void **state)
{
	char ready[600], err[600], dir[512], pid[16], *tree[] = { PROG("alloc_tree"), NULL };
	char *prog[] = { PROG("attach_wait"), ready, NULL };
	char *rec[] = { MT_BINARY, "record", "-v", "-q", "--pid", pid, "-o", dir, NULL };
	unsigned char call[CALL_BYTES] = { 0 };
	uint64_t sp = UINT64_MAX >> 1;
	uint32_t depth = 3, session = 0x7fffffff;
	struct mt_read_status st;
	const struct mt_proc *proc;
	struct mt_model *m;
	pid_t target, memtrack;
	int calls, pidfd;

	(void)state;
	pins__remove();
	record_counts("stale_pin", "1", tree);	/* the one set kept */
	snprintf(dir, sizeof(dir), "%s/stale", tmp_root);
	snprintf(ready, sizeof(ready), "%s.ready", dir);
	snprintf(err, sizeof(err), "%s.err", dir);
	target = mt_test__spawn(prog, "/dev/null", NULL);
	mt_test__wait_for(ready, "");
	memcpy(call + CALL_SP_AT, &sp, sizeof(sp));
	memcpy(call + CALL_DEPTH_AT, &depth, sizeof(depth));
	memcpy(call + CALL_SESSION_AT, &session, sizeof(session));
	calls = pins__calls();
	pidfd = syscall(SYS_pidfd_open, target, 0);
	assert_true(pidfd >= 0);
	assert_int_equal(bpf_map_update_elem(calls, &pidfd, call, BPF_ANY), 0);
	close(pidfd);
	close(calls);
	snprintf(pid, sizeof(pid), "%d", target);
	pins__settle();
	setenv("MEMTRACK_WARM", "1", 1);
	memtrack = mt_test__spawn(rec, "/dev/null", err);
	unsetenv("MEMTRACK_WARM");
	mt_test__wait_for(err, "attached");
	assert_true(mt_test__file_has(err, TAKEN));
	assert_int_equal(kill(target, SIGUSR1), 0);
	assert_int_equal(mt_test__wait_code(target), 7);
	assert_int_equal(mt_test__wait_code(memtrack), 7);
	assert_int_equal(mt_model__load(dir, &m, &st), 0);
	proc = mt_model__find_proc(m, target);
	assert_non_null(proc);
	assert_int_equal(proc->heap.pre_attach_frees, 1);
	mt_model__free(m);
}

/* A map pinned at path, as another tool could pin one. */
static void pin__map(const char *path)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL);

	assert_true(fd >= 0);
	assert_int_equal(bpf_obj_pin(fd, path), 0);
	close(fd);
}

#define OTHER_SET PINS "/fedcba9876543210fedcba9876543210-1"

/*
 * A set kept for other settings (--no-rss here; another build alike) is removed when a new set is kept, unless a run
 * holds it; what memtrack did not make there is left as it is: a directory of another mode, one of another name and
 * its pin, a pin of another name in a directory named as memtrack names its sets (whose own pins go).
 */
static void test_warm_sweep(void **state)
{
	char a[256], b[256], path[600], *tree[] = { PROG("alloc_tree"), NULL };
	struct counts c;
	struct stat st;
	int held;

	(void)state;
	pins__remove();
	counts__tree((c = record_counts("sweep_a", NULL, tree), &c));
	pins__other(a, sizeof(a), "", "");
	pins__settle();
	counts__tree((c = record_counts_opt("sweep_b", NULL, "--no-rss", tree), &c));
	assert_true(err_has("sweep_b", KEPT_NONE));
	pins__other(b, sizeof(b), "", "");
	assert_string_not_equal(a, b);	/* a removed: b alone */
	assert_int_equal(mkdir(PINS "/0123456789abcdef0123456789abcdef-0", 0755), 0);
	assert_int_equal(chmod(PINS "/0123456789abcdef0123456789abcdef-0", 0755), 0);
	snprintf(path, sizeof(path), PINS "/%s", b);
	pins__settle();
	held = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(held >= 0);
	assert_int_equal(flock(held, LOCK_EX), 0);	/* as a run of b's settings would */
	counts__tree((c = record_counts("sweep_c", NULL, tree), &c));
	assert_true(err_has("sweep_c", KEPT_NONE));
	assert_int_equal(mt_test__dir_entries(PINS), 3);	/* a again, b held, the foreign one */
	close(held);
	pins__other(a, sizeof(a), b, "0123456789abcdef0123456789abcdef-0");
	assert_int_equal(mkdir(PINS "/other", 0700), 0);
	pin__map(PINS "/other/m_keep");
	assert_int_equal(mkdir(OTHER_SET, 0700), 0);
	pin__map(OTHER_SET "/ready");
	pin__map(OTHER_SET "/m_x");
	pin__map(OTHER_SET "/x_foreign");
	snprintf(path, sizeof(path), "/bin/rm -rf " PINS "/%s", a);
	assert_int_equal(system(path), 0);
	pins__settle();
	counts__tree((c = record_counts("sweep_d", NULL, tree), &c));
	assert_true(err_has("sweep_d", KEPT_NONE));
	assert_int_equal(mt_test__dir_entries(PINS), 4);	/* b let go: removed */
	assert_int_equal(lstat(PINS "/0123456789abcdef0123456789abcdef-0", &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(lstat(PINS "/other/m_keep", &st), 0);
	assert_int_equal(lstat(OTHER_SET "/x_foreign", &st), 0);
	assert_int_equal(lstat(OTHER_SET "/ready", &st), -1);
	assert_int_equal(lstat(OTHER_SET "/m_x", &st), -1);
	pins__remove();
}

/* PINS made by someone else (0755, another owner, a symlink): memtrack loads cold, counts exactly, and creates
 * nothing in it nor where it points. */
static void warm_foreign(const char *name, const char *setup)
{
	char target[256], cmd[768], *sh[] = { "/bin/sh", "-c", cmd, NULL }, *tree[] = { PROG("alloc_tree"), NULL };
	struct counts c;

	mt_test__path(target, sizeof(target), "elsewhere");
	pins__remove();
	snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir %s && %s", target, target, setup);
	setenv("TARGET", target, 1);
	assert_int_equal(mt_test__run(sh, NULL, NULL), 0);
	c = record_counts(name, "1", tree);
	counts__tree(&c);
	assert_true(err_has(name, "is not memtrack's"));
	assert_int_equal(mt_test__dir_entries(target), 0);
	assert_int_equal(mt_test__dir_entries(PINS), 0);
	pins__remove();
}

/* MEMTRACK_WARM takes 0 or 1: another value is refused in one line, before anything runs. */
static void test_warm_bad_value(void **state)
{
	char dir[256], *argv[] = { MT_BINARY, "record", "-q", "-o", dir, "--", PROG("alloc_tree"), NULL };
	char *err;
	struct stat st;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/bad_value", tmp_root);
	setenv("MEMTRACK_WARM", "yes", 1);
	assert_int_not_equal(mt_test__run_named("bad_value", argv), 0);
	unsetenv("MEMTRACK_WARM");
	err = mt_test__read_output("bad_value", "err");
	assert_non_null(strstr(err, "memtrack: MEMTRACK_WARM=yes: expected 0 or 1\n"));
	free(err);
	assert_int_equal(lstat(dir, &st), -1);	/* no artifact */
}

static void test_warm_foreign_mode(void **state)
{
	(void)state;
	warm_foreign("foreign_mode", "mkdir -m 0755 " PINS);
}

static void test_warm_foreign_owner(void **state)
{
	(void)state;
	warm_foreign("foreign_owner", "mkdir -m 0700 " PINS " && chown 65534 " PINS);
}

static void test_warm_symlink(void **state)
{
	(void)state;
	warm_foreign("symlink", "chmod 0700 \"$TARGET\" && ln -s \"$TARGET\" " PINS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_warm_exact),
		cmocka_unit_test(test_warm_concurrent),
		cmocka_unit_test(test_warm_stale_storage),
		cmocka_unit_test(test_warm_sweep),
		cmocka_unit_test(test_warm_bad_value),
		cmocka_unit_test(test_warm_foreign_mode),
		cmocka_unit_test(test_warm_foreign_owner),
		cmocka_unit_test(test_warm_symlink),
	};
	int ret = mt_test__main("test_warm", tests, sizeof(tests) / sizeof(tests[0]));

	if (system("rm -rf " PINS))	/* what the tests kept: a warm start is opt-in */
		ret = ret ? ret : 1;
	return ret;
}
