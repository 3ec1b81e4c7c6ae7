/* SPDX-License-Identifier: GPL-2.0-only */
/* stack_heap.h — heap accounting per allocation stack, by the model's rules; peaks, temporaries, sizes. */
#ifndef MEMTRACK_STACK_HEAP_H
#define MEMTRACK_STACK_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/memtrack.h"
#include "model/model.h"

/*
 * One stack's blocks, counted as src/model counts a process's (docs/REPORT.md, "Semantics used by reports"): a
 * block inherited at a fork counts once more for each child holding it, its frees there are the child's, and what a
 * process still holds at an exec is discarded, at its exit leaked, at the end (of the stream or the window) still
 * live. In blocks and in bytes:
 *   inherited + allocations - frees - replaced - discarded - leaked - inherited_live - still_live = 0
 */
struct mt_stack_counts {
	uint64_t allocations;		/* successful allocation calls, realloc included */
	uint64_t bytes;			/* the sizes they asked for */
	uint64_t inherited_allocations;	/* blocks a fork child started with */
	uint64_t inherited_bytes;
	uint64_t frees;			/* releases of live blocks (the free side of realloc too) */
	uint64_t freed_bytes;
	uint64_t replaced;		/* ended by an allocation at their address (their free was lost) */
	uint64_t replaced_bytes;
	uint64_t discarded_allocations;	/* live when an exec replaced the image */
	uint64_t discarded_bytes;
	uint64_t leaked_allocations;	/* live at the exit of their holder, which allocated them */
	uint64_t leaked_bytes;
	uint64_t inherited_live_allocations;	/* live at the exit of their holder, which inherited them at its fork
						 * and never freed them: not its leaks */
	uint64_t inherited_live_bytes;
	uint64_t still_live_allocations;	/* live at the end of the stream or the window: not leaks */
	uint64_t still_live_bytes;
	uint64_t temporary_allocations;	/* freed by the thread that allocated them, before its next allocation */
	uint64_t temporary_bytes;
	uint64_t peak_allocations;	/* live when the total live bytes first reached their peak */
	uint64_t peak_bytes;
};

/* A process as the model saw it (pid reuse makes another), after the stream. */
struct mt_heap_proc {
	uint32_t pid;
	size_t model_index;		/* its index among mt_model__proc(): the same in any model of the artifact */
	char exe[MT_PATH_MAX];		/* its last image */
	uint64_t peak_bytes;		/* its peak live bytes (the model's) and when it was first reached */
	uint64_t peak_ts_ns;
};

/* An image of a process as the model saw it, after the stream. */
struct mt_heap_image {
	size_t proc;			/* index for mt_stack_heap__proc */
	uint32_t pid;
	uint32_t image;			/* the model's: 0 the one the process started with, n after its n-th exec */
	char exe[MT_PATH_MAX];
};

/* What one stack held in one process at that process's peak, and what the process allocated with it. */
struct mt_proc_peak {
	/* 32-bit indexes: there is one of these for each stack and process that used it */
	uint32_t proc;			/* index for mt_stack_heap__proc */
	uint32_t image;			/* the image that made the first of them, for mt_stack_heap__image; UINT32_MAX:
					 * none made */
	uint64_t allocations;		/* at the peak */
	uint64_t bytes;
	uint64_t made_allocations;	/* allocation calls of the process with the stack (counted ones: the filter's) */
	uint64_t made_bytes;
	uint64_t leaked_allocations;	/* of its blocks live at its exit, those it made (counted ones: the filter's;
					 * suppressions not applied: they go by stack) */
	uint64_t leaked_bytes;
};

#define MT_SIZE_CLASSES 65		/* class 0: size 0; class k: [2^(k-1), 2^k) */
#define MT_LARGEST_MAX 20

struct mt_big_alloc {
	uint64_t size;
	uint32_t stack;			/* index + 1 of its stack, 0 for none */
	uint32_t pid;
	uint64_t ts_ns;			/* relative to the session start */
};

struct mt_size_stats {
	uint64_t allocations[MT_SIZE_CLASSES];
	uint64_t bytes[MT_SIZE_CLASSES];
	struct mt_big_alloc largest[MT_LARGEST_MAX];	/* by size, descending; equal sizes in time order */
	size_t nlargest;
};

