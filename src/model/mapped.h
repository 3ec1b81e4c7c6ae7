/* SPDX-License-Identifier: GPL-2.0-only */
/* mapped.h — the anonymous private mappings of one address space, from its memory syscalls: ranges by address. */
#ifndef MEMTRACK_MAPPED_H
#define MEMTRACK_MAPPED_H

#include <stdint.h>

#include "bpf/memtrack.h"

/* Who made a range: an allocator call in flight (its heap), or the program (anything else, the loader included). */
enum mt_mapped_by {
	MT_MAPPED_PROGRAM,
	MT_MAPPED_ALLOCATOR,
	MT_MAPPED__COUNT,
};

/* The page the kernel rounds mapping lengths to: x86-64's, as the recorded syscalls are. */
#define MT_MAPPED_PAGE 4096ull

struct mt_mapped;

/* NULL + errno (ENOMEM). */
struct mt_mapped *mt_mapped__new(void);
void mt_mapped__free(struct mt_mapped *mm);
/* dst becomes a copy of src (a fork child's address space). 0 or -ENOMEM (dst then unchanged). */
int mt_mapped__copy(struct mt_mapped *dst, const struct mt_mapped *src);
/* Nothing mapped, the break unknown (an exec's new address space, or an exit). */
void mt_mapped__clear(struct mt_mapped *mm);
/*
 * A successful memory syscall (s->ret >= 0) of the address space: mmap (MAP_FIXED over earlier ranges too), munmap
 * of any part, mremap (shrink, grow, move; MREMAP_DONTUNMAP), brk (growth and shrink, from the first break seen).
 * Only anonymous private ranges are kept; any call that maps or unmaps over them ends what it covers. 0 or -ENOMEM.
 */
int mt_mapped__apply(struct mt_mapped *mm, const struct mt_syscall *s);
/*
 * Told of each change to the program's ranges (MT_MAPPED_PROGRAM), by the tag of the range (the stack of the call
 * that made it, 0 for none): bytes more, or fewer when negative; a copy's ranges come, a clear's go. The allocator's
 * are not told: they are its heap's. A copy takes src's note.
 */
typedef void (*mt_mapped_note_fn)(void *ctx, uint64_t tag, int64_t bytes);
void mt_mapped__set_note(struct mt_mapped *mm, mt_mapped_note_fn fn, void *ctx);
/* Bytes mapped now by who made them. */
uint64_t mt_mapped__bytes(const struct mt_mapped *mm, enum mt_mapped_by by);

#endif /* MEMTRACK_MAPPED_H */
