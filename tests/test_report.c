/* test_report.c — the model's accounting on synthetic records, the reorder window, JSON, and golden report/dump. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmd_capture.h"
#include "artifact/artifact.h"
#include "cli/commands.h"
#include "common/json.h"
#include "model/model.h"
#include "cli/summary.h"
#include "report/report.h"

#ifndef MT_SOURCE_DIR
#define MT_SOURCE_DIR "."
#endif
#define GOLDEN_DIR MT_SOURCE_DIR "/tests/golden/"

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
	assert_int_equal(p->heap.frees, 5);
	assert_int_equal(p->heap.unknown_frees, 1);
	assert_int_equal(p->heap.failed_allocations, 1);
	assert_int_equal(p->heap.replaced, 0);
	assert_int_equal(p->heap.peak_live_bytes, 300);
	assert_int_equal(p->heap.peak_ts_ns, 3);
	assert_int_equal(p->heap.leaked_allocations, 2);	/* 0x4000 (50) and 0x5000 (10) */
	assert_int_equal(p->heap.leaked_bytes, 60);
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
	assert_int_equal(child->heap.frees, 1);
	assert_int_equal(child->heap.unknown_frees, 1);
	assert_int_equal(child->heap.leaked_bytes, 30);
	assert_int_equal(mt_status__shell(child->status), 137);
	assert_int_equal(mt_status__signal(child->status), 9);
	assert_int_equal(parent->heap.frees, 0);
	assert_int_equal(parent->heap.leaked_allocations, 1);
	assert_int_equal(parent->heap.leaked_bytes, 100);
	assert_int_equal(t->heap.leaked_bytes, 130);
	assert_int_equal(t->heap.peak_live_bytes, 130);
	assert_int_equal(t->heap.peak_ts_ns, 5);
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
	put_exec(&f->s, T0 + 4, 10, "/bin/true", "true");	/* 0x2000 leaks */
	put_free(&f->s, T0 + 5, 10, 0x2000);			/* from the old image: unknown now */
	put_alloc(&f->s, T0 + 6, 10, MT_FN_MALLOC, 0x2000, 20, 0);
	put_free(&f->s, T0 + 7, 10, 0x2000);
	put_exit(&f->s, T0 + 8, 10, EXITED(0));
	p = finish_and_find(f, 10);

	assert_string_equal(p->exe, "/bin/true");
	assert_string_equal(p->comm, "true");
	assert_int_equal(p->heap.allocations, 3);
	assert_int_equal(p->heap.frees, 3);
	assert_int_equal(p->heap.unknown_frees, 1);
	assert_int_equal(p->heap.leaked_allocations, 1);
	assert_int_equal(p->heap.leaked_bytes, 200);
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
	assert_int_equal(p->heap.leaked_allocations, 1);
	assert_int_equal(p->heap.leaked_bytes, 40);
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
	assert_int_equal(p->heap.leaked_bytes, 64);
	assert_non_null(q);
	assert_int_equal(q->ppid, 0);
	assert_int_equal(q->heap.leaked_bytes, 32);
	assert_int_equal(t->heap.leaked_allocations, 2);
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
	assert_non_null(strstr(buf, "memtrack: 1 attach failures: calls into those allocator files are missing "
				    "(`memtrack report --attach DIR`)\n"));
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
	assert_int_equal(mt_model__proc(f->m, 2)->heap.leaked_bytes, 20);
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
	assert_int_equal(p->heap.leaked_allocations, n / 4);
	assert_int_equal(p->heap.leaked_bytes, n / 4 * 16);
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
	assert_non_null(strstr(buf, "  dropped events:   unknown (run did not finish)\n"));
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
	assert_null(mt_drop__name(MT_DROP__COUNT - 1));
	assert_string_equal(mt_attach_reason__name(MT_ATTACH_INTERP), "interp");	/* report and dump alike */
	assert_string_equal(mt_attach_reason__name(MT_ATTACH_INHERIT), "inherit");
	assert_null(mt_attach_reason__name(0));
	assert_null(mt_attach_reason__name(MT_ATTACH_INHERIT + 1));
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
	put_alloc(s, T0 + 9700, 101, MT_FN_MEMALIGN, 0x555a2000, 32, 32);
	put_free(s, T0 + 9800, 101, 0x555a1000);
	put_exit(s, T0 + 10000, 101, KILLED(9));
	put_alloc_tid(s, T0 + 10500, 100, 102, MT_FN_MALLOC, 0x555b0000, 2048, 0);
	put_alloc(s, T0 + 11000, 100, MT_FN_REALLOCARRAY, 0x555c0000, 6000, 0x55560000);
	put_free(s, T0 + 11200, 100, 0x555c0000);
	put_sys(s, T0 + 11500, 100, MT_SYS_MUNMAP, 0x7f0000000000, 65536, 0);
	put_sys(s, T0 + 11550, 100, MT_SYS_MREMAP, 0x7f0000100000, 8192, 0x7f0000200000);
	put_alloc_tid(s, T0 + 11600, 100, 102, MT_FN_REALLOC, 0, 0, 0x555b0000);
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

