/* SPDX-License-Identifier: GPL-2.0-only */
/* calls.bpf.h — BPF-only: the allocator call in flight on each thread, from alloc_enter to alloc_return. */
#ifndef MEMTRACK_CALLS_BPF_H
#define MEMTRACK_CALLS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "core.bpf.h"
#include "callers.bpf.h"
#include "pressure.bpf.h"
#include "control.bpf.h"
#include "stacks.bpf.h"
#include "watch.bpf.h"

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
	__u64 ret;		/* a THROWS call's return address, read at its entry (struct mt_ret_restore) */
	__u64 last_hit;		/* a DEDUP file's last hit on this thread, hashed (hit__repeats) */
	__u32 depth;		/* allocator entries not yet returned on this thread */
	__u8 func;		/* a release's when the call in flight is one (MT_COOKIE_INFLIGHT) */
	__u8 allocator;
	__u8 free_rank;		/* MT_COOKIE_RANK of the release at free_ptr */
	__u8 mark_func;
	__u8 mark_allocator;
	__u8 throws;		/* the call in flight may throw (MT_COOKIE_THROWS): ret is its return address */
	__u8 _pad[2];
	__u32 session;		/* task storage only: live_session when written, else the entry is a past run's */
	struct mt_caller_hit hit;	/* where its mallocs last returned into a C++ operator new (callers.bpf.h) */
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

/* bpf_loop's callback: slot i as a cold load makes it. */
static long slots__zero(__u64 i, void *ctx)
{
	__u32 key = i;
	struct mt_call *c = bpf_map_lookup_elem(&call_slots, &key);

	if (c)
		__builtin_memset(c, 0, sizeof(*c));
	return 0;
}

/* Run by the tracer (a test run) before a warm start reuses the programs (tracer/bpf_reset.c): every slot zeroed
 * in the kernel, where user space would copy in 5.5 MB of zeros (bench/README.md). */
SEC("syscall")
int slots_zero(void *ctx)
{
	bpf_loop(MT_CALL_SLOTS, slots__zero, NULL, 0);
	return 0;
}

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

/* This run's number among those of programs kept for a warm start (tracer/bpf_warm.c); 0 for a cold load. A task
 * keeps its `calls` entry across runs, which the tracer cannot enumerate to empty: an entry of another run's is
 * taken as new. */
__u32 live_session = 0;

/* A past run's entry made as a new one is. Global: verified once, not at each of call__state's inlined sites. */
__noinline int call__renew(struct mt_call *c)
{
	if (!c)
		return 0;
	__builtin_memset(c, 0, sizeof(*c));
	c->session = live_session;
	return 0;
}

static __always_inline struct mt_call *call__state(struct task_struct *task, __u64 flags)
{
	struct mt_call *c = call__slot(task->pid);

	if (c && c->owner == (__u64)task)
		return c;
	c = bpf_task_storage_get(&calls, task, 0, flags);
	if (c && c->session != live_session)
		call__renew(c);
	return c;
}

