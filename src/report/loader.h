/* SPDX-License-Identifier: GPL-2.0-only */
/* loader.h — a command's stacks or sites from DIR: loaded, checked for --stacks, suppressed, named; one error line. */
#ifndef MEMTRACK_LOADER_H
#define MEMTRACK_LOADER_H

#include "report/leaks.h"
#include "report/sites.h"
#include "stacks/stacks.h"

#define MT_NAMES_RAW 1		/* `--no-demangle`: names as the ELF files spell them */
#define MT_NAMES_FULL 2		/* `--full-names`: template arguments kept (elided by default) */

/*
 * mt_stacks__load(dir) for a command that needs stacks (what: "flame graph", ...), names as `names` says (MT_NAMES_*),
 * the leaks that sup suppresses moved out of the entries' leaked_* (mt_suppressions__apply; sup NULL: none).
 * NULL after one error line when DIR cannot be read (*err: the load's return) or holds no allocation stacks
 * (-ENODATA: "DIR: recorded without --stacks: ..."). Otherwise *err is 0 or -EBADMSG (see mt_report__exit_status).
 */
struct mt_stacks *mt_loader__stacks(const char *dir, const struct mt_suppressions *sup, unsigned int names,
				    const char *what, int *err, struct mt_read_status *st);
/* The same with load options (NULL: the defaults), e.g. frame-pointer chains only. */
struct mt_stacks *mt_loader__stacks_with(const char *dir, const struct mt_stacks_opts *opts,
					 const struct mt_suppressions *sup, unsigned int names, const char *what,
					 int *err, struct mt_read_status *st);
/* DIR's sites by function, without offsets, as `diff` matches them (mt_loader__stacks_with, then
 * mt_sites__build_with): NULL after one error line, what's. */
struct mt_sites *mt_loader__sites_by_function(const char *dir, const struct mt_stacks_opts *opts,
					      const struct mt_suppressions *sup, unsigned int names, const char *what);

#endif /* MEMTRACK_LOADER_H */
