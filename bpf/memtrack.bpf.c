/* memtrack.bpf.c — allocator uprobes, memory syscalls and process-tree tracking for the traced command. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "memtrack.bpf.h"
#include "control.bpf.h"
#include "rss.bpf.h"
#include "stacks.bpf.h"
#include "watch.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* The outermost allocator call in flight on a thread: saved at entry, completed at return. */
struct mt_call {
	__u64 sp;		/* stack pointer at entry: a deeper entry is a nested call */
	__u64 size;
	__u64 old_addr;
	__u64 align;
	__u64 memptr;		/* posix_memalign's out pointer */
	__u64 free_ptr;		/* the block an operator delete/dallocx just released: its inner free is no event */
	__u64 free_sp;
	__u64 stack;		/* call path hash, captured at the outermost entry (--stacks) */
	__u64 owner;		/* call_slots: the task whose slot this is (its address), 0 when free */
	__u64 mark_sp;		/* a MARK entry's stack pointer: the next allocation at or just below it is that call */
	__u64 mark_size;
	__u64 mark_stack;	/* --stacks: the call path at the MARK entry, where it starts at the program's call */
	__u64 no_callers;	/* callers_gen + 1 when the process had no callers entry at that generation */
	__u64 hit_lo, hit_hi;	/* the caller range the thread's last malloc returned into, valid at hit_gen */
	__u64 hit_gen;
	__u64 ret;		/* a THROWS call's return address, read at its entry (struct mt_ret_restore) */
	__u32 depth;		/* allocator entries not yet returned on this thread */
	__u8 func;		/* a release's when the call in flight is one (MT_COOKIE_INFLIGHT) */
	__u8 allocator;
	__u8 free_rank;		/* MT_COOKIE_RANK of the release at free_ptr */
	__u8 mark_func;
	__u8 mark_allocator;
	__u8 hit_func;
	__u8 hit_allocator;
	__u8 throws;		/* the call in flight may throw (MT_COOKIE_THROWS): ret is its return address */
	__u8 _pad[4];
};

#define MT_CALL_SLOTS 32768	/* the kernel's default pid_max (systemd sets 4194304: then tids may share one) */

/*
 * tid -> the thread's call in flight: claimed by BPF at fork and exec, written at each allocator entry and return,
 * released at exit. A thread of the tree owns the slot its tid indexes from its fork (or its process's exec) to its
 * exit: an array load the verifier inlines, where a malloc/free pair's three task storage lookups cost more
 * (bench/README.md). A slot names its owner by task, not tid: a tid is free for another thread
 * while the exec of a thread that is not the leader swaps tids with the leader, before the exec's tracepoint
 * releases the old one. A thread whose slot another live thread holds (pid_max above MT_CALL_SLOTS, or that window)
 * keeps its calls in task storage until an exec gives it a slot: a call's entry and its return always meet in the
 * same place.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MT_CALL_SLOTS);
	__type(key, __u32);
	__type(value, struct mt_call);
} call_slots SEC(".maps");

/* The others' call in flight, by BPF at their allocator entries: task-local storage, freed with the thread. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct mt_call);
} calls SEC(".maps");

static __always_inline struct mt_call *call__slot(__u32 tid)
{
	__u32 i = tid & (MT_CALL_SLOTS - 1);

	return bpf_map_lookup_elem(&call_slots, &i);
}

static __always_inline struct mt_call *call__state(struct task_struct *task, __u64 flags)
{
	struct mt_call *c = call__slot(task->pid);

	if (c && c->owner == (__u64)task)
		return c;
	return bpf_task_storage_get(&calls, task, 0, flags);
}

static __always_inline void call__reset(struct mt_call *c)
{
	c->depth = 0;
	c->free_ptr = 0;
	c->free_sp = 0;
	c->mark_sp = 0;
	c->no_callers = 0;
	c->hit_gen = 0;
}

/* For a new thread before it runs (fork), or at exec, when no call of the task's can be in flight. A slot that
 * names the task already is its own (an exec), or was left by a task that died unreleased at that address. */
