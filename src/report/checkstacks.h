/* SPDX-License-Identifier: GPL-2.0-only */
/* checkstacks.h — `memtrack check-stacks`: the kernel's CFI chains against DWARF's and the FP chains, per module. */
#ifndef MEMTRACK_CHECKSTACKS_H
#define MEMTRACK_CHECKSTACKS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "stacks/stacks.h"

enum mt_kcheck {
	MT_KCHECK_AGREE,	/* the kernel's chain is DWARF's, frame for frame (or all DWARF found, when its budget cut
				 * it) */
	MT_KCHECK_DIVERGED,	/* they differ at frame `at`, or one stops short of the other */
	MT_KCHECK_UNCHECKED,	/* no kernel chain (an older recording) or no DWARF chain */
};

/* The first difference of one module's stacks: which stack, which frame, the two frames' names. */
struct mt_kcheck_div {
	uint64_t stack;
	size_t frame;
	char *kernel;
	char *dwarf;
};

struct mt_kcheck_module {
	struct mt_module *mod;		/* of the stacks' first frame (the allocator's caller); NULL: none */
	const char *path;
	uint64_t stacks, checked, agree;	/* the kernel's chain against DWARF's */
	uint64_t fp_kernel, fp_dwarf;	/* FP chains equal to the kernel's; complete by check-fp's rule */
	uint64_t fp_dwarf_checked;
	uint64_t kernel_fp_frames;	/* stacks whose kernel walk went by frame pointer somewhere (no CFI there) */
	bool has_div;
	struct mt_kcheck_div div;
};

struct mt_checkstacks {
	struct mt_kcheck_module *modules;	/* by stacks, descending */
	size_t nmodules;
	uint64_t stacks, kernel, checked, diverged;
};

/* One stack: its kernel chain against its DWARF chain; *at: the first frame that differs. */
enum mt_kcheck mt_checkstacks__verdict(const struct mt_stacks *s, const struct mt_stack_entry *e, size_t *at);
/* Every defined stack of s, by module. 0 or -ENOMEM. */
int mt_checkstacks__run(struct mt_stacks *s, struct mt_checkstacks *out);
void mt_checkstacks__release(struct mt_checkstacks *c);
int mt_checkstacks__text(FILE *f, const struct mt_checkstacks *c);
int mt_checkstacks__json(FILE *f, const struct mt_checkstacks *c);

#endif /* MEMTRACK_CHECKSTACKS_H */
