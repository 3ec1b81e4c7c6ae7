/* SPDX-License-Identifier: GPL-2.0-only */
/* pprof.h — `memtrack pprof`: the allocation stacks as a gzipped profile.proto, pprof's format. */
#ifndef MEMTRACK_PPROF_H
#define MEMTRACK_PPROF_H

#include <stdio.h>

#include "stacks/stacks.h"

/*
 * A gzipped perftools.profiles.Profile: sample types alloc_objects/count, alloc_space/bytes, inuse_objects/count,
 * inuse_space/bytes (inuse: still live at exit, exec or the end), one sample per stack (its location ids innermost
 * first), a location per return address whose lines are its inline chain, functions, mappings, the string table.
 * 0, -EIO or -ENOMEM.
 */
int mt_pprof__write(FILE *f, struct mt_stacks *s);

#endif /* MEMTRACK_PPROF_H */
