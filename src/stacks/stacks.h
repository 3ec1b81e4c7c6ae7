/* SPDX-License-Identifier: GPL-2.0-only */
/* stacks.h — the allocation stacks of an artifact: definitions, resolved chains, per-stack accounting, sites. */
#ifndef MEMTRACK_STACKS_H
#define MEMTRACK_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "artifact/artifact.h"
#include "bpf/memtrack.h"
#include "unwind/addrspace.h"
#include "unwind/module.h"
#include "stacks/stack_heap.h"
#include "stacks/stack_mapped.h"
#include "unwind/unwind_records.h"

/* One return address, and where it pointed when its stack was defined. */
struct mt_frame {
	uint64_t addr;
	struct mt_module *mod;	/* NULL: in no recorded mapping */
	uint64_t vaddr;		/* addr in the module's ELF addresses; without its file, the offset in the file */
	bool has_vaddr;		/* the module's file was found: vaddr is an ELF address */
	bool truncated;		/* not a return address: the capture budget cut the chain here (named MT_FRAME_TRUNCATED;
				 * addr, mod and vaddr are 0), or the in-kernel walk stopped (stop). Only ever the last of
				 * an entry's frames. */
	uint8_t stop;		/* with truncated: enum mt_kchain_stop, mod the module the walk could not go past */
};

#define MT_FRAME_TRUNCATED "[truncated]"

/* Which chain a stack's report uses. */
enum mt_chain_kind {
	MT_CHAIN_FP,		/* the kernel's frame-pointer walk */
	MT_CHAIN_DWARF,		/* `memtrack unwind`'s result */
	MT_CHAIN_DWARF_FP,	/* DWARF stopped early; the FP chain agreed with all of it and went further */
	MT_CHAIN_KERNEL,	/* the kernel's CFI walk (struct mt_kchain): the stack's own key */
};

/*
 * A stack's chains are handles into the stacks' frame table (mt_stacks__frame): each distinct return address (with
 * where it pointed) is resolved and kept once, however many stacks hold it, so a stack costs 4 bytes a frame.
 */
/* What kind of record named a stack (mt_stack_entry.named): its definition alone says nothing of it. */
#define MT_STACK_NAMED_ALLOC 1		/* an allocation's */
#define MT_STACK_NAMED_MAP 2		/* a program's mapping call's (mmap, mremap, brk: struct mt_syscall.stack) */

/*
 * One per stack hash, so its size is what a million call paths cost: the fields are packed by size, chains are 4-byte
 * handles, and what few stacks have (a DWARF result's detail, a suppression's counts, program mappings) lives beside
 * the entries (mt_stacks__dwarf_of, mt_stacks__suppressed, mt_stacks__mapped_of), as do the counts, which the stack
 * heap keeps compact (mt_stacks__counts).
 */
struct mt_stack_entry {
	uint64_t hash;
	uint64_t ts_ns;
	uint32_t pid;			/* where it was first defined */
	uint32_t fp;			/* chain: the FP chain, resolved: the return addresses up to the first word that
					 * lies in no executable mapping of the process at the stack's definition */
	uint32_t dwarf;			/* chain */
	uint32_t kchain;		/* chain: resolved, with a spare slot for its stop frame */
	uint32_t kstop_at;		/* frame id (mt_stacks__frame_id) where it stopped (MT_KSTOP_NO_*, LOADING): its
					 * module */
	uint32_t kfp_at;		/* frame id of the first of the kfp_frames */
	uint32_t frames;		/* chain */
	uint32_t dwarf_info;		/* with has_dwarf: its index for mt_stacks__dwarf_of */
	uint16_t nfp;
	uint16_t ndwarf;
	uint16_t nk;
	uint16_t kfp_frames;		/* frames the kernel unwound by frame pointer, no CFI for them */
	uint16_t nframes;		/* the chain reports use: DWARF over FP; when the capture budget cut it (FP: MT_FP_MAX
					 * words; DWARF: MT_STOP_BUDGET, MT_STOP_MAX_FRAMES), its last frame is .truncated */
	bool defined;			/* an MT_REC_STACK was seen (else only records named it) */
	uint8_t named;			/* MT_STACK_NAMED_*: an allocation's stack, a mapping's, or both */
	uint8_t truncated;		/* mt_stack.truncated */
	bool fp_broken;			/* such a word ended it: the kernel's words from there on are not frames */
	bool has_dwarf;
	uint8_t dwarf_stop;		/* enum mt_unwind_stop */
	bool has_kchain;		/* the definition carries the kernel's CFI chain */
	uint8_t kstop;			/* enum mt_kchain_stop */
	uint8_t kind;			/* enum mt_chain_kind */
};

