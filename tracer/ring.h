/* SPDX-License-Identifier: GPL-2.0-only */
/* ring.h — a BPF ring buffer map read in place, its space handed back once per batch of records. */
#ifndef MEMTRACK_TRACER_RING_H
#define MEMTRACK_TRACER_RING_H

#include <stdbool.h>
#include <stddef.h>

struct mt_ring;
typedef int (*mt_ring_cb)(void *ctx, void *data, size_t size);
struct mt_ring *mt_ring__new(int map_fd);	/* NULL + errno */
int mt_ring__fd(const struct mt_ring *r);
/* Hands each committed record to cb: how many, or cb's error. */
long mt_ring__consume(struct mt_ring *r, mt_ring_cb cb, void *ctx);
/* Consumes until every record reserved before the call has been handed, past any another CPU still fills.
 * *reached (may be NULL): all of them were. */
long mt_ring__consume_past(struct mt_ring *r, mt_ring_cb cb, void *ctx, bool *reached);
/* Lets a BPF program that this thread may have preempted on its CPU finish its record: a yield, or a short sleep
 * when this thread runs under a real-time policy, which a yield leaves to real-time threads only. */
void mt_ring__let_writers_run(void);
void mt_ring__free(struct mt_ring *r);

#endif /* MEMTRACK_TRACER_RING_H */
