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

#define MT_CPUS_MAX 8192	/* the kernel's largest NR_CPUS: a power of two, to mask an index with */

/* Set by the tracer before load: the kernel's page size (sysconf), the unit of its rss counters. */
const volatile __u64 cfg_page_size = 0;

/* An mm of a tracked process: whose it is, what its last record said and when, and its counters as last read. */
struct mt_rss_mm {
	__u64 pages[NR_MM_COUNTERS];	/* by the kernel's MM_* index, summed over the CPUs at the last update */
	__u64 bytes;			/* anon + file + shmem of the last record */
	__u64 ts_ns;			/* of the last record; 0 until the first is written */
	__u32 tgid;			/* the process it is the memory of: every update of it is that process's */
	__u32 _pad;
};

/* mm pointer -> its mt_rss_mm: BPF adds one at a tracked process's first update of its own mm and at a fork (the
 * child's copy of its parent's); drops it at the process's exit, and at the mm's teardown (an exec's old mm goes
 * then, in the exec's context). Keyed by the mm, not the process, so that an update any task makes (reclaim,
 * another process's madvise) finds the process it belongs to. Not preallocated, like tracked. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_TRACKED_MAX);
	__type(key, __u64);
	__type(value, struct mt_rss_mm);
} rss_mms SEC(".maps");

/*
 * The kernel's counters are percpu_counters: each CPU holds a delta below the kernel's batch (32 pages or more)
 * before it folds it into the global count, so the global count alone is off by up to that per CPU. Their sum needs
 * each CPU's per-CPU offset, which bpf_per_cpu_ptr would apply had the kernel's BTF tagged the counters __percpu
 * (it is not, without pahole's type tags): a per-CPU array of ours gives them instead, a CPU's element's address
 * less the array's per-CPU pointer. BPF fills live_cpu_off at the first sum; its value is never used. The sum is
 * read without the counter's lock, as the kernel's lockless readers do: a fold racing it may skew that one reading.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} rss_cpus SEC(".maps");

/* Set by BPF at the first sum: each possible CPU's per-CPU offset (the kernel's __per_cpu_offset), and their count. */
__u64 live_cpu_off[MT_CPUS_MAX];
__u32 live_nr_cpus = 0;

/* A pointer's value as a number: read back from the stack, as the verifier keeps a pointer's type across moves. */
static __always_inline __u64 rss__addr(void *const *ptr)
{
	__u64 addr = 0;

	bpf_probe_read_kernel(&addr, sizeof(addr), ptr);
	return addr;
}

struct rss_find {
	__u64 base;		/* rss_cpus's per-CPU pointer */
	__u32 cpus;		/* found so far */
};

/* bpf_loop's callback: CPU cpu's offset; 1 (stop) past the last possible CPU, where the lookup answers NULL. */
static long rss__find_cpu(__u64 cpu, void *ctx)
{
	struct rss_find *f = ctx;
	__u32 zero = 0;
	void *elem = bpf_map_lookup_percpu_elem(&rss_cpus, &zero, cpu);

	if (!elem)
		return 1;
	live_cpu_off[cpu & (MT_CPUS_MAX - 1)] = rss__addr(&elem) - f->base;
	f->cpus = cpu + 1;
	return 0;
}

/* The possible CPUs, their offsets found at the first call (two racing find the same): live_nr_cpus is set once
 * they all are. */
static __always_inline __u32 rss__cpus(void)
{
	struct rss_find f = {};
	void *map = &rss_cpus;

	if (live_nr_cpus)
		return live_nr_cpus;
	bpf_probe_read_kernel(&f.base, sizeof(f.base), (void *)(rss__addr(&map) +
				bpf_core_field_offset(struct bpf_array, pptrs)));
	bpf_loop(MT_CPUS_MAX, rss__find_cpu, &f, 0);
	live_nr_cpus = f.cpus;
	return f.cpus;
}

struct rss_sum {
	__u64 counters;		/* the percpu_counter's per-CPU pointer */
	__s64 sum;
};

static long rss__add_cpu(__u64 cpu, void *ctx)
{
	struct rss_sum *s = ctx;
	__s32 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), (void *)(s->counters + live_cpu_off[cpu & (MT_CPUS_MAX - 1)]));
	s->sum += v;
	return 0;
}