static __always_inline void call__claim(struct task_struct *t)
{
	struct mt_call *c = call__slot(t->pid);
	__u64 me = (__u64)t;

	if (!c)
		return;
	if (c->owner != me && __sync_val_compare_and_swap(&c->owner, 0, me) != 0) {
		c = bpf_task_storage_get(&calls, t, 0, 0);
		if (c)
			call__reset(c);	/* an exec in task storage: a longjmp'd call must not outlive the image */
		return;
	}
	call__reset(c);
}

static __always_inline void call__release(struct task_struct *t, __u32 tid)
{
	struct mt_call *c = call__slot(tid);

	if (c && c->owner == (__u64)t)
		c->owner = 0;
}

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
 * Nested calls (realloc(NULL, n) runs into malloc; operator new calls malloc) count once, as the outermost: an entry
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

struct mt_args_val {
	__u64 size, old, align, memptr;
};

/* How far below a MARK entry's stack pointer the allocation it jumps to may enter: operator new's frame. */
#define MT_MARK_REACH 256

/* A mark the entry at sp is inside of: the allocation it leads to has not entered yet. */
static __always_inline bool mark__covers(const struct mt_call *c, __u64 sp)
{
	return c->mark_sp && sp <= c->mark_sp && c->mark_sp - sp <= MT_MARK_REACH;
}

/*
 * A MARK entry point is a C++ runtime's operator new that is not return-probed (a C++ exception thrown through a
 * return-probed frame finds no unwind data at the trampoline, and ends the program): it names the thread's next
 * allocation call, the malloc or aligned_alloc it leads to, which must enter at or just below it; an outer mark
 * (new[](nothrow) calls new[], which jumps to new) stays. The next allocator entry takes the mark, matched or not,
 * so it cannot outlive the call it was made for.
 */
static __always_inline int mark__set(struct pt_regs *ctx, __u64 cookie, __u64 size)
{
	__u64 sp = PT_REGS_SP(ctx);
	struct mt_call *c = call__state(bpf_get_current_task_btf(), BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!c) {
		drop__count(MT_DROP_CALLSTATE);
		return 0;
	}
	if (call__nested(c, sp) || mark__covers(c, sp))
		return 0;
	c->mark_sp = sp;
	c->mark_size = size;
	c->mark_func = MT_COOKIE_FUNC(cookie);
	c->mark_allocator = MT_COOKIE_ALLOCATOR(cookie);
	c->mark_stack = stack__capture(ctx);
	return 0;
}

/* The probes fire only in tracked processes (their links are bound to them): no tracked-map lookup here. */
static __always_inline int call__enter(struct pt_regs *ctx, __u64 cookie, const struct mt_args_val *v)
{
	__u64 sp = PT_REGS_SP(ctx);
	struct mt_call *c = call__state(bpf_get_current_task_btf(), BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!c) {
		drop__count(MT_DROP_CALLSTATE);
		return 0;
	}
	if (call__nested(c, sp)) {
		c->depth++;
		return 0;
	}
	c->sp = sp;
	c->size = v->size;
	c->old_addr = v->old;
	c->align = v->align;
	c->memptr = v->memptr;
	c->free_ptr = 0;
	c->free_sp = 0;
	c->func = MT_COOKIE_FUNC(cookie);
	c->allocator = MT_COOKIE_ALLOCATOR(cookie);
	c->stack = 0;
	if (mark__covers(c, sp)) {
		c->func = c->mark_func;
		c->allocator = c->mark_allocator;
		c->size = c->mark_size;
		c->stack = c->mark_stack;
	}
	c->mark_sp = 0;
	if (!c->stack && !paused)
		c->stack = stack__capture(ctx);
	c->throws = MT_COOKIE_THROWS(cookie) && !bpf_probe_read_user(&c->ret, sizeof(c->ret), (void *)sp);
	c->depth = 1;
	return 0;
}

static __always_inline void alloc__fill(struct mt_alloc *e, __u8 func, __u8 allocator, __u64 addr, __u64 size,
					__u64 old, __u64 align, __u64 stack)
{
	e->addr = addr;
	e->size = size;
	e->old_addr = old;
	e->align = align;
	e->stack = stack;
	e->func = func;
	e->allocator = allocator;
	__builtin_memset(e->_pad, 0, sizeof(e->_pad));
}

