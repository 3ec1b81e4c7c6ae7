/* SPDX-License-Identifier: GPL-2.0-only */
/* unwind.bpf.h — BPF-only: the in-kernel unwinder, a stack walked frame by frame with the modules' CFI tables. */
#ifndef MEMTRACK_UNWIND_BPF_H
#define MEMTRACK_UNWIND_BPF_H

/*
 * Included by stacks.bpf.h, after exec_ranges and ret__repair. The tracer fills the three tables when it first looks
 * at a file (tracer/kunwind.c), while the mapping thread is held: a module's rows are in before its code runs.
 * docs/STACKS.md, "The in-kernel unwinder", says what a row means and why a walk stops.
 */

struct mt_umod_key {
	__u64 dev;
	__u64 ino;
};

/* (dev, ino) -> module id and state: the tracer adds one per file after its rows and pages; BPF only reads. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MT_UMODULES_MAX);
	__type(key, struct mt_umod_key);
	__type(value, struct mt_umodule);
} unwind_modules SEC(".maps");

/* (module id, file offset page) -> its run of rows: the tracer writes them with the module's rows. Not preallocated:
 * BPF never adds one, and 2^18 preallocated entries cost most of --stacks' map making at start-up. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_UPAGES_MAX);
	__type(key, struct mt_upage_key);
	__type(value, struct mt_upage);
} unwind_pages SEC(".maps");

/* Every module's rows, one run per module sorted by pc: the tracer appends a module's run before its pages. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MT_UROWS_MAX);
	__type(key, __u32);
	__type(value, struct mt_urow);
} unwind_rows SEC(".maps");

/* A walk in progress: scalars only, so that the global functions below may take it. */
struct mt_uwalk {
	__u64 pc;		/* the return address into the frame to unwind next */
	__u64 sp;		/* that frame's rsp after the return: the CFA of the frame below */
	__u64 bp;		/* that frame's rbp */
	__u64 tramp;		/* the uretprobe trampoline's address, 0 if none */
	__u64 hash;
	__u64 stop_pc;
	__u64 fp_pc;
	__u32 n;		/* return addresses so far */
	__u32 stop;		/* enum mt_kchain_stop, 0 while going on */
	__u32 fp_frames;
	__u32 tgid;
	__u32 withheld;		/* a privileged process's: every address kept must be a code address */
	__u32 _pad;
};

/* The row of module for file offset off, by its page then a binary search; 0, or -1 when there is none. Global:
 * verified once. */
__noinline int uw__row(__u32 module, __u32 off, struct mt_urow *row)
{
	struct mt_upage_key k = { .module = module, .page = off >> MT_UPAGE_SHIFT };
	struct mt_upage *pg = bpf_map_lookup_elem(&unwind_pages, &k);
	struct mt_urow *r;
	__u32 lo, hi, mid, i;

	if (!row || !pg)
		return -1;
	lo = pg->first;
	hi = pg->first + pg->count;
	for (i = 0; i < MT_USEARCH_STEPS && hi - lo > 1; i++) {
		mid = lo + (hi - lo) / 2;
		r = bpf_map_lookup_elem(&unwind_rows, &mid);
		if (!r)
			return -1;
		if (r->pc <= off)
			lo = mid;
		else
			hi = mid;
	}
	r = bpf_map_lookup_elem(&unwind_rows, &lo);
	if (!r || r->pc > off)
		return -1;
	*row = *r;
	return 0;
}

static __always_inline int uw__stop(struct mt_uwalk *w, __u32 why, __u64 pc)
{
	w->stop = why;
	w->stop_pc = pc;
	return 1;
}

/* The caller's frame from this frame's CFA: the return address below it, rbp where the row saved it. */
static __always_inline int uw__frame(struct mt_uwalk *w, __u64 cfa, __s16 bp_off)
{
	__u64 ra, bp;

	if (cfa <= w->sp || bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa - 8)))
		return uw__stop(w, MT_KSTOP_READ, w->pc);
	if (bp_off) {
		if (bpf_probe_read_user(&bp, sizeof(bp), (void *)(cfa + bp_off)))
			return uw__stop(w, MT_KSTOP_READ, w->pc);
		w->bp = bp;
	}
	ra = ret__repair(ra, cfa - 8, w->tramp);
	w->sp = cfa;
	w->pc = ra;
	return ra ? 0 : uw__stop(w, MT_KSTOP_END, 0);
}

/* No CFI for this frame: its rbp, if it is a frame pointer, gives the caller ([rbp] its rbp, [rbp + 8] the return
 * address); if it is not, the walk stops for why. */
static __always_inline int uw__fp(struct mt_uwalk *w, __u32 why)
{
	__u64 bp = w->bp, saved;

	if (!bp || bp < w->sp || (bp & 7) || bpf_probe_read_user(&saved, sizeof(saved), (void *)bp))
		return uw__stop(w, why, w->pc);
	if (!w->fp_pc)
		w->fp_pc = w->pc;
	w->fp_frames++;
	w->bp = saved;
	w->sp = bp + 8;		/* the CFA is bp + 16: uw__frame wants it above sp */
	return uw__frame(w, bp + 16, 0);
}