/* The kernel's percpu_counter_sum_positive of mm's counter member, in pages. */
static __always_inline __u64 rss__pages(struct mm_struct *mm, __u32 member)
{
	struct rss_sum s = {};

	if (member >= NR_MM_COUNTERS)
		return 0;
	s.sum = BPF_CORE_READ(mm, rss_stat[member].count);
	s.counters = (__u64)BPF_CORE_READ(mm, rss_stat[member].counters);
	bpf_loop(rss__cpus(), rss__add_cpu, &s, 0);
	return s.sum > 0 ? s.sum : 0;
}

/* member, known below NR_MM_COUNTERS (4), as an index the verifier sees bounded: clang drops a mask it can prove
 * redundant, and keeps the check in a register the verifier does not follow. */
static __always_inline __u32 rss__index(__u32 member)
{
	barrier_var(member);
	return member & 3;
}

static __always_inline void rss__read_all(struct mm_struct *mm, struct mt_rss_mm *s)
{
	s->pages[MM_FILEPAGES] = rss__pages(mm, MM_FILEPAGES);
	s->pages[MM_ANONPAGES] = rss__pages(mm, MM_ANONPAGES);
	s->pages[MM_SWAPENTS] = rss__pages(mm, MM_SWAPENTS);
	s->pages[MM_SHMEMPAGES] = rss__pages(mm, MM_SHMEMPAGES);
}

static __always_inline __u64 rss__resident(const struct mt_rss_mm *s)
{
	return (s->pages[MM_ANONPAGES] + s->pages[MM_FILEPAGES] + s->pages[MM_SHMEMPAGES]) * cfg_page_size;
}

/* s's counters as a record of its process, written by the task tid. */
static __always_inline void rss__emit(const struct mt_rss_mm *s, __u32 tid, __u32 why)
{
	struct mt_rss *e = rec__reserve_as(sizeof(*e), MT_REC_RSS, s->tgid, tid);

	if (!e)
		return;
	e->anon = s->pages[MM_ANONPAGES] * cfg_page_size;
	e->file = s->pages[MM_FILEPAGES] * cfg_page_size;
	e->shmem = s->pages[MM_SHMEMPAGES] * cfg_page_size;
	e->swap = s->pages[MM_SWAPENTS] * cfg_page_size;
	e->why = why;
	e->_pad = 0;
	rec__submit(e, sizeof(*e));
}

/* Why a record is due now (enum mt_rss_why), 0 for none: the rate bound of MT_RSS_STEP and MT_RSS_PERIOD_NS. */
static __always_inline __u32 rss__due(const struct mt_rss_mm *last, __u64 bytes, __u64 now, bool at_exit)
{
	__u64 diff = bytes > last->bytes ? bytes - last->bytes : last->bytes - bytes;

	if (!last->ts_ns)
		return MT_RSS_WHY_STEP;	/* the mm's first */
	if (diff >= MT_RSS_STEP)
		return MT_RSS_WHY_STEP;
	if (!diff)
		return 0;
	if (at_exit)
		return MT_RSS_WHY_EXIT;
	return now - last->ts_ns >= MT_RSS_PERIOD_NS ? MT_RSS_WHY_PERIOD : 0;
}

/* Counter member of s's mm changed (NR_MM_COUNTERS: any): a record of the whole when one is due. The one counter
 * is summed at each update, all when a record is written (the updates of each keep them current between). Two
 * tasks racing here may both write one. */
static __always_inline void rss__update(struct mm_struct *mm, struct mt_rss_mm *s, __u32 member, __u32 tid,
					bool at_exit)
{
	__u64 now = ts__now();
	__u32 why;

	if (member < NR_MM_COUNTERS)
		s->pages[rss__index(member)] = rss__pages(mm, member);
	else
		rss__read_all(mm, s);
	why = rss__due(s, rss__resident(s), now, at_exit);
	if (!why)
		return;
	if (member < NR_MM_COUNTERS)
		rss__read_all(mm, s);
	s->bytes = rss__resident(s);
	s->ts_ns = now;
	rss__emit(s, tid, why);
}

/* A new mm_struct for tgid: its counters read whole, its first record due. NULL when the map is full (counted). */
static __always_inline struct mt_rss_mm *rss__own(struct mm_struct *mm, __u32 tgid)
{
	struct mt_rss_mm none = { .tgid = tgid };
	__u64 key = (__u64)mm;
	struct mt_rss_mm *s;

	s = map__lookup_or_try_init(&rss_mms, &key, &none);
	if (!s) {
		drop__count(MT_DROP_TRACKED);	/* no room to tell its updates: none of its records */
		return NULL;
	}
	s->tgid = tgid;
	return s;
}

