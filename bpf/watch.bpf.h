/* SPDX-License-Identifier: GPL-2.0-only */
/* watch.bpf.h — BPF-only: notices executable file mappings of tracked processes and asks the tracer to attach. */
#ifndef MEMTRACK_WATCH_BPF_H
#define MEMTRACK_WATCH_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "core.bpf.h"
#include "stacks.bpf.h"

#define MT_KNOWN_FILES_MAX 16384
#define MT_PROT_EXEC 0x4
#define MT_SIGCHLD 17
#define MT_SIGSTOP 19
#define MT_SIGURG 23
#define MT_SIGWINCH 28
#define MT_SIG_DFL 0
#define MT_SIG_IGN 1
#define MT_VM_RWX 0x7		/* VM_READ | VM_WRITE | VM_EXEC, the same bits as PROT_* */

/* Set by the tracer before its first tracepoint: its own tgid (in its namespace). A thread it traces has a thread of
 * it as its ptrace parent. Not a load-time setting: programs kept for a warm start serve each run's tracer. */
__u32 live_tracer_tgid = 0;

#define MT_PT_PTRACED 0x1		/* the kernel's PT_PTRACED (a #define, so not in BTF) */

/*
 * The thread is memtrack's tracee: it can be held, and memtrack sees its stops. A thread handed off to another
 * tracer (a descendant's strace, gdb or LeakSanitizer), and a child born to one or cloned CLONE_UNTRACED, is not.
 * A traced task's parent is its tracer (real_parent is the one that forked it).
 */
static __always_inline bool task__traced_by_tracer(struct task_struct *t)
{
	return (BPF_CORE_READ(t, ptrace) & MT_PT_PTRACED) && task__tgid(BPF_CORE_READ(t, parent)) == live_tracer_tgid;
}

struct mt_file_key {
	__u64 dev;
	__u64 ino;
};

/* (dev, ino) -> MT_FILE_*: BPF marks a file PENDING at its first request, the tracer says what it holds once it
 * has looked. Not preallocated: entries come at mmap and exec only, and a failed mark just lets the next mapping ask
 * again. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_KNOWN_FILES_MAX);
	__type(key, struct mt_file_key);
	__type(value, __u32);
} known_files SEC(".maps");

struct mt_proc_file_key {
	__u32 tgid;
	__u32 _pad;
	__u64 dev;
	__u64 ino;
};

/*
 * (tgid, dev, ino) -> 1: the tracer adds one when it links a file for a process (at its mmap, or at a fork child's
 * first stop) and removes them when the process exits. The allocator files whose probes this process has, or which
 * the tracer refused to probe for it (its leader had exited: asked once). Probes are bound to the processes of the
 * tree (uprobe_multi's pid filter), so that untracked processes never trap.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_KNOWN_FILES_MAX * 4);
	__type(key, struct mt_proc_file_key);
	__type(value, __u8);
} proc_files SEC(".maps");

/* tid -> struct mt_held: BPF adds a thread it holds with SIGSTOP, the tracer deletes it once it has resumed it; the
 * closer SIGCONTs what is left when memtrack dies. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct mt_held);
} held SEC(".maps");

/* Set by the tracer once the closer has the map `held` (it maps .bss): only then may a hold be a SIGSTOP. */
__u8 live_hold_stop_ok = 0;

extern int bpf_send_signal_task(struct task_struct *task, int sig, enum pid_type type, __u64 value) __ksym __weak;

/* Attach requests, BPF -> tracer: BPF submits at an unknown file's mapping, and every submit wakes the tracer (a
 * thread is waiting for it); the tracer reads them with libbpf. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} attach_rb SEC(".maps");

struct mt_vma {
	__u64 start, end, pgoff, dev, ino;
	__u32 prot;
	__u32 has_file;
};

static long vma__read(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct mt_vma *v = data;
	struct file *f = BPF_CORE_READ(vma, vm_file);

	if (!f)
		return 0;
	v->has_file = 1;
	v->start = BPF_CORE_READ(vma, vm_start);
	v->end = BPF_CORE_READ(vma, vm_end);
	v->pgoff = BPF_CORE_READ(vma, vm_pgoff) << 12;
	v->ino = BPF_CORE_READ(f, f_inode, i_ino);
	v->dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	v->prot = BPF_CORE_READ(vma, vm_flags) & MT_VM_RWX;
	return 0;
}

/* The module metadata that offline unwinding needs: every executable mapping, when it is made. */
static __always_inline void mapping__emit(const struct mt_vma *v)
{
	struct mt_mapping *m = rec__reserve(sizeof(*m), MT_REC_MAPPING);

	if (!m)
		return;
	m->start = v->start;
	m->end = v->end;
	m->pgoff = v->pgoff;
	m->dev = v->dev;
	m->ino = v->ino;
	m->prot = v->prot;
	m->_pad = 0;
	rec__submit(m, sizeof(*m));
}