/* The caller's task gives the header's ids: a field load each, where bpf_get_current_pid_tgid is a call. */
static __always_inline void alloc__emit(struct task_struct *task, __u8 func, __u8 allocator, __u64 addr, __u64 size,
					__u64 old, __u64 align, __u64 stack)
{
	struct mt_batch *b = batch__take();
	__u32 tgid, tid, i;
	struct mt_alloc *e;

	if (b) {
		i = b->n;
		if (i >= MT_BATCH_RECS) {
			batch__flush(b);
			i = 0;
		}
		e = &b->r[i];
		current__ids_of(task, &tgid, &tid);
		rec__head(&e->hdr, sizeof(*e), MT_REC_ALLOC, tgid, tid);
		alloc__fill(e, func, allocator, addr, size, old, align, stack);
		b->n = i + 1;
		if (i + 1 == MT_BATCH_RECS)
			batch__flush(b);
		batch__give_back(b);
		return;
	}
	current__ids_of(task, &tgid, &tid);
	e = rec__reserve_as(sizeof(*e), MT_REC_ALLOC, tgid, tid);
	if (!e)
		return;
	alloc__fill(e, func, allocator, addr, size, old, align, stack);
	rec__submit(e, sizeof(*e));
}

/* posix_memalign reports through *memptr, and only when it returns 0 (else it failed: addr 0); xallocx returns the
 * size it resized to. -1: *memptr could not be read. */
static __always_inline int call__result(struct mt_call *c, __u64 rc, __u64 *addr)
{
	void *out = 0;

	if (c->func == MT_FN_XALLOCX) {
		*addr = c->old_addr;
		c->size = rc;
		return 0;
	}
	if (c->func != MT_FN_POSIX_MEMALIGN || rc != 0) {
		*addr = c->func == MT_FN_POSIX_MEMALIGN ? 0 : rc;
		return 0;
	}
	if (bpf_probe_read_user(&out, sizeof(out), (void *)c->memptr)) {
		drop__count(MT_DROP_READ);
		return -1;
	}
	*addr = (__u64)out;
	return 0;
}

/*
 * tgid -> the code of its C++ runtimes' operator new, which is not probed: a malloc that returns there was a new.
 * The tracer writes one when it probes such a file for a process (tracer/callers.c), before the process goes on;
 * BPF copies it to a fork child, drops it at exec and exit. Not preallocated: few processes have one.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_TRACKED_MAX);
	__type(key, __u32);
	__type(value, struct mt_callers);
} callers SEC(".maps");

/* Written by the tracer (it maps .bss): one more each time it writes a process's callers entry. A thread whose
 * process had none at a generation looks again only at the next: most processes have no C++ runtime, and a map
 * lookup at every malloc would cost more than this load (bench/README.md). */
__u64 callers_gen = 0;

/* The range of cs that ip lies in, kept in the thread's call state; false when none. */
static __always_inline bool callers__find(struct mt_call *c, const struct mt_callers *cs, __u64 ip, __u64 gen)
{
	__u32 i;

	for (i = 0; i < MT_CALLERS_MAX; i++) {
		if (i >= cs->n)
			return false;
		if (ip >= cs->c[i].lo && ip < cs->c[i].hi) {
			c->hit_lo = cs->c[i].lo;
			c->hit_hi = cs->c[i].hi;
			c->hit_func = cs->c[i].func;
			c->hit_allocator = cs->c[i].allocator;
			c->hit_gen = gen;
			return true;
		}
	}
	return false;
}

/* At a uretprobe, ip is the return address already: the outermost call's caller. A thread's mallocs mostly return
 * to one place (a C++ program's, into operator new): the range it last found is tried before the map. */
static __always_inline void caller__classify(struct mt_call *c, struct task_struct *task, __u64 ip, __u8 *func,
					    __u8 *allocator)
{
	__u64 gen = callers_gen + 1;
	struct mt_callers *cs;
	__u32 tgid;

	if (c->no_callers == gen)
		return;
	if (c->hit_gen != gen || ip < c->hit_lo || ip >= c->hit_hi) {
		tgid = current__tgid_of(task);
		cs = bpf_map_lookup_elem(&callers, &tgid);
		if (!cs) {
			c->no_callers = gen;
			return;
		}
		if (!callers__find(c, cs, ip, gen))
			return;
	}
	*func = c->hit_func;
	*allocator = c->hit_allocator;
}

