// SPDX-License-Identifier: GPL-2.0-only
/* test_report.c — the model's accounting on synthetic records, the reorder window, JSON, and golden report/dump. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <malloc.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmd_capture.h"
#include "helpers.h"
#include "artifact/artifact.h"
#include "cli/commands.h"
#include "common/json.h"
#include "common/strmap.h"
#include "common/text.h"
#include "common/u64map.h"
#include "model/model.h"
#include "model/pmap.h"
#include "cli/summary.h"
#include "report/leaks.h"
#include "report/metadata.h"
#include "report/report.h"
#include "report/timeline.h"

#ifndef MT_SOURCE_DIR
#define MT_SOURCE_DIR "."
#endif
#define GOLDEN_DIR MT_SOURCE_DIR "/tests/golden"

#define T0 1000000000ull		/* session start of the synthetic runs */
#define EXITED(code) ((code) << 8)	/* wait statuses */
#define KILLED(sig) (sig)

/* ---- synthetic records, into a model or into an artifact writer ---- */

struct sink {
	int (*put)(void *ctx, const void *rec, size_t size);
	void *ctx;
};

static int put_model(void *ctx, const void *rec, size_t size)
{
	(void)size;
	return mt_model__add(ctx, rec);
}

static int put_writer(void *ctx, const void *rec, size_t size)
{
	return mt_writer__append(ctx, rec, size);
}

static void hdr_init(struct mt_rec_hdr *h, uint16_t type, size_t size, uint64_t ts, uint32_t pid, uint32_t tid)
{
	h->ts_ns = ts;
	h->pid = pid;
	h->tid = tid;
	h->type = type;
	h->size = size;
}

static void put(struct sink *s, const void *rec, size_t size)
{
	assert_int_equal(s->put(s->ctx, rec, size), 0);
}

/* extra is old_addr for realloc/reallocarray, align for the aligned allocators. */
static void put_alloc_tid(struct sink *s, uint64_t ts, uint32_t pid, uint32_t tid, int func, uint64_t addr,
			  uint64_t size, uint64_t extra)
{
	struct mt_alloc a = { .addr = addr, .size = size, .func = func, .allocator = MT_ALLOCATOR_GLIBC };

	hdr_init(&a.hdr, MT_REC_ALLOC, sizeof(a), ts, pid, tid);
	if (func == MT_FN_REALLOC || func == MT_FN_REALLOCARRAY)
		a.old_addr = extra;
	else
		a.align = extra;
	put(s, &a, sizeof(a));
}

static void put_alloc(struct sink *s, uint64_t ts, uint32_t pid, int func, uint64_t addr, uint64_t size,
		      uint64_t extra)
{
	put_alloc_tid(s, ts, pid, pid, func, addr, size, extra);
}

static void put_free(struct sink *s, uint64_t ts, uint32_t pid, uint64_t addr)
{
	put_alloc(s, ts, pid, MT_FN_FREE, addr, 0, 0);
}

static void put_sys(struct sink *s, uint64_t ts, uint32_t pid, int sys, uint64_t addr, uint64_t size, int64_t ret)
{
	struct mt_syscall c = { .addr = addr, .size = size, .ret = ret, .sys = sys };

	hdr_init(&c.hdr, MT_REC_SYSCALL, sizeof(c), ts, pid, pid);
	if (sys == MT_SYS_MMAP) {
		c.prot = 3;		/* PROT_READ | PROT_WRITE */
		c.flags = 0x22;		/* MAP_PRIVATE | MAP_ANONYMOUS */
	}
	put(s, &c, sizeof(c));
}

static void put_fork(struct sink *s, uint64_t ts, uint32_t parent, uint32_t child)
{
	struct mt_fork f = { .child = child };

	hdr_init(&f.hdr, MT_REC_FORK, sizeof(f), ts, parent, parent);
	put(s, &f, sizeof(f));
}

static void put_exec(struct sink *s, uint64_t ts, uint32_t pid, const char *path, const char *comm)
{
	struct mt_exec e = { .old_pid = pid };

	hdr_init(&e.hdr, MT_REC_EXEC, sizeof(e), ts, pid, pid);
	strncpy(e.path, path, sizeof(e.path) - 1);
	strncpy(e.comm, comm, sizeof(e.comm) - 1);
	put(s, &e, sizeof(e));
}

static void put_exit(struct sink *s, uint64_t ts, uint32_t pid, int32_t status)
{
	struct mt_exit x = { .status = status };

	hdr_init(&x.hdr, MT_REC_EXIT, sizeof(x), ts, pid, pid);
	put(s, &x, sizeof(x));
}

/* The strings are padded to 8 bytes, as a writer may do: readers must stop at argc. */
static void put_session(struct sink *s, uint64_t ts, uint32_t pid, uint32_t tracer, int argc, const char **argv)
{
	union { struct mt_session s; char buf[1024]; } u = { 0 };
	size_t size = sizeof(u.s), len;
	int i;

	for (i = 0; i < argc; i++) {
		len = strlen(argv[i]) + 1;
		memcpy(u.buf + size, argv[i], len);
		size += len;
	}
	size = (size + 7) & ~(size_t)7;
	hdr_init(&u.s.hdr, MT_REC_SESSION, size, ts, pid, pid);
	u.s.realtime_ns = 1700000000000000000ull;
	u.s.tracer_pid = tracer;
	u.s.argc = argc;
	put(s, &u, size);
}

static void put_end(struct sink *s, uint64_t ts, uint32_t pid, int32_t status, uint64_t ringbuf, uint64_t callstate,
		    uint64_t read)
{
	struct mt_end e = { .status = status };

	hdr_init(&e.hdr, MT_REC_END, sizeof(e), ts, pid, pid);
	e.drops[MT_DROP_RINGBUF] = ringbuf;
	e.drops[MT_DROP_CALLSTATE] = callstate;
	e.drops[MT_DROP_READ] = read;
	put(s, &e, sizeof(e));
}

/* ---- fixtures: a fresh model behind a sink ---- */

struct fix {
	struct mt_model *m;
	struct sink s;
};

static int fix_setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->m = mt_model__new();
	f->s.put = put_model;
	f->s.ctx = f->m;
	*state = f;
	return f->m ? 0 : -1;
}

static int fix_teardown(void **state)
{
	struct fix *f = *state;

	mt_model__free(f->m);
	free(f);
	return 0;
}

static const struct mt_proc *finish_and_find(struct fix *f, uint32_t pid)
{
	const struct mt_proc *p;

	assert_int_equal(mt_model__finish(f->m), 0);
	p = mt_model__find_proc(f->m, pid);
	assert_non_null(p);
	return p;
}

static void start_session(struct fix *f, uint32_t root)
{
	const char *argv[] = { "./prog", "arg" };

	put_session(&f->s, T0, root, 1, 2, argv);
}

/* ---- model semantics ---- */

static void test_basic_counts(void **state)
{
	struct fix *f = *state;
	const struct mt_totals *t;
	const struct mt_proc *p;

	start_session(f, 10);
	put_alloc(&f->s, T0 + 10, 10, MT_FN_MALLOC, 0x1000, 100, 0);
	put_alloc(&f->s, T0 + 20, 10, MT_FN_CALLOC, 0x2000, 200, 0);
	put_alloc(&f->s, T0 + 30, 10, MT_FN_MALLOC, 0, 1u << 30, 0);		/* failed: ignored */
	put_alloc(&f->s, T0 + 40, 10, MT_FN_POSIX_MEMALIGN, 0x3000, 300, 64);
	put_free(&f->s, T0 + 50, 10, 0x1000);
	put_free(&f->s, T0 + 55, 10, 0);					/* free(NULL): ignored */
	put_exit(&f->s, T0 + 60, 10, EXITED(3));
	put_end(&f->s, T0 + 70, 10, EXITED(3), 0, 0, 0);
	p = finish_and_find(f, 10);
	t = mt_model__totals(f->m);

	assert_int_equal(p->ppid, 1);
	assert_true(p->exited);
	assert_int_equal(mt_status__shell(p->status), 3);
	assert_int_equal(p->heap.allocations, 3);
	assert_int_equal(p->heap.frees, 1);
	assert_int_equal(p->heap.allocated_bytes, 600);
	assert_int_equal(p->heap.failed_allocations, 1);
	assert_int_equal(p->heap.peak_live_bytes, 600);
	assert_int_equal(p->heap.peak_ts_ns, 40);
	assert_int_equal(p->heap.leaked_allocations, 2);
	assert_int_equal(p->heap.leaked_bytes, 500);
	assert_int_equal(p->heap.live_allocations, 0);
	assert_int_equal(p->heap.live_bytes, 0);
	assert_int_equal(t->heap.allocations, 3);
	assert_int_equal(t->heap.leaked_bytes, 500);
	assert_int_equal(t->processes, 1);
	assert_int_equal(t->records, 9);
	assert_true(t->complete);
	assert_int_equal(t->dropped_events, 0);
	assert_true(mt_model__session(f->m)->present);
	assert_int_equal(mt_model__session(f->m)->root_pid, 10);
	assert_int_equal(mt_model__session(f->m)->argc, 2);
	assert_string_equal(mt_model__session(f->m)->argv[1], "arg");
	assert_null(mt_model__session(f->m)->argv[2]);
}

static void test_realloc_chain(void **state)
{
	struct fix *f = *state;
	const struct mt_proc *p;

	start_session(f, 10);
	put_alloc(&f->s, T0 + 1, 10, MT_FN_MALLOC, 0x1000, 100, 0);		/* live 100 */
	put_alloc(&f->s, T0 + 2, 10, MT_FN_REALLOC, 0x2000, 200, 0x1000);	/* moves: free + alloc, live 200 */
	put_alloc(&f->s, T0 + 3, 10, MT_FN_REALLOC, 0x2000, 300, 0x2000);	/* in place, live 300 */
	put_alloc(&f->s, T0 + 4, 10, MT_FN_REALLOC, 0, 5000, 0x2000);		/* fails: nothing changes */
	put_alloc(&f->s, T0 + 5, 10, MT_FN_REALLOCARRAY, 0x3000, 40, 0x2000);	/* moves, live 40 */
	put_alloc(&f->s, T0 + 6, 10, MT_FN_REALLOC, 0x4000, 50, 0);		/* realloc(NULL, 50): live 90 */
	put_alloc(&f->s, T0 + 7, 10, MT_FN_REALLOC, 0, 0, 0x3000);		/* realloc(p, 0) frees p: live 50 */
	put_alloc(&f->s, T0 + 8, 10, MT_FN_REALLOC, 0x5000, 10, 0x9999);	/* old pointer unknown */
	p = finish_and_find(f, 10);

	assert_int_equal(p->heap.allocations, 6);
	assert_int_equal(p->heap.allocated_bytes, 100 + 200 + 300 + 40 + 50 + 10);
	assert_int_equal(p->heap.frees, 4);
	assert_int_equal(p->heap.freed_bytes, 100 + 200 + 300 + 40);
	assert_int_equal(p->heap.unknown_frees, 1);			/* not in frees */
	assert_int_equal(p->heap.failed_allocations, 1);
	assert_int_equal(p->heap.replaced, 0);
	assert_int_equal(p->heap.peak_live_bytes, 300);
	assert_int_equal(p->heap.peak_ts_ns, 3);
	assert_int_equal(p->heap.still_live_allocations, 2);	/* 0x4000 (50) and 0x5000 (10) */
	assert_int_equal(p->heap.still_live_bytes, 60);
	assert_int_equal(p->heap.leaked_allocations, 0);	/* it never exited */
	assert_false(p->exited);
}

static void test_fork_child_frees_parent_block(void **state)
{
	struct fix *f = *state;
	const struct mt_proc *parent, *child;
	const struct mt_totals *t;

	start_session(f, 10);
	put_exec(&f->s, T0 + 1, 10, "/usr/bin/make", "make");
	put_alloc(&f->s, T0 + 2, 10, MT_FN_MALLOC, 0x1000, 100, 0);
	put_fork(&f->s, T0 + 3, 10, 11);
	put_free(&f->s, T0 + 4, 11, 0x1000);		/* the child's copy of the parent's block */
	put_alloc(&f->s, T0 + 5, 11, MT_FN_MALLOC, 0x1000, 30, 0);
	put_exit(&f->s, T0 + 6, 11, KILLED(9));
	put_exit(&f->s, T0 + 7, 10, EXITED(0));
	parent = finish_and_find(f, 10);
	child = mt_model__find_proc(f->m, 11);
	t = mt_model__totals(f->m);

	assert_non_null(child);
	assert_int_equal(child->ppid, 10);
	assert_string_equal(child->exe, "/usr/bin/make");	/* inherited across fork */
	assert_string_equal(child->comm, "make");
	assert_int_equal(child->heap.inherited_allocations, 1);
	assert_int_equal(child->heap.inherited_bytes, 100);
	assert_int_equal(child->heap.frees, 1);
	assert_int_equal(child->heap.freed_bytes, 100);
	assert_int_equal(child->heap.unknown_frees, 0);
	assert_int_equal(child->heap.peak_live_bytes, 100);
	assert_int_equal(child->heap.leaked_bytes, 30);
	assert_int_equal(mt_status__shell(child->status), 137);
	assert_int_equal(mt_status__signal(child->status), 9);
	assert_int_equal(parent->heap.frees, 0);
	assert_int_equal(parent->heap.leaked_allocations, 1);
	assert_int_equal(parent->heap.leaked_bytes, 100);
	assert_int_equal(t->heap.leaked_bytes, 130);
	assert_int_equal(t->heap.peak_live_bytes, 200);	/* at the fork, the block in both */
	assert_int_equal(t->heap.peak_ts_ns, 3);
	assert_int_equal(mt_model__nr_procs(f->m), 2);
	assert_int_equal(mt_model__proc(f->m, 0)->pid, 10);
	assert_int_equal(mt_model__proc(f->m, 1)->pid, 11);
}

static void test_exec_clears_live(void **state)
{
	struct fix *f = *state;
	const struct mt_proc *p;

	start_session(f, 10);
	put_alloc(&f->s, T0 + 1, 10, MT_FN_MALLOC, 0x1000, 100, 0);
	put_alloc(&f->s, T0 + 2, 10, MT_FN_MALLOC, 0x2000, 200, 0);
	put_free(&f->s, T0 + 3, 10, 0x1000);
	put_exec(&f->s, T0 + 4, 10, "/bin/true", "true");	/* 0x2000 is discarded, not leaked */
	put_free(&f->s, T0 + 5, 10, 0x2000);			/* from the old image: unknown now */
	put_alloc(&f->s, T0 + 6, 10, MT_FN_MALLOC, 0x2000, 20, 0);
	put_free(&f->s, T0 + 7, 10, 0x2000);
	put_exit(&f->s, T0 + 8, 10, EXITED(0));
	p = finish_and_find(f, 10);

	assert_string_equal(p->exe, "/bin/true");
	assert_string_equal(p->comm, "true");
	assert_int_equal(p->heap.allocations, 3);
	assert_int_equal(p->heap.frees, 2);
	assert_int_equal(p->heap.unknown_frees, 1);
	assert_int_equal(p->heap.exec_discarded_allocations, 1);
	assert_int_equal(p->heap.exec_discarded_bytes, 200);
	assert_int_equal(p->heap.leaked_allocations, 0);
	assert_int_equal(p->heap.leaked_bytes, 0);
	assert_int_equal(p->heap.replaced, 0);
	assert_int_equal(p->heap.peak_live_bytes, 300);
	assert_int_equal(p->heap.peak_ts_ns, 2);
}

static void test_replaced_lost_free(void **state)
{
	struct fix *f = *state;
	const struct mt_proc *p;

	start_session(f, 10);
	put_alloc(&f->s, T0 + 1, 10, MT_FN_MALLOC, 0x1000, 100, 0);
	put_alloc(&f->s, T0 + 2, 10, MT_FN_MALLOC, 0x1000, 40, 0);	/* the free of 0x1000 was lost */
	p = finish_and_find(f, 10);

	assert_int_equal(p->heap.allocations, 2);
	assert_int_equal(p->heap.replaced, 1);
	assert_int_equal(p->heap.frees, 0);
	assert_int_equal(p->heap.peak_live_bytes, 100);
	assert_int_equal(p->heap.still_live_allocations, 1);
	assert_int_equal(p->heap.still_live_bytes, 40);
}

/* Arrival order differs from time order; the window puts each free after its malloc. */
static void test_out_of_order_within_window(void **state)
{
	struct fix *f = *state;
	const struct mt_proc *p;
	const struct mt_totals *t;

	start_session(f, 10);
	put_free(&f->s, T0 + 20, 10, 0x1000);
	put_alloc(&f->s, T0 + 10, 10, MT_FN_MALLOC, 0x1000, 100, 0);
	put_alloc(&f->s, T0 + 40, 10, MT_FN_MALLOC, 0x3000, 10, 0);
	put_alloc(&f->s, T0 + 30, 10, MT_FN_MALLOC, 0x2000, 500, 0);
	put_free(&f->s, T0 + 35, 10, 0x2000);
	put_exit(&f->s, T0 + 50, 10, EXITED(0));
	put_alloc(&f->s, T0 + 5, 10, MT_FN_MALLOC, 0x4000, 7, 0);		/* earliest, arrives late */
	p = finish_and_find(f, 10);
	t = mt_model__totals(f->m);

	assert_int_equal(p->heap.unknown_frees, 0);
	assert_int_equal(p->heap.frees, 2);
	assert_int_equal(p->heap.peak_live_bytes, 507);
	assert_int_equal(p->heap.peak_ts_ns, 30);
	assert_int_equal(p->heap.leaked_bytes, 17);
	assert_int_equal(t->late_records, 0);
}

static void test_peak_two_processes(void **state)
{
	struct fix *f = *state;
	const struct mt_totals *t;
	const struct mt_proc *a, *b;

	start_session(f, 10);
	put_fork(&f->s, T0 + 5, 10, 11);
	put_alloc(&f->s, T0 + 10, 10, MT_FN_MALLOC, 0x1000, 1000, 0);	/* total 1000 */
	put_alloc(&f->s, T0 + 20, 11, MT_FN_MALLOC, 0x1000, 500, 0);		/* same address, other process: 1500 */
	put_free(&f->s, T0 + 30, 10, 0x1000);				/* 500 */
	put_alloc(&f->s, T0 + 40, 11, MT_FN_MALLOC, 0x2000, 800, 0);		/* 1300 */
	put_alloc(&f->s, T0 + 50, 10, MT_FN_MALLOC, 0x3000, 1100, 0);	/* 2400 */
	put_exit(&f->s, T0 + 60, 11, EXITED(0));			/* 1100 */
	put_exit(&f->s, T0 + 70, 10, EXITED(0));
	a = finish_and_find(f, 10);
	b = mt_model__find_proc(f->m, 11);
	t = mt_model__totals(f->m);

	assert_int_equal(a->heap.peak_live_bytes, 1100);
	assert_int_equal(a->heap.peak_ts_ns, 50);
	assert_int_equal(b->heap.peak_live_bytes, 1300);
	assert_int_equal(b->heap.peak_ts_ns, 40);
	assert_int_equal(t->heap.peak_live_bytes, 2400);
	assert_int_equal(t->heap.peak_ts_ns, 50);
	assert_int_equal(t->heap.leaked_bytes, 1300 + 1100);
	assert_int_equal(t->heap.live_bytes, 0);
}