/* What a stack's DWARF result said beyond its frames (mt_stacks__dwarf_of). */
struct mt_stack_dwarf {
	int32_t error;
	const char *detail;		/* "" or the module path the stop is about */
	uint8_t *nofp;			/* DWARF frame i kept no frame pointer: bit i (NULL when unknown, or no frames) */
};

/* A stack allocations named: the heap's reports and checks take it (a mapping call's alone has no allocations). */
static inline bool mt_stack_entry__allocates(const struct mt_stack_entry *e)
{
	return e->defined && (e->named & MT_STACK_NAMED_ALLOC);
}

/*
 * Called at each stack's first definition, in time order, with the process's address space at that moment.
 * Returns a DWARF result for it (valid until the next call; NULL when there is none) and sets *err on failure.
 */
struct mt_stacks;
/*
 * Called before each record's accounting by stack, in time order (rel_ts: since the session start), so that the
 * counts (mt_stacks__heap) are those of the records before it: `memtrack view` samples them over time. Its
 * non-zero return stops the load.
 */
typedef int (*mt_stack_observe_fn)(void *ctx, const struct mt_stacks *s, uint64_t rel_ts);

typedef const struct mt_unwind_rec *(*mt_stack_hook_fn)(void *ctx, const struct mt_stack *rec, uint32_t rec_size,
							 struct mt_aspace *as, int *err);

struct mt_unwind_index;

struct mt_stacks_opts {
	bool fp_chains;			/* frame-pointer chains only (--fp): DIR/unwind.mtz is neither read nor made */
	bool chains_only;		/* stacks and chains only, no accounting (for unwinding) */
	bool full_paths;		/* mt_sym__srcline: source files by their whole path */
	mt_stack_hook_fn hook;		/* when set, DWARF chains come from it instead of the file */
	void *hook_ctx;
	mt_stack_observe_fn observe;	/* when set, called before each record is accounted (NULL: none) */
	bool heap_counts;		/* the stack heap keeps its own counts, which the entries copy at the end (the
					 * view's: read during the load, and unsuppressed after); else they are
					 * counted in the entries alone */
	void *observe_ctx;
	const struct mt_unwind_index *dwarf;	/* mt_stacks__read without a hook: DWARF chains from it (NULL: none) */
	const struct mt_filter *filter;	/* the counts are the pids, exes and --from/--to window it takes
					 * (mt_stack_heap__set_filter; --between is not followed); NULL: all */
	bool keep_model;		/* the model of the read is kept for mt_stacks__take_model, made with
					 * leak_sites as mt_model__load_with's: one read for a command that needs both */
};

struct mt_stacks;

/*
 * Reads the artifact at path (DIR, or DIR/events.mtz), following mappings and accounting allocations by stack
 * (through the model, model/replay.h), with DWARF chains: from opts->hook when set; else from DIR/unwind.mtz when
 * whole and matching; else unwound during this very read and cached as DIR/unwind.mtz for the next reader (when
 * DIR is writable). opts may be NULL. Returns what mt_artifact__read returned; on 0 and -EBADMSG *out is set,
 * otherwise NULL. st may be NULL. (load.c: the choice of DWARF chains, then mt_stacks__read.)
 */
int mt_stacks__load(const char *path, const struct mt_stacks_opts *opts, struct mt_stacks **out,
		    struct mt_read_status *st);
/* The same read with the DWARF chains opts names (hook, else dwarf, else none): no file is read for them or made. */
int mt_stacks__read(const char *path, const struct mt_stacks_opts *opts, struct mt_stacks **out,
		    struct mt_read_status *st);