/*
 * A signal is a harmless hold when its delivery, should memtrack die before it suppresses it, does nothing: not
 * blocked in this thread (a blocked signal makes no stop), not pending already (it would merge), and ignored (the
 * default of these three, or SIG_IGN). A traced thread stops at the delivery of an ignored signal all the same. The
 * mask is this thread's own and cannot change meanwhile; the disposition could, from another thread, which would
 * then cost one handler call if memtrack also died in that instant.
 */
static __always_inline bool hold__harmless(struct task_struct *t, int sig)
{
	__u64 bit = 1ull << (sig - 1);
	unsigned long h;

	if ((t->blocked.sig[0] | t->pending.signal.sig[0] | BPF_CORE_READ(t, signal, shared_pending.signal.sig[0])) &
	    bit)
		return false;
	h = (unsigned long)BPF_CORE_READ(t, sighand, action[sig - 1].sa.sa_handler);
	return h == MT_SIG_DFL || h == MT_SIG_IGN;
}

/* A harmless signal to hold t with, else SIGSTOP once the closer can SIGCONT what memtrack leaves held, else 0. A
 * SIGSTOP delivered untraced would stop the process for good: it is the last choice. */
static __always_inline int hold__pick(struct task_struct *t)
{
	if (hold__harmless(t, MT_SIGURG))
		return MT_SIGURG;
	if (hold__harmless(t, MT_SIGWINCH))
		return MT_SIGWINCH;
	if (hold__harmless(t, MT_SIGCHLD))
		return MT_SIGCHLD;
	return live_hold_stop_ok ? MT_SIGSTOP : 0;
}

/* The hold signal, 0 for none. Without the kfunc there is no cookie, and an ignored signal could not be told from
 * the kernel's own: SIGSTOP then, as before. */
static __always_inline int hold__signal(struct task_struct *t)
{
	if (!bpf_send_signal_task)
		return MT_SIGSTOP;
	return hold__pick(t);
}

/*
 * A SIGSTOP hold goes into `held` before the signal, so that the closer never misses one. uprobe: the caller is a
 * uprobe program, whose type may not call the kfunc; it holds the current thread, t, with no cookie (the tracer
 * tells that hold by what BPF left for it: ptrace_loop.c).
 */
static __always_inline bool hold__send(struct task_struct *t, __u32 tid, int sig, bool uprobe)
{
	struct mt_held h = { .tgid = current__tgid_of(t), .start_ns = t->start_boottime };
	long err;

	if (sig == MT_SIGSTOP)
		bpf_map_update_elem(&held, &tid, &h, BPF_ANY);
	if (!uprobe && bpf_send_signal_task)
		err = bpf_send_signal_task(t, sig, PIDTYPE_PID, MT_HOLD_COOKIE);
	else
		err = bpf_send_signal_thread(sig);
	if (err && sig == MT_SIGSTOP)
		bpf_map_delete_elem(&held, &tid);
	return !err;
}

/*
 * An unknown file: the request goes to the tracer, and an mmap'ing thread is held by a signal (hold__signal) that
 * the tracer suppresses at its signal-delivery-stop, so none of the file's code runs before its probes are in. The
 * signal is only delivered when this syscall returns to user space, after the request below is in the ring. An exec
 * needs no signal: the tracer holds it at its ptrace exec-event stop. A thread that is not memtrack's tracee is
 * never held: no one would suppress the signal. Its request goes out marked foreign, and the tracer binds the file
 * while the thread runs on (and counts it).
 */