static void test_missing_end(void **state)
{
	struct fix *f = *state;
	const struct mt_totals *t;
	const struct mt_proc *p, *q;

	start_session(f, 10);
	put_alloc(&f->s, T0 + 1, 10, MT_FN_MALLOC, 0x1000, 64, 0);
	put_alloc(&f->s, T0 + 2, 12, MT_FN_MALLOC, 0x1000, 32, 0);	/* a pid never announced */
	p = finish_and_find(f, 10);
	q = mt_model__find_proc(f->m, 12);
	t = mt_model__totals(f->m);

	assert_false(t->complete);
	assert_int_equal(t->dropped_events, 0);
	assert_false(p->exited);
	assert_int_equal(p->heap.still_live_bytes, 64);
	assert_non_null(q);
	assert_int_equal(q->ppid, 0);
	assert_int_equal(q->heap.still_live_bytes, 32);
	assert_int_equal(t->heap.still_live_allocations, 2);
	assert_int_equal(t->heap.leaked_allocations, 0);
}

static void test_end_drops_and_syscalls(void **state)
{
	struct fix *f = *state;
	const struct mt_totals *t;
	const struct mt_proc *p;

	start_session(f, 10);
	put_sys(&f->s, T0 + 1, 10, MT_SYS_MMAP, 0x7f0000000000, 65536, 0x7f0000000000);
	put_sys(&f->s, T0 + 2, 10, MT_SYS_MMAP, 0, 1ull << 40, -ENOMEM);	/* failed: not counted */
	put_sys(&f->s, T0 + 3, 10, MT_SYS_MUNMAP, 0x7f0000000000, 4096, 0);
	put_sys(&f->s, T0 + 4, 10, MT_SYS_MREMAP, 0x7f0000001000, 8192, 0x7f0000001000);
	put_sys(&f->s, T0 + 5, 10, MT_SYS_BRK, 0x560000021000, 0x560000021000, 0x560000021000);
	put_end(&f->s, T0 + 6, 10, EXITED(0), 5, 2, 1);
	p = finish_and_find(f, 10);
	t = mt_model__totals(f->m);

	assert_int_equal(p->heap.mmap_calls, 1);
	assert_int_equal(p->heap.mmap_bytes, 65536);
	assert_int_equal(p->heap.munmap_calls, 1);
	assert_int_equal(p->heap.munmap_bytes, 4096);
	assert_int_equal(p->heap.mremap_calls, 1);
	assert_int_equal(p->heap.brk_calls, 1);
	assert_int_equal(p->heap.allocations, 0);
	assert_int_equal(t->heap.mmap_bytes, 65536);
	assert_true(t->complete);
	assert_int_equal(t->drops[MT_DROP_RINGBUF], 5);
	assert_int_equal(t->drops[MT_DROP_CALLSTATE], 2);
	assert_int_equal(t->drops[MT_DROP_READ], 1);
	assert_int_equal(t->dropped_events, 8);
}

/* ---- anonymous private mappings ---- */

#define PG 4096ull
#define MAP_A 0x7f0000000000ull
#define MAP_B 0x7f0000100000ull
#define MAP_C 0x7f1000000000ull
#define BRK0 0x560000000000ull
#define ANON_PRIVATE 0x22	/* MAP_PRIVATE | MAP_ANONYMOUS */

/* A successful memory syscall as BPF writes it: ret the result, origin who made it. */
struct sys_args {
	int sys;
	uint64_t addr, size, old_addr, old_size;
	uint32_t flags;
	int64_t ret;
	uint8_t origin;
};

static void put_map(struct sink *s, uint64_t ts, uint32_t pid, struct sys_args a)
{
	struct mt_syscall c = { .addr = a.addr, .size = a.size, .old_addr = a.old_addr, .old_size = a.old_size,
				.flags = a.flags, .ret = a.ret, .sys = a.sys, .origin = a.origin };

	hdr_init(&c.hdr, MT_REC_SYSCALL, sizeof(c), ts, pid, pid);
	put(s, &c, sizeof(c));
}

static void put_mmap(struct sink *s, uint64_t ts, uint32_t pid, uint64_t at, uint64_t len, uint8_t origin)
{
	put_map(s, ts, pid, (struct sys_args){ .sys = MT_SYS_MMAP, .addr = at, .size = len, .flags = ANON_PRIVATE,
						.ret = (int64_t)at, .origin = origin });
}

static void put_munmap(struct sink *s, uint64_t ts, uint32_t pid, uint64_t at, uint64_t len)
{
	put_map(s, ts, pid, (struct sys_args){ .sys = MT_SYS_MUNMAP, .addr = at, .size = len });
}

static void put_brk(struct sink *s, uint64_t ts, uint32_t pid, uint64_t want, uint64_t now, uint8_t origin)
{
	put_map(s, ts, pid, (struct sys_args){ .sys = MT_SYS_BRK, .addr = now, .size = want, .ret = (int64_t)now,
						.origin = origin });
}

static void assert_mapped(const struct mt_mapped_stats *m, uint64_t prog, uint64_t alloc)
{
	assert_int_equal(m->program_bytes, prog);
	assert_int_equal(m->allocator_bytes, alloc);
}

/*
 * The books of one address space: a partial munmap splits, a file mapped MAP_FIXED over anonymous memory ends it,
 * mremap grows and moves then shrinks in place with the range's maker, brk counts from the first break, a
 * failed call changes nothing.
 */
static void test_mapped_books(void **state)
{
	struct fix *f = *state;
	const struct mt_proc *p;

	start_session(f, 10);
	put_mmap(&f->s, T0 + 1, 10, MAP_A, 3 * PG - 100, MT_SYS_ORIGIN_PROGRAM);	/* rounds up to 3 pages */
	put_mmap(&f->s, T0 + 2, 10, MAP_B, 5 * PG, MT_SYS_ORIGIN_ALLOCATOR);
	put_munmap(&f->s, T0 + 3, 10, MAP_A + PG, PG);
	put_map(&f->s, T0 + 4, 10, (struct sys_args){ .sys = MT_SYS_MMAP, .addr = MAP_A, .size = PG,
						 .flags = 0x12, .ret = (int64_t)MAP_A });	/* a file, FIXED */
	put_map(&f->s, T0 + 5, 10, (struct sys_args){ .sys = MT_SYS_MREMAP, .old_addr = MAP_B, .old_size = 5 * PG,
						 .size = 8 * PG, .flags = 1, .ret = (int64_t)MAP_C });
	put_map(&f->s, T0 + 6, 10, (struct sys_args){ .sys = MT_SYS_MREMAP, .old_addr = MAP_C, .old_size = 8 * PG,
						 .size = 2 * PG, .ret = (int64_t)MAP_C });
	put_map(&f->s, T0 + 7, 10, (struct sys_args){ .sys = MT_SYS_MUNMAP, .addr = MAP_C, .size = 2 * PG,
						 .ret = -EINVAL });
	put_brk(&f->s, T0 + 8, 10, 0, BRK0, MT_SYS_ORIGIN_PROGRAM);
	put_brk(&f->s, T0 + 9, 10, BRK0 + 0x21000, BRK0 + 0x21000, MT_SYS_ORIGIN_ALLOCATOR);
	put_brk(&f->s, T0 + 10, 10, BRK0 + 0x10800, BRK0 + 0x10800, MT_SYS_ORIGIN_ALLOCATOR);
	put_exit(&f->s, T0 + 11, 10, EXITED(0));
	p = finish_and_find(f, 10);

	assert_mapped(&p->mapped, 0, 0);	/* exited */
	assert_int_equal(p->mapped.end_program_bytes, PG);
	assert_int_equal(p->mapped.end_allocator_bytes, 2 * PG + 0x11000);
	assert_int_equal(p->mapped.peak_program_bytes, 3 * PG);
	assert_int_equal(p->mapped.peak_program_ts_ns, 1);
	assert_int_equal(p->mapped.peak_allocator_bytes, 2 * PG + 0x21000);
	assert_mapped(&mt_model__totals(f->m)->mapped, 0, 0);
	assert_int_equal(mt_model__totals(f->m)->mapped.end_allocator_bytes, 2 * PG + 0x11000);
}

/* Ranges of both makers, joined and split: a MAP_FIXED over parts of three ranges, a munmap over all of them. */
static void test_mapped_overlaps(void **state)
{
	struct fix *f = *state;
	const struct mt_proc *p;

	start_session(f, 10);
	put_mmap(&f->s, T0 + 1, 10, MAP_A, 2 * PG, MT_SYS_ORIGIN_PROGRAM);
	put_mmap(&f->s, T0 + 2, 10, MAP_A + 2 * PG, 2 * PG, MT_SYS_ORIGIN_PROGRAM);	/* joins the first */
	put_mmap(&f->s, T0 + 3, 10, MAP_A + 4 * PG, 2 * PG, MT_SYS_ORIGIN_ALLOCATOR);
	put_mmap(&f->s, T0 + 4, 10, MAP_A + 6 * PG, 2 * PG, 0);	/* an earlier writer's: the program's */
	put_mmap(&f->s, T0 + 5, 10, MAP_A + 3 * PG, 4 * PG, MT_SYS_ORIGIN_ALLOCATOR);	/* FIXED over three */
	put_munmap(&f->s, T0 + 6, 10, MAP_A + PG, 6 * PG);
	p = finish_and_find(f, 10);
	assert_mapped(&p->mapped, 2 * PG, 0);
	assert_int_equal(p->mapped.peak_program_bytes, 6 * PG);
	assert_int_equal(p->mapped.peak_allocator_bytes, 4 * PG);
	assert_int_equal(p->mapped.end_program_bytes, 2 * PG);
}

/* A fork child starts with its parent's mappings; a vfork child's calls change its parent's; an exec empties. */
static void test_mapped_fork_exec(void **state)
{
	struct fix *f = *state;
	struct mt_fork vf = { .child = 12, .flags = MT_FORK_SHARED_VM };
	const struct mt_proc *parent, *child, *vchild;
	const struct mt_totals *t;

	start_session(f, 10);
	put_mmap(&f->s, T0 + 1, 10, MAP_A, 4 * PG, MT_SYS_ORIGIN_PROGRAM);
	put_mmap(&f->s, T0 + 2, 10, MAP_B, 2 * PG, MT_SYS_ORIGIN_ALLOCATOR);
	put_fork(&f->s, T0 + 3, 10, 11);
	put_munmap(&f->s, T0 + 4, 11, MAP_A, PG);
	put_munmap(&f->s, T0 + 5, 10, MAP_A, 4 * PG);
	put_exec(&f->s, T0 + 6, 11, "/bin/true", "true");
	put_mmap(&f->s, T0 + 7, 11, MAP_C, PG, MT_SYS_ORIGIN_PROGRAM);
	hdr_init(&vf.hdr, MT_REC_FORK, sizeof(vf), T0 + 8, 10, 10);
	put(&f->s, &vf, sizeof(vf));
	put_mmap(&f->s, T0 + 9, 12, MAP_C, 3 * PG, MT_SYS_ORIGIN_PROGRAM);
	put_exec(&f->s, T0 + 10, 12, "/bin/true", "true");
	put_exit(&f->s, T0 + 11, 11, EXITED(0));
	parent = finish_and_find(f, 10);
	child = mt_model__find_proc(f->m, 11);
	vchild = mt_model__find_proc(f->m, 12);
	t = mt_model__totals(f->m);

	assert_mapped(&parent->mapped, 3 * PG, 2 * PG);
	assert_int_equal(parent->mapped.end_program_bytes, 3 * PG);
	assert_mapped(&child->mapped, 0, 0);
	assert_int_equal(child->mapped.end_program_bytes, PG);
	assert_int_equal(child->mapped.peak_program_bytes, 4 * PG);
	assert_int_equal(child->mapped.peak_allocator_bytes, 2 * PG);
	assert_int_equal(mt_model__image(f->m, 1)->mapped.end_program_bytes, 3 * PG);	/* 11's first image */
	assert_int_equal(mt_model__image(f->m, 1)->mapped.end_allocator_bytes, 2 * PG);
	assert_mapped(&vchild->mapped, 0, 0);
	assert_mapped(&t->mapped, 3 * PG, 2 * PG);
	assert_int_equal(t->mapped.peak_program_bytes, 8 * PG);	/* both, right after the fork */
	assert_int_equal(t->mapped.peak_allocator_bytes, 4 * PG);
	assert_int_equal(t->mapped.end_program_bytes, 3 * PG + PG);
}

/* A process's mappings end at its last thread's exit (BPF's record), not later at the tracer's exit record. */
static void test_mapped_last_thread(void **state)
{
	struct mt_thread_exit t = { .flags = MT_THREAD_EXIT_GROUP | MT_THREAD_EXIT_LAST };
	struct fix *f = *state;
	const struct mt_proc *p;

	start_session(f, 10);
	put_mmap(&f->s, T0 + 1, 10, MAP_A, 2 * PG, MT_SYS_ORIGIN_PROGRAM);
	put_fork(&f->s, T0 + 2, 10, 11);
	hdr_init(&t.hdr, MT_REC_THREAD_EXIT, sizeof(t), T0 + 3, 11, 11);
	put(&f->s, &t, sizeof(t));
	put_fork(&f->s, T0 + 4, 10, 12);
	put_exit(&f->s, T0 + 5, 11, EXITED(0));
	p = finish_and_find(f, 11);
	assert_mapped(&p->mapped, 0, 0);
	assert_int_equal(p->mapped.end_program_bytes, 2 * PG);
	assert_int_equal(mt_model__image(f->m, 1)->mapped.end_program_bytes, 2 * PG);
	assert_int_equal(mt_model__totals(f->m)->mapped.peak_program_bytes, 4 * PG);
}

/* An earlier writer's record: 80 bytes, no origin, no stack; its mapping is the program's. */
static void test_mapped_v1_record(void **state)
{
	struct mt_syscall c = { .size = 2 * PG, .flags = ANON_PRIVATE, .ret = (int64_t)MAP_A, .sys = MT_SYS_MMAP };
	struct fix *f = *state;
	const struct mt_proc *p;

	start_session(f, 10);
	hdr_init(&c.hdr, MT_REC_SYSCALL, MT_SYSCALL_SIZE_V1, T0 + 1, 10, 10);
	put(&f->s, &c, MT_SYSCALL_SIZE_V1);
	p = finish_and_find(f, 10);
	assert_mapped(&p->mapped, 2 * PG, 0);
	assert_int_equal(mt_model__totals(f->m)->bad_records, 0);
}

/* The tracer's own cause, malformed ring records, sums with the kernel's and has a name in every report. */
static void test_end_malformed_drops(void **state)
{
	struct fix *f = *state;
	struct mt_end e = { .status = EXITED(0) };
	const struct mt_totals *t;

	start_session(f, 10);
	hdr_init(&e.hdr, MT_REC_END, sizeof(e), T0 + 1, 10, 10);
	e.drops[MT_DROP_RINGBUF] = 1;
	e.drops[MT_DROP_MALFORMED] = 4;
	put(&f->s, &e, sizeof(e));
	finish_and_find(f, 10);
	t = mt_model__totals(f->m);

	assert_int_equal(t->drops[MT_DROP_MALFORMED], 4);
	assert_int_equal(t->dropped_events, 5);
	assert_string_equal(mt_drop__name(MT_DROP_MALFORMED), "malformed");
}

/* Attach records with an error count as attach failures, said in the summary; those without do not. */
static void test_attach_failed(void **state)
{
	struct fix *f = *state;
	struct mt_attach a = { .kind = MT_ALLOCATOR_MIMALLOC, .err = -EOWNERDEAD };
	char buf[1024] = "";
	FILE *out = fmemopen(buf, sizeof(buf) - 1, "w");

	start_session(f, 10);
	hdr_init(&a.hdr, MT_REC_ATTACH, sizeof(a), T0 + 1, 10, 11);
	put(&f->s, &a, sizeof(a));
	a.err = 0;
	hdr_init(&a.hdr, MT_REC_ATTACH, sizeof(a), T0 + 2, 10, 10);
	put(&f->s, &a, sizeof(a));
	finish_and_find(f, 10);

	assert_int_equal(mt_model__totals(f->m)->attach_failed, 1);
	assert_non_null(out);
	assert_int_equal(mt_summary__write(out, f->m, "DIR"), 0);
	fclose(out);
	assert_non_null(strstr(buf, "memtrack: 1 attach failure: calls into that allocator file are missing "
				    "(`memtrack report --attach DIR`)\n"));
	assert_non_null(strstr(buf, "memtrack: 0 allocations (0 B), 0 frees, peak 0 B live at 0.000 s, 1 process\n"));
}

static void test_pid_reuse(void **state)
{
	struct fix *f = *state;

	start_session(f, 10);
	put_fork(&f->s, T0 + 1, 10, 11);
	put_alloc(&f->s, T0 + 2, 11, MT_FN_MALLOC, 0x1000, 10, 0);
	put_exit(&f->s, T0 + 3, 11, EXITED(1));
	put_fork(&f->s, T0 + 4, 10, 11);			/* the pid comes back for a new child */
	put_alloc(&f->s, T0 + 5, 11, MT_FN_MALLOC, 0x1000, 20, 0);
	assert_int_equal(mt_model__finish(f->m), 0);

	assert_int_equal(mt_model__nr_procs(f->m), 3);
	assert_true(mt_model__proc(f->m, 1)->exited);
	assert_int_equal(mt_model__proc(f->m, 1)->heap.leaked_bytes, 10);
	assert_false(mt_model__proc(f->m, 2)->exited);
	assert_int_equal(mt_model__proc(f->m, 2)->heap.still_live_bytes, 20);
	assert_ptr_equal(mt_model__find_proc(f->m, 11), mt_model__proc(f->m, 2));
	assert_int_equal(mt_model__totals(f->m)->heap.replaced, 0);
}

/* Without a session record, times count from the first record in time order. */
static void test_no_session_time_base(void **state)
{
	struct fix *f = *state;
	const struct mt_proc *p;

	put_alloc(&f->s, 5000, 7, MT_FN_MALLOC, 0x1000, 10, 0);
	put_alloc(&f->s, 4000, 7, MT_FN_MALLOC, 0x2000, 10, 0);
	p = finish_and_find(f, 7);

	assert_false(mt_model__session(f->m)->present);
	assert_int_equal(mt_model__session(f->m)->argc, 0);
	assert_int_equal(p->heap.peak_ts_ns, 1000);
	assert_int_equal(mt_model__add(f->m, &(struct mt_rec_hdr){ .size = 24 }), -EINVAL);	/* after finish */
}

static void test_bad_records_skipped(void **state)
{
	struct fix *f = *state;
	struct mt_rec_hdr h = { 0 };
	struct mt_alloc a = { 0 };

	hdr_init(&h, 99, sizeof(h), T0, 10, 10);
	assert_int_equal(mt_model__add(f->m, &h), 0);
	hdr_init(&a.hdr, MT_REC_ALLOC, sizeof(a) - 8, T0 + 1, 10, 10);	/* too short for its type */
	assert_int_equal(mt_model__add(f->m, &a.hdr), 0);
	hdr_init(&h, MT_REC_ALLOC, 8, T0, 10, 10);
	assert_int_equal(mt_model__add(f->m, &h), -EINVAL);
	assert_int_equal(mt_model__finish(f->m), 0);
	assert_int_equal(mt_model__totals(f->m)->bad_records, 2);
	assert_int_equal(mt_model__totals(f->m)->records, 2);
}

