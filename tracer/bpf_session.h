/* SPDX-License-Identifier: GPL-2.0-only */
/* bpf_session.h — the loaded BPF programs: open, link probes, the maps the tracer writes, the records' clock. */
#ifndef MEMTRACK_TRACER_BPF_SESSION_H
#define MEMTRACK_TRACER_BPF_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>

#include "bpf/memtrack.h"
#include "tracer/options.h"

struct bpf_map;
struct mt_probe_plan;

struct mt_bpf_session;
/* Loaded, its tracepoints attached; nothing probed yet. NULL + errno, the reason printed. owner: the user the
 * artifact is given to; with --stacks and an owner that is not root, a process whose credentials are not theirs gets
 * no raw stack bytes nor registers (bpf/stacks.bpf.h). closer: the closer's socket or -1; it keeps the warm
 * start's lock (tracer/bpf_warm.c; on unless MEMTRACK_WARM=0). */
struct mt_bpf_session *mt_bpf_session__open(const struct mt_options *o, uid_t owner_uid, gid_t owner_gid,
					    int closer);
/* Its tracepoint links to the closer (its socket, or -1: closed here), then the programs unloaded. */
void mt_bpf_session__close(struct mt_bpf_session *s, int closer);

#define MT_BPF_TRACE_UPROBE_MULTI 48	/* enum bpf_attach_type in kernels 6.6+; Debian 12's uapi predates it */
/* 6.13+: one program at the entry and, if that run returned 0, the return (bench/floor -k session; memtrack keeps
 * the pair: docs/DESIGN.md, "Shared links") */
#define MT_BPF_TRACE_UPROBE_SESSION 57
/* What a uprobe_multi link runs its program at: entries, returns, or both as a session (the program loaded with
 * MT_BPF_TRACE_UPROBE_SESSION, the others with MT_BPF_TRACE_UPROBE_MULTI). */
enum mt_uprobe_kind { MT_UPROBE_ENTRY, MT_UPROBE_RETURN, MT_UPROBE_SESSION };
/* A uprobe_multi link (made with the bpf syscall: libbpf 1.1 has no API for it): n sites of path, of that kind,
 * bound to process pid (0: every process). The link's fd, or -errno. */
int mt_bpf_session__uprobe_multi(int prog_fd, const char *path, const unsigned long *offs, const __u64 *cookies,
				 size_t n, enum mt_uprobe_kind kind, pid_t pid);
/* The links a plan may take: two uprobe_multi ones, or one perf-event uprobe per entry and per return. */
#define MT_LINK_FDS_MAX (2 * MT_PROBE_PLAN_MAX)
/* Probes of a plan bound to process pid, 0: every process (returns first), their cookies or'ed with cookie_bits
 * (MT_COOKIE_SLOT, MT_COOKIE_SHARED): fds[] (MT_LINK_FDS_MAX) gets the links, *n their count; on failure the links
 * made are in fds[] too, for the caller to close. */
int mt_bpf_session__link_plan(struct mt_bpf_session *s, const char *path, const struct mt_probe_plan *plan,
			      pid_t pid, uint64_t cookie_bits, int *fds, int *n);
/* Whether probes are one perf-event uprobe link per site (kernels without uprobe_multi, or MEMTRACK_ATTACH=legacy). */
bool mt_bpf_session__per_probe(const struct mt_bpf_session *s);

/* The maps the tracer keeps: a file's MT_FILE_* state, a process's linked files, the tracked processes. */
int mt_bpf_session__file_state(struct mt_bpf_session *s, uint64_t dev, uint64_t ino, uint32_t state);
/* state: MT_PROC_FILE_LINKED or _REFUSED; 0 takes the entry out. */
int mt_bpf_session__proc_file(struct mt_bpf_session *s, pid_t pid, uint64_t dev, uint64_t ino, uint8_t state);
/* An allocator file's entry in BPF's shared_files (struct mt_shared_file), slot its MT_COOKIE_SLOT. */
int mt_bpf_session__shared_file(struct mt_bpf_session *s, uint32_t slot, uint64_t dev, uint64_t ino, uint32_t flags);
int mt_bpf_session__track(struct mt_bpf_session *s, pid_t pid);
/* A process that runs already (record --pid): recorded from now on, where track waits for its exec. */
int mt_bpf_session__track_running(struct mt_bpf_session *s, pid_t pid);
/* With --stacks, a process record --pid attached to whose stacks are withheld (its credentials are not the user's). */
int mt_bpf_session__set_privileged(struct mt_bpf_session *s, pid_t pid);
/* An executable file mapping: where, the file offset of lo, the file. */
struct mt_exec_range {
	uint64_t lo, hi, pgoff, dev, ino;
};