/* The outermost call's end, ret its result; ip its caller (the return probe's). A NULL result is recorded too
 * (addr 0: a failed call), realloc(p, 0)'s (p freed) among them. */
static __always_inline void call__complete(struct task_struct *task, struct mt_call *c, __u64 ret, __u64 ip)
{
	__u8 func, allocator;
	__u64 addr = 0;

	c->depth = 0;
	c->throws = 0;
	/* a release in flight: its record went out at its entry; paused: a call that began before the stop, unless it
	 * released a block (realloc's old one), which the tracer records as a free (control.bpf.h) */
	if (mt_func__is_free(c->func) || (paused && !c->old_addr))
		return;
	if (call__result(c, ret, &addr))
		return;
	func = c->func;
	allocator = c->allocator;
	if (func == MT_FN_MALLOC)
		caller__classify(c, task, ip, &func, &allocator);
	alloc__emit(task, func, allocator, addr, c->size, c->old_addr, c->align, c->stack);
}

SEC("uretprobe")
int BPF_KRETPROBE(alloc_return, void *ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct mt_call *c = call__state(task, 0);

	if (!c || !c->depth)
		return 0;
	/* The outermost call's return: its depth, or its frame when a nested call's return never came (an exception
	 * thrown through it: libstdc++'s aligned nothrow new catches the bad_alloc its aligned new throws). */
	if (--c->depth && PT_REGS_SP(ctx) != c->sp + 8)
		return 0;
	call__complete(task, c, (__u64)ret, PT_REGS_IP(ctx));
	return 0;
}

/* tid -> the return address the tracer puts back while BPF holds the thread (struct mt_ret_restore). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct mt_ret_restore);
} ret_restore SEC(".maps");

/*
 * The unwinder will walk through the call's frame, whose return address the uretprobe replaced with its trampoline,
 * where it finds no unwind data: the thread is held (as at a mapping, watch.bpf.h) and the tracer writes the real one
 * back before the thread runs on. The uretprobe then never fires; the kernel drops its stale return instance at a
 * later uretprobe of the thread's from the same frame or above. A thread that cannot be held is a drop. Not inlined:
 * its stack would add to every path of the program's, past the verifier's 512 bytes.
 */
static __noinline void ret__restore(struct task_struct *task, __u64 slot, __u64 ret)
{
	struct mt_ret_restore r = { .slot = slot, .ret = ret };
	__u32 tid = (__u32)current__ids();	/* in memtrack's PID namespace, as ptrace names the thread */
	int sig;

	if (!task__traced_by_tracer(task) || bpf_map_update_elem(&ret_restore, &tid, &r, BPF_ANY)) {
		drop__count(MT_DROP_HOLD);
		return;
	}
	sig = hold__pick(task);
	if (!sig || !hold__send(task, tid, sig, true)) {
		bpf_map_delete_elem(&ret_restore, &tid);
		drop__count(MT_DROP_HOLD);
	}
}

/* An exception allocated inside an MT_COOKIE_THROWS call (a new that throws bad_alloc): the call fails, and ends
 * here, before the exception's own malloc, which would else be taken for a call nested in it. */
static __always_inline int call__thrown(struct pt_regs *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct mt_call *c = call__state(task, 0);

	if (!c || !c->depth || !c->throws || PT_REGS_SP(ctx) >= c->sp)
		return 0;
	c->depth = 0;
	c->throws = 0;
	if (!paused)	/* a call that began before the stop: as call__complete */
		alloc__emit(task, c->func, c->allocator, 0, c->size, 0, c->align, c->stack);
	ret__restore(task, c->sp, c->ret);
	return 0;
}

/* A release in flight (MT_COOKIE_INFLIGHT), from its entry to its return: what it calls inside is nested. */
static __always_inline void free__in_flight(struct mt_call *c, __u64 cookie, __u64 sp)
{
	c->sp = sp;
	c->depth = 1;
	c->throws = 0;
	c->func = MT_COOKIE_FUNC(cookie);
	c->free_ptr = 0;
}