/* Millions of live blocks: the per-process table grows and deletes without losing any. */
static void test_many_live_blocks(void **state)
{
	const uint64_t n = 2000000;
	struct fix *f = *state;
	const struct mt_proc *p;
	uint64_t i;

	start_session(f, 10);
	for (i = 0; i < n; i++)
		put_alloc(&f->s, T0 + 1 + i, 10, MT_FN_MALLOC, 0x10000000 + i * 16, 16, 0);
	for (i = 0; i < n; i += 2)
		put_free(&f->s, T0 + 1 + n + i, 10, 0x10000000 + i * 16);
	for (i = 1; i < n; i += 4)
		put_free(&f->s, T0 + 1 + 2 * n + i, 10, 0x10000000 + i * 16);
	p = finish_and_find(f, 10);

	assert_int_equal(p->heap.allocations, n);
	assert_int_equal(p->heap.frees, n / 2 + n / 4);
	assert_int_equal(p->heap.unknown_frees, 0);
	assert_int_equal(p->heap.peak_live_bytes, n * 16);
	assert_int_equal(p->heap.peak_ts_ns, n);
	assert_int_equal(p->heap.still_live_allocations, n / 4);
	assert_int_equal(p->heap.still_live_bytes, n / 4 * 16);
}

/* ---- reorder window ---- */

struct collected {
	uint64_t ts[64];
	uint32_t tid[64];
	size_t n;
	int fail_at;		/* return -EIO at this many records (0: never) */
};

static int collect(const struct mt_rec_hdr *rec, void *ctx)
{
	struct collected *c = ctx;

	if (c->fail_at && c->n + 1 == (size_t)c->fail_at)
		return -EIO;
	c->ts[c->n] = rec->ts_ns;
	c->tid[c->n++] = rec->tid;
	return 0;
}

static void push_ts(struct mt_reorder *r, uint64_t ts, uint32_t tid)
{
	struct mt_rec_hdr h = { 0 };

	hdr_init(&h, MT_REC_FORK, sizeof(h), ts, 1, tid);
	assert_int_equal(mt_reorder__push(r, &h), 0);
}

static void test_reorder_window(void **state)
{
	static const uint64_t in[] = { 50, 30, 40, 10, 20, 60, 5, 70 };
	static const uint64_t out[] = { 10, 20, 5, 30, 40, 50, 60, 70 };	/* 5 is beyond the window */
	struct collected c = { 0 };
	struct mt_reorder *r = mt_reorder__new(4, collect, &c);
	size_t i;

	(void)state;
	assert_non_null(r);
	for (i = 0; i < 8; i++)
		push_ts(r, in[i], i);
	assert_int_equal(c.n, 4);	/* the window holds 4 */
	assert_int_equal(mt_reorder__flush(r), 0);
	assert_int_equal(c.n, 8);
	for (i = 0; i < 8; i++)
		assert_int_equal(c.ts[i], out[i]);
	assert_int_equal(mt_reorder__late(r), 1);	/* 5 came more than a window late */
	mt_reorder__free(r);
	assert_null(mt_reorder__new(0, collect, &c));
	assert_int_equal(errno, EINVAL);
}

/* The order a window of w records gives, by brute force: the smallest (time, arrival) held, once more than w are. */
static void reorder_reference(const uint64_t *in, size_t n, size_t w, uint32_t *out)
{
	bool held[64] = { false };
	size_t i, k, got = 0, nheld = 0, best;

	for (i = 0; i <= n; i++) {
		if (i < n) {
			held[i] = true;
			nheld++;
		}
		while (nheld > (i < n ? w : 0)) {
			best = n;
			for (k = 0; k <= i && k < n; k++)
				if (held[k] && (best == n || in[k] < in[best]))
					best = k;
			held[best] = false;
			nheld--;
			out[got++] = best;
		}
	}
}

/* Random streams, mostly in order with ties and stragglers: the same order as the brute force, every window. */
static void test_reorder_matches_reference(void **state)
{
	uint64_t in[64], x = 88172645463325252ull;
	uint32_t want[64];
	size_t round, i, w;

	(void)state;
	for (round = 0; round < 200; round++) {
		struct collected c = { 0 };
		struct mt_reorder *r;

		w = 1 + round % 9;
		for (i = 0; i < 64; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			in[i] = i * 4 + (x % 5 == 0 ? 0 : x % 4) - (x % 7 == 0 ? x % 12 : 0) + 16;
		}
		r = mt_reorder__new(w, collect, &c);
		assert_non_null(r);
		for (i = 0; i < 64; i++)
			push_ts(r, in[i], i);
		assert_int_equal(mt_reorder__flush(r), 0);
		mt_reorder__free(r);
		reorder_reference(in, 64, w, want);
		assert_int_equal(c.n, 64);
		for (i = 0; i < 64; i++)
			assert_int_equal(c.tid[i], want[i]);
	}
}

static void test_reorder_ties_and_errors(void **state)
{
	struct collected c = { .fail_at = 3 };
	struct mt_reorder *r = mt_reorder__new(8, collect, &c);
	union { struct mt_rec_hdr h; char buf[2000]; } big = { 0 };
	size_t i;

	(void)state;
	assert_non_null(r);
	for (i = 0; i < 4; i++)
		push_ts(r, 100, i);	/* equal timestamps keep arrival order */
	hdr_init(&big.h, MT_REC_SESSION, sizeof(big), 50, 1, 9);	/* bigger than a slot */
	assert_int_equal(mt_reorder__push(r, &big.h), 0);
	assert_int_equal(mt_reorder__flush(r), -EIO);
	assert_int_equal(c.n, 2);
	assert_int_equal(c.tid[0], 9);
	assert_int_equal(c.tid[1], 0);
	c.fail_at = 0;
	assert_int_equal(mt_reorder__flush(r), 0);
	assert_int_equal(c.n, 4);
	assert_int_equal(c.tid[2], 2);
	assert_int_equal(c.tid[3], 3);
	push_ts(r, 1, 0);	/* left held: freed with the reorderer */
	mt_reorder__free(r);
}

/* ---- JSON writer ---- */

static void capture_begin(FILE **f, char **buf, size_t *len)
{
	*f = open_memstream(buf, len);
	assert_non_null(*f);
}

/* Strings numbered in the order first seen, each kept once; keys of parts tell NULL from "" and "ab","c" from "a","bc". */
static void test_strmap_intern(void **state)
{
	struct mt_strmap m = { 0 }, t = { 0 };
	char buf[32], **strs;
	size_t i, n;
	bool added;

	(void)state;
	assert_int_equal(mt_strmap__find(&m, "a"), -ENOENT);
	assert_int_equal(mt_strmap__intern(&m, "", &added), 0);
	assert_true(added);
	assert_int_equal(mt_strmap__intern(&m, "a", &added), 1);
	assert_true(added);
	assert_int_equal(mt_strmap__intern(&m, "", &added), 0);
	assert_false(added);
	for (i = 0; i < 10000; i++) {
		snprintf(buf, sizeof(buf), "s%zu", i);
		assert_int_equal(mt_strmap__intern(&m, buf, NULL), 2 + i);
	}
	assert_int_equal(m.count, 10002);
	assert_int_equal(mt_strmap__find(&m, "s4321"), 4323);
	assert_string_equal(mt_strmap__str(&m, 4323), "s4321");
	assert_int_equal(mt_strmap__find(&m, "s10000"), -ENOENT);
	strs = mt_strmap__take(&m, &n);
	assert_int_equal(n, 10002);
	assert_int_equal(m.count, 0);
	assert_string_equal(strs[1], "a");
	for (i = 0; i < n; i++)
		free(strs[i]);
	free(strs);

	assert_int_equal(mt_strmap__intern_parts(&t, (const char *const[]){ "ab", "c" }, 2, NULL), 0);
	assert_int_equal(mt_strmap__intern_parts(&t, (const char *const[]){ "a", "bc" }, 2, NULL), 1);
	assert_int_equal(mt_strmap__intern_parts(&t, (const char *const[]){ "a", NULL }, 2, NULL), 2);
	assert_int_equal(mt_strmap__intern_parts(&t, (const char *const[]){ "a", "" }, 2, NULL), 3);
	assert_int_equal(mt_strmap__intern_parts(&t, (const char *const[]){ "a" }, 1, NULL), 4);
	assert_int_equal(mt_strmap__intern_parts(&t, (const char *const[]){ NULL, "a", NULL }, 3, NULL), 5);
	assert_int_equal(mt_strmap__intern_parts(&t, (const char *const[]){ "a", NULL }, 2, &added), 2);
	assert_false(added);
	assert_string_equal(mt_strmap__part(&t, 1, 0), "a");
	assert_string_equal(mt_strmap__part(&t, 1, 1), "bc");
	assert_null(mt_strmap__part(&t, 2, 1));
	assert_string_equal(mt_strmap__part(&t, 3, 1), "");
	assert_null(mt_strmap__part(&t, 5, 0));
	assert_string_equal(mt_strmap__part(&t, 5, 1), "a");
	assert_null(mt_strmap__part(&t, 5, 2));
	mt_strmap__release(&t);
	assert_int_equal(t.count, 0);
}

static void test_json_strings(void **state)
{
	static const char in[] = "a\"b\\c\n\t\x01\x7f" "\xc3\xa9" "\xe2\x82\xac" "\xf0\x9f\x98\x80"
				 "\xff" "\xc3" "(" "\xed\xa0\x80" "\xc0\xaf";
	static const char want[] = "\"a\\\"b\\\\c\\n\\t\\u0001\\u007f\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
				   "\\u00ff\\u00c3(\\u00ed\\u00a0\\u0080\\u00c0\\u00af\"";
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	capture_begin(&f, &buf, &len);
	mt_json__write_string(f, in, sizeof(in) - 1);
	fclose(f);
	assert_string_equal(buf, want);
	free(buf);
}

static void test_json_nesting(void **state)
{
	struct mt_json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	capture_begin(&f, &buf, &len);
	mt_json__init(&j, f, 0);
	mt_json__begin_object(&j);
	mt_json__kv_u64(&j, "a", 18446744073709551615ull);
	mt_json__key(&j, "b");
	mt_json__begin_array(&j);
	mt_json__i64(&j, -5);
	mt_json__bool(&j, true);
	mt_json__null(&j);
	mt_json__begin_object(&j);
	mt_json__end_object(&j);
	mt_json__end_array(&j);
	mt_json__kv_string_n(&j, "c", "abcdef", 3);
	mt_json__end_object(&j);
	fputc('\n', f);
	mt_json__init(&j, f, 2);
	mt_json__begin_object(&j);
	mt_json__kv_bool(&j, "x", false);
	mt_json__key(&j, "y");
	mt_json__begin_array(&j);
	mt_json__end_array(&j);
	mt_json__end_object(&j);
	assert_int_equal(mt_json__error(&j), 0);
	fclose(f);
	assert_string_equal(buf, "{\"a\":18446744073709551615,\"b\":[-5,true,null,{}],\"c\":\"abc\"}\n"
				 "{\n  \"x\": false,\n  \"y\": []\n}");
	free(buf);
}

/* A report of a run without an END record says so, in text and JSON. */
static void test_report_incomplete(void **state)
{
	struct fix *f = *state;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	start_session(f, 10);
	put_alloc(&f->s, T0 + 1, 10, MT_FN_MALLOC, 0x1000, 64, 0);
	assert_int_equal(mt_model__finish(f->m), 0);
	capture_begin(&out, &buf, &len);
	assert_int_equal(mt_report__text(out, f->m, "DIR"), 0);
	assert_int_equal(mt_report__json(out, f->m), 0);
	fclose(out);
	assert_non_null(strstr(buf, "  dropped events:     unknown (run did not finish)\n"));
	assert_non_null(strstr(buf, "  running  "));
	assert_non_null(strstr(buf, "\"complete\": false,"));
	assert_non_null(strstr(buf, "\"status\": null,\n      \"signal\": null,"));
	free(buf);
}

static void test_status_helpers(void **state)
{
	(void)state;
	assert_int_equal(mt_status__shell(EXITED(0)), 0);
	assert_int_equal(mt_status__shell(EXITED(42)), 42);
	assert_int_equal(mt_status__signal(EXITED(42)), 0);
	assert_int_equal(mt_status__shell(KILLED(11) | 0x80), 139);	/* core dumped */
	assert_int_equal(mt_status__signal(KILLED(15)), 15);
	assert_string_equal(mt_func__name(MT_FN_POSIX_MEMALIGN), "posix_memalign");
	assert_string_equal(mt_func__name(MT_FN_FREE), "free");
	assert_null(mt_func__name(0));
	assert_null(mt_func__name(200));
	assert_string_equal(mt_allocator__name(MT_ALLOCATOR_GLIBC), "glibc");
	assert_string_equal(mt_allocator__name(MT_ALLOCATOR_WRAPPER), "wrapper");
	assert_null(mt_allocator__name(MT_ALLOCATOR__COUNT));
	assert_string_equal(mt_drop__name(MT_DROP_CALLSTATE), "callstate");
	assert_string_equal(mt_drop__name(MT_DROP_HANDOFF), "handoff");	/* the last slot of mt_end.drops */
	assert_null(mt_drop__name(MT_DROP__COUNT));
	assert_string_equal(mt_attach_reason__name(MT_ATTACH_INTERP), "interp");	/* report and dump alike */
	assert_string_equal(mt_attach_reason__name(MT_ATTACH_INHERIT), "inherit");
	assert_null(mt_attach_reason__name(0));
	assert_string_equal(mt_attach_reason__name(MT_ATTACH_SEIZE), "seize");
	assert_null(mt_attach_reason__name(MT_ATTACH_SEIZE + 1));
}

/* ---- golden files: a small artifact through the writer, then report text, report JSON and dump ---- */

struct artifact {
	char dir[64];
	char file[128];
	uint64_t first_frame_records;	/* the writer flushes a frame after these */
	uint64_t records;
};

/* Up to the fork; the artifact's first frame. */
static void golden_records_a(struct sink *s)
{
	static const char *argv[] = { "./build.sh", "--jobs=2", "it's here", "caf\xc3\xa9\x01" };

	put_session(s, T0, 100, 99, 4, argv);
	put_exec(s, T0 + 1000, 100, "/bin/sh", "sh");
	put_alloc(s, T0 + 2000, 100, MT_FN_MALLOC, 0x55550000, 1000, 0);
	put_alloc(s, T0 + 3000, 100, MT_FN_CALLOC, 0x55551000, 4096, 0);
	put_alloc(s, T0 + 4000, 100, MT_FN_REALLOC, 0x55560000, 3000, 0x55550000);
	put_alloc(s, T0 + 5000, 100, MT_FN_ALIGNED_ALLOC, 0x55570000, 64, 64);
	put_alloc(s, T0 + 5500, 100, MT_FN_POSIX_MEMALIGN, 0x55580000, 128, 4096);
	put_alloc_tid(s, T0 + 5800, 100, 102, MT_FN_MALLOC, 0, 1ull << 40, 0);
	put_sys(s, T0 + 6000, 100, MT_SYS_MMAP, 0x7f0000000000, 65536, 0x7f0000000000);
	put_sys(s, T0 + 6500, 100, MT_SYS_BRK, 0x555556021000, 0x555556021000, 0x555556021000);
	put_fork(s, T0 + 7000, 100, 101);
}

/* The child's life, then the parent's end; some records arrive out of time order. */
static void golden_records_b(struct sink *s)
{
	put_alloc(s, T0 + 8000, 101, MT_FN_MALLOC, 0x55590000, 100000, 0);
	put_free(s, T0 + 8500, 101, 0x55551000);			/* the parent's block */
	put_alloc(s, T0 + 9500, 101, MT_FN_VALLOC, 0x555a0000, 50, 0);	/* stamped after the exec below */
	put_exec(s, T0 + 9000, 101, "/usr/bin/cc\x01\xff", "cc");
	put_alloc(s, T0 + 9600, 101, MT_FN_PVALLOC, 0x555a1000, 4096, 0);
	put_free(s, T0 + 9650, 101, 0x12340000);			/* never allocated: unknown */
	put_alloc(s, T0 + 9700, 101, MT_FN_MEMALIGN, 0x555a2000, 32, 32);
	put_free(s, T0 + 9800, 101, 0x555a1000);
	put_exit(s, T0 + 10000, 101, KILLED(9));
	put_alloc_tid(s, T0 + 10500, 100, 102, MT_FN_MALLOC, 0x555b0000, 2048, 0);
	put_alloc(s, T0 + 11000, 100, MT_FN_REALLOCARRAY, 0x555c0000, 6000, 0x55560000);
	put_free(s, T0 + 11200, 100, 0x555c0000);
	put_sys(s, T0 + 11500, 100, MT_SYS_MUNMAP, 0x7f0000000000, 65536, 0);
	put_sys(s, T0 + 11550, 100, MT_SYS_MREMAP, 0x7f0000100000, 8192, 0x7f0000200000);
	put_alloc_tid(s, T0 + 11600, 100, 102, MT_FN_REALLOC, 0, 0, 0x555b0000);
	put_alloc(s, T0 + 11700, 100, MT_FN_FREE, 0x555b0000, 0, 0);		/* another thread's: unknown */
	put_alloc_tid(s, T0 + 11800, 100, 102, MT_FN_FREE, 0x555b0000, 0, 0);	/* libc's release of 102's */
	put_exit(s, T0 + 12000, 100, EXITED(0));
	put_end(s, T0 + 13000, 100, EXITED(0), 2, 1, 0);
}

static void make_artifact(struct artifact *a)
{
	struct mt_writer *w;
	struct sink s = { put_writer, NULL };

	snprintf(a->dir, sizeof(a->dir), "/tmp/mt-test-report-XXXXXX");
	assert_non_null(mkdtemp(a->dir));
	snprintf(a->file, sizeof(a->file), "%s/%s", a->dir, MT_ARTIFACT_FILE);
	w = mt_writer__open(a->dir);
	assert_non_null(w);
	s.ctx = w;
	golden_records_a(&s);
	assert_int_equal(mt_writer__flush(w), 0);
	a->first_frame_records = mt_writer__records(w);
	golden_records_b(&s);
	a->records = mt_writer__records(w);
	assert_int_equal(mt_writer__close(w), 0);
}

static int artifact_setup(void **state)
{
	struct artifact *a = calloc(1, sizeof(*a));

	if (!a)
		return -1;
	*state = a;
	make_artifact(a);
	return 0;
}

static int artifact_teardown(void **state)
{
	struct artifact *a = *state;

	unlink(a->file);
	rmdir(a->dir);
	free(a);
	return 0;
}

static void golden_report(struct artifact *a, bool json, const char *name)
{
	struct mt_read_status st;
	struct mt_model *m;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	assert_int_equal(mt_model__load(a->dir, &m, &st), 0);
	assert_non_null(m);
	assert_int_equal(st.records, a->records);
	capture_begin(&f, &buf, &len);
	assert_int_equal(json ? mt_report__json(f, m) : mt_report__text(f, m, "ARTIFACT"), 0);
	fclose(f);
	mt_test__check_golden(GOLDEN_DIR, name, buf, len);
	free(buf);
	mt_model__free(m);
}

static void test_golden_report_text(void **state)
{
	golden_report(*state, false, "report.txt");
}

