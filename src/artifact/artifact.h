/* SPDX-License-Identifier: GPL-2.0-only */
/* artifact.h — the public API of src/artifact: DIR/events.mtz, a versioned header, then records in zstd frames. */
#ifndef MEMTRACK_ARTIFACT_H
#define MEMTRACK_ARTIFACT_H

#include <stddef.h>

#include "artifact/reader.h"
#include "artifact/writer.h"
#include "bpf/memtrack.h"

#define MT_ARTIFACT_FILE "events.mtz"
#define MT_ARTIFACT_MAGIC "MEMTRACK"	/* 8 bytes, no NUL */
#define MT_ARTIFACT_VERSION 4		/* what the writer writes; the reader also reads versions 1 to 3 */
#define MT_ARTIFACT_VERSION_MIN 1	/* the oldest version the reader reads */
#define MT_FRAME_MAX_CONTENT (8u << 20)	/* writer closes a frame at this many record bytes (decoded) */
#define MT_FRAME_READ_LIMIT (64u << 20)	/* reader refuses frames claiming more, stored or decoded */

/* sizeof the struct of a record type, or 0 for a type this version does not know. */
size_t mt_rec__min_size(unsigned int type);

#endif /* MEMTRACK_ARTIFACT_H */
