// SPDX-License-Identifier: GPL-2.0-only
/* test_modcache.c — lean artifacts: modules kept once in the module cache, `pack`, `record --portable`. */
#include "kernel_test.h"

#include <dirent.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf/memtrack.h"
#include "common/elf.h"
#include "common/modcache.h"

#define tmp_root mt_test_root
#define MIB (1024 * 1024)

/* The program recorded: stack_chain copied into the scratch dir, so that a test can delete it. */
static void prog_copy(const char *name, char *prog, size_t len)
{
	char cmd[700];

	snprintf(prog, len, "%s/%s", tmp_root, name);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", PROG("stack_chain"), prog);
	assert_int_equal(system(cmd), 0);
}

/* `record --stacks [opt] -o DIR -- prog chain`, with the cache given (NULL: the scratch dir's). */
static void record(const char *dir, const char *prog, const char *opt, const char *cache)
{
	char *argv[] = { MT_BINARY, "record", "-q", "--stacks", "-o", (char *)dir, "--", (char *)prog, "chain", NULL,
			 NULL };
	char *saved = strdup(getenv(MT_MODCACHE_ENV));

	if (opt) {
		memmove(&argv[4], &argv[3], 7 * sizeof(argv[0]));
		argv[3] = (char *)opt;
	}
	if (cache)
		setenv(MT_MODCACHE_ENV, cache, 1);
	assert_int_equal(mt_test__run(argv, NULL, NULL), 0);
	setenv(MT_MODCACHE_ENV, saved, 1);
	free(saved);
}

/* `report --json DIR` with the cache given: the frames f20, f19 ... f1, main, in this order, named exactly. */
static void symbolized(const char *dir, const char *cache)
{
	char *argv[] = { MT_BINARY, "report", "--json", (char *)dir, NULL }, want[32], *json, *saved;
	const char *pos;
	int i;

	saved = strdup(getenv(MT_MODCACHE_ENV));
	setenv(MT_MODCACHE_ENV, cache, 1);
	assert_int_equal(mt_test__run_named("report", argv), 0);
	setenv(MT_MODCACHE_ENV, saved, 1);
	free(saved);
	json = mt_test__read_output("report", "out");
	pos = json;
	for (i = 20; i >= 0 && pos; i--) {
		if (i)
			snprintf(want, sizeof(want), "\"f%d+0x", i);
		else
			snprintf(want, sizeof(want), "\"main+0x");
		pos = strstr(pos, want);
		if (!pos)
			fprintf(stderr, "%s: no frame %s after f%d\n", dir, want, i + 1);
	}
	assert_non_null(pos);
	free(json);
}

/* Bytes DIR holds: its files' sizes, in DIR and one level down. */
static uint64_t dir_bytes(const char *dir, int depth)
{
	char path[600];
	struct dirent *e;
	struct stat st;
	uint64_t n = 0;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		assert_int_equal(lstat(path, &st), 0);
		n += S_ISDIR(st.st_mode) && depth ? dir_bytes(path, depth - 1) : (uint64_t)st.st_size;
	}
	closedir(d);
	return n;
}

/* The cache entry (or DIR/modules file, with cache NULL) of prog's build-id. */
static void entry_path(const char *cache, const char *dir, const char *prog, const char *what, char *path,
		       size_t len)
{
	char hex[2 * MT_BUILD_ID_MAX + 1];

	mt_test__build_id_hex(prog, hex);
	if (cache)
		assert_int_equal(mt_modcache__entry(cache, hex, what, path, len), 0);
	else
		snprintf(path, len, "%s/modules/%s", dir, hex);
}

static int mode_of(const char *path);

/* The mode of that entry, or -1 when it is missing. */
static int entry_mode(const char *cache, const char *dir, const char *prog, const char *what)
{
	char path[700];

	entry_path(cache, dir, prog, what, path, sizeof(path));
	return mode_of(path);
}

static int mode_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (int)(st.st_mode & 07777);
}

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define LD_SO "/lib64/ld-linux-x86-64.so.2"

/*
 * A --stacks recording of a small C program leaves a DIR of a few KiB, no DIR/modules: the program and libc are in
 * the cache (0700 directories, 0600 files), and the report is symbolized from there once the program is gone.
 */