static void test_golden_report_json(void **state)
{
	golden_report(*state, true, "report.json");
}

/* report --leaks of the golden artifact (no stacks: by process), text and JSON. */
static void test_golden_leaks(void **state)
{
	struct artifact *a = *state;
	struct mt_model_opts o = { NULL, true };
	struct mt_report_extra x = { 0 };
	struct mt_suppressions *sup = mt_suppressions__new(true);
	struct mt_read_status st;
	struct mt_leaks *l;
	struct mt_model *m;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	assert_int_equal(mt_model__load_with(a->dir, &o, &m, &st), 0);
	l = mt_leaks__build(m, NULL, sup);
	assert_non_null(l);
	x.leaks = l;
	capture_begin(&f, &buf, &len);
	assert_int_equal(mt_report__leaks_text(f, m, "ARTIFACT", &x, 0), 0);
	assert_int_equal(mt_report__leaks_json(f, m, &x, 0), 0);
	fclose(f);
	mt_test__check_golden(GOLDEN_DIR, "leaks.txt", buf, len);
	free(buf);
	mt_leaks__free(l);
	mt_suppressions__free(sup);
	mt_model__free(m);
}

static void test_golden_dump(void **state)
{
	struct artifact *a = *state;
	struct mt_read_status st;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	capture_begin(&f, &buf, &len);
	assert_int_equal(mt_dump__write(f, a->dir, &st), 0);
	fclose(f);
	assert_int_equal(st.records, a->records);
	mt_test__check_golden(GOLDEN_DIR, "dump.jsonl", buf, len);
	free(buf);
}

/* ---- the commands: exit statuses and messages ---- */

/* Runs cmd(argv...) with stdout to /dev/null and stderr captured into err. */
/* Runs cmd(args..., NULL) in-process: stderr into err (NUL-terminated, cut at errlen), stdout discarded. */
static int run_cmd(int (*cmd)(int, char **), char *err, size_t errlen, ...)
{
	va_list ap;
	char *out;
	int ret;

	va_start(ap, errlen);
	out = mt_test__vcapture(cmd, 2, &ret, ap);
	va_end(ap);
	snprintf(err, errlen, "%s", out);
	free(out);
	return ret;
}

static void test_cmd_whole(void **state)
{
	struct artifact *a = *state;
	char err[512];

	assert_int_equal(run_cmd(mt_cmd_report, err, sizeof(err), "report", a->dir, NULL), 0);
	assert_string_equal(err, "");
	assert_int_equal(run_cmd(mt_cmd_report, err, sizeof(err), "report", "--json", a->dir, NULL), 0);
	assert_string_equal(err, "");
	assert_int_equal(run_cmd(mt_cmd_report, err, sizeof(err), "report", a->file, "--json", NULL), 0);
	assert_int_equal(run_cmd(mt_cmd_dump, err, sizeof(err), "dump", a->dir, NULL), 0);
	assert_string_equal(err, "");
	assert_int_equal(run_cmd(mt_cmd_report, err, sizeof(err), "report", "--help", NULL), 0);
	assert_int_equal(run_cmd(mt_cmd_dump, err, sizeof(err), "dump", "-h", NULL), 0);
}

static void test_cmd_usage_and_unreadable(void **state)
{
	struct artifact *a = *state;
	char err[512], junk[160];

	assert_int_equal(run_cmd(mt_cmd_report, err, sizeof(err), "report", NULL), 2);
	assert_string_equal(err, "memtrack: report: no DIR given (usage: memtrack report [--json] [--attach | --sites N] "
				 "DIR)\n");
	assert_int_equal(run_cmd(mt_cmd_report, err, sizeof(err), "report", "--bogus", a->dir, NULL), 2);
	assert_string_equal(err, "memtrack: report: unknown option '--bogus' (see memtrack report --help)\n");
	assert_int_equal(run_cmd(mt_cmd_report, err, sizeof(err), "report", "--jsno", a->dir, NULL), 2);
	assert_string_equal(err, "memtrack: report: unknown option '--jsno'; did you mean '--json'? (see memtrack report "
				 "--help)\n");
	assert_int_equal(run_cmd(mt_cmd_report, err, sizeof(err), "report", "--stes=3", a->dir, NULL), 2);
	assert_string_equal(err, "memtrack: report: unknown option '--stes=3'; did you mean '--sites'? (see memtrack "
				 "report --help)\n");
	assert_int_equal(run_cmd(mt_cmd_dump, err, sizeof(err), "dump", "-x", a->dir, NULL), 2);
	assert_string_equal(err, "memtrack: dump: unknown option '-x' (see memtrack dump --help)\n");
	assert_int_equal(run_cmd(mt_cmd_dump, err, sizeof(err), "dump", a->dir, a->dir, NULL), 2);
	assert_int_equal(run_cmd(mt_cmd_report, err, sizeof(err), "report", a->dir, "--sites", NULL), 2);
	assert_string_equal(err, "memtrack: report: --sites needs a value (see memtrack report --help)\n");
	assert_int_equal(run_cmd(mt_cmd_report, err, sizeof(err), "report", "--sites", "-1", a->dir, NULL), 2);
	assert_string_equal(err, "memtrack: --sites takes a number from 0 to 1000000, not '-1'\n");
	assert_int_equal(run_cmd(mt_cmd_unwind, err, sizeof(err), "unwind", "--repeat", "0", a->dir, NULL), 2);
	assert_string_equal(err, "memtrack: --repeat takes a number from 1 to 1000000000, not '0'\n");
	assert_int_equal(run_cmd(mt_cmd_report, err, sizeof(err), "report", "/nonexistent/mt", NULL), 2);
	assert_non_null(strstr(err, "memtrack: /nonexistent/mt: "));
	assert_non_null(strchr(err, '\n'));
	assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);	/* one line */
	assert_int_equal(run_cmd(mt_cmd_dump, err, sizeof(err), "dump", "/nonexistent/mt", NULL), 2);

	snprintf(junk, sizeof(junk), "%s/not-an-artifact", a->dir);
	mt_test__write_file(junk, "hello, world, this is no artifact header\n", 41);
	assert_int_equal(run_cmd(mt_cmd_report, err, sizeof(err), "report", junk, NULL), 2);
	assert_int_equal(run_cmd(mt_cmd_dump, err, sizeof(err), "dump", junk, NULL), 2);
	unlink(junk);
}

/* A truncated artifact: the report and dump cover the first frame, warn, and exit 1. */
static void test_cmd_damaged(void **state)
{
	struct artifact *a = *state;
	struct mt_read_status st;
	struct mt_model *m;
	char err[512], want[400];
	struct stat sb;

	assert_int_equal(stat(a->file, &sb), 0);
	assert_int_equal(truncate(a->file, sb.st_size - 5), 0);
	assert_int_equal(mt_model__load(a->dir, &m, &st), -EBADMSG);
	assert_non_null(m);
	assert_true(st.damaged);
	assert_int_equal(st.records, a->first_frame_records);
	assert_int_equal(mt_model__totals(m)->records, a->first_frame_records);
	assert_false(mt_model__totals(m)->complete);
	assert_int_equal(mt_model__nr_procs(m), 2);
	assert_int_equal(mt_model__totals(m)->heap.allocations, 5);
	mt_model__free(m);

	snprintf(want, sizeof(want), "memtrack: %s: %s; the report covers the %" PRIu64 " records before byte %" PRIu64 "\n",
		 a->dir, st.reason, st.records, st.bad_offset);
	assert_int_equal(run_cmd(mt_cmd_report, err, sizeof(err), "report", a->dir, NULL), 1);
	assert_string_equal(err, want);
	assert_int_equal(run_cmd(mt_cmd_report, err, sizeof(err), "report", "--json", a->dir, NULL), 1);
	assert_string_equal(err, want);
	snprintf(want, sizeof(want), "memtrack: %s: %s; the dump covers the %" PRIu64 " records before byte %" PRIu64 "\n",
		 a->dir, st.reason, st.records, st.bad_offset);
	assert_int_equal(run_cmd(mt_cmd_dump, err, sizeof(err), "dump", a->dir, NULL), 1);
	assert_string_equal(err, want);
}

/* ---- a process tree: fork inheritance, exec, libc's own releases (issue 18) ---- */

static void put_fork_flags(struct sink *s, uint64_t ts, uint32_t parent, uint32_t child, uint32_t flags)
{
	struct mt_fork f = { .child = child, .flags = flags };

	hdr_init(&f.hdr, MT_REC_FORK, sizeof(f), ts, parent, parent);
	put(s, &f, sizeof(f));
}

static void put_thread_exit(struct sink *s, uint64_t ts, uint32_t pid, uint32_t tid, uint32_t flags)
{
	struct mt_thread_exit t = { .flags = flags };

	hdr_init(&t.hdr, MT_REC_THREAD_EXIT, sizeof(t), ts, pid, tid);
	put(s, &t, sizeof(t));
}

/*
 * start_live + inherited + allocations - frees - replaced - exec_discarded - leaked - inherited_live - still_live
 * = live.
 */
static void assert_identity(const struct mt_heap_stats *h)
{
	assert_int_equal(h->start_live_allocations + h->inherited_allocations + h->allocations - h->frees -
			 h->replaced - h->exec_discarded_allocations - h->leaked_allocations -
			 h->inherited_live_allocations - h->still_live_allocations, h->live_allocations);
	assert_int_equal(h->start_live_bytes + h->inherited_bytes + h->allocated_bytes - h->freed_bytes -
			 h->replaced_bytes - h->exec_discarded_bytes - h->leaked_bytes - h->inherited_live_bytes -
			 h->still_live_bytes, h->live_bytes);
}

/* Every process, image and the totals add up. */
static void assert_identities(const struct mt_model *m)
{
	size_t i;

	for (i = 0; i < mt_model__nr_procs(m); i++)
		assert_identity(&mt_model__proc(m, i)->heap);
	for (i = 0; i < mt_model__nr_images(m); i++)
		assert_identity(&mt_model__image(m, i)->heap);
	assert_identity(&mt_model__totals(m)->heap);
	assert_int_equal(mt_model__totals(m)->heap.live_allocations, 0);
	assert_int_equal(mt_model__totals(m)->heap.live_bytes, 0);
}

/*
 * The issue's program: the parent allocates 10 blocks and forks; the child frees the 10, allocates 5555 bytes and
 * execs /bin/true; the parent frees its 10.
 */
static void fork_exec_tree(struct fix *f, uint32_t flags)
{
	const struct mt_proc *parent, *child;
	const struct mt_totals *t;
	int i;

	start_session(f, 10);
	for (i = 0; i < 10; i++)
		put_alloc(&f->s, T0 + 1 + i, 10, MT_FN_MALLOC, 0x1000 + 0x100 * i, 100 + i, 0);
	put_fork_flags(&f->s, T0 + 20, 10, 11, flags);
	for (i = 0; i < 10; i++)
		put_free(&f->s, T0 + 21 + i, 11, 0x1000 + 0x100 * i);
	put_alloc(&f->s, T0 + 40, 11, MT_FN_MALLOC, 0x1000, 5555, 0);
	put_exec(&f->s, T0 + 41, 11, "/bin/true", "true");
	put_exit(&f->s, T0 + 42, 11, EXITED(0));
	for (i = 0; i < 10; i++)
		put_free(&f->s, T0 + 50 + i, 10, 0x1000 + 0x100 * i);
	put_exit(&f->s, T0 + 60, 10, EXITED(0));
	parent = finish_and_find(f, 10);
	child = mt_model__find_proc(f->m, 11);
	t = mt_model__totals(f->m);

	assert_int_equal(child->heap.inherited_allocations, 10);
	assert_int_equal(child->heap.inherited_bytes, 1045);
	assert_int_equal(child->heap.frees, 10);
	assert_int_equal(child->heap.freed_bytes, 1045);
	assert_int_equal(child->heap.allocations, 1);
	assert_int_equal(child->heap.exec_discarded_allocations, 1);
	assert_int_equal(child->heap.exec_discarded_bytes, 5555);
	assert_int_equal(child->heap.leaked_allocations, 0);
	assert_int_equal(child->heap.peak_live_bytes, 5555);
	assert_int_equal(parent->heap.frees, 10);
	assert_int_equal(parent->heap.leaked_allocations, 0);
	assert_int_equal(t->heap.allocations, 11);
	assert_int_equal(t->heap.frees, 20);
	assert_int_equal(t->heap.unknown_frees, 0);
	assert_int_equal(t->heap.leaked_allocations, 0);
	assert_int_equal(t->heap.peak_live_bytes, 1045 + 5555);
	assert_int_equal(t->heap.peak_ts_ns, 40);
	assert_int_equal(parent->heap.peak_live_bytes, 1045);
	assert_identities(f->m);
}

static void test_fork_exec_tree(void **state)
{
	fork_exec_tree(*state, 0);
}

/* vfork (and posix_spawn): the child runs in its parent's memory until it execs, and is accounted the same. */
static void test_vfork_exec_tree(void **state)
{
	fork_exec_tree(*state, MT_FORK_SHARED_VM);
}

/* 100 children, each freeing one inherited block while the parent goes on changing its own between forks. */
static void test_fork_100_children(void **state)
{
	struct fix *f = *state;
	const struct mt_proc *parent, *c;
	uint64_t ts = T0 + 1;
	int i;

	start_session(f, 10);
	for (i = 0; i < 200; i++)
		put_alloc(&f->s, ts++, 10, MT_FN_MALLOC, 0x100000 + 0x100 * i, 16, 0);
	for (i = 0; i < 100; i++) {
		put_fork(&f->s, ts++, 10, 100 + i);
		put_free(&f->s, ts++, 100 + i, 0x100000 + 0x100 * i);		/* one inherited block */
		put_free(&f->s, ts++, 10, 0x100000 + 0x100 * (199 - i));	/* the parent frees one of its own */
		put_alloc(&f->s, ts++, 10, MT_FN_MALLOC, 0x200000 + 0x100 * i, 32, 0);	/* and allocates one */
	}
	for (i = 0; i < 100; i++)
		put_exit(&f->s, ts++, 100 + i, EXITED(0));
	put_exit(&f->s, ts++, 10, EXITED(0));
	parent = finish_and_find(f, 10);

	for (i = 0; i < 100; i++) {
		c = mt_model__find_proc(f->m, 100 + i);
		assert_int_equal(c->heap.inherited_allocations, 200);
		assert_int_equal(c->heap.inherited_bytes, 200 * 16 + i * 16);	/* i blocks of 16 became 32 */
		assert_int_equal(c->heap.frees, 1);
		assert_int_equal(c->heap.unknown_frees, 0);
		assert_int_equal(c->heap.leaked_allocations, 0);	/* the parent's blocks, never its own */
		assert_int_equal(c->heap.inherited_live_allocations, 199);
		assert_int_equal(c->heap.inherited_live_bytes, 200 * 16 + i * 16 - 16);
	}
	assert_int_equal(parent->heap.allocations, 300);
	assert_int_equal(parent->heap.frees, 100);
	assert_int_equal(parent->heap.unknown_frees, 0);
	assert_int_equal(parent->heap.leaked_allocations, 200);
	assert_int_equal(parent->heap.leaked_bytes, 100 * 16 + 100 * 32);
	assert_int_equal(mt_model__totals(f->m)->heap.unknown_frees, 0);
	assert_identities(f->m);
}

/* A child's child, and a parent whose blocks change after the fork: each holds what was live at its own fork. */
static void test_fork_grandchild_isolation(void **state)
{
	struct fix *f = *state;
	const struct mt_proc *a, *b, *c;

	start_session(f, 10);
	put_alloc(&f->s, T0 + 1, 10, MT_FN_MALLOC, 0x1000, 10, 0);
	put_alloc(&f->s, T0 + 2, 10, MT_FN_MALLOC, 0x2000, 20, 0);
	put_fork(&f->s, T0 + 3, 10, 11);
	put_free(&f->s, T0 + 4, 10, 0x1000);				/* the parent's copy only */
	put_alloc(&f->s, T0 + 5, 10, MT_FN_MALLOC, 0x3000, 30, 0);
	put_alloc(&f->s, T0 + 6, 11, MT_FN_MALLOC, 0x4000, 40, 0);
	put_alloc(&f->s, T0 + 7, 11, MT_FN_REALLOC, 0x5000, 50, 0x2000);	/* moves an inherited block */
	put_fork(&f->s, T0 + 8, 11, 12);
	put_free(&f->s, T0 + 9, 12, 0x1000);				/* live in 11 at its fork */
	put_free(&f->s, T0 + 10, 12, 0x2000);				/* gone in 11 before: unknown */
	put_free(&f->s, T0 + 11, 12, 0x3000);				/* the grandparent's: unknown */
	put_free(&f->s, T0 + 12, 11, 0x1000);
	put_alloc(&f->s, T0 + 13, 12, MT_FN_MALLOC, 0x6000, 60, 0);
	put_exit(&f->s, T0 + 14, 12, EXITED(0));
	put_exit(&f->s, T0 + 15, 11, EXITED(0));
	put_free(&f->s, T0 + 16, 10, 0x2000);
	put_exit(&f->s, T0 + 17, 10, EXITED(0));
	a = finish_and_find(f, 10);
	b = mt_model__find_proc(f->m, 11);
	c = mt_model__find_proc(f->m, 12);

	assert_int_equal(a->heap.frees, 2);
	assert_int_equal(a->heap.leaked_bytes, 30);
	assert_int_equal(b->heap.inherited_allocations, 2);
	assert_int_equal(b->heap.inherited_bytes, 30);
	assert_int_equal(b->heap.frees, 2);				/* the realloc's old block, 0x1000 */
	assert_int_equal(b->heap.leaked_bytes, 90);			/* 0x4000 and 0x5000 */
	assert_int_equal(c->heap.inherited_allocations, 3);		/* 0x1000, 0x4000, 0x5000 */
	assert_int_equal(c->heap.inherited_bytes, 100);
	assert_int_equal(c->heap.frees, 1);
	assert_int_equal(c->heap.unknown_frees, 1 + 1);
	assert_int_equal(c->heap.leaked_allocations, 1);		/* 0x6000, its own */
	assert_int_equal(c->heap.leaked_bytes, 60);
	assert_int_equal(c->heap.inherited_live_allocations, 2);	/* 0x4000 and 0x5000: 11's */
	assert_int_equal(c->heap.inherited_live_bytes, 90);
	assert_identities(f->m);
}

/*
 * glibc's tcache flush at a thread's end: the thread's cached blocks (freed by it last) and then the tcache struct
 * (allocated inside malloc, never seen). The first are internal releases by themselves; the struct's free is held
 * as the thread's last and becomes one when the thread-exit record follows, unknown otherwise.
 */
