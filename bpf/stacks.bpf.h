/* SPDX-License-Identifier: GPL-2.0-only */
/* stacks.bpf.h — BPF-only: raw user stack capture at allocator entries, deduplicated in the kernel by call path. */
#ifndef MEMTRACK_STACKS_BPF_H
#define MEMTRACK_STACKS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "core.bpf.h"
#include "maps.bpf.h"

#define MT_STACKS_SEEN_MAX (1u << 22)
#define MT_RI_MAX 8			/* pending uretprobes looked at to repair a trampoline address */
#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull
#define MT_WITHHELD_SALT 0x7072697673746b00ull	/* mixed into a privileged process's path hashes: never shared */
#define STACK_REGS_MAPPING ((unsigned long)-2)	/* orig_ax of a mapping call's register copy (a trap's is -1) */

/* Set by the tracer before load: raw stack bytes per definition (--stack-bytes); 0 without --stacks (no stack code
 * runs). */
const volatile __u32 cfg_stack_bytes = 0;

/* Set by the tracer before load (--stack-sample): a definition whose kernel chain is whole keeps its raw bytes and
 * FP chain when it is among the first MT_STACK_SAMPLE_FIRST of the recording or one in cfg_stack_sample after them;
 * the others are brief (MT_STACK_F_BRIEF). 1: every definition keeps them. */
const volatile __u32 cfg_stack_sample = MT_STACK_SAMPLE_DEFAULT;

/* Definitions emitted so far: BPF numbers them for the sample (atomically: any CPU may define). */
__u64 live_stack_defs = 0;

/*
 * Set by the tracer before load, with --stacks when the recording user (sudo's, --user's, else memtrack's own) is
 * not root: the artifact is that user's, so a process whose credentials are not theirs (a setuid, setgid or
 * file-capability exec) gets no raw stack bytes or registers in it. cfg_owner_uid and cfg_owner_gid are that user's.
 */
const volatile bool cfg_withhold = false;
const volatile __u32 cfg_owner_uid = 0;
const volatile __u32 cfg_owner_gid = 0;

/* tgid -> 1: a privileged process, whose stacks are withheld. Set by BPF at exec (cleared when the new image's
 * credentials are the user's), copied at fork, dropped at exit; the tracer sets the one record --pid attached to
 * when it was privileged then. Not preallocated, as exec_ranges. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_TRACKED_MAX);
	__type(key, __u32);
	__type(value, __u8);
} privileged SEC(".maps");

/* Credentials that are not the recording user's: another uid or gid of any kind, or any capability. */
static __always_inline bool cred__foreign(const struct cred *c)
{
	return BPF_CORE_READ(c, uid.val) != cfg_owner_uid || BPF_CORE_READ(c, euid.val) != cfg_owner_uid ||
	       BPF_CORE_READ(c, suid.val) != cfg_owner_uid || BPF_CORE_READ(c, fsuid.val) != cfg_owner_uid ||
	       BPF_CORE_READ(c, gid.val) != cfg_owner_gid || BPF_CORE_READ(c, egid.val) != cfg_owner_gid ||
	       BPF_CORE_READ(c, sgid.val) != cfg_owner_gid || BPF_CORE_READ(c, fsgid.val) != cfg_owner_gid ||
	       BPF_CORE_READ(c, cap_permitted.val) || BPF_CORE_READ(c, cap_effective.val) ||
	       BPF_CORE_READ(c, cap_ambient.val);
}

/* At exec, with the new image's credentials: the old image's memory is gone, so the flag is decided anew. */
static __always_inline void privileged__on_exec(struct task_struct *p, __u32 tgid)
{
	__u8 one = 1;

	if (!cfg_withhold || !cfg_stack_bytes)
		return;
	if (cred__foreign(BPF_CORE_READ(p, cred)))
		bpf_map_update_elem(&privileged, &tgid, &one, BPF_ANY);
	else
		bpf_map_delete_elem(&privileged, &tgid);
}

/* A child holds its parent's memory, secrets included, until it execs. */
static __always_inline void privileged__inherit(__u32 parent, __u32 child)
{
	__u8 one = 1;

	if (cfg_withhold && cfg_stack_bytes && bpf_map_lookup_elem(&privileged, &parent))
		bpf_map_update_elem(&privileged, &child, &one, BPF_ANY);
}

