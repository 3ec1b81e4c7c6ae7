/* kernel_test.h — what the tests that trace on the real kernel share: a scratch dir, running commands, the BPF gate. */
#ifndef MEMTRACK_KERNEL_TEST_H
#define MEMTRACK_KERNEL_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <sys/types.h>
#include <cmocka.h>

#ifndef MT_BINARY
#define MT_BINARY "memtrack"
#endif
#ifndef MT_PROGS
#define MT_PROGS "."
#endif
#define PROG(name) MT_PROGS "/" name

/* The scratch directory of this test binary (removed at exit unless MEMTRACK_KEEP_TEST_DIR is set). */
extern char mt_test_root[];

/* Runs argv (argv[0] a path) with stdout/stderr to the files named (NULL: inherited); returns its exit code. */
int mt_test__run(char *const *argv, const char *out, const char *err);
/* The same started, not waited for: its pid. */
pid_t mt_test__spawn(char *const *argv, const char *out, const char *err);

/* The whole of the file at path, malloc'd and NUL-terminated (the test fails when it cannot be read). */
char *mt_test__read_file(const char *path);

/* mt_test__run with stdout/stderr to NAME.out and NAME.err in the scratch dir; mt_test__read_named reads one back
 * (NAME.EXT), NUL-terminated, at most len - 1 bytes. */
int mt_test__run_named(const char *name, char *const *argv);
void mt_test__read_named(const char *name, const char *ext, char *buf, size_t len);

/*
 * Makes the scratch dir, checks that `memtrack record` works here, then runs the tests. Without BPF (not root, no
 * BTF) the binary is skipped (77); under CI=true that is a failure instead.
 */
int mt_test__main(const char *name, const struct CMUnitTest *tests, size_t n);

/*
 * tests/progs/phases recorded in dir: the start of its phase 2 (its first free) and of its phase 3 (its sixth) as
 * seconds since the session ("S.NNNNNNNNN", len bytes each), for --from and --to. Asserts 7 frees, 2 and 3 apart.
 */
void mt_test__phase_times(const char *dir, char *from, char *to, size_t len);

#endif /* MEMTRACK_KERNEL_TEST_H */
