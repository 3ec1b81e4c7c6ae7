/* SPDX-License-Identifier: GPL-2.0-only */
/* stack_mapped.h — the program's anonymous private mappings per call path: what each mapping call's stack holds. */
#ifndef MEMTRACK_STACK_MAPPED_H
#define MEMTRACK_STACK_MAPPED_H

#include <stdint.h>

#include "bpf/memtrack.h"

/*
 * One stack's program mappings (docs/REPORT.md, "Mapped memory by site"), in bytes of address space: a range stays
 * the stack's that mapped it through munmap of part of it and mremap (moved, grown, shrunk); a fork child's copy
 * counts once more for it. Allocator-held mappings are not here: their memory is the allocations'.
 *   inherited + bytes - unmapped - discarded - exited - live = 0
 */
struct mt_stack_mapped {
	uint64_t calls;			/* its calls that mapped (mmap, brk growth) */
	uint64_t bytes;			/* what its ranges grew by: mapped, a brk's growth, an mremap's */
	uint64_t inherited_bytes;	/* in fork children's copies */
	uint64_t unmapped_bytes;	/* ended by munmap, mremap, brk or a mapping over them */
	uint64_t discarded_bytes;	/* held when an exec replaced the address space */
	uint64_t exited_bytes;		/* held when the process exited */
	uint64_t live_bytes;		/* held at the end of the stream */
	uint64_t peak_bytes;		/* held when the program's mapped bytes in all first reached their peak */
};

struct mt_stack_mapped_books;

/* NULL + errno (ENOMEM). */
struct mt_stack_mapped_books *mt_stack_mapped__new(void);
void mt_stack_mapped__free(struct mt_stack_mapped_books *b);
/* The model's note (struct mt_model_opts.mapped_note, ctx: b): a change to a range of stack hash tag. */
void mt_stack_mapped__note(void *ctx, uint64_t tag, int64_t bytes);
/* After the model accounted rec (and noted its changes): they count by rec's kind. 0 or -ENOMEM. */
int mt_stack_mapped__apply(struct mt_stack_mapped_books *b, const struct mt_rec_hdr *rec);
/* The end of the stream: what is held is live, the peak settles. 0 or -ENOMEM (a note's). */
int mt_stack_mapped__finish(struct mt_stack_mapped_books *b);
/* The counts of stack hash (0: the ranges made without a stack); NULL when it mapped nothing. */
const struct mt_stack_mapped *mt_stack_mapped__counts(const struct mt_stack_mapped_books *b, uint64_t hash);
/* The peak of the program's mapped bytes in all (the sum over the processes' address spaces; b may be NULL). */
uint64_t mt_stack_mapped__peak_bytes(const struct mt_stack_mapped_books *b);

#endif /* MEMTRACK_STACK_MAPPED_H */
