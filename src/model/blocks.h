/* SPDX-License-Identifier: GPL-2.0-only */
/* blocks.h — the live blocks of one process image: its own, those inherited at fork (shared), who freed which. */
#ifndef MEMTRACK_BLOCKS_H
#define MEMTRACK_BLOCKS_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"

struct mt_blocks;

/* Where a change counts: in the image's, the process's and the totals' stats alike (the rules: model.c). */
struct mt_blocks_acct {
	struct mt_heap_stats *img;
	struct mt_heap_stats *proc;
	struct mt_heap_stats *tot;	/* a scratch when the image is filtered out */
	bool resumed;			/* a start mark was seen: unknown frees count as paused_frees too */
	bool paused;			/* recording off (after a stop mark): an unknown free is of a block allocated
					 * while off, and counts nowhere */
	bool pre_attach;		/* record --pid, an image not started by an exec: unknown frees are
					 * pre_attach_frees instead */
};

/* Adds v to a field of the image's, the process's and the totals' stats. */
#define MT_ACCT_ADD(a, field, v) do {		\
	(a)->img->field += (v);			\
	(a)->proc->field += (v);		\
	(a)->tot->field += (v);			\
} while (0)

/* How an image ends: its live blocks are discarded (exec), leaked (exit) or still live (the end of the stream). */
enum mt_blocks_end {
	MT_BLOCKS_EXEC,
	MT_BLOCKS_EXIT,
	MT_BLOCKS_STILL_LIVE,
};

/* What a block was allocated with: a stack id (0: none) and whether it predates the time window. */
struct mt_block_tag {
	uint32_t stack;
	bool early;
};

/* Stack ids a block can keep: 1 .. MT_BLOCKS_STACK_MAX (the size and the id share a word). */
#define MT_BLOCKS_STACK_MAX ((1u << 23) - 1)

/* NULL + errno (ENOMEM). */
struct mt_blocks *mt_blocks__new(void);
void mt_blocks__free(struct mt_blocks *b);

/*
 * A successful allocation of size bytes at addr by thread tid (the end of tid's trailing frees), tagged (tag may be
 * NULL). A block of 256 GiB or more keeps no stack. 0 or -ENOMEM.
 */
int mt_blocks__on_alloc(struct mt_blocks *b, const struct mt_blocks_acct *a, uint32_t tid, uint64_t addr,
		     uint64_t size, const struct mt_block_tag *tag);
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
/* Recording stopped (a stop mark): held frees become unknown, since their threads go on, unrecorded. */
void mt_blocks__end_holds(struct mt_blocks *b, const struct mt_blocks_acct *a);
/*
 * The image ends: held frees become unknown, the live blocks count as `how` says and are dropped; at an exit those
 * inherited at the fork and never freed are inherited_live, not leaked.
 */
void mt_blocks__end(struct mt_blocks *b, const struct mt_blocks_acct *a, enum mt_blocks_end how);
/* Visits every live block, own and inherited (so flagged), with its size and stack id (order unspecified). */
void mt_blocks__for_each_live(const struct mt_blocks *b,
			      void (*fn)(uint64_t size, uint32_t stack, bool inherited, void *ctx), void *ctx);
/* The blocks inherited at the fork the image still holds (never freed), and their bytes. */
uint64_t mt_blocks__inherited_live(const struct mt_blocks *b, uint64_t *bytes);
/* A record begins: mt_blocks__left_inherited forgets the previous one's. */
void mt_blocks__record_begin(struct mt_blocks *b);
/* During the current record, the inherited block at addr left the image (freed or replaced). */
bool mt_blocks__left_inherited(const struct mt_blocks *b, uint64_t addr);

#endif /* MEMTRACK_BLOCKS_H */