/* The kernel's read-only cast (6.2): the pointer it returns is untrusted, its loads plain ones the JIT guards. */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/* Whether the current task runs in mm as its own (not a vfork child borrowing it). The same two loads through the
 * untrusted cast, where the kernel has it: a walk from the trusted pointer makes the verifier look the fields' trust
 * annotations up in the kernel's BTF by name (docs/DESIGN.md), and this program runs at every RSS change. */
static __always_inline bool rss__current_mm(struct task_struct *task, struct mm_struct *mm)
{
	struct task_struct *t;

	if (!bpf_rdonly_cast)
		return task->mm == mm && !task->vfork_done;
	t = bpf_rdonly_cast(task, bpf_core_type_id_kernel(struct task_struct));
	return t->mm == mm && !t->vfork_done;
}

/*
 * At each change of an mm's counter (a page fault, an unmap, a reclaim...), for any mm of the machine, in the
 * context of the task that makes it: the mm's own process's (its threads, or a vfork child running in its parent's
 * mm), or another's (a fork copying the parent's pages into the child, reclaim, khugepaged, KSM, another process's
 * process_madvise, the teardown at exit or exec). Each is credited to the process whose mm it is, found by the mm
 * (rss_mms); a tracked process's own mm joins it at its first update, and a vfork child never owns its parent's.
 * A CLONE_VM child that is not a vfork one takes the mm over at its updates, as its parent does back at theirs.
 * The teardown of an mm no task uses any more ends its entry: its process exec'd (or exited).
 */
SEC("tp_btf/rss_stat")
int BPF_PROG(rss_stat, struct mm_struct *mm, int member)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 key = (__u64)mm;
	struct mt_rss_mm *s;
	__u32 tgid, tid;

	if (rss__current_mm(task, mm)) {
		current__ids_of(task, &tgid, &tid);
		if (!proc__active(tgid))	/* first: the cost for the machine's other processes */
			return 0;
		s = bpf_map_lookup_elem(&rss_mms, &key);
		if (!s || s->tgid != tgid) {
			s = rss__own(mm, tgid);
			if (s)
				rss__update(mm, s, NR_MM_COUNTERS, tid, false);
			return 0;
		}
	} else {
		s = bpf_map_lookup_elem(&rss_mms, &key);
		if (!s)
			return 0;
		if (!BPF_CORE_READ(mm, mm_users.counter)) {
			bpf_map_delete_elem(&rss_mms, &key);
			return 0;
		}
		current__ids_of(task, &tgid, &tid);
	}
	rss__update(mm, s, member, tid, false);
	return 0;
}

/*
 * The process-tree hook at a fork (tree.bpf.h), after its record, in the parent's context: a child with an mm of its
 * own (not a thread, not a vfork or CLONE_VM child) has the parent's pages its fork copied, counted in its mm by
 * updates made in the parent's context before the child was known. Its first record is that copy, written by the
 * parent's thread, when the parent's memory is followed (the rss_stat program runs).
 */
static __always_inline void rss__on_fork(struct task_struct *parent, struct task_struct *child, __u32 ctgid)
{
	struct mm_struct *pmm = BPF_CORE_READ(parent, mm), *cmm = BPF_CORE_READ(child, mm);
	__u64 pkey = (__u64)pmm;
	struct mt_rss_mm *s;

	if (!cmm || cmm == pmm || !bpf_map_lookup_elem(&rss_mms, &pkey))
		return;
	s = rss__own(cmm, ctgid);
	if (s)
		rss__update(cmm, s, NR_MM_COUNTERS, task__tid(parent), false);
}

/* The process-tree hook at a process's exit (tree.bpf.h), its last thread's, with its mm still attached: its last
 * value, when it differs from the last record's. Its mm's entry goes: the teardown that follows is not its. */
static __always_inline void rss__on_exit(struct task_struct *p, __u32 tgid, __u32 tid)
{
	struct mm_struct *mm = BPF_CORE_READ(p, mm);
	__u64 key = (__u64)mm;
	struct mt_rss_mm *s;

	if (!mm || BPF_CORE_READ(p, vfork_done))
		return;
	s = bpf_map_lookup_elem(&rss_mms, &key);
	if (!s || s->tgid != tgid)
		return;
	rss__update(mm, s, NR_MM_COUNTERS, tid, true);
	bpf_map_delete_elem(&rss_mms, &key);
}

#endif /* MEMTRACK_RSS_BPF_H */
