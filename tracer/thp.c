// SPDX-License-Identifier: GPL-2.0-only
/* thp.c — the tracer's malloc heap in transparent huge pages while libbpf parses the kernel's BTF. */
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tracer/thp.h"

#define HUGE_PAGE (2u << 20)
#define MALLOC_DEFAULT_PAD (128u << 10)	/* glibc's M_TOP_PAD, M_TRIM_THRESHOLD and first M_MMAP_THRESHOLD */
#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"

static char *huge_lo, *huge_hi;		/* the range advised, while it is */
static char *thread_heap;		/* a thread's arena advised too (mt_thp__prefer_thread), while it is */
static size_t prefer_bytes;		/* mt_thp__prefer's */
static bool thp_always;			/* the whole heap gets huge pages anyway: nothing to undo */

/* "always" or "madvise" selected: a MADV_HUGEPAGE region gets huge pages at its first touch. */
static bool thp__available(void)
{
	char line[128] = "";
	FILE *f = fopen(THP_ENABLED, "re");

	if (!f)
		return false;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	thp_always = strstr(line, "[always]");
	return thp_always || strstr(line, "[madvise]");
}

/*
 * libbpf reads the kernel's BTF (megabytes) twice and indexes it: a page fault per 4 KiB, a good part of the load's
 * time (bench/README.md). The heap grows by bytes at once, big blocks come from it rather than from their own mmap,
 * and that range is advised to use 2 MiB pages: far fewer faults. Nothing is touched yet, and without THP nothing
 * changes.
 */
int mt_thp__prefer(size_t bytes)
{
	void *volatile p;	/* a malloc freed unused would be optimised out, and the heap not grown */
	char *lo, *hi;
	int err;

	if (!thp__available())
		return -EOPNOTSUPP;
	prefer_bytes = bytes;
	mallopt(M_MMAP_THRESHOLD, bytes);
	mallopt(M_TRIM_THRESHOLD, bytes);
	mallopt(M_TOP_PAD, bytes);
	lo = sbrk(0);
	p = malloc(HUGE_PAGE);	/* more than the top chunk holds: the heap grows by it and the pad */
	free(p);
	hi = sbrk(0);
	huge_lo = (char *)(((uintptr_t)lo + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	huge_hi = (char *)((uintptr_t)hi & ~(uintptr_t)(HUGE_PAGE - 1));
	err = huge_hi > huge_lo ? 0 : -ENOMEM;
	if (!err && madvise(huge_lo, huge_hi - huge_lo, MADV_HUGEPAGE))
		err = -errno;
	if (err)
		huge_hi = huge_lo;	/* nothing advised; mt_thp__trim still restores malloc's settings */
	return err;
}

/*
 * glibc gives a thread that mallocs an arena of its own: a heap mmapped at a THREAD_HEAP_MAX boundary (glibc's
 * HEAP_MAX_SIZE on 64-bit), not the sbrk heap mt_thp__prefer advised. libbpf's second load parses the kernel's BTF
 * in such a thread (tracer/bpf_session.c): advised the same way, it takes far fewer faults (bench/README.md).
 */
#define THREAD_HEAP_MAX (64u << 20)

void mt_thp__prefer_thread(void)
{
	void *volatile p;
	char *heap;

	if (!huge_lo || thp_always || sizeof(void *) != 8)
		return;
	p = malloc(1);	/* the thread's arena from now on */
	heap = (char *)((uintptr_t)p & ~(uintptr_t)(THREAD_HEAP_MAX - 1));
	free(p);
	if (!p || (char *)p < (char *)sbrk(0))	/* the sbrk heap after all: advised already */
		return;
	/* the heap is mapped as it grows: ENOMEM says that not all of the range is yet, the rest is advised */
	if (madvise(heap, THREAD_HEAP_MAX, MADV_HUGEPAGE) && errno != ENOMEM)
		return;
	thread_heap = heap;
	/* Grown at once (M_TOP_PAD keeps it so), untouched: whole 2 MiB pages fit in it from the first fault. */
	p = malloc(prefer_bytes < THREAD_HEAP_MAX / 2 ? prefer_bytes : THREAD_HEAP_MAX / 2);
	free(p);
}

/* Back to glibc's defaults, and the freed heap goes back to the kernel: the tracer's RSS does not stay high, and
 * its heap grows 4 KiB at a time again while it traces. */
void mt_thp__trim(void)
{
	if (!huge_lo)
		return;
	mallopt(M_TOP_PAD, MALLOC_DEFAULT_PAD);
	mallopt(M_TRIM_THRESHOLD, MALLOC_DEFAULT_PAD);
	mallopt(M_MMAP_THRESHOLD, MALLOC_DEFAULT_PAD);
	if (huge_hi > huge_lo && !thp_always)
		madvise(huge_lo, huge_hi - huge_lo, MADV_NOHUGEPAGE);
	if (thread_heap)
		madvise(thread_heap, THREAD_HEAP_MAX, MADV_NOHUGEPAGE);
	huge_lo = huge_hi = thread_heap = NULL;
	malloc_trim(0);
}
