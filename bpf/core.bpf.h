/* SPDX-License-Identifier: GPL-2.0-only */
/* core.bpf.h — BPF-only core: process ids, the records' clock, tracked processes, drop counters, ring emission and
 * batches, and the tracer's utility programs (batch_flush, clock_now, pidns_find). */
#ifndef MEMTRACK_CORE_BPF_H
#define MEMTRACK_CORE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "memtrack.h"

#define MT_TRACKED_MAX 65536
#define MT_SIGNAL_GROUP_EXIT 0x4	/* the kernel's SIGNAL_GROUP_EXIT (a #define, so not in BTF) */

/* tgid -> MT_PROC_*: the tracer adds the command at its pre-exec stop; BPF adds children at fork, drops at exit
 * (tree.bpf.h). Not preallocated: only a fork adds an entry (a failure is counted), and 65536 preallocated ones cost
 * start-up time for the few a tree holds. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_TRACKED_MAX);
	__type(key, __u32);
	__type(value, __u32);
} tracked SEC(".maps");

/* BPF -> tracer records; the tracer sizes it before load (--ring-size), BPF writes, the tracer reads in place. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);
} rb SEC(".maps");

/* Events lost, by enum mt_drop: BPF counts on each failure; the tracer sums the CPUs' at the end. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MT_DROP__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

/* Set by the tracer before load: the ring's size / 16 / the CPUs. Each CPU wakes the consumer when it has
 * submitted this many bytes since it last did, its share of the ring's watermark. */
const volatile __u64 cfg_wakeup_bytes = 1 << 20;

/* Bytes this CPU submitted since it last woke the consumer: BPF's alone, at each submit. Counted here rather than
 * read from the ring: asking the ring its fill level (bpf_ringbuf_query) reads the consumer's position, a cache
 * line the consumer's CPU writes, which costs more (bench/README.md). Two programs interleaving on one CPU may lose
 * an addition: the watermark is approximate, and the tracer's periodic poll drains whatever it leaves. `due` is set
 * at each wakeup: the next allocator probe on this CPU asks the ring its fill level then (pressure.bpf.h). */
struct mt_unwoken {
	__u64 bytes;
	__u64 due;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mt_unwoken);
} rb_unwoken SEC(".maps");

/*
 * The records' clock. By default the kernel's tick: jiffies_64, which the verifier inlines as one load, times the
 * tick's length, less an offset (a whole number of ticks) that the tracer sets after load to bring it within a
 * tick of CLOCK_MONOTONIC. bpf_ktime_get_ns is a helper call into the clock source, two a malloc/free pair, which
 * costs more (bench/README.md). cfg_tick_ns 0 (--precise-time) selects bpf_ktime_get_ns. Either clock is one
 * counter for all CPUs, read inside the event's program: a record that happens after another (a free of a block
 * another thread allocated, a child's call after its fork) never gets an earlier time, so ordering by time, then
 * by arrival, keeps every such pair in order.
 */
/* Set by the tracer before load: the tick's length from CONFIG_HZ, 0 for --precise-time or an unknown HZ. */
const volatile __u64 cfg_tick_ns = 0;
/* Set by the tracer once after load (it maps .bss), from one reading of both clocks by clock_now. */
__u64 live_tick_offset_ns = 0;

static __always_inline __u64 ts__now(void)
{
	if (cfg_tick_ns)
		return bpf_jiffies64() * cfg_tick_ns - live_tick_offset_ns;
	return bpf_ktime_get_ns();
}

/*
 * memtrack's PID namespace: the pids in maps and records are the ones memtrack and the user see there, not the
 * kernel's. Set by the tracer before load: the dev (the kernel's encoding) and inode of its /proc/self/ns/pid, 0 in
 * the initial namespace, where the kernel's pids are the same; the verifier, which knows these values at load, then
 * leaves the translation out (a load of cfg_pidns_ino and a jump remain of each test).
 */
const volatile __u64 cfg_pidns_dev = 0;
const volatile __u64 cfg_pidns_ino = 0;
/* The namespace's depth: set by BPF once after load, by pidns_find run in the tracer's own context. */
__u32 live_pidns_level = 0;

#define MT_PIDNS_LEVELS 33	/* the kernel's MAX_PID_NS_LEVEL (32) nested namespaces, and the initial one */

