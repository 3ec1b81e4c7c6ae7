/* blocks.h — the live blocks of one process image: its own, those inherited at fork (shared), who freed which. */
#ifndef MEMTRACK_BLOCKS_H
#define MEMTRACK_BLOCKS_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"

struct mt_blocks;

/* Where a change counts: in the process's stats and in the totals alike (the rules: model.c). */
struct mt_blocks_acct {
	struct mt_heap_stats *proc;
	struct mt_heap_stats *tot;
};

/* NULL + errno (ENOMEM). */
struct mt_blocks *mt_blocks__new(void);
void mt_blocks__free(struct mt_blocks *b);

/* A successful allocation of size bytes at addr by thread tid (the end of tid's trailing frees). 0 or -ENOMEM. */
int mt_blocks__on_alloc(struct mt_blocks *b, const struct mt_blocks_acct *a, uint32_t tid, uint64_t addr,
		     uint64_t size);
/* Any other call of tid that is not a release (a failed one): the end of tid's trailing frees. */
void mt_blocks__on_call(struct mt_blocks *b, const struct mt_blocks_acct *a, uint32_t tid);
/*
 * A release of addr by tid: a live block is freed; a block tid itself freed last is libc's internal release; an
 * address never seen allocated is an unknown free — held while it may be the thread's last call (libc's release
 * of its own cache at thread exit) unless in_realloc. 0 or -ENOMEM.
 */
int mt_blocks__on_free(struct mt_blocks *b, const struct mt_blocks_acct *a, uint32_t tid, uint64_t addr,
		       bool in_realloc);
/* tid ended by itself: its held unknown free was libc's, an internal release. */
void mt_blocks__on_thread_exit(struct mt_blocks *b, const struct mt_blocks_acct *a, uint32_t tid);
/* A fork: child (new, empty) starts with parent's live blocks, shared. parent_heap: the parent's stats. */
int mt_blocks__inherit(struct mt_blocks *child, const struct mt_blocks_acct *a, struct mt_blocks *parent,
		       const struct mt_heap_stats *parent_heap);
/* The image ends (exec: discarded, else leaked): held frees become unknown, the blocks are dropped. */
void mt_blocks__end(struct mt_blocks *b, const struct mt_blocks_acct *a, bool exec);

#endif /* MEMTRACK_BLOCKS_H */
