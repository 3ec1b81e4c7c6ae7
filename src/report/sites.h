/* SPDX-License-Identifier: GPL-2.0-only */
/* sites.h — allocation sites: an artifact's stacks merged by identical symbolized frames, ranked. */
#ifndef MEMTRACK_SITES_H
#define MEMTRACK_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/json.h"
#include "stacks/stacks.h"

struct mt_suppressions;

/* In a site of mt_sites__build, name and srcline are the sites' (mt_sites.strs); elsewhere the holder's own. */
struct mt_site_frame {
	char *name;		/* "func+0xOFF" ("func" when inlined, or without offsets), demangled by default */
	char *srcline;		/* "file.c:12" or NULL */
	bool inlined;		/* a function inlined into the next frame (DWARF's inline scopes) */
	bool runtime;		/* in the C or C++ runtime, the loader or an allocator (mt_sites__runtime_module) */
};

struct mt_site {
	uint64_t bytes;
	uint64_t count;
	uint64_t leaked_bytes;
	uint64_t leaked_allocations;
	uint64_t suppressed_bytes;	/* leaked, but suppressed (mt_suppressions__apply) */
	uint64_t suppressed_allocations;
	uint64_t peak_bytes;		/* live when the total live bytes first reached their peak */
	uint64_t peak_allocations;
	uint64_t temporary_allocations;	/* freed by their thread before its next allocation (heaptrack's) */
	uint64_t temporary_bytes;
	/* 32 bits: stack indexes are (a million one-stack sites would carry the padding) */
	uint32_t stacks;	/* stack hashes merged into it */
	uint32_t order;		/* ties rank in the order the first of them was seen */
	uint32_t nframes;	/* read them with mt_site__frame */
	uint32_t nprocs : 29;	/* the processes are far fewer than the stacks */
	bool heap : 1;		/* some allocation (or inherited block) of it: a site of the heap's rankings */
	bool own_procs : 1;	/* procs is the site's own allocation */
	bool chain : 1;		/* ids are its first stack's chain (mt_stacks__chain), frames mt_sites.by_frame */
	struct mt_stack_mapped *mapped;	/* the program's mappings its calls made (docs/REPORT.md); NULL: none (most
					 * sites, so not one in each) */
	struct mt_site_frame *frames;	/* with ids: the table ids index (the sites', shared); without: its own */
	const uint32_t *ids;	/* NULL, or frame i is frames[ids[i]] */
	/*
	 * The processes that allocated there or held some of it at their own peak, in process order (allocations and
	 * bytes: at the process's peak; made_*: what it allocated there; image: index in mt_sites.images; leaked_*:
	 * not summed). A site of one stack shares its stack heap's (mt_stack_heap__proc_peaks): most of them are.
	 */
	const struct mt_proc_peak *procs;	/* nprocs of them */
};

/* One of the largest allocations. */
struct mt_site_big {
	uint64_t size;
	uint32_t pid;
	uint64_t ts_ns;			/* since the session start */
	const struct mt_site *site;	/* NULL: no stack, or one never defined */
};

