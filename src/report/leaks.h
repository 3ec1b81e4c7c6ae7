/* SPDX-License-Identifier: GPL-2.0-only */
/* leaks.h — leaked blocks by allocation site: suppressions (a file's and the built-in list), `report --leaks`. */
#ifndef MEMTRACK_LEAKS_H
#define MEMTRACK_LEAKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/json.h"
#include "model/model.h"
#include "stacks/stacks.h"

struct mt_suppressions;

/* With the built-in list of runtime one-offs (builtins) or empty. NULL + errno (ENOMEM). */
struct mt_suppressions *mt_suppressions__new(bool builtins);
/*
 * Adds the patterns of path: one `leak:PATTERN` a line (LSan's and heaptrack's format: PATTERN matches a frame's
 * function, module or source file as a substring, `*` any run, `^` and `$` anchor it), `#` comments and blank lines.
 * 0, or -errno after one error line naming the file (and the line when one is wrong).
 */
int mt_suppressions__load(struct mt_suppressions *s, const char *path);
void mt_suppressions__free(struct mt_suppressions *s);

/* The suppression options of every command that shows leaks (report, diff, flamegraph, pprof). */
#define MT_SUPPRESS_MAX 16
struct mt_suppress_args {
	bool no_default;			/* --no-default-suppress */
	const char *files[MT_SUPPRESS_MAX];	/* --suppress FILE, in order */
	size_t nfiles;
};

/* The long options' usage lines, for the commands' --help. */
#define MT_SUPPRESS_USAGE \
	"  --suppress FILE         one `leak:PATTERN` a line (LSan's and heaptrack's format): leaks with a\n" \
	"                          matching frame (function, module or source file) are not counted as leaked\n" \
	"  --no-default-suppress   count runtime one-offs as leaks too (libstdc++'s emergency pool, stdio\n" \
	"                          buffers, ld.so's own), which are suppressed by default (they need stacks)\n"

/* One suppression option of cmd: file is --suppress's (NULL: --no-default-suppress). 0 or -EINVAL after one line. */
int mt_suppress_args__add(struct mt_suppress_args *a, const char *cmd, const char *file);
/* The suppressions the options ask for. NULL after one error line (a file that cannot be read, ENOMEM). */
struct mt_suppressions *mt_suppressions__from_args(const struct mt_suppress_args *a);

/*
 * The one rule of what is leaked (docs/REPORT.md, "Leak suppressions"): what a process's last image held at its
 * exit, less the blocks whose allocation stack a suppression takes. Applied to the accounting by stack: every
 * entry of s with leaks that sup suppresses gets them moved to its suppressed_* (mt_stacks__suppress), so that
 * every command reading the entries (sites, flame graphs, pprof, speedscope, diff) counts the same. 0 (sup NULL:
 * nothing to do).
 */
int mt_suppressions__apply(const struct mt_suppressions *sup, struct mt_stacks *s);

struct mt_leaks;

/*
 * What the matched images of m (loaded with opts.leak_sites) leaked at their exit and still held at the end, by
 * allocation site: stacks symbolizes them (NULL: no stacks, then a site is an image's exe) and sup says which
 * leaks are suppressed (NULL: none). Suppressions apply to leaks only. NULL + errno (ENOMEM).
 */
struct mt_leaks *mt_leaks__build(const struct mt_model *m, struct mt_stacks *stacks,
				 const struct mt_suppressions *sup);
void mt_leaks__free(struct mt_leaks *l);
/* The suppressed leaks of image idx, or of every matched image for SIZE_MAX (l may be NULL: 0). */
void mt_leaks__suppressed(const struct mt_leaks *l, size_t idx, uint64_t *count, uint64_t *bytes);
/* The text "suppressed leaks:" line's detail: each suppression that matched, with its count. */
void mt_leaks__suppressions_text(FILE *f, const struct mt_leaks *l);
/* "suppressions": [{"suppression", "builtin", "allocations", "bytes"}] of those that matched. */
void mt_leaks__suppressions_json(struct mt_json *j, const struct mt_leaks *l);
/* The listing: leaked sites (not suppressed), then still-live ones, largest first, top of each (0: all). */
int mt_leaks__text(FILE *f, const struct mt_leaks *l, size_t top);
/* "leaks": [...], "still_live": [...] as the listing has them. */
void mt_leaks__json(struct mt_json *j, const struct mt_leaks *l, size_t top);

#endif /* MEMTRACK_LEAKS_H */