/* Global, so that the verifier looks at its loop once. */
__noinline int ranges__find(const struct mt_exec_ranges *r, __u64 addr)
{
	__u32 i;

	if (!r)
		return -1;
	for (i = 0; i < MT_EXEC_RANGES; i++) {
		if (i >= r->n)
			return -1;
		if (addr >= r->lo[i] && addr < r->hi[i])
			return i;
	}
	return -1;
}

/* One frame: w->pc's module, its row, the caller's pc, sp and bp. 0 to go on, 1 when the walk stopped. Global: the
 * verifier looks at it once, not once per frame. */
__noinline int uw__step(struct mt_uwalk *w)
{
	struct mt_exec_ranges *r;
	struct mt_umod_key key;
	struct mt_umodule *m;
	struct mt_urow row;
	__u64 pc, off;
	int i;

	if (!w)
		return 1;
	pc = w->pc - 1;		/* a return address: the call is before it */
	r = bpf_map_lookup_elem(&exec_ranges, &w->tgid);
	i = ranges__find(r, pc);
	if (!r || i < 0 || i >= MT_EXEC_RANGES)
		return uw__fp(w, MT_KSTOP_NO_MAPPING);
	key.dev = r->dev[i];
	key.ino = r->ino[i];
	off = pc - r->lo[i] + r->pgoff[i];
	m = bpf_map_lookup_elem(&unwind_modules, &key);
	if (!m)
		return uw__stop(w, MT_KSTOP_LOADING, w->pc);
	if (m->state != MT_UMOD_READY || off >> 32)
		return uw__fp(w, MT_KSTOP_NO_INFO);
	if (uw__row(m->id, off, &row) || row.cfa == MT_UROW_NONE)
		return uw__fp(w, MT_KSTOP_NO_INFO);
	if (row.cfa == MT_UROW_END)
		return uw__stop(w, MT_KSTOP_END, 0);
	return uw__frame(w, (row.cfa == MT_UROW_BP ? w->bp : w->sp) + row.cfa_off, row.bp_off);
}

/* The walk in progress, per CPU: a uprobe's program runs to its end on its CPU, and the walk's state off the BPF
 * stack leaves room for the frames of the calls below it. BPF's alone. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mt_uwalk);
} uw_scratch SEC(".maps");

/* A privileged process's address is kept only when it is code (stacks.bpf.h, privileged): a wrong row or a frame
 * pointer that is not one must not copy its data out. */
static __always_inline bool uw__code(struct mt_uwalk *w, __u64 addr)
{
	struct mt_exec_ranges *r = bpf_map_lookup_elem(&exec_ranges, &w->tgid);

	return ranges__find(r, addr) >= 0;
}

/* A bpf_loop callback: one frame, its return address hashed and kept in *data (ring memory) when not NULL. */
static long uw__loop(__u32 i, void *data)
{
	__u64 *out = *(__u64 **)data;
	struct mt_uwalk *w;
	__u32 zero = 0;

	w = bpf_map_lookup_elem(&uw_scratch, &zero);
	if (!w || uw__step(w))
		return 1;
	if (w->withheld && !uw__code(w, w->pc))
		return uw__stop(w, MT_KSTOP_NO_MAPPING, 0);
	w->hash = fnv__mix(w->hash, w->pc);
	if (out)
		out[w->n & MT_KCHAIN_MAX] = w->pc;	/* n < MT_KCHAIN_MAX; the mask is for the verifier */
	w->n++;
	if (w->n >= MT_KCHAIN_MAX)
		return uw__stop(w, MT_KSTOP_DEPTH, 0);
	return 0;
}

/*
 * The call path at an allocator's entry, by CFI: [sp] is the return address into the allocator's caller (the
 * allocator's frame is not set up yet), then frame by frame; out (ring memory, MT_KCHAIN_MAX + 1 slots) gets the
 * return addresses when not NULL. The hash mixes the return addresses only. NULL when the scratch is missing.
 */
static __always_inline struct mt_uwalk *uw__walk(struct pt_regs *ctx, __u64 tramp, bool withheld, __u64 *out)
{
	__u32 zero = 0;
	struct mt_uwalk *w = bpf_map_lookup_elem(&uw_scratch, &zero);
	__u64 ret = 0;

	if (!w)
		return NULL;
	__builtin_memset(w, 0, sizeof(*w));
	w->sp = PT_REGS_SP(ctx);
	w->bp = ctx->bp;
	w->tramp = tramp;
	w->tgid = current__ids() >> 32;
	w->hash = FNV_OFFSET;
	w->withheld = withheld;
	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)w->sp)) {
		uw__stop(w, MT_KSTOP_READ, 0);
	} else if (withheld && !uw__code(w, ret__repair(ret, w->sp, tramp))) {
		uw__stop(w, MT_KSTOP_NO_MAPPING, 0);
	} else {
		ret = ret__repair(ret, w->sp, tramp);
		w->pc = ret;
		w->sp += 8;
		w->hash = fnv__mix(w->hash, ret);
		if (out)
			out[0] = ret;
		w->n = 1;
		bpf_loop(MT_KCHAIN_MAX, uw__loop, &out, 0);
	}
	if (withheld)
		w->hash = fnv__mix(w->hash, MT_WITHHELD_SALT);
	w->hash &= MT_STACK_HASH_MASK;
	if (!w->hash)
		w->hash = 1;
	return w;
}

#endif /* MEMTRACK_UNWIND_BPF_H */