struct mt_sites {
	struct mt_site *sites;		/* sorted by bytes, then count, descending; then those of mappings alone */
	size_t count;			/* the heap's sites (mt_site.heap), first in sites */
	size_t nall;			/* with the sites of mappings alone */
	struct mt_site **by_mapped;	/* the sites with program mappings, by mapped bytes then at their peak */
	size_t nmapped;
	uint64_t mapped_peak_bytes;	/* the peak of the program's mapped bytes in all */
	/* the heap's sites again as indexes into sites (mt_sites__rank) */
	uint32_t *by_count;		/* by count, then bytes, descending */
	uint32_t *by_peak;		/* by peak_bytes, then peak_allocations, descending: those with either */
	size_t npeak;
	uint32_t *by_temporary;		/* by temporary_allocations, then temporary_bytes, descending: those with some */
	size_t ntemporary;
	uint64_t suppressed_allocations;	/* leaks that suppressions took (mt_suppressions__apply), in all */
	uint64_t suppressed_bytes;
	uint64_t undefined_allocations;	/* allocations naming a stack whose definition is missing */
	uint64_t undefined_bytes;
	bool any;			/* stack definitions were seen */
	bool dwarf;			/* DWARF chains were used (DIR/unwind.mtz) */
	const char *chains;		/* mt_stacks__chains: the chains shown, in words */
	const char *chains_key;		/* mt_stacks__chains_key: the same for JSON */
	/* allocations on chains that stop before the stack's end, by why: [0] the capture budget ([truncated]), else
	 * enum mt_kchain_stop (the kernel's walk); cut_module: the module without unwind info that cut the most */
	uint64_t cut_allocations[MT_KSTOP__COUNT];
	const char *cut_module;
	uint64_t cut_module_allocations;
	/* allocations whose kernel chain went by frame pointer somewhere (a module without CFI, or none); fp_module:
	 * the first such module of the stack with the most */
	uint64_t fp_walk_allocations;
	const char *fp_module;
	uint64_t fp_module_allocations;
	/* every allocation's, with a stack or not */
	struct mt_stack_counts totals;	/* allocations, temporary_allocations, peak_bytes (the total's peak), ... */
	uint64_t peak_ts_ns;		/* when the total live bytes first reached their peak */
	struct mt_size_stats sizes;	/* by power-of-two size class */
	struct mt_site_big largest[MT_LARGEST_MAX];
	size_t nlargest;
	struct mt_heap_proc *procs;	/* the processes, in the order the model first saw them */
	size_t nprocs;
	struct mt_heap_image *images;	/* their images, by process then image number */
	size_t nimages;
	size_t makers;			/* distinct exes among the images that made allocations with a stack */
	char **strs;			/* every site frame's name and srcline, each distinct one once */
	size_t nstrs;
	struct mt_site_frame *lines;	/* the sites' frames: each stack frame's expansion once */
	uint32_t *ids;			/* each site's indexes into lines, in a row */
	struct mt_site_frame *by_frame;	/* by the stacks' frame id: its one line (sites of shared chains), or NULL */
};

struct mt_sites_opts {
	bool no_offsets;	/* frames named "func", not "func+0xOFF": sites are call paths of functions (diff) */
	bool detached;		/* the sites outlive s: they copy what they would share of it */
};

/*
 * NULL + errno (ENOMEM). Names are demangled unless mt_modules__set_raw_names(mt_stacks__modules(s), true). The
 * sites share s's chains and per-process peaks (a million one-stack sites would copy them): s must outlive them,
 * unless opts.detached.
 */
struct mt_sites *mt_sites__build(struct mt_stacks *s);
/* The same with options (opts may be NULL). */
struct mt_sites *mt_sites__build_with(struct mt_stacks *s, const struct mt_sites_opts *opts);
/* Sites in mt_sites.sites's order: the heap's by bytes, then count, descending, ties in order; then the others. 0 or
 * -ENOMEM. */
int mt_sites__sort(struct mt_site *sites, size_t n);
/* The heap's sites' rankings by_count, by_peak, by_temporary (built by mt_sites__build_with). 0 or -ENOMEM. */
int mt_sites__rank(struct mt_sites *sites);
void mt_sites__free(struct mt_sites *sites);
/* Frame i (below site->nframes) of a site, innermost first. */
static inline const struct mt_site_frame *mt_site__frame(const struct mt_site *site, size_t i)
{
	return site->ids ? &site->frames[site->ids[i]] : &site->frames[i];
}
/* What the entries of s hold as suppressed (after mt_suppressions__apply), in all. */
void mt_sites__suppressed_total(const struct mt_stacks *s, uint64_t *count, uint64_t *bytes);
/* The frame names joined by newlines, what identifies a site (and matches it across runs); NULL on ENOMEM. */
char *mt_site__key(const struct mt_site *site);

/* Whether the module at path is the C or C++ runtime, the dynamic loader or an allocator: code the program calls
 * into, not the program's (libc, libm, libstdc++, libc++, libgcc_s, ld-linux, jemalloc, tcmalloc, mimalloc). */
bool mt_sites__runtime_module(const char *path);

