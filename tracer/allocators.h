/* SPDX-License-Identifier: GPL-2.0-only */
/* allocators.h — what to probe in a file: the allocator it defines and one probe site per entry point. */
#ifndef MEMTRACK_TRACER_ALLOCATORS_H
#define MEMTRACK_TRACER_ALLOCATORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/memtrack.h"
#include "tracer/probe_site.h"

#define MT_PROBE_PLAN_MAX 96
#define MT_PROBE_FORWARDERS_MAX 8

/* A function not probed whose calls to a probed malloc are recorded as its own (a C++ runtime's operator new). */
struct mt_probe_caller {
	uint64_t lo, hi;	/* file offsets of its code: [lo, hi) */
	uint8_t func;		/* enum mt_func */
	uint8_t allocator;	/* enum mt_allocator */
};

struct mt_probe_plan {
	uint8_t kind;		/* enum mt_allocator, 0: no allocator here */
	size_t n;
	struct mt_probe_site sites[MT_PROBE_PLAN_MAX];	/* deduplicated by entry */
	size_t ncallers;
	struct mt_probe_caller callers[MT_CALLERS_MAX];	/* BPF learns them per process (tracer/callers.c) */
	size_t nforwarders;
	uint64_t forwarders[MT_PROBE_FORWARDERS_MAX];	/* frees not probed: each jumps to one that is */
};

/* The plan for the ELF file at path (kind 0 and no sites when it holds no allocator); name: what messages call it
 * (path may be /proc/self/fd/N, the mapped file itself). 0 or -errno. */
int mt_allocators__plan(const char *path, const char *name, struct mt_probe_plan *plan);
/*
 * With --stacks, every C++ runtime's operator new is marked at its entry (AS_MARK) instead of being told by its
 * malloc's return address: the call path is captured at the mark, where it starts at the program's call; from
 * inside operator new, which keeps no frame pointer, the frame-pointer chain skips that call, and paths that
 * differ only there would be one stack.
 */
void mt_allocators__mark_cxx_news(bool on);
/*
 * record --fast-cxx: a C++ runtime's operator deletes and its plain new[] are not probed. A delete is recorded as
 * the free it jumps to, a new[] as the new it jumps to: a trap each less, at the price of their names (and of a
 * sized delete's size, which the block's allocation tells anyway).
 */
void mt_allocators__fast_cxx(bool on);

#endif /* MEMTRACK_TRACER_ALLOCATORS_H */
