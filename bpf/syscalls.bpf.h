/* SPDX-License-Identifier: GPL-2.0-only */
/* syscalls.bpf.h — BPF-only: the memory syscalls of tracked processes (mmap, munmap, brk, mremap) at their exit,
 * with who made them (the program, or an allocator call in flight), mprotect and mmap for the watcher, and write
 * for the control FIFO. */
#ifndef MEMTRACK_SYSCALLS_BPF_H
#define MEMTRACK_SYSCALLS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "core.bpf.h"
#include "callers.bpf.h"
#include "calls.bpf.h"
#include "control.bpf.h"
#include "watch.bpf.h"

/* x86-64 syscall numbers of the memory syscalls recorded, and of write (the control FIFO's lines). */
#define NR_WRITE 1
#define NR_MMAP 9
#define NR_MUNMAP 11
#define NR_BRK 12
#define NR_MREMAP 25
#define NR_MPROTECT 10
#define SYS_WATCH_ONLY 0x80	/* mprotect: watched for PROT_EXEC, not recorded */
#define SYS_CONTROL 0x40	/* write: a line to the control FIFO, maybe (control.bpf.h) */

static __always_inline __u8 sys__kind(long id)
{
	switch (id) {
	case NR_MMAP: return MT_SYS_MMAP;
	case NR_MUNMAP: return MT_SYS_MUNMAP;
	case NR_BRK: return MT_SYS_BRK;
	case NR_MREMAP: return MT_SYS_MREMAP;
	case NR_MPROTECT: return SYS_WATCH_ONLY;
	case NR_WRITE: return SYS_CONTROL;
	}
	return 0;
}

/* The layout of syscalls:sys_exit_* (their tracefs format files). */
struct mt_tp_sys_exit {
	__u64 common;
	__s32 nr;
	__u32 _pad;
	__s64 ret;
};

/* At the syscall's exit its arguments are still in the registers saved at its entry (only ax holds the result):
 * no entry hook is needed, so the other syscalls of the machine, the uretprobe trampoline's among them, run one
 * program, not two. */
struct mt_sysargs {
	__u64 a[4];
};

static __always_inline void sys__args(struct pt_regs *regs, struct mt_sysargs *a)
{
	a->a[0] = BPF_CORE_READ(regs, di);
	a->a[1] = BPF_CORE_READ(regs, si);
	a->a[2] = BPF_CORE_READ(regs, dx);
	a->a[3] = BPF_CORE_READ(regs, r10);
}

static __always_inline void sys__fill(struct mt_syscall *e, __u8 kind, const struct mt_sysargs *a, long ret)
{
	e->ret = ret;
	e->sys = kind;
	e->addr = ret;
	e->size = a->a[1];
	e->old_addr = 0;
	e->old_size = 0;
	e->prot = 0;
	e->flags = 0;
	if (kind == MT_SYS_MMAP) {
		e->prot = a->a[2];
		e->flags = a->a[3];
	} else if (kind == MT_SYS_MUNMAP) {
		e->addr = a->a[0];
	} else if (kind == MT_SYS_MREMAP) {
		e->old_addr = a->a[0];
		e->old_size = a->a[1];
		e->size = a->a[2];
		e->flags = a->a[3];
	} else if (kind == MT_SYS_BRK) {
		e->size = a->a[0];
	}
}

/* A file mapped executable (mmap, or mprotect adding PROT_EXEC) may hold an allocator to attach to. One call of
 * watch__current for both: its code is verified once. */
static __always_inline void sys__watch(__u8 kind, const struct mt_sysargs *a, long ret)
{
	__u64 addr;

	if (kind == MT_SYS_MMAP && ret >= 0 && (a->a[2] & MT_PROT_EXEC) && !(a->a[3] & MT_MAP_ANONYMOUS))
		addr = ret;
	else if (kind == SYS_WATCH_ONLY && ret == 0 && (a->a[2] & MT_PROT_EXEC))
		addr = a->a[0];
	else
		return;
	watch__current(addr, MT_ATTACH_MMAP, true, NULL);
	callers__on_map(bpf_get_current_task_btf(), addr);
}

/* A mapping made inside an allocator call is the allocator's, for its heap; any other is the program's. */
static __always_inline __u8 sys__origin(void)
{
	struct mt_call *c = call__state(bpf_get_current_task_btf(), 0);

	return c && c->depth ? MT_SYS_ORIGIN_ALLOCATOR : MT_SYS_ORIGIN_PROGRAM;
}