/*
 * free(NULL) is no event; a free inside realloc, or inside a wrapper's release in flight, is that call's own
 * business (nested); the free that operator delete, mi_free_size or mimalloc's free makes of the block it was given
 * is the same release, counted once as the outer call: the next release of that block on the thread, not above it
 * on the stack and of a lower rank (MT_COOKIE_RANK), goes on with the chain. A release that calls no other
 * (MT_COOKIE_CHAINS) ends it. The marker is also replaced by the thread's next allocation. A wrapper's release has
 * its return probed (MT_COOKIE_INFLIGHT), so whatever it calls is nested in it whatever the ranks, and a later free
 * of the same address is not.
 */
static __always_inline int free__enter(struct pt_regs *ctx, __u64 cookie, __u64 ptr, __u64 size)
{
	__u64 sp = PT_REGS_SP(ctx), inflight = MT_COOKIE_INFLIGHT(cookie);
	__u8 rank = MT_COOKIE_RANK(cookie);
	struct task_struct *task;
	struct mt_call *c;

	if (!ptr && !inflight)
		return 0;
	task = bpf_get_current_task_btf();
	c = call__state(task, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (call__nested(c, sp)) {
		if (inflight)
			c->depth++;	/* its return comes too */
		return 0;
	}
	if (c)
		c->mark_sp = 0;
	if (ptr && c && c->free_ptr == ptr && sp <= c->free_sp && rank < c->free_rank) {
		c->free_rank = rank;
		if (!MT_COOKIE_CHAINS(cookie))
			c->free_ptr = 0;
		ptr = 0;
	}
	if (ptr) {
		alloc__emit(task, MT_COOKIE_FUNC(cookie), MT_COOKIE_ALLOCATOR(cookie), ptr, size, 0, 0, 0);
		if (c) {
			c->free_ptr = MT_COOKIE_CHAINS(cookie) ? ptr : 0;
			c->free_sp = sp;
			c->free_rank = rank;
		}
	}
	if (inflight && c)
		free__in_flight(c, cookie, sp);
	else if (inflight)
		drop__count(MT_DROP_CALLSTATE);
	return 0;
}

/* The probed thread's registers by x86 number (0 rax ... 7 rdi, 8-15 r8-r15). Read one by one into the stack:
 * the verifier refuses a context read at a computed offset, which a switch would compile to. */
static __always_inline void regs__by_nr(struct pt_regs *ctx, __u64 r[16])
{
	r[0] = ctx->ax;
	r[1] = ctx->cx;
	r[2] = ctx->dx;
	r[3] = ctx->bx;
	r[4] = ctx->sp;
	r[5] = ctx->bp;
	r[6] = ctx->si;
	r[7] = ctx->di;
	r[8] = ctx->r8;
	r[9] = ctx->r9;
	r[10] = ctx->r10;
	r[11] = ctx->r11;
	r[12] = ctx->r12;
	r[13] = ctx->r13;
	r[14] = ctx->r14;
	r[15] = ctx->r15;
}

/* calloc's nmemb * size as asked: UINT64_MAX when the product overflows (the call fails), not the product's wrap. */
static __always_inline __u64 size__mul(__u64 n, __u64 m)
{
	__u64 max;

	if (!((n | m) >> 32) || !n)
		return n * m;
	max = ~0ull / n;
	asm volatile("" : "+r"(max));	/* else clang turns the test into a 128-bit multiply BPF has not */
	return m > max ? ~0ull : n * m;
}

/* One entry program for every allocator entry point: the tracer's cookie says how to read the arguments, and where
 * they are when the probe sits past a prologue that moved one (mimalloc's malloc copies its size to rsi). */
SEC("uprobe")
int BPF_KPROBE(alloc_enter, __u64 a0, __u64 a1, __u64 a2)
{
	__u64 cookie;
	__u32 regs;
	struct mt_args_val v = {};

	cookie = bpf_get_attach_cookie(ctx);
	if (paused && !control__passes(cookie)) {	/* recording off: allocations stop here (control.bpf.h) */
		if (MT_COOKIE_ARGS(cookie) == MT_ARGS_THROW)
			call__thrown(ctx);	/* a call that began before the stop: its return address */
		return 0;
	}
	regs = MT_COOKIE_REGS(cookie);
	if (regs) {
		__u64 r[16];

		regs__by_nr(ctx, r);
		a0 = r[regs & 15];
		a1 = r[(regs >> 4) & 15];
		a2 = r[(regs >> 8) & 15];
	}

	switch (MT_COOKIE_ARGS(cookie)) {
	case MT_ARGS_SIZE: v.size = a0; break;
	case MT_ARGS_NMEMB_SIZE: v.size = size__mul(a0, a1); break;
	case MT_ARGS_PTR_SIZE: v.old = a0; v.size = a1; break;
	case MT_ARGS_PTR_NMEMB_SIZE: v.old = a0; v.size = size__mul(a1, a2); break;
	case MT_ARGS_ALIGN_SIZE: v.align = a0; v.size = a1; break;
	case MT_ARGS_SIZE_ALIGN: v.size = a0; v.align = a1; break;
	case MT_ARGS_PTR_SIZE_ALIGN: v.old = a0; v.size = a1; v.align = a2; break;
	case MT_ARGS_MEMPTR_ALIGN_SIZE: v.memptr = a0; v.align = a1; v.size = a2; break;
	case MT_ARGS_FREE: return free__enter(ctx, cookie, a0, 0);
	case MT_ARGS_FREE_SIZED: return free__enter(ctx, cookie, a0, a1);
	case MT_ARGS_THROW: return call__thrown(ctx);
	default: return 0;
	}
	if (paused && !v.old)	/* a realloc of NULL allocates only */
		return 0;
	if (MT_COOKIE_MARK(cookie))
		return mark__set(ctx, cookie, v.size);
	return call__enter(ctx, cookie, &v);
}

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

/*
 * (dev, ino) -> a C++ runtime's operator new code as file offsets (struct mt_callers): the tracer writes one when it
 * first tells a process where that code is (tracer/callers.c). BPF places it in a process that maps the file
 * later, which no tracer may see: an exec'd image keeps its process's links, and its mappings ask for nothing.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_CALLERS_MAX * 4);
	__type(key, struct mt_file_key);
	__type(value, struct mt_callers);
} caller_files SEC(".maps");

/* Zero-filled template for new callers entries, never written (too big for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mt_callers);
} callers_zero SEC(".maps");

static __always_inline bool callers__has(const struct mt_callers *pc, __u64 lo)
{
	__u32 j;

	for (j = 0; j < MT_CALLERS_MAX; j++) {
		if (j >= pc->n)
			return false;
		if (pc->c[j].lo == lo)
			return true;
	}
	return false;
}

/* The file's ranges that the mapping v holds, at their addresses there, added to the process's. */
static __always_inline void callers__place(struct mt_callers *pc, const struct mt_callers *fc, const struct mt_vma *v)
{
	__u64 lo, hi;
	__u32 i, n;

	for (i = 0; i < MT_CALLERS_MAX; i++) {
		if (i >= fc->n)
			return;
		lo = fc->c[i].lo;
		hi = fc->c[i].hi;
		if (lo < v->pgoff || hi > v->pgoff + (v->end - v->start) || callers__has(pc, v->start + lo - v->pgoff))
			continue;
		n = pc->n;
		if (n >= MT_CALLERS_MAX)
			return;
		pc->c[n] = fc->c[i];
		pc->c[n].lo = v->start + lo - v->pgoff;
		pc->c[n].hi = v->start + hi - v->pgoff;
		pc->n = n + 1;
	}
}

/* An executable mapping of a C++ runtime the tracer has told of already: its operator new, placed. */
static __always_inline void callers__on_map(struct task_struct *task, __u64 addr)
{
	struct mt_callers *fc, *pc, *zero;
	struct mt_file_key key;
	struct mt_vma v = {};
	__u32 tgid, z = 0;

	if (!callers_gen || bpf_find_vma(task, addr, vma__read, &v, 0) || !v.has_file)
		return;		/* no runtime told of yet; or the mapping cannot be read: new counts as malloc */
	tgid = current__tgid_of(task);
	key = (struct mt_file_key){ .dev = v.dev, .ino = v.ino };
	fc = bpf_map_lookup_elem(&caller_files, &key);
	if (!fc)
		return;
	pc = bpf_map_lookup_elem(&callers, &tgid);
	if (!pc) {
		zero = bpf_map_lookup_elem(&callers_zero, &z);
		if (!zero || bpf_map_update_elem(&callers, &tgid, zero, BPF_NOEXIST))
			return;
		pc = bpf_map_lookup_elem(&callers, &tgid);
		if (!pc)
			return;
	}
	callers__place(pc, fc, &v);
	__sync_fetch_and_add(&callers_gen, 1);	/* threads that found none look again */
}

/* A file mapped executable (mmap, or mprotect adding PROT_EXEC) may hold an allocator to attach to. */
static __always_inline void sys__watch(__u8 kind, const struct mt_sysargs *a, long ret)
{
	struct task_struct *task = bpf_get_current_task_btf();

	if (kind == MT_SYS_MMAP && ret >= 0 && (a->a[2] & MT_PROT_EXEC) && !(a->a[3] & MT_MAP_ANONYMOUS)) {
		watch__addr(task, ret, MT_ATTACH_MMAP, true, NULL);
		callers__on_map(task, ret);
	} else if (kind == SYS_WATCH_ONLY && ret == 0 && (a->a[2] & MT_PROT_EXEC)) {
		watch__addr(task, a->a[0], MT_ATTACH_MMAP, true, NULL);
		callers__on_map(task, a->a[0]);
	}
}

static __always_inline int sys__exit(long id, long ret, struct pt_regs *regs)
{
	__u8 kind = sys__kind(id);
	struct mt_sysargs a;
	struct mt_syscall *e;

	if (kind == SYS_CONTROL)
		return control__write(regs, ret);
	if (!kind || !proc__active(current__ids() >> 32))
		return 0;
	sys__args(regs, &a);
	sys__watch(kind, &a, ret);
	e = kind == SYS_WATCH_ONLY ? NULL : rec__reserve(sizeof(*e), MT_REC_SYSCALL);
	if (e) {
		sys__fill(e, kind, &a, ret);
		__builtin_memset(e->_pad, 0, sizeof(e->_pad));
		rec__submit(e, sizeof(*e));
	}
	return 0;
}

/* Every syscall of the machine passes here (BTF, no tracefs needed), the uretprobe trampoline's too: the number
 * is read straight from the trusted regs, without a helper call, so that the others leave at once. */
SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
	return sys__exit(regs->orig_ax, ret, regs);
}

