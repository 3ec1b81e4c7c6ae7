/* SPDX-License-Identifier: GPL-2.0-only */
/* checkfp.h — `memtrack check-fp`: each stack's frame-pointer chain against its DWARF chain. */
#ifndef MEMTRACK_CHECKFP_H
#define MEMTRACK_CHECKFP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "stacks/stacks.h"

enum mt_fp_verdict {
	MT_FP_COMPLETE,		/* the FP chain is the DWARF chain (up to process/thread entry code, or MT_FP_MAX) */
	MT_FP_DIVERGED,		/* it leaves the DWARF chain, or stops short of it, at frame `at` */
	MT_FP_UNCHECKED,	/* DWARF stopped early and the FP chain agrees with all of it: cannot tell */
};

/* How every per-module row of a check begins (mt_checkfp__module_slot finds or adds one). */
struct mt_check_module {
	struct mt_module *mod;		/* of the stacks' first frame (the allocator's caller); NULL: none */
	const char *path;
};

struct mt_fp_module {
	struct mt_module *mod;		/* of the stacks' first frame (the allocator's caller); NULL: none */
	const char *path;
	uint64_t stacks;
	uint64_t checked;		/* complete + diverged */
	uint64_t complete;
};

struct mt_fp_divergence {
	char *function;			/* the DWARF frame before the divergence: its function kept no frame pointer */
	struct mt_module *mod;
	const char *module;		/* its path */
	bool confirmed;			/* the unwound rbp of that frame was not its CFA - 16, in every stack counted */
	uint64_t stacks;
	uint64_t allocations;
	uint64_t bytes;
	uint64_t example;		/* one stack hash it affects */
};

struct mt_checkfp {
	struct mt_fp_module *modules;	/* by stacks, descending */
	size_t nmodules;
	struct mt_fp_divergence *divs;	/* by bytes, then stacks, descending */
	size_t ndivs;
	uint64_t stacks;		/* defined stacks */
	uint64_t unchecked;
	uint64_t no_dwarf;		/* stacks without a DWARF chain at all */
};

/* One stack's FP chain against its DWARF chain; *at: the first entry that differs (MT_FP_DIVERGED). */
enum mt_fp_verdict mt_checkfp__verdict(struct mt_stacks *s, const struct mt_stack_entry *e, size_t *at);
/* chain[from..n) are all process or thread entry functions (_start, __libc_start_main, start_thread, clone3, ...),
 * which code without frame pointers leaves out of an FP chain. */
/* The row of rows[0..*n) (each size bytes, beginning as struct mt_check_module) for mod, added zeroed at the end
 * when there is none; NULL on ENOMEM. */
void *mt_checkfp__module_slot(void **rows, size_t *n, size_t size, struct mt_module *mod);
bool mt_checkfp__entry_tail(struct mt_stacks *s, uint32_t chain, size_t n, size_t from);
/* Every defined stack of s, by module and by divergence. 0 or -ENOMEM. */
int mt_checkfp__run(struct mt_stacks *s, struct mt_checkfp *out);
void mt_checkfp__release(struct mt_checkfp *c);
int mt_checkfp__text(FILE *f, const struct mt_checkfp *c);
int mt_checkfp__json(FILE *f, const struct mt_checkfp *c);

#endif /* MEMTRACK_CHECKFP_H */