/* hash -> 1: call paths whose definition BPF emitted, added at the first allocation on the path (the one whose
 * insertion wins defines it: exactly once). Not preallocated: an entry costs kernel memory only once a path is seen,
 * so 10^6 paths fit without a start-up cost. When full, a new path is defined at each allocation (readers accept a
 * definition again). The tracer sizes it to 1 before load without --stacks. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_STACKS_SEEN_MAX);
	__type(key, __u64);
	__type(value, __u8);
} stacks_seen SEC(".maps");

/* tgid -> its executable file mappings: BPF's watcher adds them at each mapping (with --stacks; the tracer, those a
 * process had when record --pid attached to it), copies them at
 * fork, resets them at exec and drops them at exit. Not preallocated: 2568 bytes times every possible process would cost start-up time and memory for nothing.
 * The tracer sizes it to 1 before load without --stacks. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_TRACKED_MAX);
	__type(key, __u32);
	__type(value, struct mt_exec_ranges);
} exec_ranges SEC(".maps");

/* Zero-filled template for new exec_ranges entries, never written (a 2568-byte struct does not fit on the BPF
 * stack). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mt_exec_ranges);
} exec_ranges_zero SEC(".maps");

/* Where a new mapping [lo, hi) goes: over the entry it overlaps (a mapping replaced at the same place), else at the
 * end; -1 when full. Global, so the verifier looks at its loop once. */
__noinline int ranges__slot(const struct mt_exec_ranges *r, __u64 lo, __u64 hi)
{
	__u32 i;

	if (!r)
		return -1;
	for (i = 0; i < MT_EXEC_RANGES; i++) {
		if (i >= r->n)
			return i;
		if (lo < r->hi[i] && hi > r->lo[i])
			return i;
	}
	return -1;
}

static __always_inline void ranges__add(__u32 tgid, __u64 lo, __u64 hi, __u64 pgoff, __u64 dev, __u64 ino)
{
	struct mt_exec_ranges *r;
	__u32 zero = 0;
	int i;

	if (!cfg_stack_bytes)
		return;
	r = bpf_map_lookup_elem(&exec_ranges_zero, &zero);
	r = r ? map__lookup_or_try_init(&exec_ranges, &tgid, r) : NULL;
	if (!r) {
		drop__count(MT_DROP_TRACKED);	/* no room for the process's ranges: its scans find no code */
		return;
	}
	i = ranges__slot(r, lo, hi);
	if (i < 0 || i >= MT_EXEC_RANGES)
		return;
	r->lo[i] = lo;
	r->hi[i] = hi;
	r->pgoff[i] = pgoff;
	r->dev[i] = dev;
	r->ino[i] = ino;
	if (i >= r->n)
		r->n = i + 1;
}

static __always_inline void ranges__reset(__u32 tgid)
{
	struct mt_exec_ranges *r = bpf_map_lookup_elem(&exec_ranges, &tgid);

	if (r)
		r->n = 0;
}

static __always_inline void ranges__inherit(__u32 parent, __u32 child)
{
	struct mt_exec_ranges *r;

	if (!cfg_stack_bytes)
		return;
	r = bpf_map_lookup_elem(&exec_ranges, &parent);
	if (r && bpf_map_update_elem(&exec_ranges, &child, r, BPF_ANY))
		drop__count(MT_DROP_TRACKED);
}

/* The process-tree hooks (tree.bpf.h): a fork child has its parent's mappings, an exec none, an exit ends them. */
static __always_inline void stacks__on_fork(__u32 parent, __u32 child)
{
	ranges__inherit(parent, child);
	privileged__inherit(parent, child);
}

static __always_inline void stacks__on_exec(struct task_struct *p, __u32 tgid)
{
	ranges__reset(tgid);
	privileged__on_exec(p, tgid);
}

static __always_inline void stacks__on_exit(__u32 tgid)
{
	bpf_map_delete_elem(&exec_ranges, &tgid);
	bpf_map_delete_elem(&privileged, &tgid);
}

static __always_inline __u64 fnv__mix(__u64 h, __u64 v)
{
	int i;

	for (i = 0; i < 8; i++) {
		h ^= (v >> (i * 8)) & 0xff;
		h *= FNV_PRIME;
	}
	return h;
}

/* The return address a pending return instance saved from this stack slot, 0 if none did. Global, so the verifier
 * looks at its loop once, not at every place the chain walk is verified from. */
