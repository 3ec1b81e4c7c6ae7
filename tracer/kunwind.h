/* SPDX-License-Identifier: GPL-2.0-only */
/* kunwind.h — the in-kernel unwinder's tables: a file's CFI turned into rows and pages in BPF maps, once per file. */
#ifndef MEMTRACK_TRACER_KUNWIND_H
#define MEMTRACK_TRACER_KUNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/memtrack.h"

struct mt_bpf_session;
struct mt_kunwind;

/* What the tables cost, for the end's log line and bench/stacks.sh. */
struct mt_kunwind_stats {
	uint64_t modules, no_cfi, rows, pages, eh_frame_bytes, build_ns;
};

/* The rows of the file open as fd (name: for messages; never opened by it), sorted by pc (file offsets), gaps as
 * MT_UROW_NONE rows; *eh_bytes: the size of its .eh_frame. 0, -ENODATA without usable CFI, or -errno. *rows is
 * malloc'd; fd stays the caller's. */
int mt_kunwind__rows(int fd, const char *name, struct mt_urow **rows, size_t *n, uint64_t *eh_bytes);

/* NULL and errno on failure. */
struct mt_kunwind *mt_kunwind__new(struct mt_bpf_session *s);
/* The tables of the file open as fd (the mapping's own descriptor: a rename cannot substitute another file; path
 * names it in messages) into BPF, then its module entry (ready, or no CFI: frame pointers for its frames). Once per
 * (dev, ino); 0 or -errno (the module is then marked without CFI). */
int mt_kunwind__add(struct mt_kunwind *k, int fd, const char *path, uint64_t dev, uint64_t ino);
void mt_kunwind__stats(const struct mt_kunwind *k, struct mt_kunwind_stats *st);
void mt_kunwind__free(struct mt_kunwind *k);

#endif /* MEMTRACK_TRACER_KUNWIND_H */