/* Per-syscall tracepoints (tracefs): only the six syscalls that matter trap, for untracked processes too. */
#define SYS_TP(name, nr)									\
	SEC("tracepoint/syscalls/sys_exit_" #name)						\
	int sys_exit_##name(struct mt_tp_sys_exit *ctx)						\
	{											\
		struct task_struct *task = bpf_get_current_task_btf();				\
												\
		return sys__exit(nr, ctx->ret, (struct pt_regs *)bpf_task_pt_regs(task));	\
	}

SYS_TP(mmap, NR_MMAP)
SYS_TP(munmap, NR_MUNMAP)
SYS_TP(brk, NR_BRK)
SYS_TP(mremap, NR_MREMAP)
SYS_TP(mprotect, NR_MPROTECT)
SYS_TP(write, NR_WRITE)

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

	if (bpf_core_read(&up, sizeof(up), &pid->numbers[level]) || BPF_CORE_READ(up.ns, ns.inum) != pidns_ino)
		return 1;
	pidns_level = level;
	return 0;
}

/* A fork child runs its parent's image: the same operator new, at the same addresses. */
static __always_inline void callers__inherit(__u32 parent, __u32 child)
{
	struct mt_callers *cs = bpf_map_lookup_elem(&callers, &parent);

	if (cs)
		bpf_map_update_elem(&callers, &child, cs, BPF_ANY);
}