__noinline __u64 ret__saved(__u64 slot)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct return_instance *ri = BPF_CORE_READ(task, utask, return_instances);
	int i;

	for (i = 0; i < MT_RI_MAX && ri; i++) {
		if (BPF_CORE_READ(ri, stack) == slot)
			return BPF_CORE_READ(ri, orig_ret_vaddr);
		ri = BPF_CORE_READ(ri, next);
	}
	return 0;
}

/* A return address that is the uretprobe trampoline (a probed call is pending below) is put back from the
 * pending return instance that replaced it, found by the stack slot it was written to. */
static __always_inline __u64 ret__repair(__u64 ret, __u64 slot, __u64 tramp)
{
	__u64 saved;

	if (!tramp || ret != tramp)
		return ret;
	saved = ret__saved(slot);
	return saved ? saved : ret;
}

#include "unwind.bpf.h"

/* The frame-pointer chain, kept in each definition beside the CFI chain for check-stacks. */
struct mt_walk {
	__u64 tramp;
	__u64 last;		/* lowest stack address not yet accounted for by the chain */
	struct mt_exec_ranges *code;	/* a privileged process's code ranges (NULL: none known) */
	__u32 n;
	bool broken;		/* the chain ended on a frame without a frame pointer, not at its end */
	bool withheld;		/* a privileged process's: only code addresses are read out of its stack */
};

/* The walk in progress, the context of its bpf_loop callback. */
struct mt_chain {
	struct mt_walk w;
	__u64 *out;		/* the definition's chain (ring memory), NULL when only hashing */
	__u64 sp, bp;
};

/* A privileged process's chain holds code addresses only: without frame pointers bp may point at its secrets. */
static __always_inline bool chain__keeps(struct mt_walk *w, __u64 ret)
{
	return !w->withheld || ranges__find(w->code, ret) >= 0;
}

/* One frame: [bp] = the next bp, [bp + 8] = a return address. A bpf_loop callback: verified once, not per frame. */
static long chain__frame(__u32 i, void *data)
{
	struct mt_chain *c = data;
	__u64 frame[2], ret, bp = c->bp;

	if (bp < c->sp || (bp & 7) || bpf_probe_read_user(frame, sizeof(frame), (void *)bp)) {
		c->w.broken = bp != 0;
		return 1;
	}
	if (!frame[1])
		return 1;
	ret = ret__repair(frame[1], bp + 8, c->w.tramp);
	if (!chain__keeps(&c->w, ret)) {
		c->w.broken = true;
		return 1;
	}
	if (c->out)	/* i + 1 < MT_FP_MAX; the mask is for the verifier */
		c->out[(i + 1) & MT_FP_MAX] = ret;
	c->w.n = i + 2;
	c->w.last = bp + 16;
	if (frame[0] <= bp) {
		c->w.broken = frame[0] != 0;
		return 1;
	}
	c->bp = frame[0];
	return 0;
}

/* The frame-pointer chain at an allocator's entry: [sp] is the caller's return address (the allocator has not
 * pushed rbp yet), then the frames from bp. */
static __always_inline void walk__chain(struct pt_regs *ctx, __u64 *out, struct mt_walk *w)
{
	struct mt_chain c = { .w = *w, .out = out, .sp = PT_REGS_SP(ctx), .bp = ctx->bp };
	__u64 ret = 0;

	c.w.n = 0;
	c.w.broken = false;
	c.w.last = c.sp + 8;
	if (!bpf_probe_read_user(&ret, sizeof(ret), (void *)c.sp)) {
		ret = ret__repair(ret, c.sp, c.w.tramp);
		if (!chain__keeps(&c.w, ret)) {
			*w = c.w;
			return;
		}
		out[0] = ret;
		c.w.n = 1;
		bpf_loop(MT_FP_MAX - 1, chain__frame, &c, 0);
	}
	*w = c.w;
}

/* Raw bytes from sp upward, chunk by chunk (bpf_probe_read_user is all-or-nothing: chunks keep what was read); a
 * chunk that fails is retried in eighths, then the copy stops (and
 * says so in *short_read: the stack's end, or a page of it that was not resident). */
