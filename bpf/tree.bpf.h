/* SPDX-License-Identifier: GPL-2.0-only */
/* tree.bpf.h — BPF-only: the process tree. Fork, exec and exit keep the tracked map and the process's records, and
 * call each feature's on_fork/on_exec/on_exit hook for the state it keeps by thread or process. */
#ifndef MEMTRACK_TREE_BPF_H
#define MEMTRACK_TREE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "core.bpf.h"
#include "callers.bpf.h"
#include "calls.bpf.h"
#include "pressure.bpf.h"
#include "rss.bpf.h"
#include "stacks.bpf.h"
#include "watch.bpf.h"

/* Children join the tree here, before they first run; threads share their process's entry. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = task__tgid(parent);
	__u32 ctgid = task__tgid(child);
	__u32 active = MT_PROC_ACTIVE;
	struct mt_fork *e;

	if (!proc__lookup(ptgid)) {
		calls__on_fork(child, false);
		return 0;
	}
	calls__on_fork(child, true);
	if (ptgid == ctgid)
		return 0;
	if (bpf_map_update_elem(&tracked, &ctgid, &active, BPF_ANY))
		drop__count(MT_DROP_TRACKED);
	stacks__on_fork(ptgid, ctgid);
	callers__on_fork(ptgid, ctgid);
	e = rec__reserve(sizeof(*e), MT_REC_FORK);
	if (!e)
		return 0;
	e->hdr.pid = ptgid;
	e->hdr.tid = task__tid(parent);
	e->child = ctgid;
	e->flags = BPF_CORE_READ(child, mm) == BPF_CORE_READ(parent, mm) ? MT_FORK_SHARED_VM : 0;
	fork__submit(e, child);
	rss__on_fork(parent, child, ctgid);	/* after the fork's record: its process is known */
	return 0;
}

/* old_pid is the kernel's: memtrack's namespace has the exec'ing thread's tid, unless that was not the leader's. The
 * old tid of a thread that took its leader's is gone from every namespace by now: 0 then (docs/FORMAT.md). */
static __always_inline __u32 exec__old_tid(struct task_struct *p, pid_t old_pid, __u32 tid)
{
	if (!cfg_pidns_ino)
		return old_pid;
	return old_pid == p->pid ? tid : 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(process_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid, tid, *state;
	struct mt_exec *e;

	current__ids_of(p, &tgid, &tid);
	state = proc__lookup(tgid);
	if (!state)
		return 0;
	*state = MT_PROC_ACTIVE;	/* in place: an update would allocate a new element, and could fail */
	calls__on_exec(p, old_pid);
	e = rec__reserve(sizeof(*e), MT_REC_EXEC);
	if (e) {
		e->old_pid = exec__old_tid(p, old_pid, tid);
		e->_pad = 0;
		bpf_get_current_comm(e->comm, sizeof(e->comm));
		if (bpf_probe_read_kernel_str(e->path, sizeof(e->path), BPF_CORE_READ(bprm, filename)) < 0)
			e->path[0] = 0;
		rec__submit(e, sizeof(*e));
	}
	stacks__on_exec(p, tgid);
	callers__on_exec(p, tgid);
	watch__on_exec(p);
	return 0;
}

/* Runs on the exiting thread after its last call: its record takes a number above every one of its allocations. */
static __always_inline void thread_exit__emit(struct task_struct *p, __u32 tgid, __u32 tid, bool group_dead)
{
	struct mt_thread_exit *t;

	if (!proc__lookup(tgid))
		return;
	t = rec__reserve_as(sizeof(*t), MT_REC_THREAD_EXIT, tgid, tid);
	if (!t)
		return;
	t->flags = BPF_CORE_READ(p, signal, flags) & MT_SIGNAL_GROUP_EXIT ? MT_THREAD_EXIT_GROUP : 0;
	t->flags |= group_dead ? MT_THREAD_EXIT_LAST : 0;
	t->_pad = 0;
	rec__submit(t, sizeof(*t));
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(process_exit, struct task_struct *p, bool group_dead)
{
	__u32 tgid, tid;

	current__ids_of(p, &tgid, &tid);
	thread_exit__emit(p, tgid, tid, group_dead);
	calls__on_exit(p);
	pressure__on_exit(tid);
	if (group_dead) {
		rss__on_exit(p, tgid, tid);
		watch__on_exit(p, tgid);	/* before the tracked entry goes: it tells a tracked process's end */
		bpf_map_delete_elem(&tracked, &tgid);
		stacks__on_exit(tgid);
		callers__on_exit(tgid);
	}
	return 0;
}

#endif /* MEMTRACK_TREE_BPF_H */
