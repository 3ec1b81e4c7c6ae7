/* memtrack.bpf.c — allocator uprobes, memory syscalls and process-tree tracking for the traced command. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "memtrack.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* The outermost allocator call in flight on a thread: saved at entry, completed at return. */
struct mt_call {
	__u64 sp;		/* stack pointer at entry: a deeper entry is a nested call */
	__u64 size;
	__u64 old_addr;
	__u64 align;
	__u64 memptr;		/* posix_memalign's out pointer */
	__u32 depth;		/* allocator entries not yet returned on this thread */
	__u8 func;
	__u8 _pad[3];
};

/* tid -> call in flight; BPF only. LRU so that threads killed mid-call cannot fill it. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MT_CALLS_MAX);
	__type(key, __u32);
	__type(value, struct mt_call);
} calls SEC(".maps");

/* Arguments of a memory syscall between sys_enter and sys_exit; BPF only. */
struct mt_sysargs {
	__u64 a[5];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MT_CALLS_MAX);
	__type(key, __u32);
	__type(value, struct mt_sysargs);
} sysargs SEC(".maps");

/* At an entry whose stack pointer equals the saved call's, [sp] tells a tail call (realloc(NULL, n) jumps to
 * malloc) from a fresh call: the saved call's uretprobe already replaced that return address with the trampoline. */
static __always_inline bool ret__is_trampoline(__u64 sp)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 ret = 0, tramp = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr);

	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)sp))
		return false;
	return tramp && ret == tramp;
}

/*
 * Nested calls (realloc(NULL, n) runs into malloc; reallocarray calls realloc) count once, as the outermost: an entry
 * whose stack pointer lies below the saved one is inside the saved call, one at the same stack pointer is inside it
 * when it was reached by a tail call. Any other entry means the saved call never returned through its uretprobe
 * (longjmp, an exception), so it is replaced rather than trusted forever. Only the rare equal case reads memory.
 */
static __always_inline bool call__nested(struct mt_call *c, __u64 sp)
{
	if (!c || !c->depth || sp > c->sp)
		return false;
	return sp < c->sp || ret__is_trampoline(sp);
}

static __always_inline int call__enter(struct pt_regs *ctx, __u8 func, __u64 size, __u64 old, __u64 align,
				       __u64 memptr)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	__u64 sp = PT_REGS_SP(ctx);
	struct mt_call *c, n = {};

	if (!proc__active(id >> 32))
		return 0;
	c = bpf_map_lookup_elem(&calls, &tid);
	if (call__nested(c, sp)) {
		c->depth++;
		return 0;
	}
	n.sp = sp;
	n.size = size;
	n.old_addr = old;
	n.align = align;
	n.memptr = memptr;
	n.depth = 1;
	n.func = func;
	if (bpf_map_update_elem(&calls, &tid, &n, BPF_ANY))
		drop__count(MT_DROP_CALLSTATE);
	return 0;
}

static __always_inline void alloc__emit(__u8 func, __u64 addr, __u64 size, __u64 old, __u64 align)
{
	struct mt_alloc *e = rec__reserve(sizeof(*e), MT_REC_ALLOC);

	if (!e)
		return;
	e->addr = addr;
	e->size = size;
	e->old_addr = old;
	e->align = align;
	e->func = func;
	e->allocator = MT_ALLOCATOR_GLIBC;
	__builtin_memset(e->_pad, 0, sizeof(e->_pad));
	rec__submit(e, sizeof(*e));
}