static void test_lean_dir(void **state)
{
	char dir[300], prog[300], cache[300], top[400];
	uint64_t bytes;

	(void)state;
	prog_copy("lean_prog", prog, sizeof(prog));
	snprintf(dir, sizeof(dir), "%s/lean", tmp_root);
	snprintf(cache, sizeof(cache), "%s/lean-cache/sub", tmp_root);
	record(dir, prog, NULL, cache);
	bytes = dir_bytes(dir, 1);
	fprintf(stderr, "lean DIR: %llu bytes\n", (unsigned long long)bytes);
	assert_true(bytes < MIB);
	assert_int_equal(mode_of(dir), 0755);
	snprintf(top, sizeof(top), "%s/modules", dir);
	assert_int_equal(access(top, F_OK), -1);
	assert_int_equal(mode_of(cache), 0700);
	assert_int_equal(entry_mode(cache, NULL, prog, MT_MODCACHE_FILE), 0600);
	assert_int_equal(entry_mode(cache, NULL, LIBC, MT_MODCACHE_FILE), 0600);
	assert_int_equal(unlink(prog), 0);
	symbolized(dir, cache);
	bytes = dir_bytes(dir, 1);
	fprintf(stderr, "lean DIR after report: %llu bytes\n", (unsigned long long)bytes);
	assert_true(bytes < MIB);
}

/* A second recording of the same program adds nothing to the cache and leaves no temporary file there. */
static void test_cache_shared(void **state)
{
	char dir[300], prog[300], cache[300];
	uint64_t before;

	(void)state;
	prog_copy("shared_prog", prog, sizeof(prog));
	snprintf(cache, sizeof(cache), "%s/shared-cache", tmp_root);
	snprintf(dir, sizeof(dir), "%s/shared1", tmp_root);
	record(dir, prog, NULL, cache);
	before = dir_bytes(cache, 2);
	snprintf(dir, sizeof(dir), "%s/shared2", tmp_root);
	record(dir, prog, NULL, cache);
	assert_int_equal(dir_bytes(cache, 2), before);
	symbolized(dir, cache);
}

/* Names in dir (and one level down) that start with a dot: temporary files left behind. */
static size_t hidden_files(const char *dir, int depth)
{
	char path[600];
	struct dirent *e;
	size_t n = 0;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		n += e->d_name[0] == '.';
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR && depth)
			n += hidden_files(path, depth - 1);
	}
	closedir(d);
	return n;
}

/*
 * Four recordings at once into one empty cache race to insert the same entries: each DIR is symbolized, every entry
 * is its original byte for byte, and no temporary file is left.
 */
static void test_cache_concurrent(void **state)
{
	char cache[300], prog[300], entry[700], cmd[2000];
	int i;

	(void)state;
	prog_copy("race_prog", prog, sizeof(prog));
	snprintf(cache, sizeof(cache), "%s/race-cache", tmp_root);
	snprintf(cmd, sizeof(cmd), "for i in 0 1 2 3; do MEMTRACK_CACHE='%s' '%s' record -q --stacks -o '%s'/race$i -- "
		 "'%s' chain & pids=\"$pids $!\"; done; for p in $pids; do wait $p || exit 1; done", cache, MT_BINARY,
		 tmp_root, prog);
	assert_int_equal(system(cmd), 0);
	entry_path(cache, NULL, prog, MT_MODCACHE_FILE, entry, sizeof(entry));
	snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s'", entry, prog);
	assert_int_equal(system(cmd), 0);
	entry_path(cache, NULL, LIBC, MT_MODCACHE_FILE, entry, sizeof(entry));
	snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s'", entry, LIBC);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(hidden_files(cache, 2), 0);
	assert_int_equal(unlink(prog), 0);
	for (i = 0; i < 4; i++) {
		snprintf(cmd, sizeof(cmd), "%s/race%d", tmp_root, i);
		symbolized(cmd, cache);
	}
}

/*
 * pack copies what DIR references into DIR/modules (its exit 0 and line), twice is once; moved elsewhere, with the
 * program, the cache and its directory gone and an empty cache named instead, DIR is still symbolized.
 */
