/* SPDX-License-Identifier: GPL-2.0-only */
/* temps.h — temporary allocations: a block freed by the thread that made it before that thread allocates again. */
#ifndef MEMTRACK_TEMPS_H
#define MEMTRACK_TEMPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/u64map.h"

struct mt_temp_thread;

/* Each thread's last allocation, while it is live (the rule: docs/REPORT.md, "Temporary allocations"). Zeroed is
 * empty. */
struct mt_temps {
	struct mt_u64map pend;		/* key(pid, addr) → tid: a thread's last allocation, still live */
	struct mt_u64map tids;		/* tid → index in threads */
	uint32_t last_tid;		/* the last thread looked up, and its index in threads + 1 (0: none) */
	uint64_t last_idx;
	struct mt_temp_thread *threads;
	size_t n, cap;
};

/* tid's last allocation is now the block at addr in pid. 0 or -ENOMEM. */
int mt_temps__alloc(struct mt_temps *t, uint32_t pid, uint32_t tid, uint64_t addr);
/* The live block at addr in pid ends by tid's free: true when it was tid's last allocation (a temporary). */
bool mt_temps__free(struct mt_temps *t, uint32_t pid, uint32_t tid, uint64_t addr);
/* Frees what t holds and empties it. */
void mt_temps__release(struct mt_temps *t);

#endif /* MEMTRACK_TEMPS_H */