static void test_libc_internal_releases(void **state)
{
	struct fix *f = *state;
	const struct mt_proc *p;
	const struct mt_totals *t;

	start_session(f, 10);
	put_alloc_tid(&f->s, T0 + 1, 10, 21, MT_FN_MALLOC, 0x1000, 64, 0);
	put_alloc_tid(&f->s, T0 + 2, 10, 21, MT_FN_FREE, 0x1000, 0, 0);
	put_alloc_tid(&f->s, T0 + 3, 10, 21, MT_FN_FREE, 0x1000, 0, 0);	/* cached by 21: internal */
	put_alloc_tid(&f->s, T0 + 4, 10, 21, MT_FN_FREE, 0x9000, 0, 0);	/* the tcache struct: held */
	put_thread_exit(&f->s, T0 + 5, 10, 21, 0);				/* ... internal */
	put_alloc_tid(&f->s, T0 + 6, 10, 22, MT_FN_MALLOC, 0x2000, 64, 0);
	put_alloc_tid(&f->s, T0 + 7, 10, 22, MT_FN_FREE, 0x2000, 0, 0);
	put_alloc_tid(&f->s, T0 + 8, 10, 23, MT_FN_FREE, 0x2000, 0, 0);	/* another thread's: unknown */
	put_alloc_tid(&f->s, T0 + 9, 10, 24, MT_FN_FREE, 0xa000, 0, 0);	/* held ... */
	put_alloc_tid(&f->s, T0 + 10, 10, 24, MT_FN_FREE, 0xb000, 0, 0);	/* ... unknown: not its last */
	put_thread_exit(&f->s, T0 + 11, 10, 24, 0);				/* 0xb000 internal */
	put_alloc_tid(&f->s, T0 + 12, 10, 25, MT_FN_FREE, 0xc000, 0, 0);	/* held ... */
	put_alloc_tid(&f->s, T0 + 13, 10, 25, MT_FN_MALLOC, 0x3000, 8, 0);	/* ... unknown: it allocates */
	put_thread_exit(&f->s, T0 + 14, 10, 25, 0);
	put_alloc_tid(&f->s, T0 + 15, 10, 26, MT_FN_FREE, 0xd000, 0, 0);
	put_thread_exit(&f->s, T0 + 16, 10, 26, MT_THREAD_EXIT_GROUP);	/* killed with the process */
	put_alloc_tid(&f->s, T0 + 17, 10, 27, MT_FN_REALLOC, 0x4000, 8, 0xe000);	/* a realloc's: unknown */
	put_alloc_tid(&f->s, T0 + 18, 10, 27, MT_FN_FREE, 0x3000, 0, 0);
	put_alloc_tid(&f->s, T0 + 19, 10, 28, MT_FN_FREE, 0xf000, 0, 0);	/* held, no record: unknown */
	put_exit(&f->s, T0 + 20, 10, EXITED(0));
	p = finish_and_find(f, 10);
	t = mt_model__totals(f->m);

	assert_int_equal(p->heap.allocations, 4);
	assert_int_equal(p->heap.frees, 3);
	assert_int_equal(p->heap.internal_releases, 3);
	assert_int_equal(p->heap.unknown_frees, 6);	/* 0x2000 by 23, 0xa000, 0xc000, 0xd000, 0xe000, 0xf000 */
	assert_int_equal(p->heap.leaked_allocations, 1);
	assert_int_equal(t->thread_exits, 4);
	assert_identities(f->m);
}

/* The 8-thread program's shape: each thread's pairs, then its flush at exit. frees = allocations - leaked. */
static void test_threads_flush(void **state)
{
	struct fix *f = *state;
	const struct mt_proc *p;
	uint64_t ts = T0 + 1;
	uint32_t tid;
	int i;

	start_session(f, 10);
	for (tid = 11; tid <= 18; tid++) {
		put_alloc_tid(&f->s, ts++, 10, 10, MT_FN_CALLOC, 0x100000 * tid, 272, 0);	/* its TLS block */
		for (i = 0; i < 1000; i++) {
			put_alloc_tid(&f->s, ts++, 10, tid, MT_FN_MALLOC, 0x1000 * tid, 64 + tid, 0);
			put_alloc_tid(&f->s, ts++, 10, tid, MT_FN_FREE, 0x1000 * tid, 0, 0);
		}
		put_alloc_tid(&f->s, ts++, 10, tid, MT_FN_FREE, 0x1000 * tid, 0, 0);		/* tcache entry */
		put_alloc_tid(&f->s, ts++, 10, tid, MT_FN_FREE, 0x1000 * tid + 0x10, 0, 0);	/* tcache struct */
		put_thread_exit(&f->s, ts++, 10, tid, 0);
		if (tid & 1)
			put_free(&f->s, ts++, 10, 0x100000 * tid);	/* half the TLS blocks go back */
	}
	put_exit(&f->s, ts++, 10, EXITED(0));
	p = finish_and_find(f, 10);

	assert_int_equal(p->heap.allocations, 8008);
	assert_int_equal(p->heap.frees, 8004);
	assert_int_equal(p->heap.frees, p->heap.allocations - p->heap.leaked_allocations);
	assert_int_equal(p->heap.unknown_frees, 0);
	assert_int_equal(p->heap.internal_releases, 16);
	assert_identities(f->m);
}

/* The unknown frees line names the processes with the most, at most five. */
static void test_unknown_frees_top_pids(void **state)
{
	struct fix *f = *state;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;
	uint32_t pid;
	uint64_t ts = T0 + 1, i;

	start_session(f, 10);
	for (pid = 11; pid <= 17; pid++) {
		put_fork(&f->s, ts++, 10, pid);
		for (i = 0; i < (pid == 12 ? 9 : pid - 10); i++)
			put_free(&f->s, ts++, pid, 0x5000 + i * 16);
	}
	assert_int_equal(mt_model__finish(f->m), 0);
	capture_begin(&out, &buf, &len);
	assert_int_equal(mt_report__text(out, f->m, "DIR"), 0);
	fclose(out);
	assert_non_null(strstr(buf, "  unknown frees:      35 (releases of blocks never seen allocated; top pids "
				    "12 (9), 17 (7), 16 (6), 15 (5), 14 (4))\n"));
	free(buf);
}

/* The persistent map against plain maps: versions shared and changed apart stay apart. */
static void test_pmap_versions(void **state)
{
	enum { VERSIONS = 8, KEYS = 3000, STEPS = 200000 };
	struct mt_pmap *v[VERSIONS] = { NULL };
	struct mt_u64map ref[VERSIONS] = { 0 };
	uint64_t x = 88172645463325252ull, key, val, got;
	int i, k, step;

	(void)state;
	for (step = 0; step < STEPS; step++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;		/* xorshift64 */
		i = x % VERSIONS;
		key = (x >> 8) % KEYS * 16;				/* key 0 included */
		val = x >> 40;
		switch ((x >> 4) % 8) {
		case 0:	/* a version starts over as a copy of another */
			k = (x >> 20) % VERSIONS;
			if (k == i)
				break;
			mt_pmap__release(v[i]);
			v[i] = mt_pmap__share(v[k]);
			mt_u64map__release(&ref[i]);
			assert_int_equal(mt_u64map__copy(&ref[i], &ref[k]), 0);
			break;
		case 1: case 2: case 3:
			assert_int_equal(mt_pmap__del(&v[i], key), mt_u64map__del(&ref[i], key, NULL));
			break;
		default:
			assert_int_equal(mt_pmap__put(&v[i], key, val), 0);
			assert_true(mt_u64map__put(&ref[i], key, val, NULL) >= 0);
		}
		if (step % 997)
			continue;
		for (k = 0; k < VERSIONS; k++)
			for (key = 0; key < KEYS * 16; key += 16) {
				bool want = mt_u64map__find(&ref[k], key) != NULL;

				assert_int_equal(mt_pmap__find(v[k], key, &got), want);
				if (want)
					assert_int_equal(got, *mt_u64map__find(&ref[k], key));
			}
	}
	for (i = 0; i < VERSIONS; i++) {
		mt_pmap__release(v[i]);
		mt_u64map__release(&ref[i]);
	}
}

/* ---- a naive reference of the tree rules (each fork copies its parent's table) against the model ---- */

struct ref_proc {
	uint32_t pid;
	bool alive;
	struct mt_u64map live;		/* addr → size */
	struct mt_u64map freed;		/* addr → tid that freed it last, since the image began */
	struct mt_u64map held;		/* tid → 1 */
	struct mt_u64map inh;		/* addr → size: inherited at the fork, held since */
	uint64_t inh_bytes;
	struct mt_heap_stats h;
};

struct ref {
	struct ref_proc procs[64];
	int n;
	uint64_t x, ts;
	struct fix *f;
};

static uint64_t ref_rand(struct ref *r)
{
	r->x ^= r->x << 13, r->x ^= r->x >> 7, r->x ^= r->x << 17;
	return r->x;
}

/* how: 'x' exec, 'e' exit, 's' the end of the stream (still live). */
static void ref_end(struct ref_proc *p, char how)
{
	p->h.unknown_frees += p->held.count;
	if (how == 'x') {
		p->h.exec_discarded_allocations += p->live.count;
		p->h.exec_discarded_bytes += p->h.live_bytes;
	} else if (how == 'e') {
		p->h.leaked_allocations += p->live.count - p->inh.count;
		p->h.leaked_bytes += p->h.live_bytes - p->inh_bytes;
		p->h.inherited_live_allocations += p->inh.count;
		p->h.inherited_live_bytes += p->inh_bytes;
	} else {
		p->h.still_live_allocations += p->live.count;
		p->h.still_live_bytes += p->h.live_bytes;
	}
	p->h.live_bytes = 0;
	p->inh_bytes = 0;
	mt_u64map__release(&p->live);
	mt_u64map__release(&p->freed);
	mt_u64map__release(&p->held);
	mt_u64map__release(&p->inh);
}

/* The block at addr left p: when it was an inherited one, p holds one fewer. */
static void ref_inh_gone(struct ref_proc *p, uint64_t addr)
{
	uint64_t size;

	if (mt_u64map__del(&p->inh, addr, &size))
		p->inh_bytes -= size;
}

static void ref_alloc(struct ref *r, struct ref_proc *p, uint32_t tid, uint64_t addr, uint64_t size)
{
	uint64_t old;

	put_alloc_tid(&r->f->s, r->ts++, p->pid, tid, MT_FN_MALLOC, addr, size, 0);
	if (mt_u64map__del(&p->held, tid, NULL))
		p->h.unknown_frees++;
	ref_inh_gone(p, addr);
	if (mt_u64map__put(&p->live, addr, size, &old) == 1) {
		p->h.replaced++;
		p->h.replaced_bytes += old;
		p->h.live_bytes -= old;
	}
	mt_u64map__del(&p->freed, addr, NULL);
	p->h.allocations++;
	p->h.allocated_bytes += size;
	p->h.live_bytes += size;
}

static void ref_free(struct ref *r, struct ref_proc *p, uint32_t tid, uint64_t addr)
{
	uint64_t size, *by;

	put_alloc_tid(&r->f->s, r->ts++, p->pid, tid, MT_FN_FREE, addr, 0, 0);
	if (mt_u64map__del(&p->live, addr, &size)) {
		ref_inh_gone(p, addr);
		p->h.frees++;
		p->h.freed_bytes += size;
		p->h.live_bytes -= size;
		mt_u64map__put(&p->freed, addr, tid, NULL);
	} else if ((by = mt_u64map__find(&p->freed, addr)) && *by == tid) {
		p->h.internal_releases++;
		*by = 0;
	} else if (mt_u64map__put(&p->held, tid, 1, NULL) == 1) {
		p->h.unknown_frees++;
	}
}

static void ref_fork(struct ref *r, struct ref_proc *p)
{
	struct ref_proc *c = &r->procs[r->n];

	c->pid = 1000 + r->n++;
	c->alive = true;
	put_fork(&r->f->s, r->ts++, p->pid, c->pid);
	assert_int_equal(mt_u64map__copy(&c->live, &p->live), 0);
	assert_int_equal(mt_u64map__copy(&c->inh, &p->live), 0);
	c->inh_bytes = p->h.live_bytes;
	c->h.inherited_allocations = p->live.count;
	c->h.inherited_bytes = c->h.live_bytes = p->h.live_bytes;
}

static void ref_step(struct ref *r)
{
	uint64_t x = ref_rand(r), addr = (x >> 24) % 512 * 16 + 0x10000;
	struct ref_proc *p = &r->procs[(x >> 8) % r->n];
	uint32_t tid = p->pid + 100000 * ((x >> 40) % 3);

	if (!p->alive)
		return;
	switch ((x >> 16) % 64) {
	case 0:
		if (r->n < 64)
			ref_fork(r, p);
		break;
	case 1:
		put_exec(&r->f->s, r->ts++, p->pid, "/bin/x", "x");
		ref_end(p, 'x');
		break;
	case 2:
		if (p->pid == 1000)
			break;
		put_exit(&r->f->s, r->ts++, p->pid, EXITED(0));
		ref_end(p, 'e');
		p->alive = false;
		break;
	case 3:
		put_thread_exit(&r->f->s, r->ts++, p->pid, tid, 0);
		if (mt_u64map__del(&p->held, tid, NULL))
			p->h.internal_releases++;
		break;
	default:
		if (x >> 63)
			ref_alloc(r, p, tid, addr, 1 + (x >> 50) % 200);
		else
			ref_free(r, p, tid, addr);
	}
}

static void ref_compare(const struct ref_proc *p, const struct mt_proc *q)
{
	const struct mt_heap_stats *a = &p->h, *b = &q->heap;

	assert_int_equal(a->inherited_allocations, b->inherited_allocations);
	assert_int_equal(a->inherited_bytes, b->inherited_bytes);
	assert_int_equal(a->allocations, b->allocations);
	assert_int_equal(a->allocated_bytes, b->allocated_bytes);
	assert_int_equal(a->frees, b->frees);
	assert_int_equal(a->freed_bytes, b->freed_bytes);
	assert_int_equal(a->unknown_frees, b->unknown_frees);
	assert_int_equal(a->internal_releases, b->internal_releases);
	assert_int_equal(a->replaced, b->replaced);
	assert_int_equal(a->replaced_bytes, b->replaced_bytes);
	assert_int_equal(a->exec_discarded_allocations, b->exec_discarded_allocations);
	assert_int_equal(a->exec_discarded_bytes, b->exec_discarded_bytes);
	assert_int_equal(a->leaked_allocations, b->leaked_allocations);
	assert_int_equal(a->leaked_bytes, b->leaked_bytes);
	assert_int_equal(a->inherited_live_allocations, b->inherited_live_allocations);
	assert_int_equal(a->inherited_live_bytes, b->inherited_live_bytes);
	assert_int_equal(a->still_live_allocations, b->still_live_allocations);
	assert_int_equal(a->still_live_bytes, b->still_live_bytes);
}

/* Random trees (forks, execs, exits, three threads a process, frees of anything): the model = full copies. */
static void test_tree_against_copies(void **state)
{
	struct ref *r = calloc(1, sizeof(*r));
	int i, step;

	r->f = *state;
	r->x = 0x9e3779b97f4a7c15ull;
	r->ts = T0 + 1;
	start_session(r->f, 1000);
	r->procs[0] = (struct ref_proc){ .pid = 1000, .alive = true };
	r->n = 1;
	for (step = 0; step < 300000; step++)
		ref_step(r);
	for (i = 0; i < r->n; i++)
		if (r->procs[i].alive)
			ref_end(&r->procs[i], 's');
	assert_int_equal(mt_model__finish(r->f->m), 0);
	assert_int_equal(mt_model__nr_procs(r->f->m), r->n);
	for (i = 0; i < r->n; i++)
		ref_compare(&r->procs[i], mt_model__find_proc(r->f->m, r->procs[i].pid));
	assert_identities(r->f->m);
	free(r);
}

/* 1,000 forks of a process holding 20,000 blocks, changing a few between forks, every child alive to the end. */
static void test_many_forks_share(void **state)
{
	struct fix *f = *state;
	struct mallinfo2 before = mallinfo2(), after;
	uint64_t ts = T0 + 1;
	size_t grown;
	int i;

	start_session(f, 10);
	for (i = 0; i < 20000; i++)
		put_alloc(&f->s, ts++, 10, MT_FN_MALLOC, 0x10000000 + 32 * i, 24, 0);
	for (i = 0; i < 1000; i++) {
		put_fork(&f->s, ts++, 10, 100 + i);
		put_free(&f->s, ts++, 100 + i, 0x10000000 + 32 * i);
		put_alloc(&f->s, ts++, 100 + i, MT_FN_MALLOC, 0x20000000 + 32 * i, 8, 0);
		put_free(&f->s, ts++, 10, 0x10000000 + 32 * (19999 - i));
		put_alloc(&f->s, ts++, 10, MT_FN_MALLOC, 0x30000000 + 32 * i, 8, 0);
	}
	for (i = 0; i < MT_REORDER_WINDOW; i++)		/* through the window: failed calls count nowhere */
		put_sys(&f->s, ts++, 10, MT_SYS_MMAP, 0, 4096, -ENOMEM);
	after = mallinfo2();	/* before finish: every child still holds its blocks */
	grown = after.uordblks + after.hblkhd - before.uordblks - before.hblkhd;
	assert_int_equal(mt_model__finish(f->m), 0);
	print_message("1,000 forks x 20,000 blocks: the model holds %zu KiB\n", grown / 1024);
	assert_true(grown < 64u << 20);		/* full copies: 20,000,000 entries, over 300 MiB */
	assert_int_equal(mt_model__find_proc(f->m, 1099)->heap.inherited_allocations, 20000);
	assert_int_equal(mt_model__find_proc(f->m, 1099)->heap.still_live_allocations, 20000);
	assert_int_equal(mt_model__totals(f->m)->heap.unknown_frees, 0);
	assert_identities(f->m);
}

/* docs/REPORT.md's worked example tree, record for record: its tables are these numbers. */
static void worked_example(struct sink *s)
{
	static const char *argv[] = { "sh", "build.sh" };

	put_session(s, T0, 100, 99, 2, argv);
	put_exec(s, T0 + 1, 100, "/bin/sh", "sh");
	put_alloc(s, T0 + 2, 100, MT_FN_MALLOC, 0xa000, 100, 0);		/* A */
	put_alloc(s, T0 + 3, 100, MT_FN_MALLOC, 0xb000, 200, 0);		/* B */
	put_alloc(s, T0 + 4, 100, MT_FN_MALLOC, 0xc000, 300, 0);		/* C */
	put_fork(s, T0 + 5, 100, 101);
	put_free(s, T0 + 6, 101, 0xa000);
	put_alloc(s, T0 + 7, 101, MT_FN_MALLOC, 0xd000, 50, 0);		/* D */
	put_exec(s, T0 + 8, 101, "/usr/bin/cc", "cc");
	put_alloc(s, T0 + 9, 101, MT_FN_MALLOC, 0xe000, 1000, 0);		/* E */
	put_alloc(s, T0 + 10, 101, MT_FN_MALLOC, 0xf000, 10, 0);		/* F */
	put_free(s, T0 + 11, 101, 0xe000);
	put_exit(s, T0 + 12, 101, EXITED(0));
	put_free(s, T0 + 13, 100, 0xb000);
	put_fork_flags(s, T0 + 14, 100, 102, MT_FORK_SHARED_VM);		/* vfork */
	put_exec(s, T0 + 15, 102, "/bin/true", "true");
	put_exit(s, T0 + 16, 102, EXITED(0));
	put_alloc_tid(s, T0 + 17, 100, 105, MT_FN_MALLOC, 0x10000, 64, 0);	/* G, by a thread */
	put_alloc_tid(s, T0 + 18, 100, 105, MT_FN_FREE, 0x10000, 0, 0);
	put_alloc_tid(s, T0 + 19, 100, 105, MT_FN_FREE, 0x10000, 0, 0);	/* its tcache flush */
	put_alloc_tid(s, T0 + 20, 100, 105, MT_FN_FREE, 0x20000, 0, 0);	/* its tcache struct */
	put_thread_exit(s, T0 + 21, 100, 105, 0);
	put_exit(s, T0 + 22, 100, EXITED(0));
	put_end(s, T0 + 23, 100, EXITED(0), 0, 0, 0);
}