static void test_pack_then_move(void **state)
{
	char dir[300], moved[300], prog[300], cache[300], empty[300], cmd[2000], want[700], *out;
	char *argv[] = { MT_BINARY, "pack", dir, NULL };

	(void)state;
	prog_copy("pack_prog", prog, sizeof(prog));
	snprintf(dir, sizeof(dir), "%s/packed", tmp_root);
	snprintf(cache, sizeof(cache), "%s/pack-cache", tmp_root);
	record(dir, prog, NULL, cache);
	assert_int_equal(unlink(prog), 0);
	setenv(MT_MODCACHE_ENV, cache, 1);
	assert_int_equal(mt_test__run_named("pack", argv), 0);
	out = mt_test__read_output("pack", "out");
	snprintf(want, sizeof(want), "%s: 3 modules of 3 in %s/modules (%d files copied now)\n", dir, dir,
		 3 + mt_test__system_debug(LIBC) + mt_test__system_debug(LD_SO));
	assert_string_equal(out, want);
	free(out);
	assert_int_equal(entry_mode(NULL, dir, PROG("stack_chain"), NULL), 0600);
	assert_int_equal(mode_of(strcat(strcpy(want, dir), "/modules")), 0700);
	assert_int_equal(mt_test__run_named("pack_again", argv), 0);
	out = mt_test__read_output("pack_again", "out");
	snprintf(want, sizeof(want), "%s: 3 modules of 3 in %s/modules (0 files copied now)\n", dir, dir);
	assert_string_equal(out, want);
	free(out);
	snprintf(moved, sizeof(moved), "%s/elsewhere/packed", tmp_root);
	snprintf(empty, sizeof(empty), "%s/empty-cache", tmp_root);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/elsewhere' '%s' && mv '%s' '%s' && rm -rf '%s'", tmp_root, empty, dir,
		 moved, cache);
	assert_int_equal(system(cmd), 0);
	symbolized(moved, empty);
}

/* --portable: DIR/modules holds the modules, the cache is not even made; DIR moved reads alone. */
static void test_portable(void **state)
{
	char dir[300], moved[300], prog[300], cache[300], cmd[1000];

	(void)state;
	prog_copy("portable_prog", prog, sizeof(prog));
	snprintf(dir, sizeof(dir), "%s/portable", tmp_root);
	snprintf(cache, sizeof(cache), "%s/portable-cache", tmp_root);
	record(dir, prog, "--portable", cache);
	assert_int_equal(access(cache, F_OK), -1);
	assert_int_equal(entry_mode(NULL, dir, prog, NULL), 0600);
	snprintf(moved, sizeof(moved), "%s/elsewhere2/portable", tmp_root);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/elsewhere2' && mv '%s' '%s' && rm '%s'", tmp_root, dir, moved, prog);
	assert_int_equal(system(cmd), 0);
	symbolized(moved, cache);
}

/* A module found nowhere: pack copies the others, names it, exits 1; a DIR that is not there: one line, exit 2. */
static void test_pack_missing(void **state)
{
	char dir[300], prog[300], cache[300], cmd[700], want[700], *err;
	char *argv[] = { MT_BINARY, "pack", dir, NULL };

	(void)state;
	prog_copy("missing_prog", prog, sizeof(prog));
	snprintf(dir, sizeof(dir), "%s/missing", tmp_root);
	snprintf(cache, sizeof(cache), "%s/missing-cache", tmp_root);
	record(dir, prog, NULL, cache);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", cache, prog);
	assert_int_equal(system(cmd), 0);
	setenv(MT_MODCACHE_ENV, cache, 1);
	assert_int_equal(mt_test__run_named("pack_missing", argv), 1);
	err = mt_test__read_output("pack_missing", "err");
	snprintf(want, sizeof(want), "memtrack: pack: %s (build-id ", prog);
	assert_non_null(strstr(err, want));
	snprintf(want, sizeof(want), "): not in %s/modules, the module cache or at its path\n", dir);
	assert_non_null(strstr(err, want));
	free(err);
	err = mt_test__read_output("pack_missing", "out");
	snprintf(want, sizeof(want), "%s: 2 modules of 3 in %s/modules (%d files copied now)\n", dir, dir,
		 2 + mt_test__system_debug(LIBC) + mt_test__system_debug(LD_SO));
	assert_string_equal(err, want);
	free(err);
	snprintf(dir, sizeof(dir), "%s/no-such-dir", tmp_root);
	assert_int_equal(mt_test__run_named("pack_nodir", argv), 2);
}

/* The owner of path. */
static uid_t owner_of(const char *path)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	return st.st_uid;
}

/* sudo's user (nobody) when memtrack is root by sudo: SUDO_UID, SUDO_GID. */
static void sudo_as(const struct passwd *pw)
{
	char id[16];

	snprintf(id, sizeof(id), "%u", (unsigned int)pw->pw_uid);
	setenv("SUDO_UID", id, 1);
	snprintf(id, sizeof(id), "%u", (unsigned int)pw->pw_gid);
	setenv("SUDO_GID", id, 1);
}

