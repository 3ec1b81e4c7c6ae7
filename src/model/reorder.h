/* SPDX-License-Identifier: GPL-2.0-only */
/* reorder.h — the time-order window: records back in ts_ns order before anything accounts or prints them. */
#ifndef MEMTRACK_REORDER_H
#define MEMTRACK_REORDER_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/memtrack.h"

/*
 * Reorder window: records are in the order of the sequence numbers taken as their events happened, each just after
 * its time was read, so they are nearly but not exactly in time order (two CPUs may read the clock in one order and
 * take their numbers in the other; a record behind a skipped gap comes late). The reorderer holds up to `window`
 * records in a priority queue keyed by (ts_ns, arrival order) and emits the smallest whenever it holds more;
 * mt_reorder__flush emits the rest.
 * Memory is bounded by the window, not by the stream.
 */
#define MT_REORDER_WINDOW 4096

struct mt_reorder;

/* Receives records in time order; rec is valid only during the call. A non-zero return is passed back. */
typedef int (*mt_reorder_fn)(const struct mt_rec_hdr *rec, void *ctx);

/* NULL + errno (EINVAL for window 0, ENOMEM). */
struct mt_reorder *mt_reorder__new(size_t window, mt_reorder_fn fn, void *ctx);
/* Copies rec (rec->size bytes) in; may emit the oldest record. 0, -EINVAL (size < header), -ENOMEM, or fn's return. */
int mt_reorder__push(struct mt_reorder *r, const struct mt_rec_hdr *rec);
/* Emits every held record in order. 0 or fn's first non-zero return (the records after it stay held). */
int mt_reorder__flush(struct mt_reorder *r);
/* Records emitted with a ts_ns below one already emitted: they arrived later than the window could absorb. */
uint64_t mt_reorder__late(const struct mt_reorder *r);
void mt_reorder__free(struct mt_reorder *r);

#endif /* MEMTRACK_REORDER_H */
