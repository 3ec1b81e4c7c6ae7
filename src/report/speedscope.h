/* SPDX-License-Identifier: GPL-2.0-only */
/* speedscope.h — `memtrack flamegraph --format speedscope`: the stacks in speedscope's file format (JSON). */
#ifndef MEMTRACK_SPEEDSCOPE_H
#define MEMTRACK_SPEEDSCOPE_H

#include <stdio.h>

#include "stacks/stacks.h"

/*
 * One JSON object (https://www.speedscope.app/file-format-schema.json): shared frames {"name", "file"} (a function
 * and its source file; inlined functions are frames of their own) and one "sampled" profile per weight (bytes,
 * allocations, leaked bytes), a sample per stack, outermost frame first. name names the file. 0, -EIO, -ENOMEM.
 */
int mt_speedscope__write(FILE *f, struct mt_stacks *s, const char *name);

#endif /* MEMTRACK_SPEEDSCOPE_H */
