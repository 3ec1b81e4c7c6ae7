/* model.h — heap accounting from the record stream: per-process and total stats, and the time-order reorderer. */
#ifndef MEMTRACK_MODEL_H
#define MEMTRACK_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "artifact/artifact.h"
#include "bpf/memtrack.h"
#include "common/names.h"

/*
 * Reorder window: records are in the order of the sequence numbers taken as their events happened, each just after
 * its time was read, so they are nearly but not exactly in time order (two CPUs may read the clock in one order and
 * take their numbers in the other; a record behind a skipped gap comes late). The reorderer holds up to `window`
 * records in a priority queue keyed by (ts_ns, arrival order) and emits the smallest whenever it holds more;
 * mt_reorder__flush emits the rest.
 * Memory is bounded by the window, not by the stream.
 */
#define MT_REORDER_WINDOW 4096

struct mt_reorder;

/* Receives records in time order; rec is valid only during the call. A non-zero return is passed back. */
typedef int (*mt_reorder_fn)(const struct mt_rec_hdr *rec, void *ctx);

/* NULL + errno (EINVAL for window 0, ENOMEM). */
struct mt_reorder *mt_reorder__new(size_t window, mt_reorder_fn fn, void *ctx);
/* Copies rec (rec->size bytes) in; may emit the oldest record. 0, -EINVAL (size < header), -ENOMEM, or fn's return. */
int mt_reorder__push(struct mt_reorder *r, const struct mt_rec_hdr *rec);
/* Emits every held record in order. 0 or fn's first non-zero return (the records after it stay held). */
int mt_reorder__flush(struct mt_reorder *r);
/* Records emitted with a ts_ns below one already emitted: they arrived later than the window could absorb. */
uint64_t mt_reorder__late(const struct mt_reorder *r);
void mt_reorder__free(struct mt_reorder *r);

/*
 * Heap accounting of one process, or of all of them (see the semantics at the top of model.c). In blocks and in
 * bytes alike: inherited + allocations - frees - replaced - exec_discarded - leaked = live (0 once finished).
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
	uint64_t leaked_allocations;	/* live when the last image exited, or at the end of the stream */
	uint64_t leaked_bytes;
	uint64_t mmap_calls;		/* successful (ret >= 0) syscalls only; not heap */
	uint64_t mmap_bytes;
	uint64_t munmap_calls;
	uint64_t munmap_bytes;
	uint64_t mremap_calls;
	uint64_t brk_calls;
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
	struct mt_heap_stats heap;
};

struct mt_totals {
	struct mt_heap_stats heap;	/* sums over processes; peak_* is the peak of the summed live bytes */
	uint64_t processes;
	uint64_t thread_exits;		/* MT_REC_THREAD_EXIT records seen (0: the tracer wrote none) */
	uint64_t records;		/* records accounted */
	uint64_t late_records;		/* see mt_reorder__late */
	uint64_t bad_records;		/* unknown type or too short for their type: skipped */
	uint64_t attach_failed;		/* attach records with an error: files whose calls are missing */
	uint64_t drops[MT_DROP__COUNT];	/* from the END record, by enum mt_drop */
	uint64_t dropped_events;	/* sum of drops */
	bool complete;			/* the END record was seen: the run finished */
	int32_t end_status;		/* the END record's wait status */
};

struct mt_session_info {
	bool present;			/* an MT_REC_SESSION was seen (the first one counts) */
	uint32_t root_pid;
	uint32_t tracer_pid;
	uint64_t ts_ns;
	uint64_t realtime_ns;
	uint32_t argc;			/* strings actually present (at most the record's argc) */
	char **argv;			/* argc strings, then NULL */
};

struct mt_model;

/* NULL + errno (ENOMEM). */
struct mt_model *mt_model__new(void);
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

const struct mt_totals *mt_model__totals(const struct mt_model *m);
const struct mt_session_info *mt_model__session(const struct mt_model *m);
/* Processes in the order their pid was first seen (a pid reused after exit gets a new entry). */
size_t mt_model__nr_procs(const struct mt_model *m);
const struct mt_proc *mt_model__proc(const struct mt_model *m, size_t idx);
/* The latest process with that pid, or NULL. */
const struct mt_proc *mt_model__find_proc(const struct mt_model *m, uint32_t pid);

/*
 * Walks the strings that follow a session record: *pos starts at 0. Returns the next string and its length (the
 * last may lack its NUL: it then ends at the record's end), or NULL at the record's end. Callers stop at s->argc
 * (the record may be padded).
 */
const char *mt_session__next_arg(const struct mt_session *s, size_t *pos, size_t *len);

#endif /* MEMTRACK_MODEL_H */
