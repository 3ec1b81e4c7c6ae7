/* SPDX-License-Identifier: GPL-2.0-only */
/* unwinder.h — DWARF unwinding of captured stacks with libunwind's remote API, offline. */
#ifndef MEMTRACK_UNWINDER_H
#define MEMTRACK_UNWINDER_H

#include <stdint.h>

#include "bpf/memtrack.h"
#include "unwind/addrspace.h"
#include "unwind/unwind_records.h"

struct mt_unwinder;

/* One libunwind address space and its accessors, reused for every stack. NULL + errno. */
struct mt_unwinder *mt_unwinder__new(void);
void mt_unwinder__free(struct mt_unwinder *u);

/*
 * Unwinds a stack definition (rec, rec_size bytes) from its registers and raw stack bytes, reading code and unwind
 * tables from the module files of as (its process's mappings when the stack was captured). Returns the result as
 * an MT_REC_UNWIND record in u's buffer (valid until the next call); NULL with *err = -EINVAL for a malformed rec.
 * The chain starts at the allocator's caller: frame 0, the allocator itself, is dropped.
 */
const struct mt_unwind_rec *mt_unwinder__unwind(struct mt_unwinder *u, const struct mt_stack *rec, uint32_t rec_size,
						struct mt_aspace *as, int *err);

/* Thread CPU time spent inside mt_unwinder__unwind so far, and the stacks it unwound. */
uint64_t mt_unwinder__cpu_ns(const struct mt_unwinder *u);
uint64_t mt_unwinder__stacks(const struct mt_unwinder *u);

/* Short names of enum mt_unwind_stop ("end", "budget", ...) and a sentence for each. */
const char *mt_unwind_stop__name(unsigned int stop);
const char *mt_unwind_stop__text(unsigned int stop);

#endif /* MEMTRACK_UNWINDER_H */