/* One function of a call path as the reports print it. */
struct mt_frame_line {
	const char *name;	/* as struct mt_site_frame's; valid during the callback only */
	const char *file;	/* the source file as DWARF names it (a full path, mostly), or NULL */
	int line;
	bool inlined;
	bool runtime;		/* as struct mt_site_frame's */
};
typedef int (*mt_frame_line_fn)(const struct mt_frame_line *fl, void *ctx);
/*
 * Calls fn for each function the return address f stands for, innermost first: those inlined at the call, then the
 * one holding it ("[module+0xVADDR]" and the like without a symbol). fn's non-zero return stops and is returned.
 */
int mt_sites__expand_frame(struct mt_stacks *s, const struct mt_frame *f, bool with_offset, mt_frame_line_fn fn,
			   void *ctx);

/* Where mt_site__add_frame appends: a site and the capacity of its frames. */
struct mt_site_frames {
	struct mt_site *site;
	size_t cap;
};

/* An mt_frame_line_fn over a struct mt_site_frames: appends fl to the site's frames, its file by its base name
 * ("file.c:12"). 0 or -ENOMEM. */
int mt_site__add_frame(const struct mt_frame_line *fl, void *ctx);
/* ---- peaks, temporaries, sizes (for `memtrack report`) ---- */

/*
 * The keys every site object gets besides report's own: "peak_bytes", "peak_allocations", "temporary_allocations",
 * "temporary_bytes", "process_peaks": [{"pid", "peak_bytes", "peak_allocations"}] (the processes that held some of
 * it at their own peak), "processes" (mt_sites__json_processes).
 */
void mt_sites__json_site_keys(struct mt_json *j, const struct mt_sites *sites, const struct mt_site *site);
/* The key "processes": [{"pid", "exe", "allocations", "bytes"}]: the processes that allocated at the site, in
 * process order, each with the exe of its image that made the first of them. */
void mt_sites__json_processes(struct mt_json *j, const struct mt_sites *sites, const struct mt_site *site);
/* A whole site object as the sections below print them: bytes, count, leaked_bytes, stacks, the keys above (only
 * "processes" unless keys), then "frames" and "srclines" (arrays of strings and of strings or null). */
void mt_sites__json_site(struct mt_json *j, const struct mt_sites *sites, const struct mt_site *site, bool keys);
/* The keys "frames" (the names) and "srclines" (strings or null), as report's site objects have them. */
void mt_sites__json_frame_keys(struct mt_json *j, const struct mt_site *site);
/* "top sites at peak": the top sites by bytes live at the total's peak, their share of it. 0 or -EIO. */
int mt_sites__peak_text(FILE *f, const struct mt_sites *sites, size_t top);
/*
 * "top allocation sites by executable", when the processes of more than one exe made allocations with stacks:
 * per exe (by the bytes its processes allocated, largest first) their number, bytes and sites, then its top sites
 * by the bytes its processes allocated there (src/report/site_groups.c says why by exe). 0, -EIO or -ENOMEM.
 */
int mt_sites__by_exe_text(FILE *f, const struct mt_sites *sites, size_t top);
/* "temporary allocations" (the total) and "top temporary sites". 0 or -EIO. */
int mt_sites__temporary_text(FILE *f, const struct mt_sites *sites, size_t top);
/*
 * "top sites by mapped bytes": the sites whose calls made program mappings (anonymous private, not the allocator's),
 * by the bytes they mapped, with their calls, their bytes at the mapped total's peak and what was unmapped of them.
 * 0 or -EIO.
 */
int mt_sites__mapped_text(FILE *f, const struct mt_sites *sites, size_t top);
/*
 * The top-level keys of both: "peak_live_bytes", "peak_ts_ns", "sites_at_peak": [top by peak_bytes],
 * "temporary_allocations", "temporary_bytes" (in all), "sites_by_temporary": [top by temporary_allocations];
 * "mapped_peak_bytes" and "sites_by_mapped": [top by mapped_bytes, with struct mt_stack_mapped's counts].
 */
void mt_sites__json_sections(struct mt_json *j, const struct mt_sites *sites, size_t top);

#endif /* MEMTRACK_SITES_H */