/* With opts.keep_model: the read's finished model, now the caller's (mt_model__free); NULL otherwise, or after the
 * first call. It is the model mt_model__load_with gives with the same filter and leak_sites. */
struct mt_model *mt_stacks__take_model(struct mt_stacks *s);
void mt_stacks__free(struct mt_stacks *s);

/* The artifact directory of a path given on a command line (the path itself, or the directory holding the events
 * file), malloc'd; NULL on ENOMEM. */
char *mt_stacks__dir_of(const char *path);
/* Stack definitions were seen: without any, reports leave their stack sections out. */
bool mt_stacks__any(const struct mt_stacks *s);
/*
 * For the commands that need stacks (unwind, check-fp, flamegraph, ...), before they load them: reads the artifact
 * at path up to its first stack definition. 0 when there is one; -ENODATA, after one error line "cmd: DIR has no
 * allocation stacks" saying how to record them, when there is none (exit status 2); another -errno when the
 * artifact cannot be read (st->reason says why; mt_report__exit_status prints it). st may be NULL.
 */
int mt_stacks__require(const char *path, const char *cmd, struct mt_read_status *st);
/*
 * Whether the artifact at path was recorded with stacks, reading no further than its first allocation (with
 * --stacks, every allocation names a stack): 1, 0, or -errno when it cannot be read.
 */
int mt_stacks__probe(const char *path);
/* A DWARF chain (from unwind.mtz, the hook or the cache) was chosen for some stack. */
bool mt_stacks__has_dwarf(const struct mt_stacks *s);
/* The chains reports show, in words: "in-kernel CFI", "DWARF" or "frame-pointer" (the most trusted in use). */
const char *mt_stacks__chains(const struct mt_stacks *s);
/* The same for JSON: "kernel", "dwarf" or "fp". */
const char *mt_stacks__chains_key(const struct mt_stacks *s);
/* The accounting by stack: index + 1 of an entry, 0 for the allocations without a stack (NULL with chains_only). */
const struct mt_stack_heap *mt_stacks__heap(const struct mt_stacks *s);
/* The program's mappings by stack (each entry has a copy of its counts; NULL with chains_only). */
const struct mt_stack_mapped_books *mt_stacks__mapped(const struct mt_stacks *s);
size_t mt_stacks__count(const struct mt_stacks *s);
const struct mt_stack_entry *mt_stacks__entry(const struct mt_stacks *s, size_t idx);
struct mt_modules *mt_stacks__modules(const struct mt_stacks *s);
/* Frame i of a chain of an entry (its fp, kchain, dwarf or frames), i below the chain's length. */
const struct mt_frame *mt_stacks__frame(const struct mt_stacks *s, uint32_t chain, size_t i);
/* The id of frame i of a chain (what mt_stacks__frame_id takes; below mt_stacks__nr_frames). */
uint32_t mt_stacks__frame_ref(const struct mt_stacks *s, uint32_t chain, size_t i);
/* A chain's frame ids, in a row (valid while s lives; its length is the entry's for it). */
const uint32_t *mt_stacks__chain(const struct mt_stacks *s, uint32_t chain);
/* A frame by its id (an entry's kstop_at, kfp_at); id 0 is the all-zero frame, in no mapping. */
const struct mt_frame *mt_stacks__frame_id(const struct mt_stacks *s, uint32_t id);
/* Distinct frames the stacks hold (with the all-zero one): what their chains' 4-byte ids index. */
size_t mt_stacks__nr_frames(const struct mt_stacks *s);
/* The leaks of entry idx are suppressed (src/report/leaks.c decides which): its leaked_* (mt_stacks__counts) move
 * into mt_stacks__suppressed's. */
void mt_stacks__suppress(struct mt_stacks *s, size_t idx);
/* What suppressions took of entry e's leaks (0 and 0 for most). */
void mt_stacks__suppressed(const struct mt_stacks *s, const struct mt_stack_entry *e, uint64_t *allocations,
			   uint64_t *bytes);
/*
 * After the read, for mt_stacks__find: the entries' indexes by hash, 4 to 8 bytes a stack (the hash table the read
 * used is gone by then: at 10^6 stacks it was 50 MB). 0 or -ENOMEM; again: 0 at once.
 */