static __always_inline void call__reset(struct mt_call *c)
{
	c->depth = 0;
	c->free_ptr = 0;
	c->free_sp = 0;
	c->mark_sp = 0;
	c->hit.none_gen = 0;
	c->hit.gen = 0;
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

/* slot -> an allocator file that has or had a shared link (struct mt_shared_file): the tracer sets it before it
 * makes the file's shared link; BPF reads it at each hit of a link whose cookie has the slot. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MT_SHARED_SLOTS);
	__type(key, __u32);
	__type(value, struct mt_shared_file);
} shared_files SEC(".maps");

/* A shared link fires in every process that maps the file: its hits count for a process of the tree that has the
 * file bound (the tracer's proc_files entry), as its own links' would. */
static __always_inline bool shared__ours(struct task_struct *task, const struct mt_shared_file *f)
{
	__u32 tgid = current__tgid_of(task);
	struct mt_proc_file_key key = { .tgid = tgid, .dev = f->dev, .ino = f->ino };
	__u8 *state;

	if (!proc__active(tgid))	/* the neighbours stop here */
		return false;
	state = bpf_map_lookup_elem(&proc_files, &key);
	return state && *state == MT_PROC_FILE_LINKED;
}

/*
 * While a process has its own links and the file's shared link, the kernel runs both programs at each of its hits,
 * one after the other on the thread, with the same registers: the second sees the hit the first recorded. Two hits
 * in a row of one site with the same stack pointer and argument (or result) are otherwise a double free.
 */
static __always_inline bool hit__repeats(struct mt_call *c, __u64 ip, __u64 sp, __u64 arg)
{
	__u64 h = ip * 0x9e3779b97f4a7c15ull ^ (sp << 17 | sp >> 47) ^ arg * 0xc2b2ae3d27d4eb4full;

	if (c->last_hit == h)
		return true;
	c->last_hit = h;
	return false;
}

/* Whether a hit is passed over: a shared link's in a process it does not count for, or a hit seen already. */
static __always_inline bool link__skips(struct pt_regs *ctx, __u64 cookie, __u64 arg, __u64 create)
{
	__u32 slot = MT_COOKIE_SLOT(cookie);
	struct task_struct *task;
	struct mt_shared_file *f;
	struct mt_call *c;

	if (!slot)
		return false;
	f = bpf_map_lookup_elem(&shared_files, &slot);
	if (!f)
		return true;
	task = bpf_get_current_task_btf();
	if (MT_COOKIE_SHARED(cookie) && !shared__ours(task, f))
		return true;
	if (!(f->flags & MT_SHARED_DEDUP))
		return false;
	c = call__state(task, create);
	return c && hit__repeats(c, PT_REGS_IP(ctx), PT_REGS_SP(ctx), arg);
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
	if (!c->stack && !live_paused)
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

/* The outermost call's end, ret its result; ip its caller (the return probe's). A NULL result is recorded too
 * (addr 0: a failed call), realloc(p, 0)'s (p freed) among them. */
static __always_inline void call__complete(struct task_struct *task, struct mt_call *c, __u64 ret, __u64 ip)
{
	__u8 func, allocator;
	__u64 addr = 0;

	c->depth = 0;
	c->throws = 0;
	/* a release in flight: its record went out at its entry; live_paused: a call that began before the stop, unless
	 * it released a block (realloc's old one), which the tracer records as a free (control.bpf.h) */
	if (mt_func__is_free(c->func) || (live_paused && !c->old_addr))
		return;
	if (call__result(c, ret, &addr))
		return;
	func = c->func;
	allocator = c->allocator;
	if (func == MT_FN_MALLOC)
		caller__classify(&c->hit, task, ip, &func, &allocator);
	alloc__emit(task, func, allocator, addr, c->size, c->old_addr, c->align, c->stack);
}

static __always_inline int call__return(struct pt_regs *ctx, void *ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 cookie = bpf_get_attach_cookie(ctx);
	struct mt_call *c;

	if (MT_COOKIE_SHARED(cookie) && link__skips(ctx, cookie, PT_REGS_RC(ctx), 0))
		return 0;
	c = call__state(task, 0);
	if (!c || !c->depth)
		return 0;
	if (MT_COOKIE_SLOT(cookie) && !MT_COOKIE_SHARED(cookie) && link__skips(ctx, cookie, PT_REGS_RC(ctx), 0))
		return 0;
	/* The outermost call's return: its depth, or its frame when a nested call's return never came (an exception
	 * thrown through it: libstdc++'s aligned nothrow new catches the bad_alloc its aligned new throws). */
	if (--c->depth && PT_REGS_SP(ctx) != c->sp + 8)
		return 0;
	call__complete(task, c, (__u64)ret, PT_REGS_IP(ctx));
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(alloc_return, void *ret)
{
	call__return(ctx, ret);
	pressure__relieve(bpf_get_current_task_btf());
	return 0;
}

/* tid -> the return address the tracer puts back while BPF holds the thread (struct mt_ret_restore): BPF adds one
 * at a throw (ret__restore), the tracer takes it out at the thread's stop. */
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
	if (!live_paused)	/* a call that began before the stop: as call__complete */
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
static __always_inline int call__entry(struct pt_regs *ctx, __u64 a0, __u64 a1, __u64 a2)
{
	__u64 cookie;
	__u32 regs;
	struct mt_args_val v = {};

	cookie = bpf_get_attach_cookie(ctx);
	/* the arguments as the registers hold them: a probe past a prologue may have its pointer in any of these */
	if (link__skips(ctx, cookie, ctx->di ^ ctx->si * 0x165667b19e3779f9ull ^ ctx->dx * 0x27d4eb2f165667c5ull,
			BPF_LOCAL_STORAGE_GET_F_CREATE))
		return 0;
	if (live_paused && !control__passes(cookie)) {	/* recording off: allocations stop here (control.bpf.h) */
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
	if (live_paused && !v.old)	/* a realloc of NULL allocates only */
		return 0;
	if (MT_COOKIE_MARK(cookie))
		return mark__set(ctx, cookie, v.size);
	return call__enter(ctx, cookie, &v);
}

SEC("uprobe")
int BPF_KPROBE(alloc_enter, __u64 a0, __u64 a1, __u64 a2)
{
	call__entry(ctx, a0, a1, a2);
	pressure__relieve(bpf_get_current_task_btf());
	return 0;
}

/* The process-tree hooks (tree.bpf.h): a new thread (tracked) claims its slot before it runs, and one of an untracked
 * process frees a slot that names it, left by a dead task at its address; an exec claims anew (the exec'ing thread
 * takes its leader's tid); an exiting thread releases its slot. */
static __always_inline void calls__on_fork(struct task_struct *child, bool tracked)
{
	if (tracked)
		call__claim(child);
	else
		call__release(child, child->pid);
}

static __always_inline void calls__on_exec(struct task_struct *p, pid_t old_pid)
{
	if (old_pid != p->pid)
		call__release(p, old_pid);
	call__claim(p);
}

static __always_inline void calls__on_exit(struct task_struct *p)
{
	call__release(p, p->pid);
}

#endif /* MEMTRACK_CALLS_BPF_H */
