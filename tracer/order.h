/* SPDX-License-Identifier: GPL-2.0-only */
/* order.h — the ring's records in the order of their sequence numbers, whatever order their batches came in. */
#ifndef MEMTRACK_TRACER_ORDER_H
#define MEMTRACK_TRACER_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* emit gets each record once, in order; one whose predecessors were skipped comes late. */
typedef void (*mt_order_emit_fn)(void *ctx, const void *rec, size_t size);
struct mt_order;
struct mt_order *mt_order__new(mt_order_emit_fn emit, void *ctx);	/* NULL + errno */
/* len bytes of records of stride bytes each (0: one record of len bytes), their numbers rising. 0, or -ENOMEM:
 * the records were written at once, out of order. */
int mt_order__push(struct mt_order *o, const void *recs, size_t len, size_t stride);
bool mt_order__waiting(const struct mt_order *o);	/* records wait behind a number not seen yet */
void mt_order__skip_gap(struct mt_order *o);		/* that number will not come: write the records behind it */
uint32_t mt_order__next(const struct mt_order *o);	/* the number waited for */
/* The numbers before seq not seen yet never come. */
void mt_order__lost_before(struct mt_order *o, uint32_t seq);
uint64_t mt_order__late(const struct mt_order *o);	/* records written after later ones */
void mt_order__free(struct mt_order *o);

#endif /* MEMTRACK_TRACER_ORDER_H */
