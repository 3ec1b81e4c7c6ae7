/* SPDX-License-Identifier: GPL-2.0-only */
/* pressure.bpf.h — the ring's back-pressure: a thread that allocates while the ring is over half full is held until
 * the tracer has read it, so that a burst the reader cannot keep up with slows the command instead of losing events. */
#ifndef MEMTRACK_PRESSURE_BPF_H
#define MEMTRACK_PRESSURE_BPF_H

#include "core.bpf.h"
#include "watch.bpf.h"

/* Set by the tracer before load: the ring's fill level, in bytes, above which an allocating thread is held; 0 for
 * never. */
const volatile __u64 cfg_ring_high = 0;

/* Threads held for the ring, counted by BPF: the tracer reports them. */
__u64 live_pressure_holds = 0;

/* tid -> 1: BPF adds a thread it holds for the ring, the tracer takes it out at the thread's stop (the way it tells
 * this hold, which carries no cookie from a uprobe, from the kernel's own signals). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u32);
} pressure_held SEC(".maps");

/*
 * Called by the allocator probes, in user context: the signal is delivered as the probe returns to user space, so
 * the thread stops between two instructions of its own, holding no lock of the kernel's. The fill level is asked
 * only when this CPU has just woken the reader (rec__wakeup sets `due`), so the consumer's cache line is read once
 * per watermark share, not per event. The room left above half the ring takes what the other CPUs submit until
 * their own next check. A thread memtrack does not trace (record --pid) cannot be held: its overflow is counted.
 * Not inlined: its locals would add to the allocator programs' stack, at the verifier's 512 bytes.
 */
static __noinline void pressure__relieve(struct task_struct *task)
{
	__u32 zero = 0, one = 1, tid;
	struct mt_unwoken *n;
	int sig;

	if (!cfg_ring_high)	/* --drop-when-full: known at load, so the verifier drops the rest */
		return;
	n = bpf_map_lookup_elem(&rb_unwoken, &zero);
	if (!n || !n->due)
		return;
	n->due = 0;
	if (bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA) <= cfg_ring_high || !task__traced_by_tracer(task))
		return;
	tid = (__u32)current__ids();
	if (bpf_map_update_elem(&pressure_held, &tid, &one, BPF_NOEXIST))
		return;	/* held already, or the map is full: the ring's own drops count what follows */
	sig = hold__pick(task);
	if (!sig || !hold__send(task, tid, sig, true)) {
		bpf_map_delete_elem(&pressure_held, &tid);
		return;
	}
	__sync_fetch_and_add(&live_pressure_holds, 1);
}

/* A thread killed while its hold was pending never stops: its entry goes with it, not to a later thread of its tid. */
static __always_inline void pressure__on_exit(__u32 tid)
{
	bpf_map_delete_elem(&pressure_held, &tid);
}

#endif /* MEMTRACK_PRESSURE_BPF_H */
