/* SPDX-License-Identifier: GPL-2.0-only */
/* capture.h — a userspace stand-in for `memtrack record --stacks`, for the tests: stacks captured at fake_alloc. */
/* It writes the artifact the tracer would: session, mappings, files, stacks, allocations, DIR/modules copies. */
#ifndef MT_TEST_CAPTURE_H
#define MT_TEST_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

/* Filled by fake_alloc's first instructions (capture_stub.c), in enum mt_reg order. */
extern uint64_t capture_regs[8];

/* Opens DIR/events.mtz and writes the session, mapping and file records; nbytes = stack bytes per capture. */
int capture_begin(const char *dir, int argc, char **argv, uint32_t nbytes, int copy_modules);
/* malloc(size), recorded with the stack of its call (capture_stub.c). */
void *fake_alloc(size_t size);
/* free(p), recorded. */
void fake_free(void *p);
/* Writes the exit and end records and closes the artifact. 0 or -errno. */
int capture_end(int status);

#endif /* MT_TEST_CAPTURE_H */
