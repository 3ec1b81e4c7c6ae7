/* SPDX-License-Identifier: GPL-2.0-only */
/* rss.bpf.h — BPF-only: a tracked process's resident memory from the kernel's rss_stat tracepoint, at a bounded rate. */
#ifndef MEMTRACK_RSS_BPF_H
#define MEMTRACK_RSS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "core.bpf.h"
#include "maps.bpf.h"

#define MT_PAGE_SHIFT 12	/* x86-64's pages: the counters count them */

/* What a process's last rss record said, and when. */
struct mt_rss_last {
	__u64 bytes;		/* anon + file + shmem */
	__u64 ts_ns;
};

/* tgid -> its last rss record: BPF adds one at a process's first record (ts_ns 0 until it is written), drops it at
 * its exit. Not preallocated, like tracked, whose processes it holds. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_TRACKED_MAX);
	__type(key, __u32);
	__type(value, struct mt_rss_last);
} rss_last SEC(".maps");

struct mt_rss_val {
	__u64 anon, file, shmem, swap;
};

/* A percpu_counter's global count: the CPUs' pending deltas (under the kernel's batch each) are not in it. */
static __always_inline __u64 rss__bytes(struct mm_struct *mm, int member)
{
	__s64 pages = BPF_CORE_READ(mm, rss_stat[member].count);

	return pages > 0 ? (__u64)pages << MT_PAGE_SHIFT : 0;
}

static __always_inline void rss__read(struct mm_struct *mm, struct mt_rss_val *v)
{
	v->anon = rss__bytes(mm, MM_ANONPAGES);
	v->file = rss__bytes(mm, MM_FILEPAGES);
	v->shmem = rss__bytes(mm, MM_SHMEMPAGES);
	v->swap = rss__bytes(mm, MM_SWAPENTS);
}

static __always_inline void rss__emit(__u32 tgid, __u32 tid, const struct mt_rss_val *v, __u32 why)
{
	struct mt_rss *e = rec__reserve_as(sizeof(*e), MT_REC_RSS, tgid, tid);

	if (!e)
		return;
	e->anon = v->anon;
	e->file = v->file;
	e->shmem = v->shmem;
	e->swap = v->swap;
	e->why = why;
	e->_pad = 0;
	rec__submit(e, sizeof(*e));
}

/* Why a record is due now (enum mt_rss_why), 0 for none: the rate bound of MT_RSS_STEP and MT_RSS_PERIOD_NS. */
static __always_inline __u32 rss__due(const struct mt_rss_last *last, __u64 bytes, __u64 now, bool at_exit)
{
	__u64 diff = bytes > last->bytes ? bytes - last->bytes : last->bytes - bytes;

	if (diff >= MT_RSS_STEP)
		return MT_RSS_WHY_STEP;
	if (!diff)
		return 0;
	if (at_exit)
		return MT_RSS_WHY_EXIT;
	return now - last->ts_ns >= MT_RSS_PERIOD_NS ? MT_RSS_WHY_PERIOD : 0;
}

/* mm is tgid's: a record when one is due. Two threads of a process racing here may both write one. */
static __always_inline void rss__update(struct mm_struct *mm, __u32 tgid, __u32 tid, bool at_exit)
{
	struct mt_rss_last *last, none = {};
	struct mt_rss_val v;
	__u64 bytes, now = ts__now();
	__u32 why;

	rss__read(mm, &v);
	bytes = v.anon + v.file + v.shmem;
	if (at_exit)
		last = bpf_map_lookup_elem(&rss_last, &tgid);
	else
		last = map__lookup_or_try_init(&rss_last, &tgid, &none);
	if (!last) {
		if (!at_exit)
			drop__count(MT_DROP_TRACKED);	/* no room to bound its rate: none of its records */
		return;
	}
	why = last->ts_ns ? rss__due(last, bytes, now, at_exit) : MT_RSS_WHY_STEP;	/* 0: the process's first */
	if (!why)
		return;
	last->bytes = bytes;
	last->ts_ns = now;
	rss__emit(tgid, tid, &v, why);
}

/*
 * At each change of an mm's counter (a page fault, an unmap, a reclaim...), for any mm of the machine: only the
 * current task's own is looked at (the others are a fork's copy, an exit's teardown, or reclaim from elsewhere),
 * and not a vfork child's, which runs in its parent's mm until it execs.
 */
SEC("tp_btf/rss_stat")
int BPF_PROG(rss_stat, struct mm_struct *mm, int member)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tgid, tid;

	if (task->mm != mm || task->vfork_done)
		return 0;
	current__ids_of(task, &tgid, &tid);
	if (!proc__active(tgid))
		return 0;
	rss__update(mm, tgid, tid, false);
	return 0;
}

/* The process-tree hook at a process's exit (tree.bpf.h), its last thread's, with its mm still attached: its last
 * value, when it differs from the last record's. Run whether or not the rss_stat program is. */
static __always_inline void rss__on_exit(struct task_struct *p, __u32 tgid, __u32 tid)
{
	struct mm_struct *mm = BPF_CORE_READ(p, mm);

	if (mm && !BPF_CORE_READ(p, vfork_done) && proc__active(tgid))
		rss__update(mm, tgid, tid, true);
	bpf_map_delete_elem(&rss_last, &tgid);
}

#endif /* MEMTRACK_RSS_BPF_H */