/* posix_memalign reports through *memptr, and only when it returns 0. */
static __always_inline int call__result(struct mt_call *c, __u64 rc, __u64 *addr)
{
	void *out = 0;

	if (c->func != MT_FN_POSIX_MEMALIGN) {
		*addr = rc;
		return 0;
	}
	if (rc != 0)
		return -1;
	if (bpf_probe_read_user(&out, sizeof(out), (void *)c->memptr)) {
		drop__count(MT_DROP_READ);
		return -1;
	}
	*addr = (__u64)out;
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(alloc_return, void *ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct mt_call *c = bpf_map_lookup_elem(&calls, &tid);
	__u64 addr = 0;

	if (!c || !c->depth)
		return 0;
	if (--c->depth)
		return 0;
	if (call__result(c, (__u64)ret, &addr))
		return 0;
	/* NULL is no allocation, but realloc(p, 0) returning NULL freed p. */
	if (!addr && !((c->func == MT_FN_REALLOC || c->func == MT_FN_REALLOCARRAY) && c->old_addr && !c->size))
		return 0;
	alloc__emit(c->func, addr, c->size, c->old_addr, c->align);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(malloc_enter, __u64 size)
{
	return call__enter(ctx, MT_FN_MALLOC, size, 0, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(calloc_enter, __u64 nmemb, __u64 size)
{
	return call__enter(ctx, MT_FN_CALLOC, nmemb * size, 0, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(realloc_enter, __u64 ptr, __u64 size)
{
	return call__enter(ctx, MT_FN_REALLOC, size, ptr, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(reallocarray_enter, __u64 ptr, __u64 nmemb, __u64 size)
{
	return call__enter(ctx, MT_FN_REALLOCARRAY, nmemb * size, ptr, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(aligned_alloc_enter, __u64 align, __u64 size)
{
	return call__enter(ctx, MT_FN_ALIGNED_ALLOC, size, 0, align, 0);
}

SEC("uprobe")
int BPF_KPROBE(memalign_enter, __u64 align, __u64 size)
{
	return call__enter(ctx, MT_FN_MEMALIGN, size, 0, align, 0);
}

SEC("uprobe")
int BPF_KPROBE(posix_memalign_enter, __u64 memptr, __u64 align, __u64 size)
{
	return call__enter(ctx, MT_FN_POSIX_MEMALIGN, size, 0, align, memptr);
}

SEC("uprobe")
int BPF_KPROBE(valloc_enter, __u64 size)
{
	return call__enter(ctx, MT_FN_VALLOC, size, 0, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(pvalloc_enter, __u64 size)
{
	return call__enter(ctx, MT_FN_PVALLOC, size, 0, 0, 0);
}

/* free(NULL) is no event; a free inside realloc is realloc's own business. */
SEC("uprobe")
int BPF_KPROBE(free_enter, __u64 ptr)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct mt_call *c;

	if (!ptr || !proc__active(id >> 32))
		return 0;
	c = bpf_map_lookup_elem(&calls, &tid);
	if (call__nested(c, PT_REGS_SP(ctx)))
		return 0;
	alloc__emit(MT_FN_FREE, ptr, 0, 0, 0);
	return 0;
}

/* x86-64 syscall numbers of the memory syscalls recorded. */
#define NR_MMAP 9
#define NR_MUNMAP 11
#define NR_BRK 12
#define NR_MREMAP 25

static __always_inline __u8 sys__kind(long id)
{
	switch (id) {
	case NR_MMAP: return MT_SYS_MMAP;
	case NR_MUNMAP: return MT_SYS_MUNMAP;
	case NR_BRK: return MT_SYS_BRK;
	case NR_MREMAP: return MT_SYS_MREMAP;
	}
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs *regs, long id)
{
	__u64 pid_tgid;
	__u32 tid;
	struct mt_sysargs a;

	if (!sys__kind(id))
		return 0;
	pid_tgid = bpf_get_current_pid_tgid();
	if (!proc__active(pid_tgid >> 32))
		return 0;
	tid = (__u32)pid_tgid;
	a.a[0] = BPF_CORE_READ(regs, di);
	a.a[1] = BPF_CORE_READ(regs, si);
	a.a[2] = BPF_CORE_READ(regs, dx);
	a.a[3] = BPF_CORE_READ(regs, r10);
	a.a[4] = BPF_CORE_READ(regs, r8);
	if (bpf_map_update_elem(&sysargs, &tid, &a, BPF_ANY))
		drop__count(MT_DROP_CALLSTATE);
	return 0;
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

SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
	__u8 kind = sys__kind(BPF_CORE_READ(regs, orig_ax));
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct mt_sysargs *a;
	struct mt_syscall *e;

	if (!kind)
		return 0;
	a = bpf_map_lookup_elem(&sysargs, &tid);
	if (!a)
		return 0;
	e = rec__reserve(sizeof(*e), MT_REC_SYSCALL);
	if (e) {
		sys__fill(e, kind, a, ret);
		__builtin_memset(e->_pad, 0, sizeof(e->_pad));
		rec__submit(e, sizeof(*e));
	}
	bpf_map_delete_elem(&sysargs, &tid);
	return 0;
}

/* Children join the tree here, before they first run; threads share their process's entry. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u32 active = MT_PROC_ACTIVE;
	struct mt_fork *e;

	if (ptgid == ctgid || !proc__lookup(ptgid))
		return 0;
	if (bpf_map_update_elem(&tracked, &ctgid, &active, BPF_ANY))
		drop__count(MT_DROP_TRACKED);
	e = rec__reserve(sizeof(*e), MT_REC_FORK);
	if (!e)
		return 0;
	e->hdr.pid = ptgid;
	e->hdr.tid = BPF_CORE_READ(parent, pid);
	e->child = ctgid;
	e->_pad = 0;
	rec__submit(e, sizeof(*e));
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(process_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	__u32 active = MT_PROC_ACTIVE;
	struct mt_exec *e;

	if (!proc__lookup(tgid))
		return 0;
	bpf_map_update_elem(&tracked, &tgid, &active, BPF_EXIST);
	e = rec__reserve(sizeof(*e), MT_REC_EXEC);
	if (!e)
		return 0;
	e->old_pid = old_pid;
	e->_pad = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	if (bpf_probe_read_kernel_str(e->path, sizeof(e->path), BPF_CORE_READ(bprm, filename)) < 0)
		e->path[0] = 0;
	rec__submit(e, sizeof(*e));
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(process_exit, struct task_struct *p, bool group_dead)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);

	if (group_dead)
		bpf_map_delete_elem(&tracked, &tgid);
	return 0;
}
