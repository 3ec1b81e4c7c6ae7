// SPDX-License-Identifier: GPL-2.0-only
/* kernel_test.c — the BPF gate and shared program facts for the integration tests (the rest: helpers.c). */
#include "kernel_test.h"

#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "artifact/artifact.h"

const struct passwd *mt_test__user(gid_t *extra)
{
	char *groupadd[] = { "/usr/sbin/groupadd", "--system", MT_TEST_GROUP, NULL };
	char *useradd[] = { "/usr/sbin/useradd", "--system", "--no-create-home", "--user-group", "--groups", MT_TEST_GROUP,
			    "--shell", "/usr/sbin/nologin", MT_TEST_USER, NULL };
	const struct group *g;
	const struct passwd *pw;

	if (!getgrnam(MT_TEST_GROUP))
		assert_int_equal(mt_test__run(groupadd, NULL, NULL), 0);
	if (!getpwnam(MT_TEST_USER))
		assert_int_equal(mt_test__run(useradd, NULL, NULL), 0);
	g = getgrnam(MT_TEST_GROUP);
	assert_non_null(g);
	*extra = g->gr_gid;
	pw = getpwnam(MT_TEST_USER);
	assert_non_null(pw);
	assert_int_not_equal(pw->pw_uid, 0);
	return pw;
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

void mt_test__record_stacks(const char *dir, const char *prog, const char *arg)
{
	char *argv[] = { MT_BINARY, "record", "-q", "--stacks", "-o", (char *)dir, "--", (char *)prog, (char *)arg,
			 NULL };

	assert_int_equal(mt_test__run(argv, NULL, NULL), 0);
}

/* MT_TEST_FILTER: the tests named in its space-separated list, so that CTest can run a binary's tests again under
 * another mode (MEMTRACK_ATTACH=legacy). Unset: every test. */
static size_t tests__filter(const struct CMUnitTest *tests, size_t n, struct CMUnitTest *out)
{
	const char *list = getenv("MT_TEST_FILTER");
	char padded[4096], name[256];
	size_t i, k = 0;

	if (!list || !*list) {
		memcpy(out, tests, n * sizeof(*tests));
		return n;
	}
	snprintf(padded, sizeof(padded), " %s ", list);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), " %s ", tests[i].name);
		if (strstr(padded, name))
			out[k++] = tests[i];
	}
	return k;
}

int mt_test__main(const char *name, const struct CMUnitTest *all, size_t nall)
{
	struct rlimit no_core = { 0, 0 };
	const char *ci = getenv("CI");
	bool strict = ci && !strcmp(ci, "true");
	struct CMUnitTest *tests = calloc(nall, sizeof(*tests));
	size_t n = tests ? tests__filter(all, nall, tests) : 0;
	int failed;

	setrlimit(RLIMIT_CORE, &no_core);	/* the signal tests kill programs */
	if (mt_test__scratch(name))
		return 1;
	set_cache();
	if (!record__works()) {
		fprintf(stderr, "%s: memtrack cannot record here (it needs root and BPF): %s\n", name,
			strict ? "failing, CI=true" : "skipped");
		free(tests);
		return strict ? 1 : 77;
	}
	if (!n) {
		fprintf(stderr, "%s: MT_TEST_FILTER matches no test\n", name);
		free(tests);
		return 1;
	}
	failed = _cmocka_run_group_tests(name, tests, n, NULL, NULL);
	free(tests);
	return failed ? 1 : 0;
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
