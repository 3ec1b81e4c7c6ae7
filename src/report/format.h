/* SPDX-License-Identifier: GPL-2.0-only */
/* format.h — what every report section prints alike: sizes in human units, a site's frames as text and JSON. */
#ifndef MEMTRACK_FORMAT_H
#define MEMTRACK_FORMAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/json.h"

struct mt_site;
struct mt_site_frame;

/* 1536 → "1.5 KiB"; below 1 KiB the exact "N B". buf holds MT_HUMAN_MAX bytes. */
#define MT_HUMAN_MAX 32
const char *mt_format__human(char *buf, uint64_t bytes);
/* "1.5 KiB (1536 B)", or "100 B" when that is exact already. buf holds 2 * MT_HUMAN_MAX bytes. */
const char *mt_format__size(char *buf, uint64_t bytes);
/* One frame on its own line, indented: "name (srcline)", with " [inlined]" after the name when mark_inlined. */
void mt_format__frame_text(FILE *f, const struct mt_site_frame *fr, bool mark_inlined);
/* A site's frames, one a line as mt_format__frame_text prints them; "(no frames)" when it has none. */
void mt_format__frames_text(FILE *f, const struct mt_site *site, bool mark_inlined);
/* A site's frames as a JSON array of {"name", "srcline" (or null), "inlined"}. */
void mt_format__frames_json(struct mt_json *j, const struct mt_site *site);

#endif /* MEMTRACK_FORMAT_H */