/* With --stacks, an executable mapping it had then, or one BPF could not read, added to its code ranges (as BPF
 * adds one at each mapping). */
int mt_bpf_session__exec_range(struct mt_bpf_session *s, pid_t pid, const struct mt_exec_range *m);
/* Whether --stacks is on (the stack maps are sized). */
bool mt_bpf_session__stacks(const struct mt_bpf_session *s);
/* The in-kernel unwinder's maps (tracer/kunwind.c fills them). */
void mt_bpf_session__unwind_fds(const struct mt_bpf_session *s, int *modules, int *pages, int *rows);
/* A process's operator new code (tracer/callers.c): -ENOENT when it has none yet. */
int mt_bpf_session__callers_get(struct mt_bpf_session *s, pid_t pid, struct mt_callers *c);
int mt_bpf_session__callers_set(struct mt_bpf_session *s, pid_t pid, const struct mt_callers *c);
/* The same code of a file, as file offsets: BPF places it in each process that maps the file afterwards. */
int mt_bpf_session__caller_file(struct mt_bpf_session *s, uint64_t dev, uint64_t ino, const struct mt_callers *c);

/* The threads held with SIGSTOP (map `held`), which the closer SIGCONTs when memtrack dies; SIGSTOP may hold only
 * once the closer has the map; tid resumed (or gone) leaves it. */
int mt_bpf_session__held_fd(const struct mt_bpf_session *s);
void mt_bpf_session__allow_stop_hold(struct mt_bpf_session *s);
void mt_bpf_session__unhold(struct mt_bpf_session *s, pid_t tid);
/* The return address BPF asks to put back in held thread tid (struct mt_ret_restore), taken from the map: 0, or
 * -ENOENT when there is none. */
int mt_bpf_session__ret_restore_take(struct mt_bpf_session *s, pid_t tid, struct mt_ret_restore *r);
/* Whether BPF held thread tid because the ring was over half full (pressure.bpf.h), taken from the map; and how
 * many such holds there were. */
bool mt_bpf_session__pressure_take(struct mt_bpf_session *s, pid_t tid);
uint64_t mt_bpf_session__pressure_holds(const struct mt_bpf_session *s);
/* The events ring and the attach requests' ring. */
struct bpf_map *mt_bpf_session__ring_map(const struct mt_bpf_session *s);
struct bpf_map *mt_bpf_session__attach_map(const struct mt_bpf_session *s);
/* The drop counters, summed over CPUs. 0 or -errno. */
int mt_bpf_session__drops(const struct mt_bpf_session *s, __u64 drops[MT_DROP__COUNT]);
/* Each CPU's batch of allocator records to the ring: how many CPUs had theirs busy (ask again), or -errno. */
int mt_bpf_session__flush_batches(struct mt_bpf_session *s);

/* Before the command runs: the control FIFO's file (tracer/control.h) and whether recording starts off. */
void mt_bpf_session__set_control(struct mt_bpf_session *s, uint64_t dev, uint64_t ino, bool paused);
/* Allocation records off (or on again), as a stop (start) line does. */
void mt_bpf_session__set_paused(struct mt_bpf_session *s, bool paused);
/* Writes to the control FIFO, or lines in them, that switched nothing (bpf/control.bpf.h). */
uint64_t mt_bpf_session__control_ignored(const struct mt_bpf_session *s);
/* The next record number, taken the way BPF takes it, for a record the tracer writes. */
uint32_t mt_bpf_session__next_seq(struct mt_bpf_session *s);
/* The next number, not taken. */
uint32_t mt_bpf_session__seq_now(struct mt_bpf_session *s);

/* CLOCK_MONOTONIC in ns: the precise clock, which bpf_ktime_get_ns reads too. */
uint64_t mt_bpf_session__monotonic_ns(void);
/* Now, on the records' clock (the tick or CLOCK_MONOTONIC), for the records the tracer writes itself. */
uint64_t mt_bpf_session__now(struct mt_bpf_session *s);
/* The records' clock's step in ns: the tick's length, or 0 for the precise clock. */
uint64_t mt_bpf_session__tick_ns(const struct mt_bpf_session *s);

#endif /* MEMTRACK_TRACER_BPF_SESSION_H */