static __always_inline __u32 stack__copy(__u8 *raw, __u64 sp, bool *short_read)
{
	__u32 c, k, n = 0;

	*short_read = false;

	for (c = 0; c < MT_STACK_BYTES_MAX / MT_STACK_CHUNK; c++) {
		if (c * MT_STACK_CHUNK >= cfg_stack_bytes)
			break;
		if (!bpf_probe_read_user(raw + c * MT_STACK_CHUNK, MT_STACK_CHUNK, (void *)(sp + c * MT_STACK_CHUNK))) {
			n += MT_STACK_CHUNK;
			continue;
		}
		*short_read = true;
		for (k = 0; k < 8; k++) {
			if (bpf_probe_read_user(raw + c * MT_STACK_CHUNK + k * (MT_STACK_CHUNK / 8), MT_STACK_CHUNK / 8,
						(void *)(sp + c * MT_STACK_CHUNK + k * (MT_STACK_CHUNK / 8))))
				break;
			n += MT_STACK_CHUNK / 8;
		}
		break;
	}
	return n;
}

/* What BPF reserves for a definition: the record, the FP chain, the CFI chain (struct mt_kchain and one spare slot
 * for the verifier's mask), the raw bytes; all at fixed offsets. The tracer packs it to the documented layout. */
#define MT_STACK_RESERVE (sizeof(struct mt_stack) + MT_FP_MAX * 8 + sizeof(struct mt_kchain) + \
			  (MT_KCHAIN_MAX + 1) * 8 + cfg_stack_bytes)

static __always_inline void stack__regs(struct mt_stack *s, struct pt_regs *ctx)
{
	s->regs[MT_REG_IP] = ctx->ip;
	s->regs[MT_REG_SP] = ctx->sp;
	s->regs[MT_REG_BP] = ctx->bp;
	s->regs[MT_REG_BX] = ctx->bx;
	s->regs[MT_REG_R12] = ctx->r12;
	s->regs[MT_REG_R13] = ctx->r13;
	s->regs[MT_REG_R14] = ctx->r14;
	s->regs[MT_REG_R15] = ctx->r15;
}

/* A privileged process's definition: its chains of code addresses, ip (in the allocator), nothing of its data. */
static __always_inline void stack__withhold(struct mt_stack *s, struct pt_regs *ctx)
{
	__u32 i;

	for (i = 0; i < MT_REG__COUNT; i++)
		s->regs[i] = 0;
	s->regs[MT_REG_IP] = ctx->ip;
	s->nbytes = 0;
	s->truncated = MT_STACK_WITHHELD;
}

/* The kernel chain's header from the walk that made it. */
static __always_inline void kchain__fill(struct mt_kchain *k, const struct mt_uwalk *uw)
{
	k->stop_pc = uw->stop_pc;
	k->fp_pc = uw->fp_pc;
	k->n = uw->n;
	k->stop = uw->stop;
	k->_pad = 0;
	k->fp_frames = uw->fp_frames;
	k->_pad2 = 0;
}

/*
 * The first time a path is seen its definition goes out: registers, the FP chain, the CFI chain walked again into
 * the record (same registers, same memory: the same path), the raw stack for offline validation.
 */
static __always_inline void stack__define_full(struct pt_regs *ctx, struct mt_walk *wp)
{
	struct mt_stack *s = rec__reserve(MT_STACK_RESERVE, MT_REC_STACK);
	struct mt_walk w = *wp;
	struct mt_uwalk *uw;
	struct mt_kchain *k;
	bool short_read;
	__u32 nbytes;
	__u64 *fp;

	if (!s)
		return;
	fp = (__u64 *)(s + 1);
	k = (struct mt_kchain *)(fp + MT_FP_MAX);
	walk__chain(ctx, fp, &w);
	uw = uw__walk(ctx, w.tramp, w.withheld, (__u64 *)(k + 1));
	if (!uw) {
		bpf_ringbuf_discard(s, 0);
		return;
	}
	s->hash = uw->hash;
	stack__regs(s, ctx);
	s->nfp = w.n;
	kchain__fill(k, uw);
	s->flags = MT_STACK_F_KCHAIN;
	if (w.withheld) {
		stack__withhold(s, ctx);
		rec__submit(s, MT_STACK_RESERVE);
		return;
	}
	s->nbytes = stack__copy((__u8 *)(k + 1) + (MT_KCHAIN_MAX + 1) * 8, ctx->sp, &short_read);
	/* Read back from the ring: the verifier knows each copy path's count, and would check the rest once per path. */
	nbytes = *(volatile __u32 *)&s->nbytes;
	s->truncated = nbytes == cfg_stack_bytes || ctx->sp + nbytes < w.last ? MT_STACK_TRUNC_BYTES : 0;
	s->truncated |= w.n == MT_FP_MAX ? MT_STACK_TRUNC_FP : 0;
	s->truncated |= short_read ? MT_STACK_TRUNC_READ : 0;
	rec__submit(s, MT_STACK_RESERVE);
}

