/* SPDX-License-Identifier: GPL-2.0-only */
/* pprof.h — `memtrack pprof`: the allocation stacks as a gzipped profile.proto, pprof's format. */
#ifndef MEMTRACK_PPROF_H
#define MEMTRACK_PPROF_H

#include <stdio.h>

#include "stacks/stacks.h"

struct mt_metadata;

/*
 * A gzipped perftools.profiles.Profile: sample types alloc_objects/count, alloc_space/bytes, inuse_objects/count,
 * inuse_space/bytes (inuse: leaked at exit, as report counts them), one sample per stack and process (its location
 * ids innermost first; labels: md's (record --label) as strings, "pid" a number, "exe" the executable; what no process
 * can be named for is one more sample without pid and exe), a location per return address whose lines are its
 * inline chain, functions, mappings, the string table, md's labels as "KEY=VALUE" comments, and as time_nanos the
 * session's start (md's realtime_ns). md (DIR/memory_metadata.json) may be NULL: no labels, no time. 0, -EIO or
 * -ENOMEM.
 */
int mt_pprof__write(FILE *f, struct mt_stacks *s, const struct mt_metadata *md);

/* What the samples count: the heap's allocations (mt_pprof__write's), the program's mappings, or both summed. */
enum mt_pprof_kind { MT_PPROF_HEAP, MT_PPROF_MAPPED, MT_PPROF_ALL };
/*
 * The same with kind: a mapping stack's sample (one per stack, without pid and exe: the mapped books are per stack)
 * counts its mapping calls as alloc_objects, its bytes mapped as alloc_space, and as inuse_space the bytes still
 * mapped when their process ended or at the end (inuse_objects 0: a mapping is no block).
 */
int mt_pprof__write_kind(FILE *f, struct mt_stacks *s, const struct mt_metadata *md, enum mt_pprof_kind kind);

#endif /* MEMTRACK_PPROF_H */
