/* SPDX-License-Identifier: GPL-2.0-only */
/* summary.h — the end-of-run summary of `memtrack record`. */
#ifndef MEMTRACK_SUMMARY_H
#define MEMTRACK_SUMMARY_H

#include <stdio.h>

#include "model/model.h"

/* Three lines, four with attach failures, each "memtrack: ...": what report will say. 0 or -EIO. */
int mt_summary__write(FILE *f, const struct mt_model *m, const char *dir);

#endif /* MEMTRACK_SUMMARY_H */