static void assert_heap(const struct mt_heap_stats *h, const uint64_t want[10])
{
	const uint64_t got[10] = { h->inherited_allocations, h->inherited_bytes, h->allocations, h->allocated_bytes,
				   h->frees, h->freed_bytes, h->exec_discarded_allocations, h->exec_discarded_bytes,
				   h->leaked_allocations, h->leaked_bytes };
	int i;

	for (i = 0; i < 10; i++)
		assert_int_equal(got[i], want[i]);
}

static void test_worked_example(void **state)
{
	static const uint64_t sh[10] = { 0, 0, 4, 664, 2, 264, 0, 0, 2, 400 };
	static const uint64_t cc[10] = { 3, 600, 3, 1060, 2, 1100, 3, 550, 1, 10 };
	static const uint64_t tr[10] = { 2, 400, 0, 0, 0, 0, 2, 400, 0, 0 };
	static const uint64_t all[10] = { 5, 1000, 7, 1724, 4, 1364, 5, 950, 3, 410 };
	struct fix *f = *state;
	const struct mt_totals *t;

	worked_example(&f->s);
	finish_and_find(f, 100);
	t = mt_model__totals(f->m);
	assert_heap(&mt_model__find_proc(f->m, 100)->heap, sh);
	assert_heap(&mt_model__find_proc(f->m, 101)->heap, cc);
	assert_heap(&mt_model__find_proc(f->m, 102)->heap, tr);
	assert_heap(&t->heap, all);
	assert_int_equal(mt_model__find_proc(f->m, 100)->heap.internal_releases, 2);
	assert_int_equal(mt_model__find_proc(f->m, 100)->heap.peak_live_bytes, 600);
	assert_int_equal(mt_model__find_proc(f->m, 101)->heap.peak_live_bytes, 1010);
	assert_int_equal(mt_model__find_proc(f->m, 102)->heap.peak_live_bytes, 400);
	assert_int_equal(t->heap.peak_live_bytes, 1610);
	assert_int_equal(t->heap.peak_ts_ns, 10);
	assert_int_equal(t->heap.unknown_frees, 0);
	assert_identities(f->m);
	if (getenv("MEMTRACK_PRINT_EXAMPLE"))
		mt_report__text(stdout, f->m, "DIR");
}

/* ---- image rows, suppressions, filters, --leaks (issues 23 and 19) ---- */

/* sh (100) holds A and B and forks 101, which frees A, allocates C and execs python3; python3 allocates D and E,
 * frees D and exits leaking E; sh frees B and exits leaking nothing but... A is freed by 101 only: sh leaks A. */
static void rows_records(struct sink *s, bool end)
{
	static const char *argv[] = { "sh", "-c", "python3 -c 'print(1)'" };

	put_session(s, T0, 100, 99, 3, argv);
	put_exec(s, T0 + 1, 100, "/bin/sh", "sh");
	put_alloc(s, T0 + 2, 100, MT_FN_MALLOC, 0xa000, 100, 0);		/* A */
	put_alloc(s, T0 + 3, 100, MT_FN_MALLOC, 0xb000, 200, 0);		/* B */
	put_fork(s, T0 + 10, 100, 101);
	put_free(s, T0 + 11, 101, 0xa000);
	put_alloc(s, T0 + 12, 101, MT_FN_MALLOC, 0xc000, 4000, 0);		/* C */
	put_exec(s, T0 + 20, 101, "/usr/bin/python3", "python3");
	put_alloc(s, T0 + 21, 101, MT_FN_MALLOC, 0xd000, 11, 0);		/* D */
	put_alloc(s, T0 + 22, 101, MT_FN_MALLOC, 0xe000, 22, 0);		/* E */
	put_free(s, T0 + 23, 101, 0xd000);
	put_exit(s, T0 + 30, 101, EXITED(0));
	put_free(s, T0 + 31, 100, 0xb000);
	if (!end)
		return;
	put_exit(s, T0 + 40, 100, EXITED(0));
	put_end(s, T0 + 41, 100, EXITED(0), 0, 0, 0);
}

/* inherited, allocations and bytes, frees and bytes, discarded, leaked: as assert_heap. */
static void test_image_rows_model(void **state)
{
	static const uint64_t sh[10] = { 0, 0, 2, 300, 1, 200, 0, 0, 1, 100 };
	static const uint64_t sh0[10] = { 2, 300, 1, 4000, 1, 100, 2, 4200, 0, 0 };
	static const uint64_t py[10] = { 0, 0, 2, 33, 1, 11, 0, 0, 1, 22 };
	struct fix *f = *state;
	const struct mt_image *img;

	rows_records(&f->s, true);
	finish_and_find(f, 100);
	assert_int_equal(mt_model__nr_images(f->m), 3);
	assert_int_equal(mt_model__totals(f->m)->images, 3);
	assert_int_equal(mt_model__totals(f->m)->processes, 2);
	img = mt_model__image(f->m, 0);
	assert_int_equal(img->pid, 100);
	assert_int_equal(img->image, 0);		/* named by memtrack's exec of the command, not ended */
	assert_true(img->from_exec);
	assert_string_equal(img->exe, "/bin/sh");
	assert_int_equal(img->end, MT_IMAGE_EXIT);
	assert_heap(&img->heap, sh);
	img = mt_model__image(f->m, 1);
	assert_int_equal(img->pid, 101);
	assert_int_equal(img->image, 0);
	assert_false(img->from_exec);
	assert_int_equal(img->parent, 0);
	assert_string_equal(img->exe, "/bin/sh");	/* its parent's */
	assert_int_equal(img->end, MT_IMAGE_EXEC);
	assert_heap(&img->heap, sh0);
	assert_int_equal(img->heap.peak_live_bytes, 4200);
	img = mt_model__image(f->m, 2);
	assert_int_equal(img->pid, 101);
	assert_int_equal(img->image, 1);
	assert_string_equal(img->exe, "/usr/bin/python3");
	assert_int_equal(img->end, MT_IMAGE_EXIT);
	assert_heap(&img->heap, py);
	assert_int_equal(img->heap.peak_live_bytes, 33);
	assert_int_equal(mt_model__find_proc(f->m, 101)->nr_images, 2);
	assert_int_equal(mt_model__find_proc(f->m, 101)->heap.allocations, 3);	/* the sum of its images' */
	assert_identities(f->m);
}

struct scratch {
	char dir[64];
};

static int scratch_setup(void **state)
{
	struct scratch *s = calloc(1, sizeof(*s));

	if (!s)
		return -1;
	snprintf(s->dir, sizeof(s->dir), "/tmp/mt-test-rows-XXXXXX");
	if (!mkdtemp(s->dir))
		return -1;
	*state = s;
	return 0;
}

static int scratch_teardown(void **state)
{
	struct scratch *s = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->dir);
	if (system(cmd))
		return -1;
	free(s);
	return 0;
}

static void write_records(const char *dir, void (*records)(struct sink *, bool), bool end)
{
	struct sink s = { put_writer, NULL };

	s.ctx = mt_writer__open(dir);
	assert_non_null(s.ctx);
	records(&s, end);
	assert_int_equal(mt_writer__close(s.ctx), 0);
}

static void write_text(const char *dir, const char *name, const char *text)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	mt_test__write_file(path, text, strlen(text));
}

/*
 * What tracer/cmdlines.c read for the two pids: python3's own, sh's (the session's too). \u00XX below U+0100 reads
 * back as that byte (the writer's escape of an invalid one; it writes valid UTF-8 as it is).
 */
static const char rows_metadata[] =
	"{\n  \"root_pid\": 100,\n  \"realtime_ns\": 1,\n  \"processes\": [\n"
	"    {\"pid\": 100, \"ppid\": 99, \"name\": \"sh\", \"exe\": \"/bin/sh\",\n"
	"     \"cmdline\": [\"sh\", \"-c\", \"python3 -c 'print(1)'\"], \"start_ns\": 0, \"exit_ns\": 40, \"status\": 0},\n"
	"    {\"pid\": 101, \"ppid\": 100, \"name\": \"python3\", \"exe\": \"/usr/bin/python3\",\n"
	"     \"cmdline\": [\"python3\", \"-c\", \"print(1)\", \"\\u00ff\\\"\\u00e9\"], \"start_ns\": 10,\n"
	"     \"exit_ns\": 30, \"status\": {\"nested\": [1, true, null]}}\n  ]\n}\n";

/* A fork child that execs: two rows, each with its command line (metadata's, its parent's), its own counts. */
static void test_image_rows_report(void **state)
{
	struct scratch *s = *state;
	char *out;
	int ret;

	write_records(s->dir, rows_records, true);
	write_text(s->dir, "memory_metadata.json", rows_metadata);
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", s->dir, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "processes:   2 (3 images)\n"));
	assert_non_null(strstr(out,
		"    PID    PPID IMG  STATUS      INHERIT    ALLOCS     FREES  ALLOCATED       PEAK DISCARD   LEAKS     "
		"LEAKED  EXE  COMMAND\n"
		"    100      99   0  exit 0            0         2         1      300 B      300 B       0       1      "
		"100 B  /bin/sh  sh -c 'python3 -c '\\''print(1)'\\'''\n"
		"    101     100   0  exec              2         1         1    3.9 KiB    4.1 KiB       2       0        "
		"0 B  /bin/sh  sh -c 'python3 -c '\\''print(1)'\\'''\n"
		"    101     100   1  exit 0            0         2         1       33 B       33 B       0       1       "
		"22 B  → /usr/bin/python3  python3 -c 'print(1)' '?\"?'\n"));
	free(out);
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", "--json", s->dir, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "\"images\": 3,"));
	assert_non_null(strstr(out, "      \"pid\": 101,\n      \"ppid\": 100,\n      \"image\": 1,\n"
				    "      \"exe\": \"/usr/bin/python3\",\n      \"comm\": \"python3\",\n"
				    "      \"cmdline\": [\n        \"python3\",\n        \"-c\",\n        \"print(1)\",\n"
				    "        \"\\u00ff\\\"\\u00e9\"\n      ],\n      \"ended_by\": \"exit\",\n"
				    "      \"exited\": true,\n      \"status\": 0,\n      \"signal\": null,\n"
				    "      \"inherited_allocations\": 0,\n      \"inherited_bytes\": 0,\n"
				    "      \"allocations\": 2,\n"));
	assert_non_null(strstr(out, "      \"image\": 0,\n      \"exe\": \"/bin/sh\",\n      \"comm\": \"sh\",\n"
				    "      \"cmdline\": [\n        \"sh\",\n        \"-c\",\n"
				    "        \"python3 -c 'print(1)'\"\n      ],\n      \"ended_by\": \"exec\",\n"
				    "      \"exited\": false,\n      \"status\": null,\n"));
	free(out);
	/* without the metadata: the exec'd image has no command line; the others have the session's */
	write_text(s->dir, "memory_metadata.json", "{\"processes\": [{\"pid\": 101, \"cmdline\": ");
	out = mt_test__capture(mt_cmd_report, 2, &ret, "report", s->dir, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "memory_metadata.json: Bad message: the rows have no command lines\n"));
	free(out);
}

/* The built-in metadata writer's strings read back byte for byte. */
static const char *md_cmdline(void *ctx, uint32_t pid, size_t *len)
{
	static const char args[] = "caf\xc3\xa9\0\x01\xff\"\\\0";

	(void)ctx;
	*len = sizeof(args) - 1;
	return pid == 100 ? args : NULL;
}

static void test_metadata_round_trip(void **state)
{
	struct scratch *s = *state;
	struct mt_metadata_src src = { md_cmdline, NULL };
	const char *const *argv;
	struct mt_metadata *md;
	struct fix *f = calloc(1, sizeof(*f));
	char path[PATH_MAX];
	size_t argc;
	int fd;

	f->m = mt_model__new();
	f->s = (struct sink){ put_model, f->m };
	rows_records(&f->s, true);
	assert_int_equal(mt_model__finish(f->m), 0);
	snprintf(path, sizeof(path), "%s/" MT_METADATA_FILE, s->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(mt_metadata__write(fd, f->m, &src), 0);
	md = mt_metadata__read(s->dir);
	assert_non_null(md);
	argv = mt_metadata__cmdline(md, 101, &argc);	/* a child without its own: its parent's */
	assert_non_null(argv);
	assert_int_equal(argc, 2);
	assert_string_equal(argv[0], "caf\xc3\xa9");
	assert_string_equal(argv[1], "\x01\xff\"\\");
	assert_null(argv[2]);
	assert_null(mt_metadata__cmdline(md, 7, &argc));
	mt_metadata__free(md);
	mt_model__free(f->m);
	free(f);
}

/* record --label: written to the metadata and read back; a file of an earlier writer has none. */
static void test_labels_round_trip(void **state)
{
	struct scratch *s = *state;
	struct mt_labels l = { 0 };
	struct mt_metadata_src src = { md_cmdline, NULL, NULL, &l };
	const struct mt_labels *back;
	struct mt_metadata *md;
	struct fix *f = calloc(1, sizeof(*f));
	char path[PATH_MAX];
	int fd;

	assert_int_equal(mt_labels__add(&l, "record", "commit=0123abc"), 0);
	assert_int_equal(mt_labels__add(&l, "record", "bench.name_1-x=a \"quoted\" {value}, 100%"), 0);
	assert_int_equal(mt_labels__add(&l, "record", "empty="), 0);
	f->m = mt_model__new();
	f->s = (struct sink){ put_model, f->m };
	rows_records(&f->s, true);
	assert_int_equal(mt_model__finish(f->m), 0);
	snprintf(path, sizeof(path), "%s/" MT_METADATA_FILE, s->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(mt_metadata__write(fd, f->m, &src), 0);
	md = mt_metadata__read(s->dir);
	assert_non_null(md);
	back = mt_metadata__labels(md);
	assert_int_equal(back->n, 3);
	assert_string_equal(back->v[0].key, "commit");
	assert_string_equal(back->v[0].value, "0123abc");
	assert_string_equal(back->v[1].key, "bench.name_1-x");
	assert_string_equal(back->v[1].value, "a \"quoted\" {value}, 100%");
	assert_string_equal(back->v[2].key, "empty");
	assert_string_equal(back->v[2].value, "");
	assert_non_null(mt_metadata__cmdline(md, 100, &(size_t){ 0 }));	/* the rest as before */
	mt_metadata__free(md);
	mt_labels__release(&l);
	write_text(s->dir, "memory_metadata.json", rows_metadata);
	md = mt_metadata__read(s->dir);
	assert_non_null(md);
	assert_int_equal(mt_metadata__labels(md)->n, 0);
	assert_int_equal(mt_metadata__realtime_ns(md), 1);
	mt_metadata__free(md);
	assert_int_equal(mt_metadata__labels(NULL)->n, 0);
	assert_int_equal(mt_metadata__realtime_ns(NULL), 0);
	mt_model__free(f->m);
	free(f);
}

/* Each bad --label: one line, exit 2, and no DIR made. */
static void test_labels_refused(void **state)
{
	static const char *const bad[][2] = {
		{ "novalue", "--label: not KEY=VALUE" },
		{ "=v", "--label: KEY is empty" },
		{ "a b=c", "--label: KEY may hold only letters, digits, '_', '.' and '-'" },
		{ "k\n=c", "--label: KEY may hold only letters, digits, '_', '.' and '-'" },
		{ "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk=v",
		  "--label: KEY is longer than 64 characters" },
		{ "pid=1", "--label: KEY pid and exe are pprof's per-sample labels" },
		{ "exe=x", "--label: KEY pid and exe are pprof's per-sample labels" },
		{ "k=a\tb", "--label k=...: VALUE may hold only printable ASCII characters" },
		{ "k=caf\xc3\xa9", "--label k=...: VALUE may hold only printable ASCII characters" },
	};
	struct scratch *s = *state;
	char dir[PATH_MAX], want[200], big[300], *err;
	struct mt_labels l = { 0 };
	struct stat sb;
	size_t i;
	int ret;

	snprintf(dir, sizeof(dir), "%s/rec", s->dir);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = mt_test__capture(mt_cmd_record, 2, &ret, "record", "--label", "ok=1", "--label", bad[i][0], "-o",
				       dir, "--", "true", NULL);
		snprintf(want, sizeof(want), "memtrack: record: %s\n", bad[i][1]);
		assert_string_equal(err, want);
		assert_int_equal(ret, 2);
		assert_int_equal(stat(dir, &sb), -1);
		free(err);
	}
	err = mt_test__capture(mt_cmd_record, 2, &ret, "record", "--label", "k=1", "--label", "k=2", "-o", dir, "--",
			       "true", NULL);
	assert_string_equal(err, "memtrack: record: --label k=...: KEY is given twice\n");
	assert_int_equal(stat(dir, &sb), -1);
	free(err);
	memset(big, 'v', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "k=", 2);
	assert_int_equal(mt_labels__add(&l, "record", big), -EINVAL);	/* 297 characters */
	big[2 + MT_LABEL_VALUE_MAX] = '\0';
	assert_int_equal(mt_labels__add(&l, "record", big), 0);		/* 256 */
	for (i = 1; i < MT_LABELS_MAX; i++) {
		snprintf(want, sizeof(want), "k%zu=v", i);
		assert_int_equal(mt_labels__add(&l, "record", want), 0);
	}
	assert_int_equal(mt_labels__add(&l, "record", "one=more"), -EINVAL);
	assert_int_equal(l.n, MT_LABELS_MAX);
	mt_labels__release(&l);
}

/* report: a "labels:" header line and a "labels" object when the recording has them, nothing when not. */
static void test_labels_report(void **state)
{
	static const char labelled[] =
		"{\n  \"root_pid\": 100,\n  \"realtime_ns\": 1,\n"
		"  \"labels\": {\"commit\": \"0123abc\", \"bench\": \"a b\"},\n  \"processes\": []\n}\n";
	static const char json_head[] =
		"{\n  \"labels\": {\n    \"commit\": \"0123abc\",\n    \"bench\": \"a b\"\n  },\n  \"totals\": {\n";
	struct scratch *s = *state;
	char *out;
	int ret;

	write_records(s->dir, rows_records, true);
	write_text(s->dir, "memory_metadata.json", labelled);
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", s->dir, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "processes:   2 (3 images)\nlabels:      commit=0123abc bench=a b\n\n"));
	free(out);
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", "--json", s->dir, NULL);
	assert_int_equal(ret, 0);
	assert_true(!strncmp(out, json_head, strlen(json_head)));
	free(out);
	write_text(s->dir, "memory_metadata.json", rows_metadata);
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", s->dir, NULL);
	assert_null(strstr(out, "labels"));
	free(out);
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", "--json", s->dir, NULL);
	assert_null(strstr(out, "labels"));
	free(out);
}

/* Issue 36 item 3: timeline carries the labels, as a "labels" object in its JSON and at the end of its SVG's title. */
static void test_labels_timeline(void **state)
{
	static const char labelled[] =
		"{\n  \"root_pid\": 100,\n  \"realtime_ns\": 1,\n"
		"  \"labels\": {\"commit\": \"0123abc\", \"bench\": \"a<b\"},\n  \"processes\": []\n}\n";
	struct scratch *s = *state;
	char want[PATH_MAX + 100], *out;
	int ret;

	write_records(s->dir, rows_records, true);
	write_text(s->dir, "memory_metadata.json", labelled);
	out = mt_test__capture(mt_cmd_timeline, 1, &ret, "timeline", "--json", s->dir, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, ",\"suppressed_bytes\":0,\"labels\":{\"commit\":\"0123abc\",\"bench\":\"a<b\"},"
				    "\"events\":["));
	free(out);
	out = mt_test__capture(mt_cmd_timeline, 1, &ret, "timeline", s->dir, NULL);
	assert_int_equal(ret, 0);
	snprintf(want, sizeof(want), ">memtrack: live heap bytes over time, %s [commit=0123abc bench=a&lt;b]</text>\n",
		 s->dir);
	assert_non_null(strstr(out, want));
	free(out);
	write_text(s->dir, "memory_metadata.json", rows_metadata);
	out = mt_test__capture(mt_cmd_timeline, 1, &ret, "timeline", "--json", s->dir, NULL);
	assert_null(strstr(out, "labels"));
	free(out);
}

