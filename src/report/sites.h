/* sites.h — allocation sites: an artifact's stacks merged by identical symbolized frames, ranked. */
#ifndef MEMTRACK_SITES_H
#define MEMTRACK_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/json.h"
#include "unwind/stacks.h"

struct mt_site_frame {
	char *name;		/* "func+0xOFF" ("func" when inlined, or without offsets), demangled by default */
	char *srcline;		/* "file.c:12" or NULL */
	bool inlined;		/* a function inlined into the next frame (DWARF's inline scopes) */
};

struct mt_site {
	uint64_t bytes;
	uint64_t count;
	uint64_t leaked_bytes;
	uint64_t stacks;	/* stack hashes merged into it */
	size_t order;		/* ties rank in the order the first of them was seen */
	size_t nframes;
	struct mt_site_frame *frames;
};

struct mt_sites {
	struct mt_site *sites;		/* sorted by bytes, then count, descending */
	size_t count;
	struct mt_site **by_count;	/* the same, sorted by count, then bytes, descending */
	uint64_t undefined_allocations;	/* allocations naming a stack whose definition is missing */
	uint64_t undefined_bytes;
	bool any;			/* stack definitions were seen */
	bool dwarf;			/* DWARF chains were used (DIR/unwind.mtz) */
};

struct mt_sites_opts {
	bool no_offsets;	/* frames named "func", not "func+0xOFF": sites are call paths of functions (diff) */
};

/* NULL + errno (ENOMEM). Names are demangled unless mt_modules__set_raw_names(mt_stacks__modules(s), true). */
struct mt_sites *mt_sites__build(struct mt_stacks *s);
/* The same with options (opts may be NULL). */
struct mt_sites *mt_sites__build_with(struct mt_stacks *s, const struct mt_sites_opts *opts);
void mt_sites__free(struct mt_sites *sites);
/* The frame names joined by newlines, what identifies a site (and matches it across runs); NULL on ENOMEM. */
char *mt_site__key(const struct mt_site *site);

/* One function of a call path as the reports print it. */
struct mt_frame_line {
	const char *name;	/* as struct mt_site_frame's; valid during the callback only */
	const char *file;	/* the source file as DWARF names it (a full path, mostly), or NULL */
	int line;
	bool inlined;
};
typedef int (*mt_frame_line_fn)(const struct mt_frame_line *fl, void *ctx);
/*
 * Calls fn for each function the return address f stands for, innermost first: those inlined at the call, then the
 * one holding it ("[module+0xVADDR]" and the like without a symbol). fn's non-zero return stops and is returned.
 */
int mt_sites__expand_frame(struct mt_stacks *s, const struct mt_frame *f, bool with_offset, mt_frame_line_fn fn,
			   void *ctx);
/*
 * mt_stacks__load(dir) for a command that needs stacks (what: "flame graph", ...), names kept raw when raw_names.
 * NULL after one error line when DIR cannot be read (*err: the load's return) or holds no allocation stacks
 * (-ENODATA: "DIR: recorded without --stacks: ..."). Otherwise *err is 0 or -EBADMSG (see mt_report__exit_status).
 */
struct mt_stacks *mt_sites__load(const char *dir, bool raw_names, const char *what, int *err,
				 struct mt_read_status *st);
/* A site's frames as a JSON array of {"name", "srcline" (or null), "inlined"} objects. */
void mt_sites__json_frames(struct mt_json *j, const struct mt_site *site);

#endif /* MEMTRACK_SITES_H */
