/* SPDX-License-Identifier: GPL-2.0-only */
/* encoder.h — records into the columns of one version 4 frame (docs/FORMAT.md, "Frame content, version 3" and 4). */
#ifndef MEMTRACK_ARTIFACT_ENCODER_H
#define MEMTRACK_ARTIFACT_ENCODER_H

#include <stddef.h>
#include <stdint.h>

#include "artifact/codec.h"
#include "artifact/format.h"

/* The content header: layout, frame number, record count, time resolution, column count, column lengths. */
#define MT_CONTENT_HEADER_MAX (1 + MT_VARINT_MAX * (4 + COL__COUNT))

struct mt_encoder;

/* An encoder with room for a full frame (MT_FRAME_MAX_CONTENT of records), its frame open at ts_res 1. NULL + errno. */
struct mt_encoder *mt_encoder__new(void);
void mt_encoder__free(struct mt_encoder *e);	/* NULL-safe */
/* Empties the open frame and starts the next one at ts_res (>= 1). */
void mt_encoder__reset(struct mt_encoder *e, uint64_t ts_res);
/*
 * Adds a record the writer checked (size == hdr.size, >= its type's minimum). The caller keeps the frame's records
 * within MT_FRAME_MAX_CONTENT bytes, so that adding never runs out of room and never fails.
 */
void mt_encoder__add(struct mt_encoder *e, const void *rec, size_t size);
/* ts_ns as the reader gives it back: rounded down to the open frame's resolution. */
uint64_t mt_encoder__round_ts(const struct mt_encoder *e, uint64_t ts_ns);
/* Writes the open frame's content header into buf (MT_CONTENT_HEADER_MAX bytes), as frame seq; returns its length. */
size_t mt_encoder__header(const struct mt_encoder *e, uint64_t seq, __u8 *buf);
/* Column c of the open frame: its bytes, *len of them. The content is the header, then the columns in order. */
const __u8 *mt_encoder__column(const struct mt_encoder *e, enum mt_col c, size_t *len);

#endif /* MEMTRACK_ARTIFACT_ENCODER_H */
