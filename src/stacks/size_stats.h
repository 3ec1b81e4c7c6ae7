/* SPDX-License-Identifier: GPL-2.0-only */
/* size_stats.h — the allocations by size class, and the largest of them (struct mt_size_stats, stack_heap.h). */
#ifndef MEMTRACK_SIZE_STATS_H
#define MEMTRACK_SIZE_STATS_H

#include <stdint.h>

#include "stacks/stack_heap.h"

/* One more allocation of size, with stack (index + 1, 0: none), by pid at ts (since the session start). */
void mt_size_stats__note(struct mt_size_stats *z, uint64_t size, uint32_t stack, uint32_t pid, uint64_t ts);

#endif /* MEMTRACK_SIZE_STATS_H */
