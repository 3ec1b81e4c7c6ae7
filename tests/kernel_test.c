/* kernel_test.c — scratch dir, command runner, BPF gate and shared program facts for the integration tests. */
#include "kernel_test.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "artifact/artifact.h"

extern char **environ;
char mt_test_root[] = "/tmp/memtrack-test.XXXXXX";
static const char *test_name = "test";

pid_t mt_test__spawn(char *const *argv, const char *out, const char *err)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	if (out)
		posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (err)
		posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_int_equal(posix_spawn(&pid, argv[0], &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	return pid;
}

int mt_test__run(char *const *argv, const char *out, const char *err)
{
	pid_t pid = mt_test__spawn(argv, out, err);
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int mt_test__run_named(const char *name, char *const *argv)
{
	char out[512], err[512];

	snprintf(out, sizeof(out), "%s/%s.out", mt_test_root, name);
	snprintf(err, sizeof(err), "%s/%s.err", mt_test_root, name);
	return mt_test__run(argv, out, err);
}

void mt_test__read_named(const char *name, const char *ext, char *buf, size_t len)
{
	char path[512], *text;

	snprintf(path, sizeof(path), "%s/%s.%s", mt_test_root, name, ext);
	text = mt_test__read_file(path);
	snprintf(buf, len, "%s", text);
	free(text);
}

static void cleanup(void)
{
	char cmd[600];

	if (getenv("MEMTRACK_KEEP_TEST_DIR"))
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", mt_test_root);
	if (system(cmd))
		fprintf(stderr, "%s: could not remove %s\n", test_name, mt_test_root);
}

char *mt_test__read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), (size_t)n);
	fclose(f);
	return buf;
}

/* Recordings with stacks keep their modules in a cache of the scratch dir, not in the machine's. */
static void set_cache(void)
{
	char cache[300];

	snprintf(cache, sizeof(cache), "%s/module-cache", mt_test_root);
	setenv("MEMTRACK_CACHE", cache, 1);
}

static bool record__works(void)
{
	char dir[256], *argv[] = { MT_BINARY, "record", "-q", "-o", dir, "--", "true", NULL };

	snprintf(dir, sizeof(dir), "%s/probe", mt_test_root);
	return mt_test__run(argv, "/dev/null", "/dev/null") == 0;
}

int mt_test__main(const char *name, const struct CMUnitTest *tests, size_t n)
{
	struct rlimit no_core = { 0, 0 };
	const char *ci = getenv("CI");
	bool strict = ci && !strcmp(ci, "true");

	test_name = name;
	setrlimit(RLIMIT_CORE, &no_core);	/* the signal tests kill programs */
	if (!mkdtemp(mt_test_root))
		return 1;
	atexit(cleanup);
	set_cache();
	if (!record__works()) {
		fprintf(stderr, "%s: memtrack cannot record here (it needs root and BPF): %s\n", name,
			strict ? "failing, CI=true" : "skipped");
		return strict ? 1 : 77;
	}
	if (getenv("MT_TEST_FILTER"))	/* one test while iterating: MT_TEST_FILTER=test_name (cmocka's pattern) */
		cmocka_set_test_filter(getenv("MT_TEST_FILTER"));
	return _cmocka_run_group_tests(name, tests, n, NULL, NULL) ? 1 : 0;
}

struct phase_times {
	uint64_t base, first_free, last_phase;	/* the session, phase 2's first record, phase 3's */
	uint32_t frees;
};

static int phase_times__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	const struct mt_alloc *a = (const void *)h;
	struct phase_times *t = ctx;

	if (h->type == MT_REC_SESSION)
		t->base = h->ts_ns;
	if (h->type != MT_REC_ALLOC || !mt_func__is_free(a->func))
		return 0;
	if (++t->frees == 1)
		t->first_free = h->ts_ns;
	if (t->frees == 6)
		t->last_phase = h->ts_ns;
	return 0;
}

void mt_test__phase_times(const char *dir, char *from, char *to, size_t len)
{
	struct phase_times t = { 0 };
	struct mt_read_status st;

	assert_int_equal(mt_artifact__read(dir, phase_times__on_record, &t, &st), 0);
	assert_int_equal(t.frees, 7);
	assert_true(t.last_phase > t.first_free);	/* 200 ms apart: other ticks */
	snprintf(from, len, "%" PRIu64 ".%09" PRIu64, (t.first_free - t.base) / 1000000000,
		 (t.first_free - t.base) % 1000000000);
	snprintf(to, len, "%" PRIu64 ".%09" PRIu64, (t.last_phase - t.base) / 1000000000,
		 (t.last_phase - t.base) % 1000000000);
}
