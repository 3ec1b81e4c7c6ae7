/* SPDX-License-Identifier: GPL-2.0-only */
/* module_src.h — inside the module engine: what module.c asks of module_src.c (DWARF lines, names, inline chains). */
#ifndef MEMTRACK_MODULE_SRC_H
#define MEMTRACK_MODULE_SRC_H

#include "unwind/module.h"

/* Frees m's DWARF handle, names and inline chains (made on first use), and forgets them. */
void mt_module__src_free(struct mt_module *m);
/* Forgets m's names and inline chains: the next lookups make them again, as m's naming flags now say. */
void mt_module__forget_names(struct mt_module *m);

#endif /* MEMTRACK_MODULE_SRC_H */
