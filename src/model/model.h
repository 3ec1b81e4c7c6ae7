/* SPDX-License-Identifier: GPL-2.0-only */
/* model.h — heap accounting from the record stream: per image, per process and in total, filtered on request. */
#ifndef MEMTRACK_MODEL_H
#define MEMTRACK_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "artifact/artifact.h"
#include "bpf/memtrack.h"
#include "common/names.h"
#include "model/filter.h"
#include "model/mapped.h"
#include "model/reorder.h"

/*
 * Heap accounting of one process image, one process, or all of them (see the semantics at the top of model.c). In
 * blocks and in bytes alike, 0 once finished:
 *   start_live + inherited + allocations - frees - replaced - exec_discarded - leaked - still_live = live
 * Every field is a uint64_t (the window arithmetic in model.c relies on it).
 */
struct mt_heap_stats {
	uint64_t inherited_allocations;	/* blocks live in the parent at the fork, the child's from then on */
	uint64_t inherited_bytes;
	uint64_t allocations;		/* successful allocation calls, realloc included */
	uint64_t frees;			/* releases of live blocks (own or inherited), the free side of realloc too */
	uint64_t allocated_bytes;	/* sum of the sizes asked for by the allocations */
	uint64_t freed_bytes;		/* sum of the sizes of the blocks freed */
	uint64_t failed_allocations;	/* calls that returned NULL (ignored otherwise) */
	uint64_t unknown_frees;		/* releases of addresses never seen allocated (not in frees) */
	uint64_t internal_releases;	/* libc's releases of blocks the program had freed, or its own cache (not in
					 * frees): glibc's tcache flush when a thread ends */
	uint64_t replaced;		/* allocations at an address still live (a free was lost): the old block */
	uint64_t replaced_bytes;
	uint64_t live_allocations;	/* now */
	uint64_t live_bytes;		/* now, inherited blocks still held included */
	uint64_t peak_live_bytes;
	uint64_t peak_ts_ns;		/* when the peak was first reached, relative to the session start */
	uint64_t exec_discarded_allocations;	/* live when an exec replaced the image: not leaks */
	uint64_t exec_discarded_bytes;
	uint64_t leaked_allocations;	/* live when the last image exited, allocated by the process itself */
	uint64_t leaked_bytes;
	uint64_t inherited_live_allocations;	/* live when the last image exited, inherited at the fork and never
						 * freed: the parent's, not leaks of this process */
	uint64_t inherited_live_bytes;
	uint64_t still_live_allocations;	/* live at the end of the stream (no exit record), or of the window */
	uint64_t still_live_bytes;
	uint64_t start_live_allocations;	/* with a time window: live when it began */
	uint64_t start_live_bytes;
	uint64_t early_frees;		/* with a time window: of the frees, those of blocks allocated before it */
	uint64_t early_freed_bytes;
	uint64_t paused_frees;		/* of the unknown frees, those after a start mark (record --paused, the control
					 * FIFO): mostly of blocks allocated while recording was off */
	uint64_t pre_attach_frees;	/* record --pid: releases of blocks allocated before the attach (not in
					 * unknown_frees nor frees), by images that began before it or forked after */
	uint64_t mmap_calls;		/* successful (ret >= 0) syscalls only; not heap */
	uint64_t mmap_bytes;
	uint64_t munmap_calls;
	uint64_t munmap_bytes;
	uint64_t mremap_calls;
	uint64_t brk_calls;
};

/*
 * What resident memory was made of at one moment: the kernel's counters of the latest RSS records (bytes), beside
 * the model's books then (docs/REPORT.md, "Where RSS goes"). In totals, sums over the processes the filter takes.
 */
struct mt_rss_parts {
	uint64_t anon;			/* MM_ANONPAGES */
	uint64_t file;			/* MM_FILEPAGES */
	uint64_t shmem;			/* MM_SHMEMPAGES */
	uint64_t swap;			/* MM_SWAPENTS: swapped out, not resident */
	uint64_t heap_bytes;		/* live heap: the sizes of the live blocks */
	uint64_t allocator_bytes;	/* anonymous private mappings made inside allocator calls (mt_mapped_stats) */
	uint64_t program_bytes;		/* those the program (and its loader) made */
};

/* Resident memory from the MT_REC_RSS records (anon + file + shmem), in bytes; all 0 without any. */
struct mt_rss_stats {
	uint64_t records;		/* MT_REC_RSS records accounted */
	uint64_t rss_bytes;		/* the last record's; 0 once the process exited (in totals: the sum now) */
	uint64_t peak_rss_bytes;	/* the highest value reached (in totals: of the sum over processes) */
	uint64_t peak_rss_ts_ns;	/* when it was first reached, relative to the session start like peak_ts_ns */
	struct mt_rss_parts at_peak;	/* then */
};

