/* SPDX-License-Identifier: GPL-2.0-only */
/* plural.h — the noun that goes with a count, so that output says "1 process" and "2 processes". */
#ifndef MEMTRACK_PLURAL_H
#define MEMTRACK_PLURAL_H

#include <stdint.h>

/* one when n is 1, else many: printf("%" PRIu64 " %s", n, mt_plural__of(n, "process", "processes")). */
const char *mt_plural__of(uint64_t n, const char *one, const char *many);

#endif /* MEMTRACK_PLURAL_H */