/* Children join the tree here, before they first run; threads share their process's entry. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = task__tgid(parent);
	__u32 ctgid = task__tgid(child);
	__u32 active = MT_PROC_ACTIVE;
	struct mt_fork *e;

	if (!proc__lookup(ptgid)) {
		call__release(child, child->pid);	/* a slot naming a new task was left by a dead one */
		return 0;
	}
	call__claim(child);
	if (ptgid == ctgid)
		return 0;
	if (bpf_map_update_elem(&tracked, &ctgid, &active, BPF_ANY))
		drop__count(MT_DROP_TRACKED);
	ranges__inherit(ptgid, ctgid);
	callers__inherit(ptgid, ctgid);
	e = rec__reserve(sizeof(*e), MT_REC_FORK);
	if (!e)
		return 0;
	e->hdr.pid = ptgid;
	e->hdr.tid = task__tid(parent);
	e->child = ctgid;
	e->flags = BPF_CORE_READ(child, mm) == BPF_CORE_READ(parent, mm) ? MT_FORK_SHARED_VM : 0;
	fork__submit(e, child);
	return 0;
}

/* The new image: its executable (at start_code) and its interpreter (where it will start) are held at the
 * tracer's exec-event stop, which comes right after this tracepoint. */
static __always_inline void exec__watch(struct task_struct *p)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(p);
	__u64 seen = 0;

	watch__addr(p, BPF_CORE_READ(p, mm, start_code), MT_ATTACH_EXEC, false, &seen);
	watch__addr(p, BPF_CORE_READ(regs, ip), MT_ATTACH_INTERP, false, &seen);
	callers__on_map(p, BPF_CORE_READ(p, mm, start_code));	/* a C++ runtime linked into the executable */
}

