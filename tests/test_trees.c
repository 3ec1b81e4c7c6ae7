// SPDX-License-Identifier: GPL-2.0-only
/* test_trees.c — integration: report's rows by executable on a make-like tree; record --python-malloc. */
#include "kernel_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runs memtrack with argv into NAME.out; returns its output (malloc'd). */
static char *run_out(const char *name, char **argv)
{
	char path[512];

	assert_int_equal(mt_test__run_named(name, argv), 0);
	snprintf(path, sizeof(path), "%s/%s.out", mt_test_root, name);
	return mt_test__read_file(path);
}

/* make runs 3 jobs (sh exec'ing cc), /bin/true and a child that only exits: 13 images, 4 executables. */
static void test_exe_rows(void **state)
{
	static const char want[] =
		"\nby executable: 4 in 6 processes, 13 images (`report --by-pid`: one row per process image)\n"
		"  PROCS    ALLOCS     FREES  ALLOCATED       PEAK   LEAKS     LEAKED  EXE\n"
		"      3        15        12    4.4 KiB    1.5 KiB       3      900 B  " MT_PROGS "/tree_make_cc\n"
		"      2         4         3    3.9 KiB    3.9 KiB       1     1000 B  " MT_PROGS "/tree_make\n"
		"      3         9         3    1.4 KiB      400 B       0        0 B  " MT_PROGS "/tree_make_sh\n"
		"(1 executable allocated nothing: /bin/true)\n"
		"(PEAK: the highest of one process image; LEAKS: blocks it allocated and held at exit, the suppressed "
		"ones and those inherited at fork apart)\n";
	char dir[512], *out, *byexe, *bypid, *json, *line;
	char *rec[] = { MT_BINARY, "record", "-q", "--no-rss", "-o", dir, "--", PROG("tree_make"), NULL };
	char *rep[] = { MT_BINARY, "report", dir, NULL };
	char *rep_exe[] = { MT_BINARY, "report", "--by-exe", dir, NULL };
	char *rep_pid[] = { MT_BINARY, "report", "--by-pid", dir, NULL };
	char *rep_json[] = { MT_BINARY, "report", "--json", dir, NULL };
	size_t rows = 0, len;

	(void)state;
	mt_test__path(dir, sizeof(dir), "tree_make");
	assert_int_equal(mt_test__run_named("tree_record", rec), 0);
	out = run_out("tree_report", rep);
	assert_non_null(strstr(out, "\nby executable"));
	assert_string_equal(strstr(out, "\nby executable"), want);
	byexe = run_out("tree_by_exe", rep_exe);
	assert_string_equal(byexe, out);
	bypid = run_out("tree_by_pid", rep_pid);
	/* one row per image; sh's command line (300 x's) cut to 100 characters, the last one "…" */
	for (line = strstr(bypid, "\n    PID"); line && (line = strchr(line + 1, '\n')) && line[1]; rows++) {
		len = strchr(line + 1, '\n') - (line + 1);
		if (memmem(line + 1, len, "tree_make_sh -c x", 17))	/* "→ " is 4 bytes, 2 characters */
			assert_int_equal(len, 111 + 2 + 99 + strlen("…"));
	}
	assert_int_equal(rows, 13);
	json = run_out("tree_json", rep_json);
	assert_non_null(strstr(json, "\"executables\""));
	assert_non_null(strstr(json, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
				     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"));
	free(json);
	free(bypid);
	free(byexe);
	free(out);
}

/* Lines of the dump that are callocs of size bytes (bytes(n) is a calloc). */
static size_t callocs_of(const char *dump, const char *size)
{
	const char *p = dump, *nl;
	size_t n = 0;

	for (; (nl = strchr(p, '\n')); p = nl + 1)
		n += memmem(p, nl - p, "\"event\":\"calloc\"", 16) && memmem(p, nl - p, size, strlen(size));
	return n;
}

/* 1000 objects of 410 bytes (pymalloc's) and 1000 of 1033 (malloc's): the first seen only with --python-malloc. */
static void test_python_malloc(void **state)
{
	static const char script[] = "import sys\nn = int(sys.argv[1])\nsmall = [bytes(377) for _ in range(n)]\n"
				     "large = [bytes(1000) for _ in range(n)]\n";
	char dir[512], py[512], *dump;
	char *rec[] = { MT_BINARY, "record", "-q", "-o", dir, "--", "/usr/bin/python3", py, "1000", NULL };
	char *rec_pm[] = { MT_BINARY, "record", "-q", "--python-malloc", "-o", dir, "--", "/usr/bin/python3", py,
			   "1000", NULL };
	char *dmp[] = { MT_BINARY, "dump", dir, NULL };

	(void)state;
	mt_test__write_text(mt_test__path(py, sizeof(py), "objs.py"), script);
	mt_test__path(dir, sizeof(dir), "py_pymalloc");
	assert_int_equal(mt_test__run_named("py_record", rec), 0);
	dump = run_out("py_dump", dmp);
	assert_int_equal(callocs_of(dump, "\"size\":410,"), 0);
	assert_int_equal(callocs_of(dump, "\"size\":1033,"), 1000);
	free(dump);
	mt_test__path(dir, sizeof(dir), "py_malloc");
	assert_int_equal(mt_test__run_named("py_record_pm", rec_pm), 0);
	dump = run_out("py_dump_pm", dmp);
	assert_int_equal(callocs_of(dump, "\"size\":410,"), 1000);
	assert_int_equal(callocs_of(dump, "\"size\":1033,"), 1000);
	free(dump);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exe_rows),
		cmocka_unit_test(test_python_malloc),
	};

	return mt_test__main("test_trees", tests, sizeof(tests) / sizeof(tests[0]));
}