/* pid's number in memtrack's namespace; 0 for one that is not in it (a task above it, or in a sibling). */
static __always_inline __u32 pid__nr_ns(struct pid *pid)
{
	__u32 level = live_pidns_level;
	struct upid up = {};

	if (!pid || BPF_CORE_READ(pid, level) < level || level >= MT_PIDNS_LEVELS ||
	    bpf_core_read(&up, sizeof(up), &pid->numbers[level]) || BPF_CORE_READ(up.ns, ns.inum) != cfg_pidns_ino)
		return 0;
	return up.nr;
}

/* t's tgid in memtrack's namespace (0: not in it); t is any task pointer (read with CO-RE). */
static __always_inline __u32 task__tgid(struct task_struct *t)
{
	if (!cfg_pidns_ino)
		return BPF_CORE_READ(t, tgid);
	return pid__nr_ns(BPF_CORE_READ(t, signal, pids[PIDTYPE_TGID]));
}

/* t's tid in memtrack's namespace, as task__tgid. */
static __always_inline __u32 task__tid(struct task_struct *t)
{
	if (!cfg_pidns_ino)
		return BPF_CORE_READ(t, pid);
	return pid__nr_ns(BPF_CORE_READ(t, thread_pid));
}

/* t's tgid << 32 | tid in memtrack's namespace, as task__tgid. */
static __always_inline __u64 task__ids(struct task_struct *t)
{
	return (__u64)task__tgid(t) << 32 | task__tid(t);
}

/* The current task's tgid << 32 | tid in memtrack's namespace (0: not in it). The helper answers for a task whose
 * own namespace is memtrack's; one in a namespace nested deeper (a descendant's unshare) is translated. */
static __always_inline __u64 current__ids(void)
{
	struct bpf_pidns_info ns;

	if (!cfg_pidns_ino)
		return bpf_get_current_pid_tgid();
	if (!bpf_get_ns_current_pid_tgid(cfg_pidns_dev, cfg_pidns_ino, &ns, sizeof(ns)))
		return (__u64)ns.tgid << 32 | ns.pid;
	return task__ids((struct task_struct *)bpf_get_current_task());
}

/* current__ids from the current task's trusted pointer, in two parts: in the initial namespace two loads, not a
 * call, made where they are used (no 64-bit value put together and split again). */
static __always_inline void current__ids_of(struct task_struct *cur, __u32 *tgid, __u32 *tid)
{
	__u64 ids;

	if (!cfg_pidns_ino) {
		*tgid = cur->tgid;
		*tid = cur->pid;
		return;
	}
	ids = current__ids();
	*tgid = ids >> 32;
	*tid = ids;
}

/* current__ids_of's tgid alone. */
static __always_inline __u32 current__tgid_of(struct task_struct *cur)
{
	if (!cfg_pidns_ino)
		return cur->tgid;
	return current__ids() >> 32;
}

static __always_inline void drop__count(__u32 why)
{
	__u64 *n = bpf_map_lookup_elem(&drops, &why);

	if (n)
		*n += 1;
}

static __always_inline __u32 *proc__lookup(__u32 tgid)
{
	return bpf_map_lookup_elem(&tracked, &tgid);
}

static __always_inline bool proc__active(__u32 tgid)
{
	__u32 *state = proc__lookup(tgid);

	return state && *state == MT_PROC_ACTIVE;
}

/*
 * The records' order. Allocator records wait in their CPU's batch, so the ring's order is no longer the order of
 * events: each record takes the next number of this counter, and the tracer writes them in that order. A number is
 * taken inside the event's program, like the time: a record that happens after another (a free of a block another
 * thread allocated, a child's call after its fork) gets a higher one. A record reserved on its own takes it once
 * reserved; a batch the full ring refuses leaves its numbers unused (its records counted as dropped), which the
 * tracer passes over once a flush of every CPU has shown that they cannot come.
 */
/* Taken by BPF for each record, and by the tracer (it maps .bss) for each exit record it writes. */
__u64 live_rec_seq = 0;

static __always_inline void rec__head(struct mt_rec_hdr *h, __u32 size, __u16 type, __u32 pid, __u32 tid)
{
	h->ts_ns = ts__now();
	h->pid = pid;
	h->tid = tid;
	h->type = type;
	h->size = size;
	h->seq = __sync_fetch_and_add(&live_rec_seq, 1);
}

/* Reserve a record and fill its header; NULL (and a drop counted) when the ring is full. */
static __always_inline void *rec__reserve_as(__u32 size, __u16 type, __u32 pid, __u32 tid)
{
	struct mt_rec_hdr *h = bpf_ringbuf_reserve(&rb, size, 0);

	if (!h) {
		drop__count(MT_DROP_RINGBUF);
		return NULL;
	}
	rec__head(h, size, type, pid, tid);
	return h;
}