struct mt_stack_heap;

/* NULL + errno (ENOMEM). */
struct mt_stack_heap *mt_stack_heap__new(void);
/*
 * Before the first record: finish frees the blocks and the cells (mt_stack_heap__nr_cells is 0 then), the bulk of the
 * memory with many stacks, for a holder that reads only the counts, the processes and mt_stack_heap__proc_peaks.
 */
void mt_stack_heap__shed(struct mt_stack_heap *h);
void mt_stack_heap__free(struct mt_stack_heap *h);
/*
 * Before the first record: count only what the processes whose current image f takes (pid, exe) did in f's
 * [from_ns, to_ns) window; what they held when it closed is still live (as `report --leaks` has it), and the peak
 * is the one of their live sum inside it, the model's (which must have the same filter). f must outlive h.
 */
void mt_stack_heap__set_filter(struct mt_stack_heap *h, const struct mt_filter *f);
/*
 * rec, which the model m has just accounted (a replay's callback, src/model/replay.h); stack: for an allocation record,
 * the index + 1 of its stack (0: none); rel_ts: rec's time since the session start. 0 or -ENOMEM.
 */
int mt_stack_heap__apply(struct mt_stack_heap *h, const struct mt_rec_hdr *rec, uint32_t stack,
			 const struct mt_model *m, uint64_t rel_ts);
/* After the model finished: what processes without an exit record hold is still live, the peaks settle. 0 or
 * -ENOMEM. */
int mt_stack_heap__finish(struct mt_stack_heap *h, const struct mt_model *m);

/* The counts of stack index + 1 (0: the allocations made without a stack); zeros for one never seen (kept compact,
 * src/stacks/counts.h: a copy). */
void mt_stack_heap__counts(const struct mt_stack_heap *h, uint32_t stack, struct mt_stack_counts *out);
/* The peak of the total live bytes and when it was first reached (the model's). */
uint64_t mt_stack_heap__peak_bytes(const struct mt_stack_heap *h);
uint64_t mt_stack_heap__peak_ts(const struct mt_stack_heap *h);
/* Temporary allocations in all, with or without a stack. */
const struct mt_stack_counts *mt_stack_heap__totals(const struct mt_stack_heap *h);
size_t mt_stack_heap__nr_procs(const struct mt_stack_heap *h);
const struct mt_heap_proc *mt_stack_heap__proc(const struct mt_stack_heap *h, size_t idx);
/*
 * The processes that held blocks of the stack (index + 1) at their own peak or allocated with it (in process
 * order); returns how many.
 */
size_t mt_stack_heap__proc_peaks(const struct mt_stack_heap *h, uint32_t stack, const struct mt_proc_peak **out);
const struct mt_size_stats *mt_stack_heap__sizes(const struct mt_stack_heap *h);
/* After finish: the images of the processes, by process then image number. */
size_t mt_stack_heap__nr_images(const struct mt_stack_heap *h);
const struct mt_heap_image *mt_stack_heap__image(const struct mt_stack_heap *h, size_t idx);

/* One process's part of one stack, as counted so far: mt_stack_heap__apply's callers may read it between records. */
struct mt_heap_cell {
	size_t proc;			/* index for mt_stack_heap__proc (after finish) */
	uint32_t stack;			/* index + 1 (0: none) */
	uint64_t made_allocations;	/* allocation calls of the process with the stack (counted ones) */
	uint64_t made_bytes;
	int64_t live_bytes;		/* held now; after finish, what was still live at the end */
	uint64_t leaked_bytes;		/* leaked at its exits, the blocks it inherited not included */
	uint64_t peak_bytes;		/* held when the total live bytes first reached their peak (after finish) */
};

/* The cells so far, in the order they were first used: an index keeps its process and stack. */
size_t mt_stack_heap__nr_cells(const struct mt_stack_heap *h);
void mt_stack_heap__cell(const struct mt_stack_heap *h, size_t idx, struct mt_heap_cell *out);
/* Of them, those whose inherited, leaked or still live counts ever changed (kept aside, most cells have none). */
size_t mt_stack_heap__nr_rare_cells(const struct mt_stack_heap *h);

#endif /* MEMTRACK_STACK_HEAP_H */