/*
 * Under sudo the cache is the user's and written as the user: in a directory of nobody's, its entries are nobody's
 * (0700, 0600). In nobody's home (/nonexistent) nobody can make no cache: the modules go into DIR/modules, said once.
 */
static void test_sudo_cache(void **state)
{
	char dir[300], base[] = "/tmp/memtrack-cache-XXXXXX", cache[300], top[400], cmd[400], *err, *saved;
	char *argv[] = { MT_BINARY, "record", "-q", "--stacks", "-o", dir, "--", PROG("stack_chain"), "chain", NULL };
	const struct passwd *pw = getpwnam("nobody");

	(void)state;
	assert_non_null(pw);
	assert_non_null(mkdtemp(base));
	assert_int_equal(chown(base, pw->pw_uid, pw->pw_gid), 0);
	snprintf(cache, sizeof(cache), "%s/cache", base);
	snprintf(dir, sizeof(dir), "%s/sudo", tmp_root);
	saved = strdup(getenv(MT_MODCACHE_ENV));
	setenv(MT_MODCACHE_ENV, cache, 1);
	sudo_as(pw);
	assert_int_equal(mt_test__run_named("sudo_cache", argv), 0);
	assert_int_equal(owner_of(cache), pw->pw_uid);
	assert_int_equal(mode_of(cache), 0700);
	assert_int_equal(entry_mode(cache, NULL, PROG("stack_chain"), MT_MODCACHE_FILE), 0600);
	snprintf(top, sizeof(top), "%s/modules", dir);
	assert_int_equal(access(top, F_OK), -1);
	entry_path(cache, NULL, PROG("stack_chain"), MT_MODCACHE_FILE, top, sizeof(top));
	assert_int_equal(owner_of(top), pw->pw_uid);

	snprintf(dir, sizeof(dir), "%s/sudo_home", tmp_root);
	unsetenv(MT_MODCACHE_ENV);
	assert_int_equal(mt_test__run_named("sudo_home", argv), 0);
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	setenv(MT_MODCACHE_ENV, saved, 1);
	free(saved);
	err = mt_test__read_output("sudo_home", "err");
	assert_string_equal(err, "memtrack: no module cache (/nonexistent/.cache/memtrack: Permission denied): the "
				 "modules are copied into DIR/modules\n");
	free(err);
	assert_int_equal(entry_mode(NULL, dir, PROG("stack_chain"), NULL), 0600);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	assert_int_equal(system(cmd), 0);
}

/*
 * pack run by a user who may not read the cache's entry of a module found nowhere else: one line naming the entry's
 * error, exit 2 (setpriv runs it as nobody, DIR being nobody's).
 */
static void test_pack_unreadable_cache(void **state)
{
	char base[] = "/tmp/memtrack-pack-XXXXXX", dir[300], prog[300], cache[300], cmd[2000], want[700], *err;
	const struct passwd *pw = getpwnam("nobody");

	(void)state;
	assert_non_null(pw);
	assert_non_null(mkdtemp(base));
	assert_int_equal(chmod(base, 0755), 0);
	prog_copy("unreadable_prog", prog, sizeof(prog));
	snprintf(dir, sizeof(dir), "%s/dir", base);
	snprintf(cache, sizeof(cache), "%s/unreadable-cache", tmp_root);
	record(dir, prog, NULL, cache);
	snprintf(cmd, sizeof(cmd), "chown -R %u '%s' && rm '%s' && MEMTRACK_CACHE='%s' setpriv --reuid=%u --regid=%u "
		 "--clear-groups '%s' pack '%s' 2>'%s/unreadable.err'", (unsigned int)pw->pw_uid, dir, prog, cache,
		 (unsigned int)pw->pw_uid, (unsigned int)pw->pw_gid, MT_BINARY, dir, tmp_root);
	assert_int_equal(WEXITSTATUS(system(cmd)), 2);
	err = mt_test__read_output("unreadable", "err");
	snprintf(want, sizeof(want), "memtrack: pack: %s: its entry in the module cache %s cannot be read: Permission "
		 "denied\n", prog, cache);
	assert_string_equal(err, want);
	free(err);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lean_dir),
		cmocka_unit_test(test_cache_shared),
		cmocka_unit_test(test_cache_concurrent),
		cmocka_unit_test(test_pack_then_move),
		cmocka_unit_test(test_portable),
		cmocka_unit_test(test_pack_missing),
		cmocka_unit_test(test_sudo_cache),
		cmocka_unit_test(test_pack_unreadable_cache),
	};

	return mt_test__main("modcache", tests, sizeof(tests) / sizeof(tests[0]));
}