/* A brief definition: the record (ip alone of the registers), then the CFI chain, nothing else. */
#define MT_STACK_RESERVE_BRIEF (sizeof(struct mt_stack) + sizeof(struct mt_kchain) + (MT_KCHAIN_MAX + 1) * 8)

static __always_inline void stack__define_brief(struct pt_regs *ctx, __u64 tramp)
{
	struct mt_stack *s = rec__reserve(MT_STACK_RESERVE_BRIEF, MT_REC_STACK);
	struct mt_kchain *k;
	struct mt_uwalk *uw;

	if (!s)
		return;
	k = (struct mt_kchain *)(s + 1);
	uw = uw__walk(ctx, tramp, false, (__u64 *)(k + 1));
	if (!uw) {
		bpf_ringbuf_discard(s, 0);
		return;
	}
	s->hash = uw->hash;
	__builtin_memset(s->regs, 0, sizeof(s->regs));
	s->regs[MT_REG_IP] = ctx->ip;
	s->nbytes = 0;
	s->nfp = 0;
	s->truncated = 0;
	s->flags = MT_STACK_F_KCHAIN | MT_STACK_F_BRIEF;
	kchain__fill(k, uw);
	rec__submit(s, MT_STACK_RESERVE_BRIEF);
}

/*
 * Raw bytes are for offline validation (check-stacks) and for DWARF where the kernel's walk stopped early: a whole
 * chain keeps them only in the sample, so that a definition of a whole chain costs its return addresses alone.
 */
static __always_inline void stack__define(struct pt_regs *ctx, struct mt_walk *w, __u32 stop)
{
	/* a mapping call's definition takes the sample's rule without a number: the allocations' sample stays theirs */
	__u64 nth = ctx->orig_ax != STACK_REGS_MAPPING ? __sync_fetch_and_add(&live_stack_defs, 1) : live_stack_defs;

	if (stop != MT_KSTOP_END || w->withheld || cfg_stack_sample <= 1 || nth < MT_STACK_SAMPLE_FIRST ||
	    nth % cfg_stack_sample == 0)
		stack__define_full(ctx, w);
	else
		stack__define_brief(ctx, w->tramp);
}

/* The call path's hash, its definition emitted the first time. Global: verified once for any caller's state, not
 * once per path through the entry program that reaches it. ctx: a uprobe's registers, or a mapping call's copy of
 * them (orig_ax STACK_REGS_MAPPING: a scalar argument more would take the callers past 512 bytes of stack). */
__noinline __u64 stack__path(struct pt_regs *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct mt_walk w = { .tramp = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr) };
	struct mt_uwalk *uw;
	__u8 one = 1;
	__u64 hash;
	__u32 stop;

	if (!ctx)	/* a syscall's copy of the user registers (syscalls.bpf.h) is memory that may be NULL */
		return 0;
	if (cfg_withhold) {
		__u32 tgid = current__ids() >> 32;

		w.withheld = bpf_map_lookup_elem(&privileged, &tgid) != NULL;
		if (w.withheld)
			w.code = bpf_map_lookup_elem(&exec_ranges, &tgid);
	}
	uw = uw__walk(ctx, w.tramp, w.withheld, NULL);
	if (!uw)
		return 0;
	hash = uw->hash;
	stop = uw->stop;
	if (bpf_map_lookup_elem(&stacks_seen, &hash))
		return hash;
	/* Another CPU's insertion of the same path in between: that one defines it. */
	if (bpf_map_update_elem(&stacks_seen, &hash, &one, BPF_NOEXIST) == -MT_EEXIST)
		return hash;
	stack__define(ctx, &w, stop);
	return hash;
}

/* The call path's hash for an allocation record; 0 without --stacks, where the verifier drops the call. */
static __always_inline __u64 stack__capture(struct pt_regs *ctx)
{
	return cfg_stack_bytes ? stack__path(ctx) : 0;
}

/* The same for a mapping call's record (syscalls.bpf.h), from a copy of its registers: the copy is marked, so that
 * its definition leaves the allocations' sample as it is. */
static __always_inline __u64 stack__capture_map(struct pt_regs *copy)
{
	copy->orig_ax = STACK_REGS_MAPPING;
	return cfg_stack_bytes ? stack__path(copy) : 0;
}

#endif /* MEMTRACK_STACKS_BPF_H */
