/* SPDX-License-Identifier: GPL-2.0-only */
/* sizes.h — `report --sizes`: allocations by power-of-two size class, and the largest ones with their sites. */
#ifndef MEMTRACK_SIZES_H
#define MEMTRACK_SIZES_H

#include <stdio.h>

#include "common/json.h"
#include "report/sites.h"

/* The histogram (classes from the smallest to the largest used) and the largest allocations. 0 or -EIO. */
int mt_sizes__text(FILE *f, const struct mt_sites *sites);
/*
 * The keys "size_classes": [{"min", "max", "allocations", "bytes"}] (the classes used; min and max inclusive) and
 * "largest_allocations": [{"size", "pid", "ts_ns", "frames": [...] or null, "srclines"}], in the open object.
 */
void mt_sizes__json(struct mt_json *j, const struct mt_sites *sites);

#endif /* MEMTRACK_SIZES_H */
