/* SPDX-License-Identifier: GPL-2.0-only */
/* decoder.h — the columns of a version 2 to 4 frame back into records (docs/FORMAT.md, "Frame content"). */
#ifndef MEMTRACK_ARTIFACT_DECODER_H
#define MEMTRACK_ARTIFACT_DECODER_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#define MT_DECODER_REASON_MAX 144

struct mt_decoder;

/* A decoder whose state grows with the frames it decodes. NULL on failure (no memory). */
struct mt_decoder *mt_decoder__new(void);
void mt_decoder__free(struct mt_decoder *d);	/* NULL-safe */
/*
 * Decodes the content of one frame of a file of that version (2 to 4), checked as far as the columns go, and in
 * version 4 that it is data frame number seq: the records it gives back are still to be checked like a version 1
 * frame's. 0; -EBADMSG when the content does not decode or has another number, or -ENOMEM; mt_decoder__reason()
 * then says why.
 */
int mt_decoder__decode(struct mt_decoder *d, __u32 version, uint64_t seq, const __u8 *content, size_t len);
/* The last frame's records, back to back as a version 1 frame holds them; valid until the next decode. */
const __u8 *mt_decoder__records(const struct mt_decoder *d, size_t *len);
const char *mt_decoder__reason(const struct mt_decoder *d);

#endif /* MEMTRACK_ARTIFACT_DECODER_H */