/* The terms of resident memory at a peak (mt_rss_parts__terms): they add up to anon + file + shmem. */
enum mt_rss_term {
	MT_RSS_TERM_HEAP,		/* live heap */
	MT_RSS_TERM_ALLOCATOR_HELD,	/* allocator mappings - live heap: free blocks, metadata, page rounding */
	MT_RSS_TERM_PROGRAM,		/* program mappings */
	MT_RSS_TERM_FILE,		/* file-backed resident */
	MT_RSS_TERM_SHMEM,		/* shared memory resident */
	MT_RSS_TERM_REST,		/* anon - allocator mappings - program mappings: < 0 mapped but not resident */
	MT_RSS_TERM__COUNT,
};

/*
 * parts as terms, signed (allocator-held is negative when live blocks lie outside the allocator mappings seen, the
 * rest when mapped bytes are not all resident); returns their sum, anon + file + shmem.
 */
uint64_t mt_rss_parts__terms(const struct mt_rss_parts *parts, int64_t terms[MT_RSS_TERM__COUNT]);

/*
 * Anonymous private mappings (mmap, mremap, brk; munmap ends them), in bytes of address space, by who made them:
 * the program, or an allocator inside one of its calls, for its heap (whose blocks the heap stats count). A fork
 * child starts with its parent's; an exec's image starts with none.
 */
struct mt_mapped_stats {
	uint64_t program_bytes;		/* mapped by the program now; 0 once ended */
	uint64_t allocator_bytes;	/* mapped inside allocator calls now; 0 once ended */
	uint64_t peak_program_bytes;
	uint64_t peak_program_ts_ns;	/* when first reached, relative to the session start like peak_ts_ns */
	uint64_t peak_allocator_bytes;
	uint64_t end_program_bytes;	/* held when it ended (exit, exec), or at the end of the stream */
	uint64_t end_allocator_bytes;
};

struct mt_proc {
	uint32_t pid;			/* thread group id */
	uint32_t ppid;			/* 0 when it appeared without a fork or session record */
	bool exited;			/* an MT_REC_EXIT was seen */
	int32_t status;			/* raw wait status; valid when exited */
	char exe[MT_PATH_MAX];		/* path of the last exec ("" if none; a fork child inherits its parent's) */
	char comm[MT_COMM_MAX];		/* likewise, from the exec record */
	uint64_t start_ns;		/* ts_ns of its fork (or session) record; 0 when unknown */
	uint64_t exit_ns;		/* ts_ns of its exit record; valid when exited */
	uint32_t nr_images;		/* 1 + its execs (but an exec that names an empty image: the root's first) */
	struct mt_heap_stats heap;	/* the sum of its images' */
	struct mt_rss_stats rss;
	struct mt_mapped_stats mapped;	/* of its address space, whichever image had it */
};

/* How an image ended. */
enum mt_image_end {
	MT_IMAGE_LIVE,			/* it had not when the stream ended */
	MT_IMAGE_EXEC,			/* an exec replaced it: its live blocks were discarded */
	MT_IMAGE_EXIT,			/* its process exited: its live blocks leaked */
};

/* One image of a process: what it ran from its fork (or exec) to its exec (or exit), with its own counts. */
struct mt_image {
	uint32_t pid;
	uint32_t image;			/* 0: the one the process started with; n: the one its n-th exec started */
	size_t proc;			/* its process, mt_model__proc(m, proc) */
	size_t parent;			/* image 0 of a fork child: the parent's image at the fork; else SIZE_MAX */
	bool from_exec;			/* an exec started it (the root's first image: memtrack's exec of the command) */
	bool selected;			/* the filter's pids and exes take it */
	bool matched;			/* selected, and it lived in the time window: a row of the report */
	bool open_end;			/* it had not ended by the end of the window (or of the stream): what it held
					 * then is still_live, not leaked */
	enum mt_image_end end;
	char exe[MT_PATH_MAX];		/* from its exec record; image 0 of a fork child: its parent's */
	char comm[MT_COMM_MAX];
	uint64_t start_ns;		/* ts_ns of the record that began it */
	uint64_t end_ns;		/* ts_ns of the exec or exit that ended it */
	struct mt_heap_stats heap;	/* its own: the inherited blocks are image 0's, exec_discarded the ended one's */
	struct mt_rss_stats rss;	/* the records while it was its process's image */
	struct mt_mapped_stats mapped;	/* while it was its process's image */
};

/* Blocks an image still held when it ended by exit (leaked) or with the stream (still live), by stack. */
struct mt_leak_site {
	uint64_t stack;			/* the allocation records' stack hash; 0 for blocks without one */
	uint64_t count;
	uint64_t bytes;
};

struct mt_totals {
	struct mt_heap_stats heap;	/* sums over the images the filter takes; peak_* the peak of their live sum */
	struct mt_rss_stats rss;	/* the sum over the processes whose image the filter takes, and its peak */
	struct mt_mapped_stats mapped;	/* likewise; end_* the sums of the processes' */
	uint64_t processes;		/* with a matched image */
	uint64_t images;		/* matched */
	bool stacks;			/* some allocation record carried a stack hash */
	uint64_t stacks_withheld;	/* call paths defined MT_STACK_WITHHELD (a privileged process's), whatever
					 * the filter: each once, however often defined again */
	uint64_t thread_exits;		/* MT_REC_THREAD_EXIT records seen (0: the tracer wrote none) */
	uint64_t records;		/* records accounted */
	uint64_t late_records;		/* see mt_reorder__late */
	uint64_t bad_records;		/* unknown type or too short for their type: skipped */
	uint64_t attach_failed;		/* attach records with an error: files whose calls are missing */
	uint64_t drops[MT_DROP__COUNT];	/* from the END record, by enum mt_drop */
	uint64_t dropped_events;	/* sum of drops */
	uint64_t marks;			/* MT_REC_MARK records: start, stop and mark lines of the control FIFO */
	bool between_open;		/* --between A B: mark A was seen (the window opened there) */
	bool between_closed;		/* and then mark B (it closed there) */
	bool complete;			/* the END record was seen: the run finished */
	int32_t end_status;		/* the END record's wait status */
};

