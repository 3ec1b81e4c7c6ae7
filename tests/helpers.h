/* SPDX-License-Identifier: GPL-2.0-only */
/* helpers.h — what every test binary shares, kernel or not: its scratch dir, running commands, files, golden files. */
#ifndef MEMTRACK_TEST_HELPERS_H
#define MEMTRACK_TEST_HELPERS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <sys/types.h>
#include <cmocka.h>

/* The scratch directory of this test binary (removed at exit unless MEMTRACK_KEEP_TEST_DIR is set). */
extern char mt_test_root[];

/* Makes mt_test_root, removed at exit; name is the binary's, for the message when it cannot be. 0 or -errno. */
int mt_test__scratch(const char *name);
/* NAME in the scratch dir, into buf. Returns buf. */
char *mt_test__path(char *buf, size_t len, const char *name);

/* Runs argv (argv[0] a path) with stdout/stderr to the files named (NULL: inherited); returns its exit code. */
int mt_test__run(char *const *argv, const char *out, const char *err);
/* The same started, not waited for: its pid. */
pid_t mt_test__spawn(char *const *argv, const char *out, const char *err);

/* The whole of the file at path, malloc'd and NUL-terminated (the test fails when it cannot be read); _bytes also
 * gives its length (len may be NULL), for files that hold NULs. */
char *mt_test__read_file(const char *path);
char *mt_test__read_bytes(const char *path, size_t *len);
/* len bytes of buf as the file at path, created or truncated (the test fails when it cannot be written). */
void mt_test__write_file(const char *path, const void *buf, size_t len);
/* The same with a string. */
void mt_test__write_text(const char *path, const char *text);

/* mt_test__run with stdout/stderr to NAME.out and NAME.err in the scratch dir; mt_test__read_named reads one back
 * (NAME.EXT), NUL-terminated, at most len - 1 bytes. */
int mt_test__run_named(const char *name, char *const *argv);
void mt_test__read_named(const char *name, const char *ext, char *buf, size_t len);

/* NAME.EXT of the scratch dir (an output of mt_test__run_named), whole, malloc'd. */
char *mt_test__read_output(const char *name, const char *ext);
/* Whether the file at path holds what ("": whether it is there); false when it cannot be read. */
bool mt_test__file_has(const char *path, const char *what);
/* Waits until the file at path holds what (30 s at most: BPF's load may come first); fails the test otherwise. */
void mt_test__wait_for(const char *path, const char *what);
/* Waits for pid, which must exit: its exit code. */
int mt_test__wait_code(pid_t pid);
/* Occurrences of needle in s, not overlapping. */
size_t mt_test__count(const char *s, const char *needle);

/* The build-id of the ELF file at path, in hex (2 * MT_BUILD_ID_MAX + 1 bytes); the test fails unless it is sha1's. */
void mt_test__build_id_hex(const char *path, char *hex);
/* 1 when this machine has the separate debug file of path (/usr/lib/debug/.build-id), else 0. */
int mt_test__system_debug(const char *path);

/* Whether tool is on PATH. */
bool mt_test__have(const char *tool);
/* A test that needs a Debian package's tool: skipped without it, failed under CI=true (the package is listed). */
bool mt_test__need(const char *tool, const char *package);

/*
 * actual (len bytes) against the golden file dir/name: a difference fails the test, leaving NAME.actual in the
 * working directory (the build tree) to diff. MEMTRACK_UPDATE_GOLDEN=1 writes actual as the golden file instead.
 */
void mt_test__check_golden(const char *dir, const char *name, const char *actual, size_t len);

#endif /* MEMTRACK_TEST_HELPERS_H */
