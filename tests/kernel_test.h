/* SPDX-License-Identifier: GPL-2.0-only */
/* kernel_test.h — what the tests that trace on the real kernel share besides helpers.h: the BPF gate, phases. */
#ifndef MEMTRACK_KERNEL_TEST_H
#define MEMTRACK_KERNEL_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <sys/types.h>
#include <cmocka.h>

#include "helpers.h"

#ifndef MT_BINARY
#define MT_BINARY "memtrack"
#endif
#ifndef MT_PROGS
#define MT_PROGS "."
#endif
#define PROG(name) MT_PROGS "/" name

/* A user of its own for the tests, MT_TEST_USER, with a supplementary group, MT_TEST_GROUP (*extra), made (useradd)
 * when it is missing. */
#define MT_TEST_USER "memtrack-test"
#define MT_TEST_GROUP "memtrack-test-extra"
struct passwd;
const struct passwd *mt_test__user(gid_t *extra);

/*
 * Makes the scratch dir, checks that `memtrack record` works here, then runs the tests. Without BPF (not root, no
 * BTF) the binary is skipped (77); under CI=true that is a failure instead.
 */
int mt_test__main(const char *name, const struct CMUnitTest *tests, size_t n);

/* `memtrack record -q --stacks -o DIR -- prog arg` (arg may be NULL), which must succeed. */
void mt_test__record_stacks(const char *dir, const char *prog, const char *arg);

/*
 * tests/progs/phases recorded in dir: the start of its phase 2 (its first free) and of its phase 3 (its sixth) as
 * seconds since the session ("S.NNNNNNNNN", len bytes each), for --from and --to. Asserts 7 frees, 2 and 3 apart.
 */
void mt_test__phase_times(const char *dir, char *from, char *to, size_t len);

#endif /* MEMTRACK_KERNEL_TEST_H */