/* Two processes leak; a file's pattern can only match the exe without stacks: python3's leak goes, sh's stays. */
static void test_suppress_file(void **state)
{
	struct scratch *s = *state;
	char path[128], *out;
	int ret;

	write_records(s->dir, rows_records, true);
	snprintf(path, sizeof(path), "%s/sup", s->dir);
	write_text(s->dir, "sup", "# runtime noise\n\n  leak:python*   \n");
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", "--suppress", path, s->dir, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "  leaked at exit:     1 block, 100 B\n"
				    "  suppressed leaks:   1 block, 22 B (leak:python*: 1)\n"));
	assert_non_null(strstr(out, "    101     100   1  exit 0            0         2         1       33 B       "
				    "33 B       0       0        0 B  → /usr/bin/python3\n"));
	free(out);
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", "--json", "--suppress", path, s->dir, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "    \"leaked_allocations\": 1,\n    \"leaked_bytes\": 100,\n"
				    "    \"suppressed_allocations\": 1,\n    \"suppressed_bytes\": 22,\n"));
	assert_non_null(strstr(out, "    \"suppressions\": [\n      {\n        \"suppression\": \"leak:python*\",\n"
				    "        \"builtin\": false,\n        \"allocations\": 1,\n        \"bytes\": 22\n"));
	free(out);
	/* anchored: "^python" is not a substring match of "/usr/bin/python3" */
	write_text(s->dir, "sup", "leak:^python\n");
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", "--suppress", path, s->dir, NULL);
	assert_non_null(strstr(out, "  leaked at exit:     2 blocks, 122 B\n  mappings:"));
	free(out);
	write_text(s->dir, "sup", "leak:x\nfun:malloc\n");
	out = mt_test__capture(mt_cmd_report, 2, &ret, "report", "--suppress", path, s->dir, NULL);
	assert_int_equal(ret, 2);
	assert_non_null(strstr(out, "sup:2: not a suppression (one `leak:FUNCTION_OR_MODULE` a line, `#` comments)\n"));
	free(out);
	out = mt_test__capture(mt_cmd_report, 2, &ret, "report", "--suppress", "/nonexistent/sup", s->dir, NULL);
	assert_int_equal(ret, 2);
	assert_string_equal(out, "memtrack: report: --suppress /nonexistent/sup: No such file or directory\n");
	free(out);
}

/* --leaks without stacks: by process (image), largest first; JSON likewise. */
static void test_leaks_listing(void **state)
{
	struct scratch *s = *state;
	char *out;
	int ret;

	write_records(s->dir, rows_records, true);
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", "--leaks", s->dir, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "\n(recorded without --stacks: leaks are listed by process; `memtrack record "
				    "--stacks` records their allocation sites)\n\n"
				    "leaked at exit, by process (2 images, largest first):\n"
				    "  #1   100 B in 1 block; pid 100: /bin/sh\n"
				    "  #2   22 B in 1 block; pid 101: /usr/bin/python3\n"));
	assert_null(strstr(out, "still live"));
	free(out);
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", "--leaks", "--json", "--sites", "1", s->dir, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "  \"leaks\": [\n    {\n      \"allocations\": 1,\n      \"bytes\": 100,\n"
				    "      \"stack\": null,\n      \"exe\": \"/bin/sh\",\n      \"pids\": [\n        100\n"
				    "      ],\n      \"frames\": []\n    }\n  ],\n  \"still_live\": []\n}\n"));
	free(out);
}

/* Issue 32 item 4: C++ names with their template arguments elided, operators' '<' kept, literally. */
static void test_elide_templates(void **state)
{
	static const char *const cases[][2] = {
		{ "std::vector<int, std::allocator<int> >::push_back", "std::vector<\u2026>::push_back" },
		{ "std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>",
		  "std::vector<\u2026>::_M_realloc_insert<\u2026>" },
		{ "std::map<std::string, int>::operator[]", "std::map<\u2026>::operator[]" },
		{ "std::operator<< <std::char_traits<char> >", "std::operator<< <\u2026>" },
		{ "app::Key::operator<", "app::Key::operator<" },
		{ "app::Key::operator<=>", "app::Key::operator<=>" },
		{ "std::function<void (int)>::operator()", "std::function<\u2026>::operator()" },
		{ "core::ptr::drop_in_place::<mycrate::Foo>", "core::ptr::drop_in_place::<\u2026>" },
		{ "plain_c_function", "plain_c_function" },
		{ "broken<", "broken<" },
	};
	size_t i;
	char *o;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		o = mt_text__elide_templates(cases[i][0]);
		assert_non_null(o);
		assert_string_equal(o, cases[i][1]);
		free(o);
	}
}

/* Without an END record and with processes that never exited: "still live", never "leaked at exit". */
static void test_still_live_unfinished(void **state)
{
	struct scratch *s = *state;
	char *out;
	int ret;

	write_records(s->dir, rows_records, false);
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", s->dir, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "  leaked at exit:     1 block, 22 B\n"
				    "  still live:         1 block, 100 B (the recording did not finish: live when it "
				    "stopped, not leaks)\n"));
	assert_non_null(strstr(out, "    100      99   0  running           0         2         1      300 B      "
				    "300 B       0       1      100 B  /bin/sh"));
	assert_non_null(strstr(out, "(rows `running` or `live`: LEAKS and LEAKED are the blocks still live at the end, "
				    "not leaks)\n"));
	free(out);
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", "--leaks", s->dir, NULL);
	assert_non_null(strstr(out, "\nstill live at the end (no exit record: not leaks), by process (1 image, largest "
				    "first):\n  #1   100 B in 1 block; pid 100: /bin/sh\n"));
	free(out);
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", "--json", s->dir, NULL);
	assert_non_null(strstr(out, "    \"leaked_allocations\": 1,\n    \"leaked_bytes\": 22,\n"
				    "    \"suppressed_allocations\": 0,\n    \"suppressed_bytes\": 0,\n"
				    "    \"inherited_live_allocations\": 0,\n    \"inherited_live_bytes\": 0,\n"
				    "    \"still_live_allocations\": 1,\n    \"still_live_bytes\": 100,\n"));
	free(out);
}

/* A model of rows_records through a filter. */
static struct mt_model *filtered_model(const struct mt_filter *flt, void (*records)(struct sink *, bool))
{
	struct mt_model_opts o = { flt, true };
	struct mt_model *m = mt_model__new_with(&o);
	struct sink s = { put_model, m };

	assert_non_null(m);
	records(&s, true);
	assert_int_equal(mt_model__finish(m), 0);
	assert_identities(m);
	return m;
}

static void test_filter_pid_exe(void **state)
{
	uint32_t pids[] = { 101 };
	const char *exes[] = { "python3", "/bin/sh" };
	struct mt_filter flt = { .pids = pids, .npids = 1, .to_ns = MT_FILTER_END };
	struct mt_model *m;
	const struct mt_totals *t;

	(void)state;
	m = filtered_model(&flt, rows_records);
	t = mt_model__totals(m);
	assert_int_equal(t->processes, 1);
	assert_int_equal(t->images, 2);
	assert_false(mt_model__image(m, 0)->matched);
	assert_true(mt_model__image(m, 1)->matched && mt_model__image(m, 2)->matched);
	assert_int_equal(t->heap.allocations, 3);
	assert_int_equal(t->heap.inherited_allocations, 2);
	assert_int_equal(t->heap.leaked_bytes, 22);
	assert_int_equal(t->heap.peak_live_bytes, 4200);	/* 101's alone: sh's 300 B do not count */
	mt_model__free(m);

	flt = (struct mt_filter){ .exes = exes, .nexes = 1, .to_ns = MT_FILTER_END };	/* a basename */
	m = filtered_model(&flt, rows_records);
	t = mt_model__totals(m);
	assert_int_equal(t->images, 1);
	assert_true(mt_model__image(m, 2)->matched);
	assert_int_equal(t->heap.allocations, 2);
	assert_int_equal(t->heap.peak_live_bytes, 33);
	assert_int_equal(t->heap.peak_ts_ns, 22);
	mt_model__free(m);

	flt.exes = exes + 1;	/* a path: sh and the fork child's first image */
	m = filtered_model(&flt, rows_records);
	assert_int_equal(mt_model__totals(m)->images, 2);
	assert_int_equal(mt_model__totals(m)->processes, 2);
	assert_int_equal(mt_model__totals(m)->heap.exec_discarded_bytes, 4200);
	mt_model__free(m);

	pids[0] = 5;
	flt = (struct mt_filter){ .pids = pids, .npids = 1, .to_ns = MT_FILTER_END };
	m = filtered_model(&flt, rows_records);
	assert_int_equal(mt_model__totals(m)->images, 0);
	assert_int_equal(mt_model__totals(m)->heap.allocations, 0);
	mt_model__free(m);
}

/*
 * A window: root 10 holds a (100) and b (200) from before it; its child 11 inherits both. In the window 10
 * allocates c (50) and d (70), frees a (early) and c; 11 frees b (early, inherited). 11 exits after it.
 */
static void window_records(struct sink *s, bool end)
{
	static const char *argv[] = { "w" };

	put_session(s, T0, 10, 1, 1, argv);
	put_alloc(s, T0 + 100, 10, MT_FN_MALLOC, 0xa000, 100, 0);
	put_alloc(s, T0 + 110, 10, MT_FN_MALLOC, 0xb000, 200, 0);
	put_fork(s, T0 + 200, 10, 11);
	put_alloc(s, T0 + 300, 10, MT_FN_MALLOC, 0xc000, 50, 0);
	put_free(s, T0 + 310, 10, 0xa000);
	put_free(s, T0 + 320, 11, 0xb000);
	put_free(s, T0 + 400, 10, 0xc000);
	put_alloc(s, T0 + 410, 10, MT_FN_MALLOC, 0xd000, 70, 0);
	put_exit(s, T0 + 500, 11, EXITED(0));
	if (end) {
		put_exit(s, T0 + 600, 10, EXITED(0));
		put_end(s, T0 + 610, 10, EXITED(0), 0, 0, 0);
	}
}

static void test_filter_window(void **state)
{
	struct mt_filter flt = { .from_ns = 250, .to_ns = 450 };
	const struct mt_heap_stats *h, *c;
	struct mt_model *m;

	(void)state;
	m = filtered_model(&flt, window_records);
	h = &mt_model__totals(m)->heap;
	assert_int_equal(h->start_live_allocations, 4);		/* a and b, in each process */
	assert_int_equal(h->start_live_bytes, 600);
	assert_int_equal(h->allocations, 2);
	assert_int_equal(h->allocated_bytes, 120);
	assert_int_equal(h->frees, 3);
	assert_int_equal(h->freed_bytes, 350);
	assert_int_equal(h->early_frees, 2);			/* a by 10, b by 11 */
	assert_int_equal(h->early_freed_bytes, 300);
	assert_int_equal(h->inherited_allocations, 0);		/* the fork was before it */
	assert_int_equal(h->leaked_allocations, 0);		/* 11's exit is after it */
	assert_int_equal(h->still_live_allocations, 3);		/* b and d in 10, a in 11 */
	assert_int_equal(h->still_live_bytes, 370);
	assert_int_equal(h->peak_live_bytes, 650);		/* at c: 300 + 300 + 50 */
	assert_int_equal(h->peak_ts_ns, 300);
	c = &mt_model__image(m, 1)->heap;
	assert_int_equal(c->start_live_allocations, 2);
	assert_int_equal(c->frees, 1);
	assert_int_equal(c->early_frees, 1);
	assert_int_equal(c->still_live_bytes, 100);
	assert_true(mt_model__image(m, 1)->open_end);		/* it lived past the window */
	assert_int_equal(mt_model__totals(m)->images, 2);
	mt_model__free(m);

	flt = (struct mt_filter){ .from_ns = 450, .to_ns = MT_FILTER_END };	/* to the end: the exits leak */
	m = filtered_model(&flt, window_records);
	h = &mt_model__totals(m)->heap;
	assert_int_equal(h->start_live_allocations, 3);
	assert_int_equal(h->allocations, 0);
	assert_int_equal(h->leaked_allocations, 2);		/* b and d, 10's */
	assert_int_equal(h->leaked_bytes, 270);
	assert_int_equal(h->inherited_live_allocations, 1);	/* a, which 11 inherited and never freed */
	assert_int_equal(h->inherited_live_bytes, 100);
	assert_int_equal(h->still_live_allocations, 0);
	assert_false(mt_model__image(m, 1)->open_end);
	mt_model__free(m);

	flt = (struct mt_filter){ .from_ns = 1, .to_ns = MT_FILTER_END };	/* open before the root's exec */
	m = filtered_model(&flt, rows_records);
	assert_int_equal(mt_model__nr_images(m), 3);
	assert_int_equal(mt_model__totals(m)->heap.allocations, 5);
	mt_model__free(m);

	flt = (struct mt_filter){ .from_ns = 700, .to_ns = MT_FILTER_END };	/* after the end: nothing */
	m = filtered_model(&flt, window_records);
	assert_int_equal(mt_model__totals(m)->images, 0);
	assert_int_equal(mt_model__totals(m)->heap.start_live_allocations, 0);
	mt_model__free(m);
}

/* The window in the text and JSON; a filter that matches nothing says so and exits 0. */
static void test_filter_report(void **state)
{
	struct scratch *s = *state;
	char *out;
	int ret;

	write_records(s->dir, window_records, true);
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", "--from", "0.00000025", "--to", ".00000045", s->dir,
			       NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "filter:      from 0.000000 s to 0.000000 s\n"));
	assert_non_null(strstr(out, "  live at the start:  4 blocks, 600 B (allocated before the window)\n"
				    "  allocations:        2\n  frees:              3\n"
				    "  of which earlier:   2 frees, 300 B: blocks allocated before the window\n"));
	assert_non_null(strstr(out, "  still live:         3 blocks, 370 B (live at the end of the window, or of the "
				    "recording)\n"));
	assert_non_null(strstr(out, "     11      10   0  live              0         0         1        0 B      "
				    "300 B       0       1      100 B  -  w\n"));
	free(out);
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", "--json", "--from", "0.00000025", s->dir, NULL);
	assert_non_null(strstr(out, "      \"from_ns\": 250,\n      \"to_ns\": null\n    },\n"
				    "    \"start_live_allocations\": 4,\n"));
	assert_non_null(strstr(out, "    \"frees_before_window\": 2,\n    \"freed_bytes_before_window\": 300,\n"));
	free(out);
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", "--pid=12", "--pid=13", "--exe=x", s->dir, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "processes:   0 of 2\nfilter:      pids 12, 13; exe x\n\n"
				    "nothing matched the filter: no process image of the recording passes it\n"));
	assert_null(strstr(out, "totals:"));
	free(out);
	out = mt_test__capture(mt_cmd_report, 2, &ret, "report", "--from", "1", "--to", "0.5", s->dir, NULL);
	assert_int_equal(ret, 2);
	assert_string_equal(out, "memtrack: report: --from 1.000000 s is not before --to 0.500000 s: the window is "
				 "empty\n");
	free(out);
	out = mt_test__capture(mt_cmd_report, 2, &ret, "report", "--leaks", "--attach", s->dir, NULL);
	assert_int_equal(ret, 2);
	assert_string_equal(out, "memtrack: report: --attach prints the attach log only: --leaks does not go with it "
				 "(usage: memtrack report [--json] [--attach | --sites N] DIR)\n");
	free(out);
}