static __always_inline void watch__request(const struct mt_vma *v, __u8 reason, bool hold)
{
	struct mt_file_key key = { .dev = v->dev, .ino = v->ino };
	__u32 pending = MT_FILE_PENDING, *state = bpf_map_lookup_elem(&known_files, &key);
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id = current__ids();
	struct mt_proc_file_key pkey = { .tgid = id >> 32, .dev = v->dev, .ino = v->ino };
	struct mt_attach_req *r;

	if (v->ino && state && *state == MT_FILE_NONE)
		return;
	if (v->ino && state && *state == MT_FILE_ALLOCATOR && bpf_map_lookup_elem(&proc_files, &pkey))
		return;
	if (v->ino && !state)
		bpf_map_update_elem(&known_files, &key, &pending, BPF_NOEXIST);
	r = bpf_ringbuf_reserve(&attach_rb, sizeof(*r), 0);
	if (!r) {
		drop__count(MT_DROP_ATTACH);
		return;
	}
	r->ts_ns = ts__now();
	r->ktime_ns = bpf_ktime_get_ns();
	r->dev = v->dev;
	r->ino = v->ino;
	r->start = v->start;
	r->end = v->end;
	r->pid = id >> 32;
	r->tid = (__u32)id;
	r->reason = reason;
	r->foreign = !task__traced_by_tracer(task);
	r->hold_sig = hold && !r->foreign ? hold__signal(task) : 0;
	r->held = !r->foreign && (!hold || (r->hold_sig && hold__send(task, r->tid, r->hold_sig, false)));
	if (hold && !r->foreign && !r->held)
		drop__count(MT_DROP_HOLD);
	__builtin_memset(r->_pad, 0, sizeof(r->_pad));
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
}

/*
 * addr lies in the mapping to look at; a mapping without a file (anonymous JIT code) needs no probes. When the
 * mapping cannot be read here (bpf_find_vma only trylocks the mmap lock), the request goes out unresolved (dev and
 * ino 0, start = addr): the tracer reads /proc/TID/maps at the stop and records the mapping itself.
 */
static __always_inline void watch__addr(struct task_struct *task, __u64 addr, __u8 reason, bool hold,
					__u64 *seen_ino)
{
	struct mt_vma v = {};

	if (bpf_find_vma(task, addr, vma__read, &v, 0)) {
		v.start = addr;
		watch__request(&v, reason, hold);
		return;
	}
	if (!v.has_file)
		return;
	if (seen_ino && *seen_ino == v.ino)
		return;
	if (seen_ino)
		*seen_ino = v.ino;
	mapping__emit(&v);
	ranges__add(current__ids() >> 32, v.start, v.end, v.pgoff, v.dev, v.ino);
	watch__request(&v, reason, hold);
}

/* watch__addr for the current task: global, so that its code is verified once in a program however many places
 * call it (bench/README.md, "Start-up"). */
__noinline int watch__current(__u64 addr, __u8 reason, bool hold, __u64 *seen_ino)
{
	watch__addr(bpf_get_current_task_btf(), addr, reason, hold, seen_ino);
	return 0;
}

/* A fork record: the tracer binds an untraced child's probes when it reads the record (no ptrace stop of the
 * child's will come), so that one wakes it at once. */
static __always_inline void fork__submit(struct mt_fork *e, struct task_struct *child)
{
	if (task__traced_by_tracer(child)) {
		rec__submit(e, sizeof(*e));
		return;
	}
	e->flags |= MT_FORK_UNTRACED;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/*
 * The process-tree hook at a process's exit (tree.bpf.h). The end of a process whose leader memtrack neither traces
 * nor forked: its wait status goes to another parent, so BPF writes its exit record, as the tracer does from waitpid
 * for the others. Run by its last thread, after all of the process's records; the status is the one wait would give.
 */
static __always_inline void watch__on_exit(struct task_struct *p, __u32 tgid)
{
	struct task_struct *leader = BPF_CORE_READ(p, group_leader);
	struct mt_exit *e;

	if (!proc__lookup(tgid) || task__traced_by_tracer(leader) ||
	    task__tgid(BPF_CORE_READ(leader, real_parent)) == live_tracer_tgid)
		return;
	e = rec__reserve_as(sizeof(*e), MT_REC_EXIT, tgid, tgid);
	if (!e)
		return;
	if (BPF_CORE_READ(p, signal, flags) & MT_SIGNAL_GROUP_EXIT)
		e->status = BPF_CORE_READ(p, signal, group_exit_code);
	else
		e->status = BPF_CORE_READ(leader, exit_code);
	e->_pad = 0;
	rec__submit(e, sizeof(*e));
}

/* The process-tree hook at exec (tree.bpf.h): the new image's executable (at start_code) and its interpreter (where
 * it will start) are held at the tracer's exec-event stop, which comes right after this tracepoint. */
static __always_inline void watch__on_exec(struct task_struct *p)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(p);
	__u64 seen = 0;

	watch__current(BPF_CORE_READ(p, mm, start_code), MT_ATTACH_EXEC, false, &seen);
	watch__current(BPF_CORE_READ(regs, ip), MT_ATTACH_INTERP, false, &seen);
}

#endif /* MEMTRACK_WATCH_BPF_H */
