/* SPDX-License-Identifier: GPL-2.0-only */
/* oracle.h — the file liboracle.so keeps per process image, read by test_oracle.c (the two share only this). */
#ifndef MEMTRACK_ORACLE_H
#define MEMTRACK_ORACLE_H

#include <stdint.h>

#define ORACLE_MAGIC 0x3130656c6361726full	/* "oracle01" */

/* How an image began. */
enum oracle_kind {
	ORACLE_FRESH = 1,	/* its pid's first image, not after a fork the oracle saw: the root, or a spawn */
	ORACLE_FORK,		/* a fork child (glibc's fork: the atfork child handler) */
	ORACLE_EXEC,		/* the image after an exec of a pid that had one */
	ORACLE_VFORK,		/* a vfork child up to its exec, written by the child before it execs */
	ORACLE_SPAWN,		/* a posix_spawn child up to its exec: written by the parent as PID.spawn */
};

/*
 * DIR/PID.SEQ (SEQ from 0, one per image), or DIR/PID.spawn. An image file is mapped shared and kept current at
 * every call, so it holds the last state whichever way the image ended (exec, exit, _exit, a signal).
 */
struct oracle_image {
	uint64_t magic;
	uint32_t pid, ppid;
	uint32_t kind;			/* enum oracle_kind */
	uint32_t seq;
	uint64_t inherited_allocations;	/* live in the parent at the fork */
	uint64_t inherited_bytes;
	uint64_t allocations;		/* successful outermost calls, realloc included (a free + an allocation) */
	uint64_t allocated_bytes;	/* bytes asked for */
	uint64_t frees;			/* releases of live blocks, realloc's free side included */
	uint64_t freed_bytes;
	uint64_t unknown_frees;		/* releases of addresses not live */
	uint64_t failed;		/* calls that returned NULL (or posix_memalign's error) */
	uint64_t live_allocations;	/* now: at the image's end, what it left (discarded at exec, or leaked) */
	uint64_t live_bytes;
	uint64_t peak_live_bytes;	/* the most live_bytes reached, inherited blocks included */
	uint64_t lost;			/* blocks not tracked (the table could not grow): the counts are off */
	char exe[256];
};

#endif /* MEMTRACK_ORACLE_H */