static void test_filter_seconds(void **state)
{
	static const char *const bad[] = { "", ".", "-1", "1e3", "1.2.3", "x", "1 ", "99999999999999999999" };
	uint64_t ns = 7;
	size_t i;

	(void)state;
	assert_int_equal(mt_filter__seconds("t", "--from", "1.5", &ns), 0);
	assert_int_equal(ns, 1500000000);
	assert_int_equal(mt_filter__seconds("t", "--from", ".25", &ns), 0);
	assert_int_equal(ns, 250000000);
	assert_int_equal(mt_filter__seconds("t", "--from", "2", &ns), 0);
	assert_int_equal(ns, 2000000000);
	assert_int_equal(mt_filter__seconds("t", "--from", "0.0000000019", &ns), 0);	/* past the ns: cut */
	assert_int_equal(ns, 1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(mt_filter__seconds("t", "--to", bad[i], &ns), -EINVAL);
}

/* dump's filters: a pid's records (its fork too), an exe's image, a window. */
static size_t count_lines(const char *s, const char *needle)
{
	size_t n = 0;
	const char *line;

	for (line = s; *line; line = strchr(line, '\n') + 1) {
		const char *nl = strchr(line, '\n');
		char buf[512];

		snprintf(buf, sizeof(buf), "%.*s", (int)(nl - line), line);
		n += !needle || strstr(buf, needle);
	}
	return n;
}

static void test_dump_filters(void **state)
{
	struct scratch *s = *state;
	char *out;
	int ret;

	write_records(s->dir, rows_records, true);
	out = mt_test__capture(mt_cmd_dump, 1, &ret, "dump", "--pid", "101", s->dir, NULL);
	assert_int_equal(ret, 0);
	assert_int_equal(count_lines(out, NULL), 10);	/* its fork, 2 frees, 3 mallocs, its exec and exit; the
							 * session and end records */
	assert_int_equal(count_lines(out, "\"pid\":101,"), 7);
	assert_int_equal(count_lines(out, "\"event\":\"fork\""), 1);
	free(out);
	out = mt_test__capture(mt_cmd_dump, 1, &ret, "dump", "--exe", "python3", s->dir, NULL);
	assert_int_equal(count_lines(out, NULL), 7);	/* from its exec: 2 mallocs, a free, the exit; session, end */
	assert_non_null(strstr(out, "{\"ts_ns\":1000000020,\"pid\":101,\"tid\":101,\"event\":\"exec\","));
	free(out);
	out = mt_test__capture(mt_cmd_dump, 1, &ret, "dump", "--from", "0.000000021", "--to", "0.000000031", s->dir,
			       NULL);
	assert_int_equal(count_lines(out, NULL), 4);	/* [21, 31): 21, 22, 23 and 30 */
	free(out);
	out = mt_test__capture(mt_cmd_dump, 2, &ret, "dump", "--pid", "x", s->dir, NULL);
	assert_int_equal(ret, 2);
	free(out);
}

/* ---- resident memory (MT_REC_RSS) ---- */

static void put_rss(struct sink *s, uint64_t ts, uint32_t pid, uint64_t anon, uint64_t file, uint64_t shmem)
{
	struct mt_rss r = { .anon = anon, .file = file, .shmem = shmem, .swap = 4096, .why = MT_RSS_WHY_STEP };

	hdr_init(&r.hdr, MT_REC_RSS, sizeof(r), ts, pid, pid);
	put(s, &r, sizeof(r));
}

#define MIB (1ull << 20)

/* Each process's peak and its time; the totals' is the peak of the sum (30 MiB at 300), not the sum of the peaks
 * (10 + 25): 10 at 100, +20 at 300, 10 → 4 at 400, the child 25 at 500 after its parent's exit at 450. */
static void test_rss_peaks(void **state)
{
	struct fix *f = *state;
	const char *argv[] = { "a" };
	const struct mt_proc *p, *c;
	const struct mt_totals *t;

	put_session(&f->s, 0, 10, 1, 1, argv);
	put_fork(&f->s, 50, 10, 11);
	put_rss(&f->s, 100, 10, 8 * MIB, 2 * MIB, 0);
	put_rss(&f->s, 300, 11, 18 * MIB, 1 * MIB, 1 * MIB);
	put_rss(&f->s, 400, 10, 3 * MIB, 1 * MIB, 0);
	put_exit(&f->s, 450, 10, 0);
	put_rss(&f->s, 500, 11, 24 * MIB, 1 * MIB, 0);
	put_exit(&f->s, 600, 11, 0);
	p = finish_and_find(f, 10);
	c = mt_model__find_proc(f->m, 11);
	t = mt_model__totals(f->m);
	assert_int_equal(p->rss.peak_rss_bytes, 10 * MIB);
	assert_int_equal(p->rss.peak_rss_ts_ns, 100);
	assert_int_equal(p->rss.records, 2);
	assert_int_equal(p->rss.rss_bytes, 0);
	assert_int_equal(c->rss.peak_rss_bytes, 25 * MIB);
	assert_int_equal(c->rss.peak_rss_ts_ns, 500);
	assert_int_equal(t->rss.peak_rss_bytes, 30 * MIB);
	assert_int_equal(t->rss.peak_rss_ts_ns, 300);
	assert_int_equal(t->rss.records, 4);
	assert_int_equal(t->rss.rss_bytes, 0);
	assert_int_equal(mt_model__image(f->m, 0)->rss.peak_rss_bytes, 10 * MIB);
}

/* Without RSS records the reports have no RSS keys or lines: the golden outputs stay as they were. */
static void test_rss_absent(void **state)
{
	struct fix *f = *state;
	char *out = NULL;
	size_t len = 0;
	FILE *mem;

	put_alloc(&f->s, 10, 10, MT_FN_MALLOC, 0x1000, 64, 0);
	assert_int_equal(mt_model__finish(f->m), 0);
	mem = open_memstream(&out, &len);
	assert_non_null(mem);
	assert_int_equal(mt_report__json(mem, f->m), 0);
	assert_int_equal(mt_report__text(mem, f->m, "x"), 0);
	fclose(mem);
	assert_null(strstr(out, "rss"));
	assert_null(strstr(out, "RSS"));
	free(out);
}

/* With them: the totals' and each row's keys, the text's line and table. */
static void test_rss_report(void **state)
{
	struct fix *f = *state;
	char *out = NULL;
	size_t len = 0;
	FILE *mem;

	put_rss(&f->s, 10, 10, 3 * MIB, MIB, 0);
	put_rss(&f->s, 20, 10, MIB, MIB, 0);
	assert_int_equal(mt_model__finish(f->m), 0);
	mem = open_memstream(&out, &len);
	assert_non_null(mem);
	assert_int_equal(mt_report__json(mem, f->m), 0);
	fclose(mem);
	assert_non_null(strstr(out, "\"peak_rss_bytes\": 4194304,\n    \"peak_rss_ts_ns\": 0,\n    \"rss_records\": 2,\n"));
	assert_non_null(strstr(out, "\"peak_rss_bytes\": 4194304,\n      \"peak_rss_ts_ns\": 0,\n"));
	free(out);
	mem = open_memstream(&out, &len);
	assert_non_null(mem);
	assert_int_equal(mt_report__text(mem, f->m, "x"), 0);
	fclose(mem);
	assert_non_null(strstr(out, "  peak RSS:           4.0 MiB (4194304 B) at 0.000000 s"));
	assert_non_null(strstr(out, "     10   0    4.0 MiB       0.000000        0 B        0 B        0 B    1.0 MiB"
		"        0 B    3.0 MiB  -\n"));
	free(out);
}

/* ---- where RSS goes at its peak ---- */

#define MS 1000000ull

/*
 * pid 10 maps 4 MiB in an allocator call and holds a 3 MiB block there, maps 2 MiB itself, forks 11 (which inherits
 * both) and frees the block after its RSS peaked at 100 ms: anon 5 MiB, file 1 MiB, shmem 256 KiB. 11's peaks at
 * 120 ms: anon 7 MiB. The total's peak is the sum then, 13.25 MiB.
 */
static void gap_records(struct sink *s)
{
	const char *argv[] = { "./prog" };

	put_session(s, T0, 10, 1, 1, argv);
	put_mmap(s, T0 + 1 * MS, 10, MAP_A, 4 * MIB, MT_SYS_ORIGIN_ALLOCATOR);
	put_alloc(s, T0 + 2 * MS, 10, MT_FN_MALLOC, MAP_A + 16, 3 * MIB, 0);
	put_mmap(s, T0 + 3 * MS, 10, MAP_C, 2 * MIB, MT_SYS_ORIGIN_PROGRAM);
	put_fork(s, T0 + 50 * MS, 10, 11);
	put_rss(s, T0 + 100 * MS, 10, 5 * MIB, MIB, MIB / 4);
	put_rss(s, T0 + 120 * MS, 11, 7 * MIB, 0, 0);
	put_free(s, T0 + 200 * MS, 10, MAP_A + 16);
	put_munmap(s, T0 + 205 * MS, 10, MAP_C, 2 * MIB);
	put_rss(s, T0 + 210 * MS, 10, 2 * MIB, MIB, 0);
	put_exit(s, T0 + 300 * MS, 10, EXITED(0));
	put_exit(s, T0 + 310 * MS, 11, EXITED(0));
	put_end(s, T0 + 320 * MS, 10, EXITED(0), 0, 0, 0);
}

static void assert_terms(const struct mt_rss_stats *r, uint64_t rss, const int64_t want[MT_RSS_TERM__COUNT])
{
	int64_t terms[MT_RSS_TERM__COUNT];
	int i;

	assert_int_equal(mt_rss_parts__terms(&r->at_peak, terms), rss);
	assert_int_equal(r->peak_rss_bytes, rss);
	for (i = 0; i < MT_RSS_TERM__COUNT; i++)
		assert_int_equal(terms[i], want[i]);
}

/* The model's books at each peak: per process, per image and in total, the terms adding up to the peak. */
static void test_rss_terms(void **state)
{
	const int64_t p10[] = { 3 * MIB, MIB, 2 * MIB, MIB, MIB / 4, -(int64_t)MIB };
	const int64_t p11[] = { 3 * MIB, MIB, 2 * MIB, 0, 0, MIB };
	const int64_t tot[] = { 6 * MIB, 2 * MIB, 4 * MIB, MIB, MIB / 4, 0 };
	struct fix *f = *state;
	const struct mt_totals *t;
	const struct mt_proc *p;

	gap_records(&f->s);
	p = finish_and_find(f, 10);
	t = mt_model__totals(f->m);
	assert_terms(&p->rss, 6 * MIB + MIB / 4, p10);
	assert_int_equal(p->rss.peak_rss_ts_ns, 100 * MS);
	assert_int_equal(p->rss.at_peak.anon, 5 * MIB);
	assert_int_equal(p->rss.at_peak.swap, 4096);
	assert_terms(&mt_model__image(f->m, 0)->rss, 6 * MIB + MIB / 4, p10);
	assert_terms(&mt_model__find_proc(f->m, 11)->rss, 7 * MIB, p11);
	assert_terms(&t->rss, 13 * MIB + MIB / 4, tot);
	assert_int_equal(t->rss.peak_rss_ts_ns, 120 * MS);
	assert_int_equal(t->rss.at_peak.allocator_bytes, 8 * MIB);
	assert_int_equal(t->rss.at_peak.swap, 2 * 4096);
}

/* The same as report prints it: the totals' block, the rows' columns, and the JSON's keys with the same numbers. */
static void test_rss_terms_report(void **state)
{
	struct fix *f = *state;
	char *out = NULL;
	size_t len = 0;
	FILE *mem;

	gap_records(&f->s);
	assert_int_equal(mt_model__finish(f->m), 0);
	mem = open_memstream(&out, &len);
	assert_non_null(mem);
	assert_int_equal(mt_report__text(mem, f->m, "x"), 0);
	fclose(mem);
	assert_non_null(strstr(out, "\nWhere RSS goes at its peak (2 processes summed, 0.120000 s):\n"
		"  live heap:          6.0 MiB (6291456 B)           45.3% (the live blocks' sizes)\n"
		"  allocator-held:     2.0 MiB (2097152 B)           15.1% (mapped inside allocator calls, less the "
		"live heap: free blocks, metadata, rounding)\n"
		"  program mappings:   4.0 MiB (4194304 B)           30.2% (anonymous private, by the program and its "
		"loader)\n"
		"  file-backed:        1.0 MiB (1048576 B)            7.5% (resident pages of files: code, data, mmap)\n"
		"  shmem:              256.0 KiB (262144 B)           1.9%\n"
		"  the rest:           0 B                            0.0% (anonymous, in no mapping above: stacks, "
		"copy-on-write pages of files, older mappings)\n"
		"  = peak RSS:         13.2 MiB (13893632 B)        100.0% (anon 12.0 MiB + file + shmem; swapped out, "
		"not in it: 8.0 KiB)\n"));
	assert_non_null(strstr(out, "     10   0    6.2 MiB       0.100000    3.0 MiB    1.0 MiB    2.0 MiB    1.0 MiB"
		"  256.0 KiB   -1.0 MiB  -\n     11   0    7.0 MiB       0.120000    3.0 MiB    1.0 MiB    2.0 MiB"
		"        0 B        0 B    1.0 MiB  -\n"));
	free(out);
	mem = open_memstream(&out, &len);
	assert_non_null(mem);
	assert_int_equal(mt_report__json(mem, f->m), 0);
	fclose(mem);
	assert_non_null(strstr(out, "\"rss_at_peak\": {\n      \"ts_ns\": 120000000,\n      \"rss_bytes\": 13893632,\n"
		"      \"heap_bytes\": 6291456,\n      \"allocator_held_bytes\": 2097152,\n"
		"      \"program_mapped_bytes\": 4194304,\n      \"file_bytes\": 1048576,\n      \"shmem_bytes\": 262144,\n"
		"      \"rest_bytes\": 0,\n      \"anon_bytes\": 12582912,\n      \"swap_bytes\": 8192,\n"
		"      \"allocator_mapped_bytes\": 8388608\n    }"));
	assert_non_null(strstr(out, "\"rest_bytes\": -1048576,\n"));	/* pid 10's row: mapped but not resident */
	free(out);
}

/*
 * Blocks the allocator's mappings seen do not hold (record --pid: mapped before it) make allocator-held negative,
 * said so; mapped pages not touched make the rest negative.
 */
static void test_rss_terms_negative(void **state)
{
	struct fix *f = *state;
	char *out = NULL;
	size_t len = 0;
	FILE *mem;

	start_session(f, 10);
	put_alloc(&f->s, T0 + 1 * MS, 10, MT_FN_MALLOC, 0x1000, MIB, 0);
	put_mmap(&f->s, T0 + 2 * MS, 10, MAP_C, 8 * MIB, MT_SYS_ORIGIN_PROGRAM);
	put_rss(&f->s, T0 + 3 * MS, 10, 2 * MIB, 0, 0);
	assert_int_equal(mt_model__finish(f->m), 0);
	mem = open_memstream(&out, &len);
	assert_non_null(mem);
	assert_int_equal(mt_report__text(mem, f->m, "x"), 0);
	fclose(mem);
	assert_non_null(strstr(out, "\nWhere RSS goes at its peak (pid 10, 0.003000 s):\n"));
	assert_non_null(strstr(out, "  allocator-held:     -1.0 MiB (-1048576 B)        -50.0% (live blocks outside the "
		"allocator mappings seen: mapped before the recording, or not by a call)\n"));
	assert_non_null(strstr(out, "  the rest:           -6.0 MiB (-6291456 B)       -300.0% (mapped but not resident: "
		"of the mappings above, pages never touched or swapped out)\n"));
	free(out);
}

/*
 * The RSS record of a process's exit comes after its last thread ended its mappings: the peak it reaches has the
 * books the mappings ended with, in the process and in the totals, not none.
 */
static void test_rss_terms_at_exit(void **state)
{
	const int64_t want[] = { 3 * MIB, MIB, 2 * MIB, MIB, 0, 0 };
	struct fix *f = *state;
	const struct mt_proc *p;

	start_session(f, 10);
	put_mmap(&f->s, T0 + 1 * MS, 10, MAP_A, 4 * MIB, MT_SYS_ORIGIN_ALLOCATOR);
	put_alloc(&f->s, T0 + 2 * MS, 10, MT_FN_MALLOC, MAP_A + 16, 3 * MIB, 0);
	put_mmap(&f->s, T0 + 3 * MS, 10, MAP_C, 2 * MIB, MT_SYS_ORIGIN_PROGRAM);
	put_rss(&f->s, T0 + 10 * MS, 10, 5 * MIB, 0, 0);
	put_thread_exit(&f->s, T0 + 20 * MS, 10, 10, MT_THREAD_EXIT_GROUP | MT_THREAD_EXIT_LAST);
	put_rss(&f->s, T0 + 21 * MS, 10, 6 * MIB, MIB, 0);
	put_exit(&f->s, T0 + 30 * MS, 10, EXITED(0));
	p = finish_and_find(f, 10);
	assert_terms(&p->rss, 7 * MIB, want);
	assert_int_equal(p->rss.peak_rss_ts_ns, 21 * MS);
	assert_terms(&mt_model__totals(f->m)->rss, 7 * MIB, want);
}

/* timeline: the mapped series (program + allocator) beside the heap's and RSS's, the program's part, its peak. */
static void test_rss_terms_timeline(void **state)
{
	struct sink s = { put_writer, NULL };
	struct mt_timeline_opts o = { 0 };
	struct mt_timeline *t;
	struct mt_writer *w;
	char dir[64] = "/tmp/mt-test-gap-XXXXXX", file[128], *json = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/%s", dir, MT_ARTIFACT_FILE);
	w = mt_writer__open(dir);
	assert_non_null(w);
	s.ctx = w;
	gap_records(&s);
	assert_int_equal(mt_writer__close(w), 0);
	assert_int_equal(mt_timeline__build(dir, &o, &t, NULL), 0);
	f = open_memstream(&json, &len);
	assert_non_null(f);
	assert_int_equal(mt_timeline__json(f, t), 0);
	fclose(f);
	/* at the mmaps, the fork, the munmap, the exits: 4, 6, 6 + 6, 4 + 6, 6, 0 MiB */
	assert_non_null(strstr(json, ",\"mapped\":{\"t_ns\":[1000000,3000000,50000000,205000000,300000000,310000000],"
		"\"total\":[4194304,6291456,12582912,10485760,6291456,0],\"processes\":[{\"pid\":10,\"mapped_bytes\":"
		"[4194304,6291456,6291456,4194304,0,0]},{\"pid\":11,\"mapped_bytes\":[0,0,6291456,6291456,6291456,0]}],"
		"\"peak\":{\"t_ns\":50000000,\"bytes\":12582912},\"program\":[0,2097152,4194304,2097152,2097152,0]}"));
	free(json);
	f = open_memstream(&json, &len);
	assert_non_null(f);
	assert_int_equal(mt_timeline__svg(f, t, "gap"), 0);
	fclose(f);
	mt_timeline__free(t);
	assert_non_null(strstr(json, ">mapped total (peak 12.0 MiB)"));
	assert_non_null(strstr(json, ">RSS total (peak 13.2 MiB)"));
	free(json);
	unlink(file);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_basic_counts, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_realloc_chain, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_fork_child_frees_parent_block, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_exec_clears_live, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_replaced_lost_free, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_out_of_order_within_window, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_peak_two_processes, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_missing_end, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_end_drops_and_syscalls, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_mapped_books, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_mapped_overlaps, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_mapped_fork_exec, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_mapped_v1_record, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_mapped_last_thread, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_end_malformed_drops, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_attach_failed, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_pid_reuse, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_no_session_time_base, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_bad_records_skipped, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_many_live_blocks, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_report_incomplete, fix_setup, fix_teardown),
		cmocka_unit_test(test_reorder_window),
		cmocka_unit_test(test_reorder_ties_and_errors),
		cmocka_unit_test(test_reorder_matches_reference),
		cmocka_unit_test(test_strmap_intern),
		cmocka_unit_test(test_json_strings),
		cmocka_unit_test(test_json_nesting),
		cmocka_unit_test(test_status_helpers),
		cmocka_unit_test_setup_teardown(test_golden_report_text, artifact_setup, artifact_teardown),
		cmocka_unit_test_setup_teardown(test_golden_report_json, artifact_setup, artifact_teardown),
		cmocka_unit_test_setup_teardown(test_golden_dump, artifact_setup, artifact_teardown),
		cmocka_unit_test_setup_teardown(test_golden_leaks, artifact_setup, artifact_teardown),
		cmocka_unit_test_setup_teardown(test_cmd_whole, artifact_setup, artifact_teardown),
		cmocka_unit_test_setup_teardown(test_cmd_usage_and_unreadable, artifact_setup, artifact_teardown),
		cmocka_unit_test_setup_teardown(test_cmd_damaged, artifact_setup, artifact_teardown),
		cmocka_unit_test_setup_teardown(test_fork_exec_tree, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_vfork_exec_tree, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_fork_100_children, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_fork_grandchild_isolation, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_libc_internal_releases, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_threads_flush, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_unknown_frees_top_pids, fix_setup, fix_teardown),
		cmocka_unit_test(test_pmap_versions),
		cmocka_unit_test_setup_teardown(test_tree_against_copies, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_many_forks_share, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_worked_example, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_image_rows_model, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_image_rows_report, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_metadata_round_trip, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_labels_round_trip, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_labels_refused, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_labels_report, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_labels_timeline, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_suppress_file, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_leaks_listing, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_still_live_unfinished, scratch_setup, scratch_teardown),
		cmocka_unit_test(test_elide_templates),
		cmocka_unit_test(test_filter_pid_exe),
		cmocka_unit_test(test_filter_window),
		cmocka_unit_test_setup_teardown(test_filter_report, scratch_setup, scratch_teardown),
		cmocka_unit_test(test_filter_seconds),
		cmocka_unit_test_setup_teardown(test_dump_filters, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_rss_peaks, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_rss_absent, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_rss_report, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_rss_terms, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_rss_terms_report, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_rss_terms_negative, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_rss_terms_at_exit, fix_setup, fix_teardown),
		cmocka_unit_test(test_rss_terms_timeline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