static __always_inline void *rec__reserve(__u32 size, __u16 type)
{
	__u64 id = current__ids();

	return rec__reserve_as(size, type, id >> 32, (__u32)id);
}

/* Submit without waking the consumer unless this CPU's share of the watermark is reached: a wakeup costs far more
 * than a silent submit; the tracer's periodic poll catches the rest. */
static __always_inline __u64 rec__wakeup(__u32 size)
{
	__u32 zero = 0;
	struct mt_unwoken *n = bpf_map_lookup_elem(&rb_unwoken, &zero);

	if (n) {
		n->bytes += size + 8;	/* the ring's record header */
		if (n->bytes >= cfg_wakeup_bytes) {
			n->bytes = 0;
			n->due = 1;
			return BPF_RB_FORCE_WAKEUP;
		}
	}
	return BPF_RB_NO_WAKEUP;
}

static __always_inline void rec__submit(void *rec, __u32 size)
{
	bpf_ringbuf_submit(rec, rec__wakeup(size));
}

/*
 * Allocator records gather in a batch per CPU, which goes to the ring in one piece when full, or when the tracer
 * asks (batch_flush): a reservation and its commit cost more than the record's fields (the ring's lock and
 * atomics), and a batch pays them once for MT_BATCH_RECS. A program preempted while it writes the batch holds busy:
 * a program that finds the batch busy (another task on this CPU, or the tracer's flush) sends its record to the
 * ring on its own.
 */
#define MT_BATCH_RECS 56

struct mt_batch {
	struct mt_rec_hdr hdr;	/* MT_REC_BATCH: the ring gets the header and the first batch_count records */
	struct mt_alloc r[MT_BATCH_RECS];
	__u64 busy;		/* 64 bits: clang 14 has BPF atomics of that width only */
	__u32 n;
	__u32 _pad;
};

/* This CPU's batch: filled by the allocator programs, sent to the ring when full or at the tracer's batch_flush. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mt_batch);
} batches SEC(".maps");

static __always_inline struct mt_batch *batch__take(void)
{
	__u32 zero = 0;
	struct mt_batch *b = bpf_map_lookup_elem(&batches, &zero);

	if (!b || __sync_val_compare_and_swap(&b->busy, 0, 1) != 0)
		return NULL;
	return b;
}

static __always_inline void batch__give_back(struct mt_batch *b)
{
	__sync_lock_test_and_set(&b->busy, 0);
}

static __always_inline void batch__flush(struct mt_batch *b)
{
	__u32 n = b->n, size;

	if (n > MT_BATCH_RECS)
		n = MT_BATCH_RECS;
	b->n = 0;
	if (!n)
		return;
	size = sizeof(b->hdr) + n * sizeof(struct mt_alloc);
	b->hdr.type = MT_REC_BATCH;
	b->hdr.size = sizeof(b->hdr);
	b->hdr.batch_count = n;
	if (bpf_ringbuf_output(&rb, b, size, rec__wakeup(size))) {
		__u32 why = MT_DROP_RINGBUF;
		__u64 *d = bpf_map_lookup_elem(&drops, &why);

		if (d)
			*d += n;
	}
}

/* Run by the tracer on each CPU (a test run): the batch goes to the ring now. 1: it was busy, ask again. */
SEC("raw_tp")
int batch_flush(void *ctx)
{
	struct mt_batch *b = batch__take();

	if (!b)
		return 1;
	batch__flush(b);
	batch__give_back(b);
	return 0;
}

/* The tracer's reading of the records' clock, by BPF_PROG_TEST_RUN: the records it writes itself (session, exit,
 * end) sort among BPF's by the very same counter. */
SEC("syscall")
int clock_now(struct mt_clock *c)
{
	c->jiffies = bpf_jiffies64();
	c->ktime_ns = bpf_ktime_get_ns();
	c->ts_ns = ts__now();
	return 0;
}

/* Run by the tracer once after load (a test run: in its own context): the depth of its PID namespace, which only
 * the kernel knows (a namespace cannot see its parents). 1: the tracer's namespace is not the one told. */
SEC("raw_tp")
int pidns_find(void *ctx)
{
	struct pid *pid = BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), thread_pid);
	__u32 level = BPF_CORE_READ(pid, level);
	struct upid up = {};

	if (bpf_core_read(&up, sizeof(up), &pid->numbers[level]) || BPF_CORE_READ(up.ns, ns.inum) != cfg_pidns_ino)
		return 1;
	live_pidns_level = level;
	return 0;
}

#endif /* MEMTRACK_CORE_BPF_H */