struct mt_session_info {
	bool present;			/* an MT_REC_SESSION was seen (the first one counts) */
	uint32_t root_pid;
	uint32_t tracer_pid;
	uint64_t ts_ns;
	uint64_t realtime_ns;
	bool attached;			/* record --pid: an MT_REC_SEIZED was seen (the process ran before) */
	uint64_t attached_ns;		/* its ts_ns */
	uint32_t argc;			/* strings actually present (at most the record's argc) */
	char **argv;			/* argc strings, then NULL */
};

struct mt_model;

struct mt_model_opts {
	const struct mt_filter *filter;	/* NULL: everything; it must outlive the model */
	bool leak_sites;		/* keep each live block's stack id, and what each image leaked by stack */
	mt_mapped_note_fn mapped_note;	/* told of each change to a process's program mappings, by the stack of
					 * the call that made them (model/mapped.h; NULL: nobody) */
	void *mapped_ctx;
};

/* NULL + errno (ENOMEM). */
struct mt_model *mt_model__new(void);
/* The same with options (opts may be NULL). */
struct mt_model *mt_model__new_with(const struct mt_model_opts *opts);
/*
 * Called with each record right after the model accounted it, in the order it did (time order, through the
 * reorder window; the last ones during mt_model__finish, before what is still live is ended). rec is the model's
 * copy, valid during the call. A non-zero return stops the model and is passed back by mt_model__add/__finish.
 */
typedef int (*mt_model_observer_fn)(const struct mt_rec_hdr *rec, const struct mt_model *m, void *ctx);
void mt_model__set_observer(struct mt_model *m, mt_model_observer_fn fn, void *ctx);
/* Feeds one record (copied). 0, -EINVAL (size < header, or after finish), -ENOMEM. */
int mt_model__add(struct mt_model *m, const struct mt_rec_hdr *rec);
/* End of stream: flushes the reorder window, and what is still live counts as leaked. 0 or -ENOMEM; idempotent. */
int mt_model__finish(struct mt_model *m);
void mt_model__free(struct mt_model *m);

/*
 * Reads the artifact at path (a DIR or the events file), feeds every record and finishes. Returns what
 * mt_artifact__read returned; on 0 and -EBADMSG *out is the model of what was read, otherwise NULL. st may be NULL.
 */
int mt_model__load(const char *path, struct mt_model **out, struct mt_read_status *st);
/* The same with options (opts may be NULL). */
int mt_model__load_with(const char *path, const struct mt_model_opts *opts, struct mt_model **out,
			struct mt_read_status *st);

const struct mt_totals *mt_model__totals(const struct mt_model *m);
/* The filter it was made with (everything without one); a --between window's from_ns and to_ns found. */
const struct mt_filter *mt_model__filter(const struct mt_model *m);
const struct mt_session_info *mt_model__session(const struct mt_model *m);
/* Processes in the order their pid was first seen (a pid reused after exit gets a new entry). */
size_t mt_model__nr_procs(const struct mt_model *m);
const struct mt_proc *mt_model__proc(const struct mt_model *m, size_t idx);
/* The latest process with that pid, or NULL. */
const struct mt_proc *mt_model__find_proc(const struct mt_model *m, uint32_t pid);
/*
 * Right after the model accounted an allocator record of pid: the block at addr that it freed or replaced was one
 * the process inherited at its fork and had held since (so that what it still holds of them at its exit is told
 * apart from its leaks: unwind/stack_heap.c follows the model by it).
 */
bool mt_model__left_inherited(const struct mt_model *m, uint32_t pid, uint64_t addr);
/* Images in the order they began (a process's in their order). */
size_t mt_model__nr_images(const struct mt_model *m);
const struct mt_image *mt_model__image(const struct mt_model *m, size_t idx);
/*
 * With opts.leak_sites: what image idx leaked at its exit (or still held at the end of the stream, per its end),
 * in the time window, by stack, in no order (*n of them; NULL when none). Without stacks, one site of stack 0.
 */
const struct mt_leak_site *mt_model__image_leaks(const struct mt_model *m, size_t idx, size_t *n);

/*
 * Walks the strings that follow a session record: *pos starts at 0. Returns the next string and its length (the
 * last may lack its NUL: it then ends at the record's end), or NULL at the record's end. Callers stop at s->argc
 * (the record may be padded).
 */
const char *mt_session__next_arg(const struct mt_session *s, size_t *pos, size_t *len);

#endif /* MEMTRACK_MODEL_H */
