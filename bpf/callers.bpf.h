/* SPDX-License-Identifier: GPL-2.0-only */
/* callers.bpf.h — BPF-only: which mallocs were a C++ operator new, told by the code they return into. */
#ifndef MEMTRACK_CALLERS_BPF_H
#define MEMTRACK_CALLERS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "core.bpf.h"
#include "maps.bpf.h"
#include "watch.bpf.h"

/*
 * tgid -> the code of its C++ runtimes' operator new, which is not probed: a malloc that returns there was a new.
 * The tracer writes one when it probes such a file for a process (tracer/callers.c), before the process goes on;
 * BPF places one at a later mapping of such a file (callers__on_map), copies it to a fork child, drops it at exec
 * and exit. Not preallocated: few processes have one.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_TRACKED_MAX);
	__type(key, __u32);
	__type(value, struct mt_callers);
} callers SEC(".maps");

/* Written by the tracer (it maps .bss) and by BPF, live: one more each time either writes a process's callers entry.
 * A thread whose process had none at a generation looks again only at the next: most processes have no C++ runtime,
 * and a map lookup at every malloc would cost more than this load (bench/README.md). */
__u64 live_callers_gen = 0;

/* What a thread's mallocs last found, kept in its call state (struct mt_call, calls.bpf.h): BPF's, at each return. */
struct mt_caller_hit {
	__u64 none_gen;		/* live_callers_gen + 1 when the process had no callers entry at that generation */
	__u64 lo, hi;		/* the caller range the thread's last malloc returned into, valid at gen */
	__u64 gen;
	__u8 func;
	__u8 allocator;
	__u8 _pad[6];
};

/* The range of cs that ip lies in, kept in the thread's hit; false when none. */
static __always_inline bool callers__find(struct mt_caller_hit *c, const struct mt_callers *cs, __u64 ip, __u64 gen)
{
	__u32 i;

	for (i = 0; i < MT_CALLERS_MAX; i++) {
		if (i >= cs->n)
			return false;
		if (ip >= cs->c[i].lo && ip < cs->c[i].hi) {
			c->lo = cs->c[i].lo;
			c->hi = cs->c[i].hi;
			c->func = cs->c[i].func;
			c->allocator = cs->c[i].allocator;
			c->gen = gen;
			return true;
		}
	}
	return false;
}

/* At a uretprobe, ip is the return address already: the outermost call's caller. A thread's mallocs mostly return
 * to one place (a C++ program's, into operator new): the range it last found is tried before the map. */
static __always_inline void caller__classify(struct mt_caller_hit *c, struct task_struct *task, __u64 ip,
					    __u8 *func, __u8 *allocator)
{
	__u64 gen = live_callers_gen + 1;
	struct mt_callers *cs;
	__u32 tgid;

	if (c->none_gen == gen)
		return;
	if (c->gen != gen || ip < c->lo || ip >= c->hi) {
		tgid = current__tgid_of(task);
		cs = bpf_map_lookup_elem(&callers, &tgid);
		if (!cs) {
			c->none_gen = gen;
			return;
		}
		if (!callers__find(c, cs, ip, gen))
			return;
	}
	*func = c->func;
	*allocator = c->allocator;
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

	if (!live_callers_gen || bpf_find_vma(task, addr, vma__read, &v, 0) || !v.has_file)
		return;		/* no runtime told of yet; or the mapping cannot be read: new counts as malloc */
	tgid = current__tgid_of(task);
	key = (struct mt_file_key){ .dev = v.dev, .ino = v.ino };
	fc = bpf_map_lookup_elem(&caller_files, &key);
	if (!fc)
		return;
	zero = bpf_map_lookup_elem(&callers_zero, &z);
	pc = zero ? map__lookup_or_try_init(&callers, &tgid, zero) : NULL;
	if (!pc) {
		drop__count(MT_DROP_TRACKED);	/* no room for the process's entry: its new counts as malloc */
		return;
	}
	callers__place(pc, fc, &v);
	__sync_fetch_and_add(&live_callers_gen, 1);	/* threads that found none look again */
}

/* A fork child runs its parent's image: the same operator new, at the same addresses. */
static __always_inline void callers__inherit(__u32 parent, __u32 child)
{
	struct mt_callers *cs = bpf_map_lookup_elem(&callers, &parent);

	if (cs && bpf_map_update_elem(&callers, &child, cs, BPF_ANY))
		drop__count(MT_DROP_TRACKED);
}

/* The process-tree hooks (tree.bpf.h): a fork child has its parent's runtimes; an exec's new image has its files
 * probed and told anew, but for a runtime linked into the executable, which BPF places at once; an exit ends them. */
static __always_inline void callers__on_fork(__u32 parent, __u32 child)
{
	callers__inherit(parent, child);
}

static __always_inline void callers__on_exec(struct task_struct *p, __u32 tgid)
{
	bpf_map_delete_elem(&callers, &tgid);
	callers__on_map(p, BPF_CORE_READ(p, mm, start_code));
}

static __always_inline void callers__on_exit(__u32 tgid)
{
	bpf_map_delete_elem(&callers, &tgid);
}

#endif /* MEMTRACK_CALLERS_BPF_H */
