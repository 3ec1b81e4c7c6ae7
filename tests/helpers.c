// SPDX-License-Identifier: GPL-2.0-only
/* helpers.c — the tests' shared helpers: scratch dir, command runner, whole files, golden files. */
#include "helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf/memtrack.h"
#include "common/elf.h"

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


char *mt_test__read_bytes(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		fail_msg("cannot read %s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), (size_t)n);
	fclose(f);
	if (len)
		*len = n;
	return buf;
}

char *mt_test__read_file(const char *path)
{
	return mt_test__read_bytes(path, NULL);
}

void mt_test__write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		fail_msg("cannot write %s: %s", path, strerror(errno));
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

void mt_test__write_text(const char *path, const char *text)
{
	mt_test__write_file(path, text, strlen(text));
}

char *mt_test__read_output(const char *name, const char *ext)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/%s.%s", mt_test_root, name, ext);
	return mt_test__read_file(path);
}

bool mt_test__file_has(const char *path, const char *what)
{
	char *text;
	bool has;

	if (access(path, R_OK))
		return false;
	text = mt_test__read_file(path);
	has = strstr(text, what) != NULL;
	free(text);
	return has;
}

#define WAIT_STEP_US 20000
#define WAIT_STEPS 1500		/* 30 s: BPF's load comes first */

void mt_test__wait_for(const char *path, const char *what)
{
	int i;

	for (i = 0; i < WAIT_STEPS && !mt_test__file_has(path, what); i++)
		usleep(WAIT_STEP_US);
	assert_true(mt_test__file_has(path, what));
}

int mt_test__wait_code(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

size_t mt_test__count(const char *s, const char *needle)
{
	size_t n = 0;

	for (; (s = strstr(s, needle)); s += strlen(needle))
		n++;
	return n;
}

void mt_test__build_id_hex(const char *path, char *hex)
{
	uint8_t id[MT_BUILD_ID_MAX];
	int n = mt_elf__file_build_id(path, id, sizeof(id));

	assert_int_equal(n, 20);	/* ld's default --build-id (sha1), the test programs' and Debian's libraries' */
	mt_elf__build_id_hex(id, n, hex);
}

int mt_test__system_debug(const char *path)
{
	char hex[2 * MT_BUILD_ID_MAX + 1], debug[300];

	mt_test__build_id_hex(path, hex);
	snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	return !access(debug, R_OK);
}

bool mt_test__have(const char *tool)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s > /dev/null 2>&1", tool);
	return !system(cmd);
}

bool mt_test__need(const char *tool, const char *package)
{
	const char *ci = getenv("CI");

	if (mt_test__have(tool))
		return true;
	if (ci && !strcmp(ci, "true"))
		fail_msg("%s not found: install the %s package", tool, package);
	print_message("%s not found (package %s): skipped\n", tool, package);
	skip();
	return false;
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

int mt_test__scratch(const char *name)
{
	test_name = name;
	if (!mkdtemp(mt_test_root)) {
		fprintf(stderr, "%s: cannot make %s: %s\n", name, mt_test_root, strerror(errno));
		return -errno;
	}
	atexit(cleanup);
	return 0;
}

char *mt_test__path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", mt_test_root, name);
	return buf;
}

/* Prints the first line where the two texts part, diff style. */
static void print_first_difference(const char *exp, size_t elen, const char *act, size_t alen)
{
	size_t i = 0, line = 1, start = 0, e_end, a_end;

	while (i < elen && i < alen && exp[i] == act[i]) {
		if (exp[i++] == '\n') {
			line++;
			start = i;
		}
	}
	for (e_end = start; e_end < elen && exp[e_end] != '\n'; e_end++)
		;
	for (a_end = start; a_end < alen && act[a_end] != '\n'; a_end++)
		;
	print_error("first difference at line %zu:\n-%.*s\n+%.*s\n", line,
		    (int)(e_end - start), exp + start, (int)(a_end - start), act + start);
}

void mt_test__check_golden(const char *dir, const char *name, const char *actual, size_t len)
{
	const char *update = getenv("MEMTRACK_UPDATE_GOLDEN");
	char path[512], out[512];
	char *expected;
	size_t elen;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (update && !strcmp(update, "1")) {
		mt_test__write_file(path, actual, len);
		print_message("updated %s\n", path);
		return;
	}
	if (access(path, R_OK))
		fail_msg("cannot read %s: %s (MEMTRACK_UPDATE_GOLDEN=1 creates it)", path, strerror(errno));
	expected = mt_test__read_bytes(path, &elen);
	if (elen == len && !memcmp(expected, actual, len)) {
		free(expected);
		return;
	}
	snprintf(out, sizeof(out), "%s.actual", name);	/* in the working directory: the build tree */
	mt_test__write_file(out, actual, len);
	print_first_difference(expected, elen, actual, len);
	free(expected);
	fail_msg("%s differs from its golden file; see `diff -u %s %s`; MEMTRACK_UPDATE_GOLDEN=1 accepts the new output",
		 name, path, out);
}