int mt_stacks__index_hashes(struct mt_stacks *s);
/* The index of the entry of hash, by mt_stacks__index_hashes' index (SIZE_MAX: none, or no index made). */
size_t mt_stacks__find(const struct mt_stacks *s, uint64_t hash);
/*
 * Entry e's counts by src/model's rules (struct mt_stack_counts says more; zeros with chains_only), a copy: the stack
 * heap keeps them compact (src/stacks/counts.h). Its leaked_* are those that suppressions left (mt_stacks__suppress).
 */
void mt_stacks__counts(const struct mt_stacks *s, const struct mt_stack_entry *e, struct mt_stack_counts *out);
/* The program mappings entry e's calls made (named MT_STACK_NAMED_MAP): the books' (mt_stacks__mapped), zeros for a
 * stack that mapped nothing. */
const struct mt_stack_mapped *mt_stacks__mapped_of(const struct mt_stacks *s, const struct mt_stack_entry *e);
/* Entry e's DWARF result's error, detail and frame-pointer bits; NULL without one (!e->has_dwarf). */
const struct mt_stack_dwarf *mt_stacks__dwarf_of(const struct mt_stacks *s, const struct mt_stack_entry *e);

/* What a frame symbolizes to. */
struct mt_sym {
	const char *func;	/* NULL when no symbol holds the address */
	uint64_t offset;	/* of the return address itself from func's start (perf's convention) */
	const char *file;	/* source file of the call (addr - 1), its whole path, or NULL */
	const char *comp_dir;	/* the compilation directory (DW_AT_comp_dir) of file's unit, or NULL */
	int line;
};

/* Looks the frame up (cached): symbol and line of addr - 1, since a return address may be past its call's function. */
void mt_stacks__symbolize(struct mt_stacks *s, const struct mt_frame *f, struct mt_sym *out);
/*
 * A frame as text: "func+0xOFF" (with_offset) or "func"; without a symbol "[module+0xVADDR]" (the file offset when
 * the file is missing; "[module]" without offset); outside any module "[0xADDR]" ("[unknown]"); a .truncated
 * frame MT_FRAME_TRUNCATED. Returns buf.
 */
char *mt_frame__name(const struct mt_frame *f, const struct mt_sym *sym, bool with_offset, char *buf, size_t len);
/*
 * "file:line" of a symbolized frame: the file relative to its compilation directory when it lies under it (its
 * whole path when it does not, or with opts.full_paths); without a known compilation directory, its name alone.
 * NULL (buf untouched) when sym has no file. Returns buf.
 */
char *mt_sym__srcline(const struct mt_stacks *s, const struct mt_sym *sym, char *buf, size_t len);

/* ---- DIR/unwind.mtz by stack hash (src/stacks/unwind_index.c; mt_unwind_index__load: load.c) ---- */

/*
 * Reads DIR/unwind.mtz when it is whole, finished and made from DIR/events.mtz (same size). 0 with *out = NULL
 * when there is none, or it is stale or broken; -ENOMEM.
 */
int mt_unwind_index__read(const char *dir, struct mt_unwind_index **out);
/*
 * The same, and when there is no good file and the recording has stacks, they are unwound now and cached as
 * DIR/unwind.mtz (kept in memory only when DIR cannot take it): DWARF by default. 0 or -ENOMEM.
 */
int mt_unwind_index__load(const char *dir, struct mt_unwind_index **out);
/* An empty, complete index to fill, and one DWARF result into it (the first of a hash stays). 0 or -ENOMEM. */
struct mt_unwind_index *mt_unwind_index__new(void);
int mt_unwind_index__add(struct mt_unwind_index *ix, const struct mt_unwind_rec *u);
/* The first MT_REC_UNWIND of hash, or NULL (ix may be NULL). */
const struct mt_unwind_rec *mt_unwind_index__find(const struct mt_unwind_index *ix, uint64_t hash);
void mt_unwind_index__free(struct mt_unwind_index *ix);

#endif /* MEMTRACK_STACKS_H */