/* old_pid is the kernel's: memtrack's namespace has the exec'ing thread's tid, unless that was not the leader's. The
 * old tid of a thread that took its leader's is gone from every namespace by now: 0 then (docs/FORMAT.md). */
static __always_inline __u32 exec__old_tid(struct task_struct *p, pid_t old_pid, __u32 tid)
{
	if (!pidns_ino)
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
	if (old_pid != p->pid)
		call__release(p, old_pid);	/* a thread that execs takes its leader's tid */
	call__claim(p);
	e = rec__reserve(sizeof(*e), MT_REC_EXEC);
	if (e) {
		e->old_pid = exec__old_tid(p, old_pid, tid);
		e->_pad = 0;
		bpf_get_current_comm(e->comm, sizeof(e->comm));
		if (bpf_probe_read_kernel_str(e->path, sizeof(e->path), BPF_CORE_READ(bprm, filename)) < 0)
			e->path[0] = 0;
		rec__submit(e, sizeof(*e));
	}
	ranges__reset(tgid);
	bpf_map_delete_elem(&callers, &tgid);	/* the new image's files are probed, and told, anew */
	exec__watch(p);
	return 0;
}

#define MT_SIGNAL_GROUP_EXIT 0x4	/* the kernel's SIGNAL_GROUP_EXIT (a #define, so not in BTF) */

/* Runs on the exiting thread after its last call: its record takes a number above every one of its allocations. */
static __always_inline void thread_exit__emit(struct task_struct *p, __u32 tgid, __u32 tid)
{
	struct mt_thread_exit *t;

	if (!proc__lookup(tgid))
		return;
	t = rec__reserve_as(sizeof(*t), MT_REC_THREAD_EXIT, tgid, tid);
	if (!t)
		return;
	t->flags = BPF_CORE_READ(p, signal, flags) & MT_SIGNAL_GROUP_EXIT ? MT_THREAD_EXIT_GROUP : 0;
	t->_pad = 0;
	rec__submit(t, sizeof(*t));
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(process_exit, struct task_struct *p, bool group_dead)
{
	__u32 tgid, tid;

	current__ids_of(p, &tgid, &tid);
	thread_exit__emit(p, tgid, tid);
	call__release(p, p->pid);
	if (group_dead) {
		rss__exit(p, tgid, tid);
		foreign__exit(p, tgid);
		bpf_map_delete_elem(&tracked, &tgid);
		bpf_map_delete_elem(&exec_ranges, &tgid);
		bpf_map_delete_elem(&callers, &tgid);
	}
	return 0;
}