/* The syscall's user registers (saved at its entry), copied for the stack walk: per CPU, off the BPF stack. Written
 * by sys__stack, read by the walk right after. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pt_regs);
} sys_regs SEC(".maps");

/* The calls whose call path --stacks records: those that make, move or end anonymous private memory (mmap of it,
 * mremap, munmap, a brk that sets the break; brk(0) only asks). */
static __always_inline bool sys__mapping(__u8 kind, const struct mt_sysargs *a)
{
	if (kind == MT_SYS_MMAP)
		return (a->a[3] & MT_MAP_ANONYMOUS) && (a->a[3] & MT_MAP_TYPE) == MT_MAP_PRIVATE;
	return kind != MT_SYS_BRK || a->a[0];
}

/* --stacks: the call path of a mapping call the program made, walked as an allocation's from the syscall's user
 * registers. The allocator's own calls have none: their memory is its heap's, whose sites are the allocations'. */
static __always_inline __u64 sys__stack(__u8 kind, const struct mt_sysargs *a, __u8 origin, long ret,
					struct pt_regs *regs)
{
	struct pt_regs *r;
	__u32 zero = 0;

	if (!cfg_stack_bytes || live_paused || ret < 0 || origin != MT_SYS_ORIGIN_PROGRAM || !sys__mapping(kind, a))
		return 0;
	r = bpf_map_lookup_elem(&sys_regs, &zero);
	if (!r || bpf_probe_read_kernel(r, sizeof(*r), regs))
		return 0;
	return stack__capture_map(r);
}

/* A memory syscall of a tracked process (or an mprotect, watched only): its registers read, its record written. */
struct sys_call {
	struct mt_sysargs a;
	__u64 regs;	/* the syscall's struct pt_regs, read with bpf_probe_read_kernel (--stacks) */
	long ret;
	__u32 kind;
	__u32 _pad;
};

static __always_inline int sys__record(struct sys_call *c)
{
	struct mt_syscall *e;
	__u64 stack;
	__u8 origin;

	sys__watch(c->kind, &c->a, c->ret);
	if (c->kind == SYS_WATCH_ONLY)
		return 0;
	origin = sys__origin();
	stack = sys__stack(c->kind, &c->a, origin, c->ret, (struct pt_regs *)c->regs);	/* its definition goes out first */
	e = rec__reserve(sizeof(*e), MT_REC_SYSCALL);
	if (e) {
		sys__fill(e, c->kind, &c->a, c->ret);
		e->origin = origin;
		e->stack = stack;
		__builtin_memset(e->_pad, 0, sizeof(e->_pad));
		rec__submit(e, sizeof(*e));
	}
	return 0;
}

/* sys__record for sys_exit, where the kind is only known at run time: global, so that the verifier checks it once
 * for any kind, not once for each kind the caller's switch tells apart (bench/README.md, "Start-up"). */
__noinline int sys__record_any(struct sys_call *c)
{
	if (!c)
		return 0;
	return sys__record(c);
}

/* global: the one-syscall tracepoints inline sys__record, the raw exit calls sys__record_any */
static __always_inline int sys__exit(long id, long ret, struct pt_regs *regs, bool global)
{
	struct sys_call c = { .ret = ret, .regs = (__u64)regs };

	c.kind = sys__kind(id);
	if (c.kind == SYS_CONTROL)
		return control__write(regs, ret);
	if (!c.kind || !proc__active(current__ids() >> 32))
		return 0;
	sys__args(regs, &c.a);
	return global ? sys__record_any(&c) : sys__record(&c);
}

/* Every syscall of the machine passes here (BTF, no tracefs needed), the uretprobe trampoline's too: the number
 * is read straight from the trusted regs, without a helper call, so that the others leave at once. */
SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
	return sys__exit(regs->orig_ax, ret, regs, true);
}

/* Per-syscall tracepoints (tracefs): only the six syscalls that matter trap, for untracked processes too. */
#define SYS_TP(name, nr)									\
	SEC("tracepoint/syscalls/sys_exit_" #name)						\
	int sys_exit_##name(struct mt_tp_sys_exit *ctx)						\
	{											\
		struct task_struct *task = bpf_get_current_task_btf();				\
												\
		return sys__exit(nr, ctx->ret, (struct pt_regs *)bpf_task_pt_regs(task), false);	\
	}

SYS_TP(mmap, NR_MMAP)
SYS_TP(munmap, NR_MUNMAP)
SYS_TP(brk, NR_BRK)
SYS_TP(mremap, NR_MREMAP)
SYS_TP(mprotect, NR_MPROTECT)
SYS_TP(write, NR_WRITE)

#endif /* MEMTRACK_SYSCALLS_BPF_H */