static char *slurp(const char *path, size_t *len)
{
	char *buf = NULL;
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		goto out_close;
	buf = malloc(n + 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf) {
		buf[n] = '\0';
		*len = n;
	}
out_close:
	fclose(f);
	return buf;
}

static void spit(const char *path, const char *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		fail_msg("cannot write %s: %s", path, strerror(errno));
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* Prints the first line where the two texts part, diff style. */
static void print_first_difference(const char *exp, size_t elen, const char *act, size_t alen)
{
	size_t i = 0, line = 1, start = 0, e_end, a_end;

	while (i < elen && i < alen && exp[i] == act[i]) {
		if (exp[i++] == '\n') {
			line++;
			start = i;
		}
	}
	for (e_end = start; e_end < elen && exp[e_end] != '\n'; e_end++)
		;
	for (a_end = start; a_end < alen && act[a_end] != '\n'; a_end++)
		;
	print_error("first difference at line %zu:\n-%.*s\n+%.*s\n", line,
		    (int)(e_end - start), exp + start, (int)(a_end - start), act + start);
}

static void check_golden(const char *name, const char *actual, size_t len)
{
	const char *update = getenv("MEMTRACK_UPDATE_GOLDEN");
	char path[512], out[256];
	char *expected;
	size_t elen = 0;

	snprintf(path, sizeof(path), GOLDEN_DIR "%s", name);
	if (update && !strcmp(update, "1")) {
		spit(path, actual, len);
		print_message("updated %s\n", path);
		return;
	}
	expected = slurp(path, &elen);
	if (!expected)
		fail_msg("cannot read %s: %s (MEMTRACK_UPDATE_GOLDEN=1 creates it)", path, strerror(errno));
	if (elen == len && !memcmp(expected, actual, len)) {
		free(expected);
		return;
	}
	snprintf(out, sizeof(out), "%s.actual", name);	/* in the working directory: the build tree */
	spit(out, actual, len);
	print_first_difference(expected, elen, actual, len);
	free(expected);
	fail_msg("%s differs from its golden file; see `diff -u %s %s`; MEMTRACK_UPDATE_GOLDEN=1 accepts the new output",
		 name, path, out);
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
	check_golden(name, buf, len);
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
	check_golden("dump.jsonl", buf, len);
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
	assert_int_equal(run_cmd(mt_cmd_dump, err, sizeof(err), "dump", "-x", a->dir, NULL), 2);
	assert_string_equal(err, "memtrack: dump: unknown option '-x' (see memtrack dump --help)\n");
	assert_int_equal(run_cmd(mt_cmd_dump, err, sizeof(err), "dump", a->dir, a->dir, NULL), 2);
	assert_int_equal(run_cmd(mt_cmd_report, err, sizeof(err), "report", "/nonexistent/mt", NULL), 2);
	assert_non_null(strstr(err, "memtrack: /nonexistent/mt: "));
	assert_non_null(strchr(err, '\n'));
	assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);	/* one line */
	assert_int_equal(run_cmd(mt_cmd_dump, err, sizeof(err), "dump", "/nonexistent/mt", NULL), 2);

	snprintf(junk, sizeof(junk), "%s/not-an-artifact", a->dir);
	spit(junk, "hello, world, this is no artifact header\n", 41);
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
		cmocka_unit_test_setup_teardown(test_end_malformed_drops, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_attach_failed, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_pid_reuse, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_no_session_time_base, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_bad_records_skipped, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_many_live_blocks, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_report_incomplete, fix_setup, fix_teardown),
		cmocka_unit_test(test_reorder_window),
		cmocka_unit_test(test_reorder_ties_and_errors),
		cmocka_unit_test(test_json_strings),
		cmocka_unit_test(test_json_nesting),
		cmocka_unit_test(test_status_helpers),
		cmocka_unit_test_setup_teardown(test_golden_report_text, artifact_setup, artifact_teardown),
		cmocka_unit_test_setup_teardown(test_golden_report_json, artifact_setup, artifact_teardown),
		cmocka_unit_test_setup_teardown(test_golden_dump, artifact_setup, artifact_teardown),
		cmocka_unit_test_setup_teardown(test_cmd_whole, artifact_setup, artifact_teardown),
		cmocka_unit_test_setup_teardown(test_cmd_usage_and_unreadable, artifact_setup, artifact_teardown),
		cmocka_unit_test_setup_teardown(test_cmd_damaged, artifact_setup, artifact_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
