// SPDX-License-Identifier: GPL-2.0-only
/* test_record.c — integration tests: `memtrack record` traces real programs on the real kernel, exact counts. */
#include "kernel_test.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "artifact/artifact.h"
#include "model/model.h"
#include "cli/summary.h"
#include "report/exes.h"
#include "report/leaks.h"
#include "report/loader.h"
#include "report/report.h"
#include "report/sites.h"
#include "common/elf.h"
#include "common/u64map.h"

#define ANY 0xffffffffu
#define ANY_SIZE UINT64_MAX

extern char **environ;
#define tmp_root mt_test_root

/* A record query: which records to count (ANY / ANY_SIZE match everything). */
struct query {
	uint32_t pid, func, type, allocator;
	uint64_t size, align;
	uint64_t count;
	uint64_t drops[MT_DROP__COUNT];
	uint32_t end_seen;
	uint32_t root_pid;
	uint32_t tids[64];
	uint32_t ntids;
};

static void query__tid(struct query *q, uint32_t tid)
{
	uint32_t i;

	for (i = 0; i < q->ntids; i++)
		if (q->tids[i] == tid)
			return;
	if (q->ntids < 64)
		q->tids[q->ntids++] = tid;
}

static int query__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	struct query *q = ctx;
	const struct mt_alloc *a = (const void *)h;

	if (h->type == MT_REC_END) {
		q->end_seen++;
		memcpy(q->drops, ((const struct mt_end *)h)->drops, sizeof(q->drops));
	}
	if (h->type == MT_REC_SESSION)
		q->root_pid = h->pid;
	if (h->type != q->type || (q->pid != ANY && h->pid != q->pid))
		return 0;
	if (h->type == MT_REC_ALLOC) {
		if ((q->func != ANY && a->func != q->func) || (q->size != ANY_SIZE && a->size != q->size))
			return 0;
		if (q->align != ANY_SIZE && a->align != q->align)
			return 0;
		if (q->allocator && q->allocator != ANY && a->allocator != q->allocator)
			return 0;
	}
	q->count++;
	query__tid(q, h->tid);
	return 0;
}

static struct query query__run(const char *dir, uint32_t type, uint32_t pid, uint32_t func, uint64_t size)
{
	struct query q = { .pid = pid, .func = func, .type = type, .size = size, .align = ANY_SIZE };
	struct mt_read_status st;

	assert_int_equal(mt_artifact__read(dir, query__on_record, &q, &st), 0);
	return q;
}

/* Allocation records of pid (ANY), func, size, alignment (ANY_SIZE) and allocator (ANY). */
static uint64_t allocs_where(const char *dir, uint32_t pid, uint32_t func, uint64_t size, uint64_t align,
			     uint32_t allocator)
{
	struct query q = { .pid = pid, .func = func, .type = MT_REC_ALLOC, .size = size, .align = align,
			   .allocator = allocator };
	struct mt_read_status st;

	assert_int_equal(mt_artifact__read(dir, query__on_record, &q, &st), 0);
	return q.count;
}

static uint64_t allocs(const char *dir, uint32_t pid, uint32_t func, uint64_t size)
{
	return allocs_where(dir, pid, func, size, ANY_SIZE, ANY);
}

static uint64_t allocs_by(const char *dir, uint32_t pid, uint32_t func, uint64_t size, uint32_t allocator)
{
	return allocs_where(dir, pid, func, size, ANY_SIZE, allocator);
}

static uint32_t root_pid(const char *dir)
{
	return query__run(dir, MT_REC_SESSION, ANY, ANY, ANY_SIZE).root_pid;
}

static void test_dir(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmp_root, name);
}

/* Runs argv with stdout/stderr to NAME.out and NAME.err in tmp_root (read_file reads them); returns its exit code. */
static int run_named(const char *name, char *const *argv)
{
	return mt_test__run_named(name, argv);
}

/* Runs `memtrack record -q -o DIR -- argv...` (run_named); returns its exit code. */
static int record_run(const char *dir, const char *name, char *const *prog_argv)
{
	char *argv[16] = { MT_BINARY, "record", "-q", "-o", (char *)dir, "--" };
	int i;

	for (i = 0; prog_argv[i] && i < 9; i++)
		argv[6 + i] = prog_argv[i];
	return run_named(name, argv);
}

static void read_file(const char *name, const char *ext, char *buf, size_t len)
{
	mt_test__read_named(name, ext, buf, len);
}


static void test_constructor_allocations(void **state)
{
	char dir[256], *argv[] = { PROG("alloc_ctor"), NULL };
	uint32_t root;

	(void)state;
	test_dir(dir, sizeof(dir), "ctor");
	assert_int_equal(record_run(dir, "ctor", argv), 0);
	root = root_pid(dir);
	assert_int_equal(allocs(dir, root, MT_FN_MALLOC, 1111), 3);
	assert_int_equal(allocs(dir, root, MT_FN_MALLOC, 2222), 1);
	assert_int_equal(allocs(dir, root, ANY, ANY_SIZE), 5);	/* 4 mallocs + the free of 2222 */
	assert_int_equal(allocs(dir, root, MT_FN_FREE, ANY_SIZE), 1);
}

/* glibc 2.36 aliases aligned_alloc to memalign: one probe, reported as memalign. */
static uint64_t aligned_allocs(const char *dir, uint32_t pid, uint64_t size, uint64_t align)
{
	return allocs_where(dir, pid, ANY, size, align, ANY);
}

static void test_glibc_functions(void **state)
{
	char dir[256], *argv[] = { PROG("alloc_glibc"), NULL };
	uint32_t root;

	(void)state;
	test_dir(dir, sizeof(dir), "glibc");
	assert_int_equal(record_run(dir, "glibc", argv), 0);
	root = root_pid(dir);
	assert_int_equal(allocs(dir, root, MT_FN_MALLOC, 1001), 10);
	assert_int_equal(allocs(dir, root, MT_FN_MALLOC, 1234), 1);
	assert_int_equal(allocs(dir, root, MT_FN_MALLOC, 0), 3);
	assert_int_equal(allocs(dir, root, MT_FN_MALLOC, ANY_SIZE), 14);	/* realloc(NULL, n) is no malloc */
	assert_int_equal(allocs(dir, root, MT_FN_CALLOC, 1010), 5);
	assert_int_equal(allocs(dir, root, MT_FN_CALLOC, ANY_SIZE), 5);
	assert_int_equal(allocs(dir, root, MT_FN_REALLOC, ANY_SIZE), 4);
	assert_int_equal(allocs(dir, root, MT_FN_REALLOCARRAY, 999), 2);
	assert_int_equal(allocs(dir, root, MT_FN_REALLOCARRAY, ANY_SIZE), 2);
	assert_int_equal(aligned_allocs(dir, root, 1024, 64), 3);
	assert_int_equal(aligned_allocs(dir, root, 2048, 128), 4);
	assert_int_equal(allocs(dir, root, MT_FN_MEMALIGN, ANY_SIZE) + allocs(dir, root, MT_FN_ALIGNED_ALLOC, ANY_SIZE), 7);
	assert_int_equal(allocs(dir, root, MT_FN_POSIX_MEMALIGN, 4096), 6);
	assert_int_equal(allocs(dir, root, MT_FN_POSIX_MEMALIGN, 100), 1);	/* the bad alignment: failed, addr 0 */
	assert_int_equal(allocs(dir, root, MT_FN_POSIX_MEMALIGN, ANY_SIZE), 7);
	assert_int_equal(allocs(dir, root, MT_FN_VALLOC, 5000), 2);
	assert_int_equal(allocs(dir, root, MT_FN_PVALLOC, 6000), 2);
	assert_int_equal(allocs(dir, root, MT_FN_FREE, ANY_SIZE), 37);	/* free(NULL) is no event */
	assert_int_equal(allocs(dir, root, ANY, ANY_SIZE), 14 + 5 + 4 + 2 + 7 + 7 + 2 + 2 + 37);
}

/* The realloc chain: NULL -> 100 -> 200 -> 40000 -> realloc(p, 0) frees. */
struct chain {
	struct mt_alloc r[8];
	int n;
};

static int chain__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	struct chain *c = ctx;

	if (h->type == MT_REC_ALLOC && ((const struct mt_alloc *)h)->func == MT_FN_REALLOC && c->n < 8)
		memcpy(&c->r[c->n++], h, sizeof(c->r[0]));
	return 0;
}

static void test_realloc_chain(void **state)
{
	char dir[256], *argv[] = { PROG("alloc_glibc"), NULL };
	struct mt_read_status st;
	struct chain c = {};

	(void)state;
	test_dir(dir, sizeof(dir), "realloc");
	assert_int_equal(record_run(dir, "realloc", argv), 0);
	assert_int_equal(mt_artifact__read(dir, chain__on_record, &c, &st), 0);
	assert_int_equal(c.n, 4);
	assert_int_equal(c.r[0].old_addr, 0);
	assert_int_equal(c.r[0].size, 100);
	assert_int_equal(c.r[1].old_addr, c.r[0].addr);
	assert_int_equal(c.r[1].size, 200);
	assert_int_equal(c.r[2].old_addr, c.r[1].addr);
	assert_int_equal(c.r[2].size, 40000);
	assert_int_equal(c.r[3].old_addr, c.r[2].addr);
	assert_int_equal(c.r[3].size, 0);
	assert_int_equal(c.r[3].addr, 0);
}

static pid_t child_pid(const char *out, const char *what)
{
	const char *p = strstr(out, what);

	assert_non_null(p);
	return atoi(p + strlen(what) + 1);
}

static void test_process_tree(void **state)
{
	char dir[256], out[512], *argv[] = { PROG("alloc_tree"), NULL };
	uint32_t root, f, v, s;

	(void)state;
	test_dir(dir, sizeof(dir), "tree");
	assert_int_equal(record_run(dir, "tree", argv), 0);
	read_file("tree", "out", out, sizeof(out));
	root = root_pid(dir);
	f = child_pid(out, "fork");
	v = child_pid(out, "vfork");
	s = child_pid(out, "spawn");
	assert_int_equal(allocs(dir, root, MT_FN_MALLOC, 3001), 3);
	assert_int_equal(allocs(dir, f, MT_FN_MALLOC, 3002), 5);
	assert_int_equal(allocs(dir, v, MT_FN_MALLOC, 3003), 7);
	assert_int_equal(allocs(dir, v, MT_FN_MALLOC, 3005), 2);	/* before its exec, in the parent's memory */
	assert_int_equal(allocs(dir, ANY, MT_FN_MALLOC, 3005), 2);
	assert_int_equal(allocs(dir, s, MT_FN_MALLOC, 3004), 9);
	assert_int_equal(allocs(dir, ANY, MT_FN_MALLOC, 3002), 5);
	assert_int_equal(allocs(dir, ANY, MT_FN_MALLOC, 3003), 7);
	assert_int_equal(allocs(dir, ANY, MT_FN_MALLOC, 3004), 9);
	assert_int_equal(query__run(dir, MT_REC_FORK, root, ANY, ANY_SIZE).count, 3);
	assert_int_equal(query__run(dir, MT_REC_EXEC, v, ANY, ANY_SIZE).count, 1);
	assert_int_equal(query__run(dir, MT_REC_EXEC, s, ANY, ANY_SIZE).count, 1);
	assert_int_equal(query__run(dir, MT_REC_EXIT, ANY, ANY, ANY_SIZE).count, 4);
}

/* Frees that release the block the same thread's last malloc(lo..hi-1) returned: the workers' own pairs. By the
 * whole tid: alloc_slots's threads may be 65,536 apart. */
struct pairs {
	uint64_t lo, hi;
	struct mt_u64map last;	/* tid → the address of its last malloc(lo..hi-1), 0 once freed */
	uint64_t paired;
};

static int pairs__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	const struct mt_alloc *a = (const void *)h;
	struct pairs *p = ctx;
	uint64_t *last;

	if (h->type != MT_REC_ALLOC)
		return 0;
	last = mt_u64map__find(&p->last, h->tid);
	if (a->func == MT_FN_MALLOC && a->size >= p->lo && a->size < p->hi)
		assert_true(mt_u64map__put(&p->last, h->tid, a->addr, NULL) >= 0);
	else if (a->func == MT_FN_FREE && last && a->addr == *last)
		p->paired++, *last = 0;
	return 0;
}

/* handoff's blocks in the artifact's own order (no reader's window): each free must find its malloc before it. */
struct handoff {
	uint32_t root;
	struct mt_u64map live;
	uint64_t mallocs, paired, exits;
};

static int handoff__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	const struct mt_alloc *a = (const void *)h;
	struct handoff *o = ctx;

	if (h->type == MT_REC_EXIT && h->pid == o->root)
		o->exits++;
	if (h->type != MT_REC_ALLOC || h->pid != o->root || o->exits)
		return 0;
	if (a->func == MT_FN_MALLOC && a->size == 48) {
		o->mallocs++;
		assert_int_equal(mt_u64map__put(&o->live, a->addr, 1, NULL), 0);
	} else if (a->func == MT_FN_FREE && mt_u64map__del(&o->live, a->addr, NULL)) {
		o->paired++;
	}
	return 0;
}

/*
 * One thread mallocs on CPU 0, another frees on CPU 1: their records reach the ring in two CPUs' batches, in
 * whatever order those are sent. Written in the order of events, every free follows its malloc, and the exit
 * follows both.
 */
static void test_cross_cpu_order(void **state)
{
	char dir[256], name[16], *argv[] = { PROG("handoff"), NULL };
	struct handoff o = { 0 };
	struct mt_read_status st;
	struct query q;
	int run, t;

	(void)state;
	for (run = 0; run < 3; run++) {
		snprintf(name, sizeof(name), "handoff%d", run);	/* record never overwrites an artifact */
		test_dir(dir, sizeof(dir), name);
		assert_int_equal(record_run(dir, name, argv), 0);
		o = (struct handoff){ .root = root_pid(dir) };
		assert_int_equal(mt_artifact__read(dir, handoff__on_record, &o, &st), 0);
		assert_int_equal(o.mallocs, 20000);
		assert_int_equal(o.paired, 20000);
		assert_int_equal(o.live.count, 0);
		assert_int_equal(o.exits, 1);
		mt_u64map__release(&o.live);
		q = query__run(dir, MT_REC_ALLOC, o.root, MT_FN_MALLOC, 48);
		assert_int_equal(q.count, 20000);
		for (t = 0; t < MT_DROP__COUNT; t++)
			assert_int_equal(q.drops[t], 0);
	}
}

static void test_threads(void **state)
{
	char dir[256], *argv[] = { PROG("alloc_threads"), NULL };
	struct pairs *p = calloc(1, sizeof(*p));
	struct mt_read_status st;
	struct query q;
	uint32_t root, t;

	(void)state;
	test_dir(dir, sizeof(dir), "threads");
	assert_int_equal(record_run(dir, "threads", argv), 0);
	p->lo = 64, p->hi = 72;
	root = root_pid(dir);
	for (t = 0; t < 8; t++)
		assert_int_equal(allocs(dir, root, MT_FN_MALLOC, 64 + t), 10000);
	q = query__run(dir, MT_REC_ALLOC, root, MT_FN_MALLOC, ANY_SIZE);
	assert_int_equal(q.count, 80000);
	assert_int_equal(q.ntids, 8);
	assert_int_equal(mt_artifact__read(dir, pairs__on_record, p, &st), 0);
	assert_int_equal(p->paired, 80000);
	mt_u64map__release(&p->last);
	free(p);
	/* glibc's own: pthread_create callocs each thread's TLS block (272 bytes here) */
	assert_int_equal(allocs(dir, root, MT_FN_CALLOC, ANY_SIZE), 8);
	assert_int_equal(q.end_seen, 1);
	for (t = 0; t < MT_DROP__COUNT; t++)
		assert_int_equal(q.drops[t], 0);
}

static void pid_max__set(long v)
{
	FILE *f = fopen("/proc/sys/kernel/pid_max", "w");

	assert_non_null(f);
	fprintf(f, "%ld\n", v);
	assert_int_equal(fclose(f), 0);
}

/*
 * A thread whose tid indexes the same BPF call slot as its main thread's keeps its calls in task storage, both
 * allocating at once; a thread that is not the leader execs and takes the leader's tid, and the new image's calls
 * count. The tid is had by raising pid_max past the slots and asking for it through ns_last_pid.
 */
static void test_call_slots(void **state)
{
	char dir[256], out[512], *argv[] = { PROG("alloc_slots"), NULL };
	struct pairs *p = calloc(1, sizeof(*p));
	struct mt_read_status st;
	long pid_max = 0;
	uint32_t root, tid;
	struct query q;
	FILE *f;
	int rc;

	(void)state;
	f = fopen("/proc/sys/kernel/pid_max", "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld", &pid_max), 1);
	fclose(f);
	if (pid_max < 4 * 32768)
		pid_max__set(4 * 32768);
	test_dir(dir, sizeof(dir), "slots");
	rc = record_run(dir, "slots", argv);
	if (pid_max < 4 * 32768)
		pid_max__set(pid_max);
	assert_int_equal(rc, 0);
	read_file("slots", "out", out, sizeof(out));
	root = root_pid(dir);
	tid = child_pid(out, "collide");
	assert_int_equal(tid % 32768, root % 32768);
	q = query__run(dir, MT_REC_ALLOC, root, MT_FN_MALLOC, 3301);
	assert_int_equal(q.count, 2000);
	assert_int_equal(q.ntids, 1);
	assert_int_equal(q.tids[0], tid);
	q = query__run(dir, MT_REC_ALLOC, root, MT_FN_MALLOC, 3302);
	assert_int_equal(q.count, 2000);
	assert_int_equal(q.ntids, 1);
	assert_int_equal(q.tids[0], root);
	p->lo = 3301, p->hi = 3303;
	assert_int_equal(mt_artifact__read(dir, pairs__on_record, p, &st), 0);
	assert_int_equal(p->paired, 4000);
	mt_u64map__release(&p->last);
	free(p);
	q = query__run(dir, MT_REC_ALLOC, root, MT_FN_MALLOC, 3303);
	assert_int_equal(q.count, 3);
	assert_int_equal(q.ntids, 1);
	assert_int_equal(q.tids[0], root);
	assert_int_equal(query__run(dir, MT_REC_EXEC, root, ANY, ANY_SIZE).count, 2);
	for (int i = 0; i < MT_DROP__COUNT; i++)
		assert_int_equal(q.drops[i], 0);
}

/*
 * The end-of-run summary comes from the model the tracer keeps while writing; it must say what the artifact says,
 * even with coarse times on threads racing (the reorder window then sees the stored times, not the exact ones).
 */
static void test_summary_is_the_artifacts(void **state)
{
	char dir[256], err[512], want[1024] = "", got[1024];
	char *argv[] = { MT_BINARY, "record", "--ts-resolution", "10000000", "-o", dir, "--", PROG("alloc_threads"), NULL };
	struct mt_model *m = NULL;
	struct mt_read_status st;
	FILE *f;

	(void)state;
	test_dir(dir, sizeof(dir), "summary");
	snprintf(err, sizeof(err), "%s/summary.err", tmp_root);
	assert_int_equal(mt_test__run(argv, "/dev/null", err), 0);
	read_file("summary", "err", got, sizeof(got));
	assert_int_equal(mt_model__load(dir, &m, &st), 0);
	f = fmemopen(want, sizeof(want), "w");
	assert_non_null(f);
	assert_int_equal(mt_summary__write(f, m, dir), 0);
	fclose(f);
	mt_model__free(m);
	assert_string_equal(got, want);
	assert_non_null(strstr(got, "memtrack: 80008 allocations"));
}

/* The memory syscalls of mem_syscalls, found by their sizes: every field as the syscall saw it, from its exit. */
struct sys_seen {
	uint32_t root;
	uint64_t brk0;
	struct mt_syscall mmap, mremap, munmap, brk;
	int n;
};

static int sys_seen__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	const struct mt_syscall *e = (const void *)h;
	struct sys_seen *s = ctx;

	if (h->type != MT_REC_SYSCALL || h->pid != s->root)
		return 0;
	if (e->sys == MT_SYS_BRK && !e->size)
		s->brk0 = e->ret;
	if (e->sys == MT_SYS_MMAP && e->size == 7 * 4096)
		s->mmap = *e, s->n++;
	else if (e->sys == MT_SYS_MREMAP && e->size == 11 * 4096)
		s->mremap = *e, s->n++;
	else if (e->sys == MT_SYS_MUNMAP && e->size == 11 * 4096)
		s->munmap = *e, s->n++;
	else if (e->sys == MT_SYS_BRK && e->size && e->size == (uint64_t)e->ret)
		s->brk = *e, s->n++;
	return 0;
}

static void memory_syscalls__check(const char *dir)
{
	struct sys_seen s = { .root = root_pid(dir) };
	struct mt_read_status st;

	assert_int_equal(mt_artifact__read(dir, sys_seen__on_record, &s, &st), 0);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.mmap.prot, PROT_READ | PROT_WRITE);
	assert_int_equal(s.mmap.flags, MAP_PRIVATE | MAP_ANONYMOUS);
	assert_int_equal(s.mmap.addr, s.mmap.ret);
	assert_int_equal(s.mremap.old_addr, s.mmap.addr);
	assert_int_equal(s.mremap.old_size, 7 * 4096);
	assert_int_equal(s.mremap.flags, MREMAP_MAYMOVE);
	assert_int_equal(s.munmap.addr, s.mremap.ret);
	assert_int_equal(s.munmap.ret, 0);
	assert_int_equal(s.brk.size, s.brk0 + 13 * 4096);
}

/* Both hooks: the raw syscall exit tracepoint (default) and the per-syscall ones (tracefs). */
static void test_memory_syscalls(void **state)
{
	char dir[256], *argv[] = { PROG("mem_syscalls"), NULL };
	char *tp[] = { MT_BINARY, "record", "-q", "--syscall-tracepoints", "-o", dir, "--", PROG("mem_syscalls"), NULL };

	(void)state;
	test_dir(dir, sizeof(dir), "syscalls");
	assert_int_equal(record_run(dir, "syscalls", argv), 0);
	memory_syscalls__check(dir);
	test_dir(dir, sizeof(dir), "syscalls_tp");
	assert_int_equal(mt_test__run(tp, "/dev/null", "/dev/null"), 0);
	memory_syscalls__check(dir);
}

/* The root's break as mapped_books's records give it: the first one seen and the last, page-rounded. */
struct brk_span {
	uint32_t root;
	uint64_t first, last;
	uint64_t by_allocator;	/* brk calls the allocator made */
};

static int brk_span__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	const struct mt_syscall *e = (const void *)h;
	struct brk_span *b = ctx;

	if (h->type != MT_REC_SYSCALL || h->pid != b->root || e->sys != MT_SYS_BRK)
		return 0;
	if (!b->first)
		b->first = (e->ret + 4095) & ~4095ull;
	b->last = (e->ret + 4095) & ~4095ull;
	b->by_allocator += e->origin == MT_SYS_ORIGIN_ALLOCATOR;
	return 0;
}

/* The image of pid numbered image. */
static const struct mt_image *image_of(const struct mt_model *m, uint32_t pid, uint32_t image)
{
	size_t i;

	for (i = 0; i < mt_model__nr_images(m); i++)
		if (mt_model__image(m, i)->pid == pid && mt_model__image(m, i)->image == image)
			return mt_model__image(m, i);
	fail_msg("no image %u of pid %u", image, pid);
	return NULL;
}

/*
 * Issue 34 item 1: mapped_books's anonymous private mappings, exact in pages against what it did (see the program):
 * the loader's own (B: what the exec'd idle image holds) plus the program's; its 1 MiB malloc is glibc's mmap
 * inside the call, allocator-held with the arena's brk, not the program's; a fork child starts with its parent's
 * and unmaps one; an exec starts from none.
 */
static void test_mapped_books(void **state)
{
	const uint64_t pg = 4096, big = ((1 << 20) + 8 + 4095) & ~4095ull;	/* glibc's chunk header rounded up */
	char dir[256], *argv[] = { PROG("mapped_books"), NULL };
	const struct mt_image *root, *child, *exec0, *exec1;
	struct brk_span b = { 0 };
	struct mt_read_status st;
	struct mt_model *m;
	uint64_t base, heap;

	(void)state;
	test_dir(dir, sizeof(dir), "mapped_books");
	assert_int_equal(record_run(dir, "mapped_books", argv), 0);
	b.root = root_pid(dir);
	assert_int_equal(mt_artifact__read(dir, brk_span__on_record, &b, &st), 0);
	assert_int_equal(mt_model__load(dir, &m, &st), 0);
	root = image_of(m, b.root, 0);
	assert_int_equal(mt_model__nr_procs(m), 3);
	child = image_of(m, mt_model__proc(m, 1)->pid, 0);
	exec0 = image_of(m, mt_model__proc(m, 2)->pid, 0);
	exec1 = image_of(m, mt_model__proc(m, 2)->pid, 1);
	base = exec1->mapped.end_program_bytes;
	heap = b.last - b.first;
	assert_true(base > 0 && heap > 0 && b.by_allocator > 0);
	assert_int_equal(root->mapped.end_program_bytes, base + 54 * pg);
	assert_int_equal(root->mapped.peak_program_bytes, base + 67 * pg);
	assert_int_equal(root->mapped.end_allocator_bytes, big + heap);
	assert_int_equal(root->mapped.peak_allocator_bytes, big + heap);
	assert_int_equal(child->mapped.end_program_bytes, base + 37 * pg);
	assert_int_equal(child->mapped.peak_program_bytes, base + 54 * pg);
	assert_int_equal(child->mapped.end_allocator_bytes, big + heap);
	assert_int_equal(exec0->mapped.end_program_bytes, base + 54 * pg);
	assert_int_equal(exec1->mapped.peak_program_bytes, base);
	assert_int_equal(exec1->mapped.end_allocator_bytes, 0);
	assert_int_equal(mt_model__totals(m)->mapped.end_program_bytes, 3 * base + 91 * pg);
	/* at either fork, the parent and the child: the first child's mappings end at its last thread's exit in the
	 * kernel, before its parent's waitpid returns and it forks again */
	assert_int_equal(mt_model__totals(m)->mapped.peak_program_bytes, 2 * base + 108 * pg);
	assert_int_equal(root->heap.peak_live_bytes, 1 << 20);	/* the block itself: heap, once */
	mt_model__free(m);
}

/* With --stacks, mapped_books's own mappings have their call path, defined before them; glibc's mmap of the
 * 1 MiB block inside malloc has none (its site is the allocation's). */
struct map_stacks {
	uint32_t root;
	struct mt_u64map defined;	/* stack hashes defined so far */
	int program_with, program_defined, allocator_with, big;
};

static int map_stacks__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	const struct mt_syscall *e = (const void *)h;
	struct map_stacks *ms = ctx;

	if (h->type == MT_REC_STACK)
		assert_true(mt_u64map__put(&ms->defined, ((const struct mt_stack *)h)->hash, 1, NULL) >= 0);
	if (h->type != MT_REC_SYSCALL || h->pid != ms->root || e->sys != MT_SYS_MMAP)
		return 0;
	assert_int_equal(h->size, sizeof(*e));
	if (e->size == 11 * 4096 || e->size == 13 * 4096 || e->size == 17 * 4096) {
		ms->program_with += e->origin == MT_SYS_ORIGIN_PROGRAM && e->stack;
		ms->program_defined += mt_u64map__find(&ms->defined, e->stack) != NULL;
	}
	if (e->size > (1 << 20) && e->size < (1 << 20) + 8192) {
		ms->big++;
		ms->allocator_with += e->origin == MT_SYS_ORIGIN_ALLOCATOR && !e->stack;
	}
	return 0;
}

static void test_mapped_stacks(void **state)
{
	char dir[256], *argv[] = { MT_BINARY, "record", "-q", "--stacks", "-o", dir, "--", PROG("mapped_books"), NULL };
	struct map_stacks ms = { 0 };
	struct mt_read_status st;

	(void)state;
	test_dir(dir, sizeof(dir), "mapped_stacks");
	assert_int_equal(mt_test__run(argv, "/dev/null", "/dev/null"), 0);
	ms.root = root_pid(dir);
	assert_int_equal(mt_artifact__read(dir, map_stacks__on_record, &ms, &st), 0);
	mt_u64map__release(&ms.defined);
	assert_int_equal(ms.program_with, 3);
	assert_int_equal(ms.program_defined, 3);
	assert_int_equal(ms.big, 1);
	assert_int_equal(ms.allocator_with, 1);
}

static void test_exit_status(void **state)
{
	char dir[256], *exit42[] = { PROG("exit_status"), "exit", "42", NULL };
	char *kill9[] = { PROG("exit_status"), "signal", "9", NULL };
	char *term[] = { PROG("exit_status"), "signal", "15", NULL };

	(void)state;
	test_dir(dir, sizeof(dir), "exit42");
	assert_int_equal(record_run(dir, "exit42", exit42), 42);
	test_dir(dir, sizeof(dir), "kill9");
	assert_int_equal(record_run(dir, "kill9", kill9), 128 + 9);
	test_dir(dir, sizeof(dir), "term");
	assert_int_equal(record_run(dir, "term", term), 128 + 15);
	assert_int_equal(query__run(dir, MT_REC_END, ANY, ANY, ANY_SIZE).end_seen, 1);
}

static void test_cannot_run(void **state)
{
	char dir[256], err[1024], noexec[512], *missing[] = { "memtrack-no-such-command", NULL }, *bad[2];
	int fd;

	(void)state;
	test_dir(dir, sizeof(dir), "missing");
	assert_int_equal(record_run(dir, "missing", missing), 127);
	read_file("missing", "err", err, sizeof(err));
	assert_non_null(strstr(err, "memtrack: cannot run 'memtrack-no-such-command': No such file or directory\n"));
	assert_int_equal(access(dir, F_OK), -1);	/* no DIR left to block the retry */

	snprintf(noexec, sizeof(noexec), "%s/not-executable", tmp_root);
	fd = open(noexec, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	bad[0] = noexec;
	bad[1] = NULL;
	test_dir(dir, sizeof(dir), "noexec");
	assert_int_equal(record_run(dir, "noexec", bad), 126);
	read_file("noexec", "err", err, sizeof(err));
	assert_non_null(strstr(err, "Permission denied"));
	assert_int_equal(access(dir, F_OK), -1);
}

/* jobctl checks from inside: WIFSTOPPED and WIFCONTINUED seen, the stop holds until SIGCONT (exit 0). */
static void test_job_control(void **state)
{
	char dir[256], *argv[] = { PROG("jobctl"), NULL };

	(void)state;
	test_dir(dir, sizeof(dir), "jobctl");
	assert_int_equal(record_run(dir, "jobctl", argv), 0);
}

static void wait_for_file(const char *path)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int i;

	for (i = 0; i < 2000 && access(path, F_OK); i++)
		nanosleep(&ts, NULL);
	assert_int_equal(access(path, F_OK), 0);
}

/* SIGTERM sent to memtrack reaches the command (its handler allocates, exits 3); the artifact is finished. */
static void test_signal_forwarding(void **state)
{
	char dir[256], ready[512], *argv[] = { MT_BINARY, "record", "-q", "-o", dir, "--", PROG("sigwait"), ready, NULL };
	int status;
	pid_t pid;

	(void)state;
	test_dir(dir, sizeof(dir), "sigwait");
	snprintf(ready, sizeof(ready), "%s/sigwait.ready", tmp_root);
	assert_int_equal(posix_spawn(&pid, MT_BINARY, NULL, NULL, argv, environ), 0);
	wait_for_file(ready);
	assert_int_equal(kill(pid, SIGTERM), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 3);
	assert_int_equal(allocs(dir, root_pid(dir), MT_FN_MALLOC, 7777), 1);
	assert_int_equal(query__run(dir, MT_REC_END, ANY, ANY, ANY_SIZE).end_seen, 1);
}

/* --exit-with-command ends with the command; what the orphan did until then is in the artifact. */
static void test_exit_with_command(void **state)
{
	char dir[256], pidfile[512], line[32] = "", *argv[] = { MT_BINARY, "record", "-q", "--exit-with-command", "-o",
								 dir, "--", PROG("orphan"), pidfile, NULL };
	pid_t orphan;
	FILE *f;

	(void)state;
	test_dir(dir, sizeof(dir), "orphan");
	snprintf(pidfile, sizeof(pidfile), "%s/orphan.pid", tmp_root);
	assert_int_equal(mt_test__run(argv, NULL, NULL), 0);
	wait_for_file(pidfile);
	f = fopen(pidfile, "r");
	assert_non_null(f);
	while (!fgets(line, sizeof(line), f))
		rewind(f);
	fclose(f);
	orphan = atoi(line);
	assert_true(orphan > 0);
	kill(orphan, SIGKILL);
	assert_int_equal(query__run(dir, MT_REC_END, ANY, ANY, ANY_SIZE).end_seen, 1);
}

/* The order a reader sorts records into, (ts_ns, arrival), must be causal: session first, a fork before its
 * child's records, an exit after its process's, and each (single-threaded) process's own calls, syscalls, forks,
 * execs and exit in the order they happened. The tick gives whole ticks (at least 1 ms); --precise-time not. */
struct clock_check {
	uint64_t seq, gcd, session_ts, fork_key[8][2], first_key[8][2], exit_key[8][2], last_key[8][2], last_ts[8];
	uint32_t pids[8], npids;
	bool session_first;
};

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

static uint32_t clock_check__slot(struct clock_check *c, uint32_t pid)
{
	uint32_t i;

	for (i = 0; i < c->npids && c->pids[i] != pid; i++)
		;
	if (i == c->npids && c->npids < 8) {
		c->pids[c->npids++] = pid;
		c->first_key[i][0] = UINT64_MAX;
	}
	return i < 8 ? i : 7;
}

static void key__set(uint64_t k[2], uint64_t ts, uint64_t seq)
{
	k[0] = ts;
	k[1] = seq;
}

static bool key__before(const uint64_t a[2], const uint64_t b[2])
{
	return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]);
}

static int clock_check__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	struct clock_check *c = ctx;
	uint64_t seq = ++c->seq;
	uint32_t i;

	c->gcd = gcd64(c->gcd, h->ts_ns);
	if (h->type == MT_REC_SESSION)
		c->session_first = seq == 1, c->session_ts = h->ts_ns;
	assert_true(h->ts_ns >= c->session_ts);
	if (h->type == MT_REC_FORK) {
		i = clock_check__slot(c, ((const struct mt_fork *)h)->child);
		key__set(c->fork_key[i], h->ts_ns, seq);
	}
	i = clock_check__slot(c, h->pid);
	if (h->type <= MT_REC_EXIT) {	/* the main ring's records and exits come in the process's own order */
		assert_true(h->ts_ns >= c->last_ts[i]);
		c->last_ts[i] = h->ts_ns;
	}
	if (h->type == MT_REC_EXIT) {
		key__set(c->exit_key[i], h->ts_ns, seq);
	} else if (h->type != MT_REC_FORK && h->type != MT_REC_END && h->type != MT_REC_SESSION) {
		if (key__before((uint64_t[2]){ h->ts_ns, seq }, c->first_key[i]))
			key__set(c->first_key[i], h->ts_ns, seq);
		key__set(c->last_key[i], h->ts_ns, seq);
	}
	return 0;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Runs alloc_tree with opt and opt2; step: the least the times' common divisor may be (0: under 1 ms). Returns it. */
static uint64_t clock__check(const char *name, const char *opt, const char *opt2, uint64_t step)
{
	char dir[256], *argv[] = { MT_BINARY, "record", "-q", (char *)opt, (char *)opt2, "-o", dir, "--",
				   PROG("alloc_tree"), NULL };
	struct clock_check c = { 0 };
	struct mt_read_status st;
	struct mt_model *m;
	uint64_t t0, t1;
	uint32_t i;

	test_dir(dir, sizeof(dir), name);
	t0 = monotonic_ns();
	assert_int_equal(mt_test__run(argv, NULL, NULL), 0);
	t1 = monotonic_ns();
	assert_int_equal(mt_artifact__read(dir, clock_check__on_record, &c, &st), 0);
	assert_true(c.session_first);
	assert_int_equal(c.npids, 4);	/* the command, its fork, vfork and spawn children */
	if (step) {
		assert_true(c.gcd >= step);
		/* within about a tick of CLOCK_MONOTONIC: two ticks either side */
		assert_true(c.session_ts + 2 * c.gcd >= t0 && c.session_ts <= t1 + 2 * c.gcd);
	} else {
		assert_true(c.gcd < 1000000);
		assert_true(c.session_ts >= t0 && c.session_ts <= t1);
	}
	for (i = 0; i < c.npids; i++) {
		assert_true(key__before(c.last_key[i], c.exit_key[i]));
		if (c.pids[i] != c.pids[0])
			assert_true(key__before(c.fork_key[i], c.first_key[i]));
	}
	assert_int_equal(mt_model__load(dir, &m, &st), 0);
	assert_int_equal(mt_model__totals(m)->late_records, 0);
	assert_int_equal(mt_model__nr_procs(m), 4);
	for (i = 0; i < 4; i++) {
		assert_true(mt_model__proc(m, i)->ppid != 0);
		assert_true(mt_model__proc(m, i)->exited);
	}
	mt_model__free(m);
	return c.gcd;
}

/* Without the kernel's configuration memtrack cannot know the tick's length, and falls back to the precise clock. */
static void test_clock_tick(void **state)
{
	char boot[320];
	struct utsname u;

	(void)state;
	uname(&u);
	snprintf(boot, sizeof(boot), "/boot/config-%s", u.release);
	clock__check("clock-tick", "-q", "-q", !access("/proc/config.gz", R_OK) || !access(boot, R_OK) ? 1000000 : 0);
}

static void test_clock_precise(void **state)
{
	(void)state;
	clock__check("clock-precise", "--precise-time", "-q", 0);
}

/* Times rounded to 8 ms, the exec and fork records' too: none sorts after the calls that followed it. */
static void test_clock_coarse(void **state)
{
	(void)state;
	assert_int_equal(clock__check("clock-coarse", "--precise-time", "--ts-resolution=8000000", 8000000) % 8000000, 0);
}

static void test_usage_errors(void **state)
{
	char dir[256], err[2048], *none[] = { NULL };
	char *argv[] = { MT_BINARY, "record", "--no-such-option", "--", "true", NULL };
	int status;
	pid_t pid;

	(void)state;
	test_dir(dir, sizeof(dir), "noargs");
	assert_int_equal(record_run(dir, "noargs", none), 2);
	read_file("noargs", "err", err, sizeof(err));
	assert_non_null(strstr(err, "memtrack: record needs a command to run\n"));
	assert_int_equal(posix_spawn(&pid, MT_BINARY, NULL, NULL, argv, environ), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(WEXITSTATUS(status), 2);
}

/* The attach log: one row per file looked at, as the tests name them by the end of their path. */
struct attach_log {
	const char *suffix;
	uint32_t rows, probes, kind, tid;
	uint32_t total;
	uint32_t inherit_failed;	/* rows of binds no request asked for (a fork child's) that failed */
	int err;
	bool resumed;
};

static int attach__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	const struct mt_attach *a = (const void *)h;
	struct attach_log *l = ctx;
	size_t n, k = strlen(l->suffix);

	if (h->type != MT_REC_ATTACH)	/* other records are shorter: path is read only on an attach record */
		return 0;
	n = strnlen(a->path, sizeof(a->path));
	l->total++;
	if (n < k || strcmp(a->path + n - k, l->suffix))
		return 0;
	l->rows++;
	l->inherit_failed += a->reason == MT_ATTACH_INHERIT && a->err == -EMFILE;
	l->probes = a->probes;
	l->kind = a->kind;
	l->tid = h->tid;
	l->err = a->err;
	l->resumed = a->resumed_ns >= h->ts_ns;
	return 0;
}

static struct attach_log attach_log(const char *dir, const char *suffix)
{
	struct attach_log l = { .suffix = suffix };
	struct mt_read_status st;

	assert_int_equal(mt_artifact__read(dir, attach__on_record, &l, &st), 0);
	return l;
}

/* Only what the tree maps is looked at: the executable, ld.so and libc; nothing at start-up. */
static void test_attach_only_mapped(void **state)
{
	char dir[256], *argv[] = { PROG("alloc_glibc"), NULL };
	struct attach_log l;

	(void)state;
	test_dir(dir, sizeof(dir), "mapped");
	assert_int_equal(record_run(dir, "mapped", argv), 0);
	l = attach_log(dir, "/libc.so.6");
	assert_int_equal(l.total, 3);
	assert_int_equal(l.rows, 1);
	assert_int_equal(l.kind, MT_ALLOCATOR_GLIBC);
	assert_int_equal(l.probes, 9);		/* 11 names, 9 offsets: aligned_alloc = memalign, cfree = free */
	assert_true(l.resumed);
	assert_int_equal(attach_log(dir, "/alloc_glibc").rows, 1);
	assert_int_equal(attach_log(dir, "/ld-linux-x86-64.so.2").rows, 1);
}

/*
 * A process whose main thread has exited cannot get new probes: the kernel binds a link to the leader's memory.
 * The file mapped after that is logged with the error, once, and the summary says its calls are missing; the probes
 * made before keep counting exactly, and a child forked after gets the file probed for itself.
 */
static void test_leader_exited(void **state)
{
	char dir[256], err[4096], out[256];
	char *argv[] = { MT_BINARY, "record", "-o", dir, "--", PROG("leader_exit"), NULL };
	struct attach_log l;
	uint32_t root;

	(void)state;
	test_dir(dir, sizeof(dir), "leader_exit");
	assert_int_equal(run_named("leader_exit", argv), 0);
	read_file("leader_exit", "out", out, sizeof(out));
	root = root_pid(dir);
	assert_int_equal(allocs(dir, root, MT_FN_MALLOC, 4343), 50);
	assert_int_equal(allocs(dir, root, ANY, 4242), 0);
	l = attach_log(dir, "/libmimalloc.so.2.0");
	assert_int_equal(l.rows, 1);
	assert_int_equal(l.kind, MT_ALLOCATOR_MIMALLOC);
	assert_int_equal(l.probes, 0);
	assert_int_equal(l.err, -EOWNERDEAD);
	assert_int_not_equal(l.tid, root);
	assert_int_equal(allocs_by(dir, child_pid(out, "child"), MT_FN_MALLOC, 4141, MT_ALLOCATOR_MIMALLOC), 7);
	read_file("leader_exit", "err", err, sizeof(err));
	assert_non_null(strstr(err, "no probes attached for"));
	assert_non_null(strstr(err, "memtrack: 1 attach failure: calls into that allocator file are missing"));
}

#define FORK_MANY 300
#define FORK_MANY_SOFT 256

/* Runs fork_many (FORK_MANY children alive at once) under memtrack started with the open-file limit soft:hard
 * (prlimit, as root: the test's own limit stays) and env ("MEMTRACK_SHARED_LINKS=0": a link pair per process, the
 * regime whose descriptors these tests count); returns memtrack's exit code. */
static int fork_many_run(const char *dir, const char *name, unsigned int soft, const char *hard, const char *env)
{
	char n[16], want[32], lim[64];
	char *argv[] = { "/usr/bin/env", (char *)env, "/usr/bin/prlimit", lim, MT_BINARY, "record", "-q", "-o",
			 (char *)dir, "--", PROG("fork_many"), n, want, NULL };
	int rc;

	snprintf(n, sizeof(n), "%d", FORK_MANY);
	snprintf(want, sizeof(want), "%u", soft);
	snprintf(lim, sizeof(lim), "--nofile=%u:%s", soft, hard);
	rc = run_named(name, argv);
	if (rc) {	/* memtrack's own failure or a failed child of fork_many's: its stderr says which */
		static char err[16384];

		read_file(name, "err", err, sizeof(err));
		print_message("memtrack exited %d; its stderr:\n%s\n", rc, err);
	}
	return rc;
}

/* 300 live processes hold 600 links, past a soft limit of 256: memtrack raises its own, and the command still
 * sees 256 (fork_many checks it). Every child's malloc counts. */
static void test_many_live_processes(void **state)
{
	char dir[256];

	(void)state;
	test_dir(dir, sizeof(dir), "fork_many");
	assert_int_equal(fork_many_run(dir, "fork_many", FORK_MANY_SOFT, "4096", "MEMTRACK_SHARED_LINKS=0"), 0);
	assert_int_equal(allocs(dir, ANY, MT_FN_MALLOC, 5151), FORK_MANY);
	assert_int_equal(attach_log(dir, "/libc.so.6").inherit_failed, 0);
}

#define WAVE_WIDE 80	/* past tracer/links.c's LINKS_SHARE_AT (64) */
#define WAVE_NARROW 8	/* at or below LINKS_UNSHARE_AT (16) */
#define WAVE_PAIRS 400
#define WAVE_CHILDREN (2 * WAVE_WIDE + WAVE_NARROW)

/* fork_wave's children (its "child PID SIZE" lines) and what the artifact holds of each. */
struct wave_tally {
	uint32_t root;
	uint32_t pid[WAVE_CHILDREN];
	uint64_t size[WAVE_CHILDREN];
	uint64_t mallocs[WAVE_CHILDREN], frees[WAVE_CHILDREN], others[WAVE_CHILDREN];
	uint64_t outside;	/* allocation records of a pid neither the root nor a child */
	int n;
};

static int wave__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	const struct mt_alloc *a = (const void *)h;
	struct wave_tally *t = ctx;
	int k;

	if (h->type != MT_REC_ALLOC || h->pid == t->root)
		return 0;
	for (k = 0; k < t->n && t->pid[k] != h->pid; k++)
		;
	if (k == t->n)
		t->outside++;
	else if (a->func == MT_FN_MALLOC && a->size == t->size[k])
		t->mallocs[k]++;
	else if (a->func == MT_FN_FREE)
		t->frees[k]++;
	else
		t->others[k]++;
	return 0;
}

/*
 * fork_wave under memtrack (env: MEMTRACK_SHARED_LINKS=..., or NULL): 80 children alive at once, then 8, then 80,
 * each making 400 malloc/free pairs of its own size before the last sibling is forked and 400 while they exit.
 * Every child's books are exact, and nothing outside the tree is recorded, whichever links served it.
 */
static void wave_check(const char *name, const char *env)
{
	char dir[256], wide[16], narrow[16], n[16], *out = malloc(16384), *p;
	char *argv[] = { "/usr/bin/env", (char *)(env ? env : "MEMTRACK_SHARED_LINKS="), MT_BINARY, "record", "-v",
			 "-o", dir, "--", PROG("fork_wave"), wide, narrow, n, NULL };
	struct wave_tally t = { 0 };
	struct mt_read_status st;
	int k;

	assert_non_null(out);
	test_dir(dir, sizeof(dir), name);
	snprintf(wide, sizeof(wide), "%d", WAVE_WIDE);
	snprintf(narrow, sizeof(narrow), "%d", WAVE_NARROW);
	snprintf(n, sizeof(n), "%d", WAVE_PAIRS);
	assert_int_equal(run_named(name, argv), 0);
	read_file(name, "out", out, 16384);
	for (p = out; t.n < WAVE_CHILDREN && (p = strstr(p, "child ")); p++)
		if (sscanf(p, "child %u %" SCNu64, &t.pid[t.n], &t.size[t.n]) == 2)
			t.n++;
	free(out);
	assert_int_equal(t.n, WAVE_CHILDREN);
	t.root = root_pid(dir);
	assert_int_equal(mt_artifact__read(dir, wave__on_record, &t, &st), 0);
	for (k = 0; k < t.n; k++) {
		assert_int_equal(t.mallocs[k], 2 * WAVE_PAIRS);
		assert_int_equal(t.frees[k], 2 * WAVE_PAIRS);
		assert_int_equal(t.others[k], 0);
	}
	assert_int_equal(t.outside, 0);
	assert_int_equal(query__run(dir, MT_REC_END, ANY, ANY, ANY_SIZE).drops[MT_DROP_RINGBUF], 0);
}

/* The wide waves go to one shared libc link and back to links of their own: told twice each with -v. */
static void test_shared_links_exact(void **state)
{
	char err[65536], *p;
	int up = 0, down = 0;

	(void)state;
	wave_check("wave_shared", NULL);
	read_file("wave_shared", "err", err, sizeof(err));
	for (p = err; (p = strstr(p, "libc.so.6: 64 processes: one shared link from now on")); p++)
		up++;
	for (p = err; (p = strstr(p, "libc.so.6: 16 processes: links of their own again")); p++)
		down++;
	assert_int_equal(up, 2);
	assert_int_equal(down, 2);
}

/* The same tree with a link of its own for each process throughout: the same books. */
static void test_shared_links_off(void **state)
{
	char err[65536];

	(void)state;
	wave_check("wave_own", "MEMTRACK_SHARED_LINKS=0");
	read_file("wave_own", "err", err, sizeof(err));
	assert_null(strstr(err, "shared link"));
}

/* A hard limit memtrack cannot pass: each child whose links did not fit is logged (an inherit row with EMFILE),
 * and counted in the summary; every other child's malloc counts. One or the other for each child, exactly. */
static void test_fd_limit_failures(void **state)
{
	char dir[256], err[8192];
	struct attach_log l;
	uint64_t counted;

	(void)state;
	test_dir(dir, sizeof(dir), "fork_fds");
	assert_int_equal(fork_many_run(dir, "fork_fds", 160, "160", "MEMTRACK_SHARED_LINKS=0"), 0);
	counted = allocs(dir, ANY, MT_FN_MALLOC, 5151);
	l = attach_log(dir, "/libc.so.6");
	assert_int_not_equal(l.inherit_failed, 0);
	assert_int_equal(counted + l.inherit_failed, FORK_MANY);
	read_file("fork_fds", "err", err, sizeof(err));
	assert_non_null(strstr(err, "too many open files"));
}

/* Started as a subreaper (as a service manager may), memtrack would get its closer back as an orphan and wait for
 * it: it closes its links itself then, and ends; the calls count as ever. */
static void test_subreaper_no_closer(void **state)
{
	char dir[256], *argv[] = { PROG("subreaper_exec"), MT_BINARY, "record", "-q", "-o", dir, "--",
				   PROG("alloc_glibc"), NULL };

	(void)state;
	test_dir(dir, sizeof(dir), "subreaper");
	assert_int_equal(run_named("subreaper", argv), 0);
	assert_int_equal(allocs(dir, root_pid(dir), MT_FN_MALLOC, 1001), 10);
}

static void test_dlopen_mimalloc(void **state)
{
	char dir[256], *argv[] = { PROG("dlopen_mi"), NULL };
	uint32_t root;

	(void)state;
	test_dir(dir, sizeof(dir), "dlopen_mi");
	assert_int_equal(record_run(dir, "dlopen_mi", argv), 0);
	root = root_pid(dir);
	assert_int_equal(allocs_by(dir, root, MT_FN_MALLOC, 4242, MT_ALLOCATOR_MIMALLOC), 100);
	assert_int_equal(allocs_by(dir, root, ANY, 4242, ANY), 100);
	assert_int_equal(allocs_by(dir, root, MT_FN_FREE, ANY_SIZE, MT_ALLOCATOR_MIMALLOC), 100);
	assert_int_equal(attach_log(dir, "/libmimalloc.so.2.0").kind, MT_ALLOCATOR_MIMALLOC);
}

/* Two threads dlopen two allocator libraries at one moment: each held, each file attached once. */
static void test_dlopen_two_at_once(void **state)
{
	char dir[256], *argv[] = { PROG("dlopen_two"), MT_PROGS, NULL };
	struct attach_log mi, tc;
	uint32_t root;

	(void)state;
	test_dir(dir, sizeof(dir), "dlopen_two");
	assert_int_equal(record_run(dir, "dlopen_two", argv), 0);
	root = root_pid(dir);
	assert_int_equal(allocs_by(dir, root, MT_FN_MALLOC, 3131, MT_ALLOCATOR_MIMALLOC), 300);
	assert_int_equal(allocs_by(dir, root, MT_FN_MALLOC, 3232, MT_ALLOCATOR_TCMALLOC), 300);
	assert_int_equal(allocs_by(dir, root, ANY, 3131, ANY) + allocs_by(dir, root, ANY, 3232, ANY), 600);
	assert_int_equal(allocs_by(dir, root, MT_FN_FREE, ANY_SIZE, MT_ALLOCATOR_MIMALLOC), 300);
	assert_int_equal(allocs_by(dir, root, MT_FN_FREE, ANY_SIZE, MT_ALLOCATOR_TCMALLOC), 300);
	mi = attach_log(dir, "/libfake_mi.so");
	tc = attach_log(dir, "/libfake_tc.so");
	assert_int_equal(mi.rows, 1);
	assert_int_equal(tc.rows, 1);
	assert_int_equal(mi.probes, 2);
	assert_int_equal(tc.probes, 2);
	assert_true(mi.resumed && tc.resumed);
	assert_int_not_equal(mi.tid, tc.tid);
	assert_int_not_equal(mi.tid, root);
}

/* A file with two allocators: each one's own entry points count as its own, and memtrack says so. */
static void test_two_allocators_in_one_file(void **state)
{
	char dir[256], err[4096], *argv[] = { PROG("dlopen_both"), MT_PROGS, NULL };
	uint32_t root;

	(void)state;
	test_dir(dir, sizeof(dir), "both");
	assert_int_equal(record_run(dir, "both", argv), 0);
	root = root_pid(dir);
	assert_int_equal(allocs_by(dir, root, MT_FN_MALLOC, 3333, MT_ALLOCATOR_MIMALLOC), 10);
	assert_int_equal(allocs_by(dir, root, MT_FN_MALLOC, 3434, MT_ALLOCATOR_TCMALLOC), 10);
	assert_int_equal(allocs_by(dir, root, MT_FN_FREE, ANY_SIZE, MT_ALLOCATOR_MIMALLOC), 10);
	assert_int_equal(allocs_by(dir, root, MT_FN_FREE, ANY_SIZE, MT_ALLOCATOR_TCMALLOC), 10);
	read_file("both", "err", err, sizeof(err));
	assert_non_null(strstr(err, "libfake_both.so holds more than one allocator (mimalloc tcmalloc)"));
}

/* An allocator linked into a child's executable, started by exec: attached at the exec stop. */
static void static_allocator(const char *name, const char *prog, uint64_t size, uint32_t allocator)
{
	char dir[256], *argv[] = { PROG("exec_child"), (char *)prog, NULL };
	struct query forks;
	uint32_t root;

	test_dir(dir, sizeof(dir), name);
	assert_int_equal(record_run(dir, name, argv), 0);
	root = root_pid(dir);
	forks = query__run(dir, MT_REC_FORK, root, ANY, ANY_SIZE);
	assert_int_equal(forks.count, 1);
	assert_int_equal(allocs_by(dir, ANY, MT_FN_MALLOC, size, allocator), 50);
	assert_int_equal(allocs_by(dir, root, ANY, size, ANY), 0);
	assert_int_equal(allocs_by(dir, ANY, ANY, size, ANY), 50);
}

static void test_static_jemalloc(void **state)
{
	char dir[256];

	(void)state;
	static_allocator("static_je", PROG("static_je"), 5151, MT_ALLOCATOR_JEMALLOC);
	test_dir(dir, sizeof(dir), "static_je");
	assert_int_equal(allocs_by(dir, ANY, MT_FN_MALLOCX, 5152, MT_ALLOCATOR_JEMALLOC), 20);
	assert_int_equal(allocs_by(dir, ANY, MT_FN_DALLOCX, ANY_SIZE, MT_ALLOCATOR_JEMALLOC), 20);
	assert_int_equal(attach_log(dir, "/static_je").kind, MT_ALLOCATOR_JEMALLOC);
}

static void test_static_tcmalloc(void **state)
{
	char dir[256];

	(void)state;
	static_allocator("static_tc", PROG("static_tc"), 5252, MT_ALLOCATOR_TCMALLOC);
	test_dir(dir, sizeof(dir), "static_tc");
	assert_int_equal(attach_log(dir, "/static_tc").kind, MT_ALLOCATOR_TCMALLOC);
}

/* Frees of the blocks alloc_sizes made (the allocator's own start-up blocks aside: tcmalloc frees some). */
struct known {
	uint32_t pid;
	uint64_t live[64];
	int n, frees;
};

static int known__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	const struct mt_alloc *a = (const void *)h;
	struct known *k = ctx;
	int i;

	if (h->type != MT_REC_ALLOC || h->pid != k->pid)
		return 0;
	for (i = 0; a->func == MT_FN_FREE && i < k->n; i++)
		if (k->live[i] == a->addr) {
			k->live[i] = k->live[--k->n];
			k->frees++;
			return 0;
		}
	for (i = 0; a->func == MT_FN_REALLOC && i < k->n; i++)
		if (k->live[i] == a->old_addr)
			k->live[i] = a->addr;
	if ((a->size == 3131 || a->size == 70000 || a->size == 7 * 737 || a->size == 2525) && k->n < 64)
		k->live[k->n++] = a->addr;
	return 0;
}

static int known_frees(const char *dir, uint32_t pid)
{
	struct mt_read_status st;
	struct known k = { .pid = pid };

	assert_int_equal(mt_artifact__read(dir, known__on_record, &k, &st), 0);
	assert_int_equal(k.n, 0);
	return k.frees;
}

/*
 * jemalloc's and tcmalloc's malloc and free, mimalloc's malloc and free start with moves and compares: their probes
 * sit on the first conditional jump (mimalloc's malloc finds its size in rsi there), and count as at the entry.
 */
static void preloaded(const char *name, const char *lib, uint32_t allocator)
{
	char dir[256], env[256], *argv[] = { "/usr/bin/env", env, PROG("alloc_sizes"), NULL };
	uint32_t root;

	snprintf(env, sizeof(env), "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/%s", lib);
	test_dir(dir, sizeof(dir), name);
	assert_int_equal(record_run(dir, name, argv), 0);
	root = root_pid(dir);
	assert_int_equal(allocs_by(dir, root, MT_FN_MALLOC, 3131, allocator), 30);
	assert_int_equal(allocs_by(dir, root, MT_FN_MALLOC, 70000, allocator), 10);
	assert_int_equal(allocs_by(dir, root, MT_FN_REALLOC, 4141, allocator), 20);
	assert_int_equal(allocs_by(dir, root, MT_FN_CALLOC, 7 * 737, allocator), 15);
	assert_int_equal(allocs_where(dir, root, MT_FN_POSIX_MEMALIGN, 2525, 256, allocator), 5);
	assert_int_equal(known_frees(dir, root), 60);
}

static void test_preloaded_jemalloc(void **state)
{
	(void)state;
	preloaded("pre_je", "libjemalloc.so.2", MT_ALLOCATOR_JEMALLOC);
}

static void test_preloaded_tcmalloc(void **state)
{
	(void)state;
	preloaded("pre_tc", "libtcmalloc.so.4", MT_ALLOCATOR_TCMALLOC);
}

static void test_preloaded_mimalloc(void **state)
{
	(void)state;
	preloaded("pre_mi", "libmimalloc.so.2", MT_ALLOCATOR_MIMALLOC);
}

/* new/new[]/delete/delete[] once each, never again as the malloc/free inside them. */
static void test_cxx_new_delete(void **state)
{
	char dir[256], *argv[] = { PROG("cxx_new"), NULL };
	uint32_t root;

	(void)state;
	test_dir(dir, sizeof(dir), "cxx");
	assert_int_equal(record_run(dir, "cxx", argv), 0);
	root = root_pid(dir);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW, 7073, MT_ALLOCATOR_LIBSTDCXX), 10);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW_ARRAY, 7072, MT_ALLOCATOR_LIBSTDCXX), 10);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW, 7074, MT_ALLOCATOR_LIBSTDCXX), 1);
	assert_int_equal(allocs_by(dir, root, MT_FN_MALLOC, 7072, ANY) + allocs_by(dir, root, MT_FN_MALLOC, 7073, ANY), 0);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW_ARRAY, 7075, MT_ALLOCATOR_LIBSTDCXX), 3);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW, 7076, MT_ALLOCATOR_LIBSTDCXX), 3);	/* aligned */
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW, 7077, MT_ALLOCATOR_LIBSTDCXX), 3);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW_ARRAY, 7078, MT_ALLOCATOR_LIBSTDCXX), 3);	/* nothrow */
	assert_int_equal(allocs_by(dir, root, MT_FN_DELETE, 7073, MT_ALLOCATOR_LIBSTDCXX), 10);	/* sized delete */
	assert_int_equal(allocs_by(dir, root, MT_FN_DELETE_ARRAY, 7075, MT_ALLOCATOR_LIBSTDCXX), 3);	/* sized [] */
	assert_int_equal(allocs_by(dir, root, MT_FN_DELETE, 7077, MT_ALLOCATOR_LIBSTDCXX), 3);	/* sized aligned */
	/* 10 sized, 1 plain, 3 aligned, 3 sized aligned; 10 plain [], 3 sized [], 3 nothrow [] */
	assert_int_equal(allocs_by(dir, root, MT_FN_DELETE, ANY_SIZE, MT_ALLOCATOR_LIBSTDCXX), 17);
	assert_int_equal(allocs_by(dir, root, MT_FN_DELETE_ARRAY, ANY_SIZE, MT_ALLOCATOR_LIBSTDCXX), 16);
	assert_int_equal(allocs_by(dir, root, MT_FN_FREE, ANY_SIZE, ANY), 0);
}

/* memtrack reads the ring five nice steps up; the command runs at the nice value it was given. */
static void test_command_keeps_nice(void **state)
{
	char dir[256], got[64], want[64], *argv[] = { "/usr/bin/nice", NULL };

	(void)state;
	test_dir(dir, sizeof(dir), "nice");
	assert_int_equal(record_run(dir, "nice", argv), 0);
	read_file("nice", "out", got, sizeof(got));
	errno = 0;
	snprintf(want, sizeof(want), "%d\n", getpriority(PRIO_PROCESS, 0));
	assert_int_equal(errno, 0);
	assert_string_equal(got, want);
}

/* jemalloc's operator deletes jump to its free or sdallocx: each release still counts once, as the delete. */
static void test_cxx_delete_jemalloc(void **state)
{
	char dir[256], *argv[] = { PROG("cxx_new_je"), NULL };
	uint32_t root;

	(void)state;
	test_dir(dir, sizeof(dir), "cxx_je");
	assert_int_equal(record_run(dir, "cxx_je", argv), 0);
	root = root_pid(dir);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW, 7073, ANY), 10);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW_ARRAY, 7072, ANY), 10);
	assert_int_equal(allocs_by(dir, root, MT_FN_DELETE, ANY_SIZE, ANY), 17);
	assert_int_equal(allocs_by(dir, root, MT_FN_DELETE_ARRAY, ANY_SIZE, ANY), 16);
	assert_int_equal(allocs_by(dir, root, MT_FN_FREE, ANY_SIZE, ANY), 0);
	assert_int_equal(allocs_by(dir, root, MT_FN_SDALLOCX, ANY_SIZE, ANY), 0);
	assert_int_equal(allocs_by(dir, root, MT_FN_DALLOCX, ANY_SIZE, ANY), 0);
}

/* The parent of a held child sees no stop and exactly one SIGCHLD (its exit); hold_invisible checks from inside. */
static void test_hold_invisible(void **state)
{
	char dir[256], *argv[] = { PROG("hold_invisible"), NULL };

	(void)state;
	test_dir(dir, sizeof(dir), "hold");
	assert_int_equal(record_run(dir, "hold", argv), 0);
	assert_int_equal(attach_log(dir, "/libmimalloc.so.2.0").rows, 1);
}

/* ---- heap accounting across a process tree (issue 18): the model of real runs ---- */

/* Records argv into DIR (named name) and loads its model. */
static struct mt_model *tree_record(const char *name, char **argv)
{
	struct mt_read_status st;
	struct mt_model *m = NULL;
	char dir[256];

	test_dir(dir, sizeof(dir), name);
	assert_int_equal(record_run(dir, name, argv), 0);
	assert_int_equal(mt_model__load(dir, &m, &st), 0);
	return m;
}

/* The one process whose parent is ppid. */
static const struct mt_proc *tree_only_child(const struct mt_model *m, uint32_t ppid)
{
	const struct mt_proc *found = NULL;
	size_t i;

	for (i = 0; i < mt_model__nr_procs(m); i++) {
		if (mt_model__proc(m, i)->ppid != ppid)
			continue;
		assert_null(found);
		found = mt_model__proc(m, i);
	}
	assert_non_null(found);
	return found;
}

/* inherited + allocations - frees - replaced - exec_discarded - leaked - inherited_live = 0 once finished, blocks
 * and bytes. */
static void tree_identity(const struct mt_heap_stats *h)
{
	assert_int_equal(h->inherited_allocations + h->allocations - h->frees - h->replaced -
			 h->exec_discarded_allocations - h->leaked_allocations - h->inherited_live_allocations, 0);
	assert_int_equal(h->inherited_bytes + h->allocated_bytes - h->freed_bytes - h->replaced_bytes -
			 h->exec_discarded_bytes - h->leaked_bytes - h->inherited_live_bytes, 0);
}

static void tree_identities(const struct mt_model *m)
{
	size_t i;

	for (i = 0; i < mt_model__nr_procs(m); i++)
		tree_identity(&mt_model__proc(m, i)->heap);
	tree_identity(&mt_model__totals(m)->heap);
}

/* The parent's 10 blocks: the child inherits them, frees them, and its 5555 bytes are discarded by its exec. */
static void test_tree_fork_exec(void **state)
{
	char *argv[] = { PROG("tree_fork_exec"), NULL };
	struct mt_model *m = tree_record("tree_fork_exec", argv);
	const struct mt_proc *root, *child;
	const struct mt_totals *t = mt_model__totals(m);

	(void)state;
	root = mt_model__find_proc(m, mt_model__session(m)->root_pid);
	child = tree_only_child(m, root->pid);
	assert_int_equal(child->heap.inherited_allocations, 10);
	assert_int_equal(child->heap.inherited_bytes, 10045);
	assert_int_equal(child->heap.frees, 10);
	assert_int_equal(child->heap.allocations, 1);
	assert_int_equal(child->heap.exec_discarded_allocations, 1);
	assert_int_equal(child->heap.exec_discarded_bytes, 5555);
	assert_int_equal(child->heap.leaked_allocations, 0);
	assert_string_equal(child->exe, "/bin/true");
	assert_int_equal(root->heap.allocations, 10);
	assert_int_equal(root->heap.frees, 10);
	assert_int_equal(t->heap.allocations, 11);
	assert_int_equal(t->heap.frees, 20);
	assert_int_equal(t->heap.unknown_frees, 0);
	assert_int_equal(t->heap.leaked_allocations, 0);
	assert_int_equal(t->heap.peak_live_bytes, 2 * 10045);	/* at the fork */
	tree_identities(m);
	mt_model__free(m);
}

/* A vfork child inherits like a fork child; it execs at once, discarding all it inherited. */
static void test_tree_vfork_exec(void **state)
{
	char *argv[] = { PROG("tree_vfork_exec"), NULL };
	struct mt_model *m = tree_record("tree_vfork_exec", argv);
	const struct mt_proc *root = mt_model__find_proc(m, mt_model__session(m)->root_pid), *child;

	(void)state;
	child = tree_only_child(m, root->pid);
	assert_int_equal(child->heap.inherited_allocations, 7);
	assert_int_equal(child->heap.inherited_bytes, 7 * 3100);
	assert_int_equal(child->heap.frees, 0);
	assert_int_equal(child->heap.exec_discarded_allocations, 7);
	assert_int_equal(child->heap.exec_discarded_bytes, 7 * 3100);
	assert_int_equal(child->heap.leaked_allocations, 0);
	assert_int_equal(root->heap.frees, 7);
	assert_int_equal(mt_model__totals(m)->heap.unknown_frees, 0);
	assert_int_equal(mt_model__totals(m)->heap.leaked_allocations, 0);
	tree_identities(m);
	mt_model__free(m);
}

/* A vfork child that allocates before _exit runs in its parent's memory, whose probes are the parent's too (a
 * perf-event uprobe's filter is the memory): each of its calls counts once, as the child's. */
static void test_tree_vfork_alloc(void **state)
{
	char *argv[] = { PROG("tree_vfork_alloc"), NULL };
	struct mt_model *m = tree_record("tree_vfork_alloc", argv);
	const struct mt_proc *root = mt_model__find_proc(m, mt_model__session(m)->root_pid), *child;

	(void)state;
	child = tree_only_child(m, root->pid);
	assert_int_equal(child->heap.allocations, 6);
	assert_int_equal(child->heap.allocated_bytes, 5 * 3333 + 4444);
	assert_int_equal(child->heap.frees, 5);
	assert_int_equal(child->heap.inherited_allocations, 1);
	assert_int_equal(child->heap.leaked_allocations, 1);	/* its 4444 */
	assert_int_equal(child->heap.inherited_live_allocations, 1);	/* the 3200 it inherited */
	assert_int_equal(root->heap.allocations, 2);
	assert_int_equal(root->heap.frees, 2);
	assert_int_equal(mt_model__totals(m)->heap.unknown_frees, 0);
	tree_identities(m);
	mt_model__free(m);
}

/* 100 children, each freeing one of the 100 blocks it inherited: matched frees, the other 99 inherited and still
 * live at the exit, not leaked (the parent's). */
static void test_tree_fork_100(void **state)
{
	char *argv[] = { PROG("tree_fork_100"), NULL };
	struct mt_model *m = tree_record("tree_fork_100", argv);
	uint32_t root = mt_model__session(m)->root_pid;
	size_t i, children = 0;

	(void)state;
	for (i = 0; i < mt_model__nr_procs(m); i++) {
		const struct mt_proc *p = mt_model__proc(m, i);

		if (p->pid == root)
			continue;
		children++;
		assert_int_equal(p->ppid, root);
		assert_int_equal(p->heap.inherited_allocations, 100);
		assert_int_equal(p->heap.inherited_bytes, 100 * 2000 + 99 * 100 / 2);
		assert_int_equal(p->heap.frees, 1);
		assert_int_equal(p->heap.unknown_frees, 0);
		assert_int_equal(p->heap.leaked_allocations, 0);
		assert_int_equal(p->heap.inherited_live_allocations, 99);
	}
	assert_int_equal(children, 100);
	assert_int_equal(mt_model__find_proc(m, root)->heap.frees, 100);
	assert_int_equal(mt_model__find_proc(m, root)->heap.leaked_allocations, 0);
	assert_int_equal(mt_model__totals(m)->heap.frees, 200);
	assert_int_equal(mt_model__totals(m)->heap.unknown_frees, 0);
	tree_identities(m);
	mt_model__free(m);
}

/* 8 threads x 10,000 malloc/free: glibc's flush of each thread's tcache at its exit is not a program free. */
static void test_tree_threads_frees(void **state)
{
	char *argv[] = { PROG("alloc_threads"), NULL };
	struct mt_model *m = tree_record("tree_threads", argv);
	const struct mt_heap_stats *h = &mt_model__totals(m)->heap;

	(void)state;
	assert_int_equal(h->allocations, 80008);	/* the pairs, and pthread_create's 8 TLS blocks */
	assert_int_equal(h->frees, h->allocations - h->leaked_allocations);
	assert_int_equal(h->leaked_allocations, 4);
	/* each thread's cached block, freed by it last, and its tcache struct, freed as its last call before the
	 * thread-exit record: 2 internal releases a thread */
	assert_int_equal(h->internal_releases, 16);
	assert_int_equal(h->unknown_frees, 0);
	tree_identities(m);
	mt_model__free(m);
}

/*
 * The tcache struct of each thread, allocated inside _int_malloc and freed as the thread's last call, is an
 * internal release because the thread-exit record (MT_REC_THREAD_EXIT) follows it: 8 threads and the main
 * thread, which exits with its process, each have one.
 */
static void test_tree_threads_no_unknown_frees(void **state)
{
	char *argv[] = { PROG("alloc_threads"), NULL };
	struct mt_model *m = tree_record("tree_threads_exit", argv);
	const struct mt_totals *t = mt_model__totals(m);

	(void)state;
	assert_int_equal(t->thread_exits, 9);
	assert_int_equal(t->heap.unknown_frees, 0);
	assert_int_equal(t->heap.internal_releases, 16);
	mt_model__free(m);
}

/* ---- process rows per image, suppressions, filters (issues 23 and 19) ---- */

/* `memtrack ARGS... DIR` with stdout into NAME.out (read into out); its exit code. */
static int memtrack_run(const char *name, char *out, size_t len, char **args)
{
	char *argv[16] = { MT_BINARY };
	int i, rc;

	for (i = 0; args[i] && i < 14; i++)
		argv[1 + i] = args[i];
	rc = run_named(name, argv);
	read_file(name, "out", out, len);
	return rc;
}

static void heap_is(const struct mt_heap_stats *h, uint64_t inherited, uint64_t allocs, uint64_t bytes,
		    uint64_t frees, uint64_t discarded, uint64_t leaked, uint64_t leaked_bytes)
{
	assert_int_equal(h->inherited_allocations, inherited);
	assert_int_equal(h->allocations, allocs);
	assert_int_equal(h->allocated_bytes, bytes);
	assert_int_equal(h->frees, frees);
	assert_int_equal(h->exec_discarded_allocations, discarded);
	assert_int_equal(h->leaked_allocations, leaked);
	assert_int_equal(h->leaked_bytes, leaked_bytes);
}

/* cmd as the text report's COMMAND column shows it outside a terminal: cut to MT_EXES_PIPE_COLUMN characters (the
 * checkout's path decides whether it is). */
static void cut_command(char *cmd, size_t size)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	mt_exes__put_cut(f, cmd, MT_EXES_PIPE_COLUMN);
	assert_int_equal(fclose(f), 0);
	assert_true(len < size);
	memcpy(cmd, buf, len + 1);
	free(buf);
}

/* A fork child that execs itself: two rows for it, each with its counts and command line. */
static void test_rows_fork_exec(void **state)
{
	char dir[256], out[16384], want[1024], cmd[512], exe[256], *argv[] = { PROG("rows_fork_exec"), NULL };
	char *rep[] = { "report", dir, NULL }, *json[] = { "report", "--json", dir, NULL };
	struct mt_model *m = tree_record("rows", argv);
	const struct mt_image *parent, *c0, *c1;

	(void)state;
	test_dir(dir, sizeof(dir), "rows");
	assert_int_equal(mt_model__nr_images(m), 3);
	parent = mt_model__image(m, 0);
	c0 = mt_model__image(m, 1);
	c1 = mt_model__image(m, 2);
	assert_int_equal(c0->pid, c1->pid);
	assert_int_equal(c0->image, 0);
	assert_int_equal(c1->image, 1);
	heap_is(&parent->heap, 0, 3, 600, 2, 0, 1, 100);
	heap_is(&c0->heap, 3, 1, 4000, 1, 3, 0, 0);
	assert_int_equal(c0->heap.exec_discarded_bytes, 4500);
	heap_is(&c1->heap, 0, 2, 33, 1, 0, 1, 22);
	tree_identities(m);

	assert_int_equal(memtrack_run("rows_text", out, sizeof(out), rep), 0);
	snprintf(cmd, sizeof(cmd), "→ %s  %s --child 'x y'", PROG("rows_fork_exec"), PROG("rows_fork_exec"));
	cut_command(cmd, sizeof(cmd));
	snprintf(exe, sizeof(exe), "%s", PROG("rows_fork_exec"));
	cut_command(exe, sizeof(exe));
	snprintf(want, sizeof(want), "%7" PRIu32 " %7" PRIu32 "   0  exec              3         1         1    "
		 "3.9 KiB    4.4 KiB       3       0        0 B  %s\n%7" PRIu32 " %7" PRIu32 "   1  exit 0            0 "
		 "        2         1       33 B       33 B       0       1       22 B  %s\n",
		 c0->pid, parent->pid, exe, c1->pid, parent->pid, cmd);
	assert_non_null(strstr(out, want));
	assert_int_equal(memtrack_run("rows_json", out, sizeof(out), json), 0);
	snprintf(want, sizeof(want), "      \"image\": 1,\n      \"exe\": \"%s\",\n      \"comm\": \"rows_fork_exec\",\n"
		 "      \"cmdline\": [\n        \"%s\",\n        \"--child\",\n        \"x y\"\n      ],\n"
		 "      \"ended_by\": \"exit\",\n", PROG("rows_fork_exec"), PROG("rows_fork_exec"));
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "      \"image\": 0,\n      \"exe\": \"%s\",\n      \"comm\": \"rows_fork_exec\",\n"
		 "      \"cmdline\": [\n        \"%s\"\n      ],\n      \"ended_by\": \"exec\",\n",
		 PROG("rows_fork_exec"), PROG("rows_fork_exec"));
	assert_non_null(strstr(out, want));
	mt_model__free(m);
}

/* A process that execs twice (sh, sh, then rows_fork_exec): three rows, each with the argv of its own exec. */
static void test_rows_exec_twice(void **state)
{
	char dir[256], out[32768], want[1024], cmd[512];
	char *argv[] = { "/bin/sh", "-c", cmd, NULL }, *json[] = { "report", "--json", dir, NULL };
	struct mt_model *m;

	(void)state;
	snprintf(cmd, sizeof(cmd), "exec /bin/sh -c 'exec %s'", PROG("rows_fork_exec"));
	m = tree_record("rows_exec2", argv);
	test_dir(dir, sizeof(dir), "rows_exec2");
	assert_int_equal(mt_model__proc(m, 0)->nr_images, 3);
	assert_int_equal(memtrack_run("rows_exec2_json", out, sizeof(out), json), 0);
	snprintf(want, sizeof(want), "      \"image\": 0,\n      \"exe\": \"/bin/sh\",\n      \"comm\": \"sh\",\n"
		 "      \"cmdline\": [\n        \"/bin/sh\",\n        \"-c\",\n        \"exec /bin/sh -c 'exec %s'\"\n"
		 "      ],\n      \"ended_by\": \"exec\",\n", PROG("rows_fork_exec"));
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "      \"image\": 1,\n      \"exe\": \"/bin/sh\",\n      \"comm\": \"sh\",\n"
		 "      \"cmdline\": [\n        \"/bin/sh\",\n        \"-c\",\n        \"exec %s\"\n"
		 "      ],\n      \"ended_by\": \"exec\",\n", PROG("rows_fork_exec"));
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "      \"image\": 2,\n      \"exe\": \"%s\",\n      \"comm\": \"rows_fork_exec\",\n"
		 "      \"cmdline\": [\n        \"%s\"\n      ],\n      \"ended_by\": \"exit\",\n",
		 PROG("rows_fork_exec"), PROG("rows_fork_exec"));
	assert_non_null(strstr(out, want));
	/* its fork child's exec'd image: its own argv too */
	snprintf(want, sizeof(want), "      \"image\": 1,\n      \"exe\": \"%s\",\n      \"comm\": \"rows_fork_exec\",\n"
		 "      \"cmdline\": [\n        \"%s\",\n        \"--child\",\n        \"x y\"\n      ],\n",
		 PROG("rows_fork_exec"), PROG("rows_fork_exec"));
	assert_non_null(strstr(out, want));
	mt_model__free(m);
}

/* --pid and --exe on a real run: the child's two rows; its exec'd image alone (it has the same exe). */
static void test_rows_filters(void **state)
{
	char dir[256], out[16384], pid[16], *argv[] = { PROG("rows_fork_exec"), NULL };
	char *by_pid[] = { "report", "--json", "--pid", pid, dir, NULL };
	char *by_exe[] = { "report", "--exe", "rows_fork_exec", "--exe", "/nonexistent", dir, NULL };
	char *none[] = { "report", "--exe", "python3", dir, NULL };
	struct mt_model *m = tree_record("rows_filter", argv);

	(void)state;
	test_dir(dir, sizeof(dir), "rows_filter");
	snprintf(pid, sizeof(pid), "%" PRIu32, mt_model__image(m, 1)->pid);
	assert_int_equal(memtrack_run("rows_pid", out, sizeof(out), by_pid), 0);
	assert_non_null(strstr(out, "    \"processes\": 1,\n    \"images\": 2,\n"));
	assert_non_null(strstr(out, "    \"inherited_allocations\": 3,\n    \"inherited_bytes\": 600,\n"
				    "    \"allocations\": 3,\n    \"frees\": 2,\n    \"allocated_bytes\": 4033,\n"));
	assert_int_equal(memtrack_run("rows_exe", out, sizeof(out), by_exe), 0);
	assert_non_null(strstr(out, "processes:   2 (3 images)\nfilter:      exes rows_fork_exec, /nonexistent\n"));
	assert_non_null(strstr(out, "  allocations:        6\n"));
	assert_int_equal(memtrack_run("rows_none", out, sizeof(out), none), 0);
	assert_non_null(strstr(out, "nothing matched the filter"));
	assert_null(strstr(out, "top allocation sites"));
	mt_model__free(m);
}

/* --from/--to on a real run, the window cut at the records' own times: phase 2 alone. */
static void test_window_real(void **state)
{
	char dir[256], out[16384], from[32], to[32], *argv[] = { PROG("phases"), NULL };
	char *rep[] = { "report", "--json", "--from", from, "--to", to, dir, NULL };

	(void)state;
	test_dir(dir, sizeof(dir), "phases");
	assert_int_equal(record_run(dir, "phases", argv), 0);
	mt_test__phase_times(dir, from, to, sizeof(from));
	assert_int_equal(memtrack_run("phases_window", out, sizeof(out), rep), 0);
	assert_non_null(strstr(out, "    \"start_live_allocations\": 10,\n    \"start_live_bytes\": 10000,\n"
				    "    \"inherited_allocations\": 0,\n    \"inherited_bytes\": 0,\n"
				    "    \"allocations\": 3,\n    \"frees\": 5,\n    \"allocated_bytes\": 9000,\n"
				    "    \"freed_bytes\": 5000,\n    \"frees_before_window\": 5,\n"
				    "    \"freed_bytes_before_window\": 5000,\n"));
	assert_non_null(strstr(out, "    \"leaked_allocations\": 0,\n"));
	assert_non_null(strstr(out, "    \"still_live_allocations\": 8,\n    \"still_live_bytes\": 14000,\n"));
}

/* A --stacks run leaking from two paths: a suppression file takes leak_drop's 2 blocks (400 B) and no other. */
static void test_suppress_site(void **state)
{
	char dir[256], out[16384], sup[300], *argv[] = { MT_BINARY, "record", "-q", "--stacks", "-o", dir, "--",
							  PROG("leak_sites"), NULL };
	char *leaks[] = { "report", "--leaks", "--suppress", sup, dir, NULL };
	char *json[] = { "report", "--json", "--suppress", sup, dir, NULL };
	FILE *f;

	(void)state;
	test_dir(dir, sizeof(dir), "leak_sites");
	snprintf(sup, sizeof(sup), "%s/leak_sites.supp", tmp_root);
	f = fopen(sup, "w");
	assert_non_null(f);
	fputs("# the second path's blocks are expected\nleak:leak_drop\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(run_named("leak_sites", argv), 0);
	assert_int_equal(memtrack_run("leak_sites_leaks", out, sizeof(out), leaks), 0);
	assert_non_null(strstr(out, "  leaked at exit:     3 blocks, 300 B\n"
				    "  suppressed leaks:   2 blocks, 400 B (leak:leak_drop: 2)\n"));
	assert_non_null(strstr(out, "leaked at exit, by allocation site (1 site, "));
	assert_non_null(strstr(out, "  #1   300 B in 3 blocks; pid "));
	assert_non_null(strstr(out, "        leak_keep+0x"));
	assert_null(strstr(out, "leak_drop+0x"));
	assert_int_equal(memtrack_run("leak_sites_json", out, sizeof(out), json), 0);
	assert_non_null(strstr(out, "    \"leaked_allocations\": 3,\n    \"leaked_bytes\": 300,\n"
				    "    \"suppressed_allocations\": 2,\n    \"suppressed_bytes\": 400,\n"));
}

/* A C++ program leaking one block: libstdc++'s emergency pool (72,704 B) is suppressed by default, not else. */
static void test_suppress_builtin(void **state)
{
	char dir[256], out[16384], *argv[] = { MT_BINARY, "record", "-q", "--stacks", "-o", dir, "--",
						PROG("cxx_leak_one"), NULL };
	char *json[] = { "report", "--leaks", "--json", dir, NULL };
	char *all[] = { "report", "--leaks", "--no-default-suppress", dir, NULL };

	(void)state;
	test_dir(dir, sizeof(dir), "cxx_leak_one");
	assert_int_equal(run_named("cxx_leak_one", argv), 0);
	assert_int_equal(memtrack_run("cxx_leak_one_json", out, sizeof(out), json), 0);
	assert_non_null(strstr(out, "    \"leaked_allocations\": 1,\n    \"leaked_bytes\": 4242,\n"
				    "    \"suppressed_allocations\": 1,\n    \"suppressed_bytes\": 72704,\n"));
	assert_non_null(strstr(out, "        \"suppression\": \"libstdc++'s emergency exception pool\",\n"
				    "        \"builtin\": true,\n        \"allocations\": 1,\n        \"bytes\": 72704\n"));
	assert_non_null(strstr(out, "  \"leaks\": [\n    {\n      \"allocations\": 1,\n      \"bytes\": 4242,\n"));
	assert_null(strstr(out, "\"bytes\": 72704,\n      \"stack\""));	/* not listed */
	assert_int_equal(memtrack_run("cxx_leak_one_all", out, sizeof(out), all), 0);
	assert_non_null(strstr(out, "  leaked at exit:     2 blocks, 75.1 KiB (76946 B)\n"));
	assert_non_null(strstr(out, "  #1   71.0 KiB (72704 B) in 1 block; pid "));
	assert_non_null(strstr(out, "  #2   4.1 KiB (4242 B) in 1 block; pid "));
}

/* The entries' leaked and suppressed bytes, by the one rule (what pprof's inuse_space and speedscope sum). */
static void stacks_leaks(const char *dir, bool builtins, uint64_t *leaked, uint64_t *suppressed)
{
	struct mt_suppressions *sup = mt_suppressions__new(builtins);
	struct mt_read_status st;
	struct mt_stacks *s;
	size_t i;
	int err;

	assert_non_null(sup);
	s = mt_loader__stacks(dir, sup, false, "test", &err, &st);
	assert_non_null(s);
	*leaked = *suppressed = 0;
	for (i = 0; i < mt_stacks__count(s); i++) {
		struct mt_stack_counts c;
		uint64_t n, b;

		mt_stacks__counts(s, mt_stacks__entry(s, i), &c);
		*leaked += c.leaked_bytes;
		mt_stacks__suppressed(s, mt_stacks__entry(s, i), &n, &b);
		*suppressed += b;
	}
	mt_stacks__free(s);
	mt_suppressions__free(sup);
}

/*
 * Issue 32 item 1: one DIR, one number. cxx_leak_one leaks 4242 B of its own and libstdc++'s 72,704-byte pool;
 * record's summary, report (text and JSON), diff, timeline (JSON and SVG), flamegraph --weight leaked and the
 * stacks pprof and speedscope write all say 4242 B leaked and 72704 B suppressed; with --no-default-suppress all
 * say 76946 B and none.
 */
static void test_leaks_one_number(void **state)
{
	char dir[256], out[32768], *argv[] = { MT_BINARY, "record", "--stacks", "-o", dir, "--",
					       PROG("cxx_leak_one"), NULL };
	char *report[] = { "report", "--json", "--sites", "0", dir, NULL };
	char *report_all[] = { "report", "--json", "--sites", "0", "--no-default-suppress", dir, NULL };
	char *diff[] = { "diff", "--json", dir, dir, NULL };
	char *diff_all[] = { "diff", "--json", "--no-default-suppress", dir, dir, NULL };
	char *flame[] = { "flamegraph", "--collapsed", "--weight", "leaked", dir, NULL };
	char *flame_all[] = { "flamegraph", "--collapsed", "--weight", "leaked", "--no-default-suppress", dir, NULL };
	char *timeline[] = { "timeline", "--json", dir, NULL };
	char *timeline_all[] = { "timeline", "--json", "--no-default-suppress", dir, NULL };
	char *timeline_svg[] = { "timeline", dir, NULL };
	uint64_t leaked, suppressed;

	(void)state;
	test_dir(dir, sizeof(dir), "leaks_one_number");
	assert_int_equal(run_named("leaks_one_number", argv), 0);
	read_file("leaks_one_number", "err", out, sizeof(out));
	assert_non_null(strstr(out, "memtrack: leaked at exit 1 block (4.1 KiB), suppressed 1 block (71.0 KiB: runtime "
				    "one-offs)"));
	assert_int_equal(memtrack_run("leaks_one_report", out, sizeof(out), report), 0);
	assert_non_null(strstr(out, "    \"leaked_allocations\": 1,\n    \"leaked_bytes\": 4242,\n"
				    "    \"suppressed_allocations\": 1,\n    \"suppressed_bytes\": 72704,\n"));
	assert_int_equal(memtrack_run("leaks_one_report_all", out, sizeof(out), report_all), 0);
	assert_non_null(strstr(out, "    \"leaked_allocations\": 2,\n    \"leaked_bytes\": 76946,\n"
				    "    \"suppressed_allocations\": 0,\n    \"suppressed_bytes\": 0,\n"));
	assert_int_equal(memtrack_run("leaks_one_diff", out, sizeof(out), diff), 0);
	assert_non_null(strstr(out, "      \"leaked_allocations\": 1,\n      \"leaked_bytes\": 4242,\n"
				    "      \"suppressed_allocations\": 1,\n      \"suppressed_bytes\": 72704\n"));
	assert_int_equal(memtrack_run("leaks_one_diff_all", out, sizeof(out), diff_all), 0);
	assert_non_null(strstr(out, "      \"leaked_allocations\": 2,\n      \"leaked_bytes\": 76946,\n"
				    "      \"suppressed_allocations\": 0,\n      \"suppressed_bytes\": 0\n"));
	assert_int_equal(memtrack_run("leaks_one_flame", out, sizeof(out), flame), 0);
	assert_non_null(strstr(out, " 4242\n"));
	assert_int_equal(strchr(out, '\n') - out + 1, (long)strlen(out));	/* one stack: the pool's is left out */
	assert_int_equal(memtrack_run("leaks_one_flame_all", out, sizeof(out), flame_all), 0);
	assert_non_null(strstr(out, " 4242\n"));
	assert_non_null(strstr(out, " 72704\n"));
	assert_int_equal(memtrack_run("leaks_one_timeline", out, sizeof(out), timeline), 0);
	assert_non_null(strstr(out, ",\"leaked_allocations\":1,\"leaked_bytes\":4242,\"suppressed_allocations\":1,"
				    "\"suppressed_bytes\":72704,"));
	assert_int_equal(memtrack_run("leaks_one_timeline_all", out, sizeof(out), timeline_all), 0);
	assert_non_null(strstr(out, ",\"leaked_allocations\":2,\"leaked_bytes\":76946,\"suppressed_allocations\":0,"
				    "\"suppressed_bytes\":0,"));
	assert_int_equal(memtrack_run("leaks_one_timeline_svg", out, sizeof(out), timeline_svg), 0);
	assert_non_null(strstr(out, "fill=\"#333\">leaked at exit 1 block (4.1 KiB), suppressed 1 block (71.0 KiB)"
				    "</text>\n"));
	stacks_leaks(dir, true, &leaked, &suppressed);
	assert_int_equal(leaked, 4242);
	assert_int_equal(suppressed, 72704);
	stacks_leaks(dir, false, &leaked, &suppressed);
	assert_int_equal(leaked, 76946);
	assert_int_equal(suppressed, 0);
}

/* The sum of the weights of collapsed flame graph lines ("path N"). */
static uint64_t collapsed_sum(const char *text)
{
	const char *p, *nl;
	uint64_t sum = 0;

	for (p = text; (nl = strchr(p, '\n')); p = nl + 1)
		sum += strtoull(memrchr(p, ' ', nl - p) + 1, NULL, 10);
	return sum;
}

/*
 * Issue 32 item 3: the README's example forks a child that builds and frees a table of its own and never touches
 * the 10,001 blocks it inherited (the parent's table and rows): it leaks nothing, and holds 10,001 blocks
 * inherited and still live at its exit, which no command calls its leaks.
 */
static void test_fork_child_inherited_live(void **state)
{
	char dir[256], out[65536], *argv[] = { MT_BINARY, "record", "--stacks", "-o", dir, "--", PROG("example"), NULL };
	char *report[] = { "report", "--json", "--sites", "0", dir, NULL };
	char *flame[] = { "flamegraph", "--collapsed", "--weight", "leaked", dir, NULL };
	const char *child;
	uint64_t inherited = 0;
	struct mt_suppressions *sup;
	struct mt_read_status st;
	struct mt_stacks *s;
	size_t i;
	int err;

	(void)state;
	test_dir(dir, sizeof(dir), "inherited_live");
	assert_int_equal(run_named("inherited_live", argv), 0);
	read_file("inherited_live", "err", out, sizeof(out));
	assert_non_null(strstr(out, "memtrack: leaked at exit 11 blocks (78.8 KiB), suppressed 1 block (4.0 KiB: "
				    "runtime one-offs), inherited and still live 10001 blocks (3.1 MiB: fork children's, "
				    "their parent's blocks);"));
	assert_int_equal(memtrack_run("inherited_live_report", out, sizeof(out), report), 0);
	assert_non_null(strstr(out, "    \"leaked_allocations\": 11,\n    \"leaked_bytes\": 80685,\n"));
	assert_non_null(strstr(out, "    \"inherited_live_allocations\": 10001,\n"
				    "    \"inherited_live_bytes\": 3242360,\n"));
	child = strstr(out, "\"inherited_allocations\": 10001,");	/* the child's row */
	assert_non_null(child);
	assert_non_null(strstr(child, "      \"leaked_allocations\": 0,\n      \"leaked_bytes\": 0,\n"));
	assert_non_null(strstr(child, "      \"inherited_live_allocations\": 10001,\n"));
	assert_int_equal(memtrack_run("inherited_live_flame", out, sizeof(out), flame), 0);
	assert_int_equal(collapsed_sum(out), 80685);
	sup = mt_suppressions__new(true);
	s = mt_loader__stacks(dir, sup, false, "test", &err, &st);
	assert_non_null(s);
	for (i = 0; i < mt_stacks__count(s); i++) {
		struct mt_stack_counts c;

		mt_stacks__counts(s, mt_stacks__entry(s, i), &c);
		inherited += c.inherited_live_allocations;
	}
	assert_int_equal(inherited, 10001);
	mt_stacks__free(s);
	mt_suppressions__free(sup);
}

/* Failed calls (addr 0) by func and size; size ANY_SIZE is any, so calloc's saturated UINT64_MAX is asked by func. */
struct failed {
	uint32_t pid;
	uint64_t by_func[MT_FN__COUNT], huge, saturated, with_old;
};

static int failed__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	const struct mt_alloc *a = (const void *)h;
	struct failed *f = ctx;

	if (h->type != MT_REC_ALLOC || h->pid != f->pid || a->addr || mt_func__is_free(a->func) ||
	    a->func >= MT_FN__COUNT)
		return 0;
	f->by_func[a->func]++;
	f->huge += a->size == 1ull << 62;
	f->saturated += a->size == UINT64_MAX;
	f->with_old += a->old_addr != 0;
	return 0;
}

static struct failed failed_calls(const char *dir, uint32_t pid)
{
	struct failed f = { .pid = pid };
	struct mt_read_status st;

	assert_int_equal(mt_artifact__read(dir, failed__on_record, &f, &st), 0);
	return f;
}

/* The model's heap accounting of pid, as report and report --json give it. */
static struct mt_heap_stats model_heap(const char *dir, uint32_t pid)
{
	struct mt_heap_stats h;
	struct mt_read_status st;
	struct mt_model *m;

	assert_int_equal(mt_model__load(dir, &m, &st), 0);
	assert_non_null(mt_model__find_proc(m, pid));
	h = mt_model__find_proc(m, pid)->heap;
	mt_model__free(m);
	return h;
}

/* Lines of name.out (run_named's) that hold every one of the two strings. */
static int out_lines_with(const char *name, const char *a, const char *b)
{
	char path[512], line[1024];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.out", tmp_root, name);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, a) && strstr(line, b);
	fclose(f);
	return n;
}

/* 10 malloc(2^62) and 5 callocs whose nmemb * size overflows: 15 failed calls, recorded, counted, dumped. */
static void test_failed_calls(void **state)
{
	char dir[256], *argv[] = { PROG("alloc_fail"), NULL }, *dump[] = { MT_BINARY, "dump", dir, NULL };
	struct failed f;
	uint32_t root;

	(void)state;
	test_dir(dir, sizeof(dir), "failed");
	assert_int_equal(record_run(dir, "failed", argv), 0);
	root = root_pid(dir);
	f = failed_calls(dir, root);
	assert_int_equal(f.by_func[MT_FN_MALLOC], 10);
	assert_int_equal(f.huge, 10);
	assert_int_equal(f.by_func[MT_FN_CALLOC], 5);
	assert_int_equal(f.saturated, 5);		/* the size asked: the product, past 64 bits */
	assert_int_equal(model_heap(dir, root).failed_allocations, 15);
	assert_int_equal(run_named("failed_dump", dump), 0);
	assert_int_equal(out_lines_with("failed_dump", "\"event\":\"malloc\",\"addr\":0,", "\"size\":4611686018427387904"),
			 10);
	assert_int_equal(out_lines_with("failed_dump", "\"event\":\"calloc\",\"addr\":0,", "\"size\":18446744073709551615"),
			 5);
}

/* One failure of each other C entry point: realloc's block stays its own (freed once), posix_memalign's error. */
static void test_failed_calls_each(void **state)
{
	char dir[256], *argv[] = { PROG("alloc_fail"), "all", NULL };
	struct failed f;
	uint32_t root;

	(void)state;
	test_dir(dir, sizeof(dir), "failed_each");
	assert_int_equal(record_run(dir, "failed_each", argv), 0);
	root = root_pid(dir);
	f = failed_calls(dir, root);
	assert_int_equal(f.by_func[MT_FN_REALLOC], 2);
	assert_int_equal(f.with_old, 1);		/* realloc(p, 2^62): p untouched */
	assert_int_equal(f.by_func[MT_FN_REALLOCARRAY], 1);
	assert_int_equal(f.by_func[MT_FN_MEMALIGN] + f.by_func[MT_FN_ALIGNED_ALLOC], 2);	/* one code in glibc */
	assert_int_equal(f.by_func[MT_FN_VALLOC], 1);
	assert_int_equal(f.by_func[MT_FN_PVALLOC], 1);
	assert_int_equal(f.by_func[MT_FN_POSIX_MEMALIGN], 1);
	assert_int_equal(f.huge, 10 + 7);
	assert_int_equal(f.saturated, 5 + 1);
	assert_int_equal(model_heap(dir, root).failed_allocations, 15 + 8);
	assert_int_equal(allocs(dir, root, MT_FN_MALLOC, 4444), 1);
	assert_int_equal(allocs(dir, root, MT_FN_FREE, ANY_SIZE), 1);
}

/*
 * operator new(nothrow) returning NULL, through libstdc++'s new, new[] and aligned new: each a failed new, and the
 * bad_alloc each throws inside is caught as without memtrack (no return probe in its way).
 */
static void test_failed_new_nothrow(void **state)
{
	char dir[256], *argv[] = { PROG("cxx_fail"), NULL };
	uint32_t root;

	(void)state;
	test_dir(dir, sizeof(dir), "failed_new");
	assert_int_equal(record_run(dir, "failed_new", argv), 0);
	root = root_pid(dir);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW, 1ull << 62, MT_ALLOCATOR_LIBSTDCXX), 4);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW_ARRAY, 1ull << 62, MT_ALLOCATOR_LIBSTDCXX), 2);
	assert_int_equal(failed_calls(dir, root).huge, 6);
	assert_int_equal(model_heap(dir, root).failed_allocations, 6);
}

/* cxx_new's news of one allocator, new or new[] (tcmalloc's and mimalloc's new[] are their new, at one address). */
static void cxx_news_of(const char *dir, uint32_t root, uint32_t allocator)
{
	static const struct { uint64_t size, n; } news[] = { { 7073, 10 }, { 7072, 10 }, { 7074, 1 }, { 7075, 3 },
							      { 7076, 3 }, { 7077, 3 }, { 7078, 3 } };
	size_t i;

	for (i = 0; i < sizeof(news) / sizeof(news[0]); i++)
		assert_int_equal(allocs_by(dir, root, MT_FN_NEW, news[i].size, allocator) +
				 allocs_by(dir, root, MT_FN_NEW_ARRAY, news[i].size, allocator), news[i].n);
	assert_int_equal(model_heap(dir, root).unknown_frees, 0);
	assert_int_equal(model_heap(dir, root).failed_allocations, 0);
}

/* tcmalloc's and mimalloc's operator new are seen at their entry and their ret instructions: each once. */
static void test_cxx_new_tcmalloc(void **state)
{
	char dir[256], *argv[] = { PROG("cxx_new_tc"), NULL };

	(void)state;
	test_dir(dir, sizeof(dir), "cxx_tc");
	assert_int_equal(record_run(dir, "cxx_tc", argv), 0);
	cxx_news_of(dir, root_pid(dir), MT_ALLOCATOR_TCMALLOC);
}

static void test_cxx_new_mimalloc(void **state)
{
	char dir[256], *argv[] = { PROG("cxx_new_mi"), NULL };

	(void)state;
	test_dir(dir, sizeof(dir), "cxx_mi");
	assert_int_equal(record_run(dir, "cxx_mi", argv), 0);
	cxx_news_of(dir, root_pid(dir), MT_ALLOCATOR_MIMALLOC);
}

/*
 * std::bad_alloc thrown by operator new, caught (cxx_bad_alloc exits 0 only then): no return probe on a new that
 * may throw. Each failure a failed new of the size asked, as many new[] as asked where the allocator tells new[]
 * from new (tcmalloc's are one function), and the 5 ordinary new[] after them exact.
 */
static void bad_alloc_caught(const char *name, const char *prog, uint32_t allocator, uint64_t arrays)
{
	char dir[256], *argv[] = { (char *)prog, NULL };
	struct failed f;
	uint32_t root;

	test_dir(dir, sizeof(dir), name);
	assert_int_equal(record_run(dir, name, argv), 0);
	root = root_pid(dir);
	f = failed_calls(dir, root);
	assert_int_equal(f.huge, 4);
	assert_int_equal(f.by_func[MT_FN_NEW_ARRAY], arrays);
	assert_int_equal(f.by_func[MT_FN_NEW], 4 - arrays);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW_ARRAY, 1ull << 62, allocator) +
			 allocs_by(dir, root, MT_FN_NEW, 1ull << 62, allocator), 4);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW_ARRAY, 5005, allocator) +
			 allocs_by(dir, root, MT_FN_NEW, 5005, allocator), 5);
	assert_int_equal(model_heap(dir, root).failed_allocations, 4);
	assert_int_equal(model_heap(dir, root).unknown_frees, 0);
}

static void test_bad_alloc_libstdcxx(void **state)
{
	(void)state;
	bad_alloc_caught("bad_alloc", PROG("cxx_bad_alloc"), MT_ALLOCATOR_LIBSTDCXX, 3);
}

static void test_bad_alloc_jemalloc(void **state)
{
	(void)state;
	bad_alloc_caught("bad_alloc_je", PROG("cxx_bad_alloc_je"), MT_ALLOCATOR_JEMALLOC, 3);
}

static void test_bad_alloc_tcmalloc(void **state)
{
	(void)state;
	bad_alloc_caught("bad_alloc_tc", PROG("cxx_bad_alloc_tc"), MT_ALLOCATOR_TCMALLOC, 0);
}

/*
 * The same under an LD_PRELOAD wrapper whose operator new forwards to libstdc++'s: the bad_alloc comes out through
 * the wrapper's return-probed frame. The 3 huge new[] are libstdc++'s new[] (a mark) naming the wrapper's new, the
 * aligned one libstdc++'s own; the 5 ordinary new[] the same way.
 */
static void test_bad_alloc_wrapper(void **state)
{
	char dir[256], env[512], *argv[] = { "/usr/bin/env", env, PROG("cxx_bad_alloc"), NULL };
	uint32_t root;
	struct failed f;

	(void)state;
	snprintf(env, sizeof(env), "LD_PRELOAD=%s", PROG("libwrap_new_preload.so"));
	test_dir(dir, sizeof(dir), "bad_alloc_wrap");
	assert_int_equal(record_run(dir, "bad_alloc_wrap", argv), 0);
	root = root_pid(dir);
	f = failed_calls(dir, root);
	assert_int_equal(f.huge, 4);
	assert_int_equal(f.by_func[MT_FN_NEW_ARRAY], 3);
	assert_int_equal(f.by_func[MT_FN_NEW], 1);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW_ARRAY, 5005, ANY), 5);
	assert_int_equal(model_heap(dir, root).failed_allocations, 4);
	assert_int_equal(model_heap(dir, root).unknown_frees, 0);
	assert_int_equal(attach_log(dir, "/libwrap_new_preload.so").kind, MT_ALLOCATOR_WRAPPER);
}

/* Debian's mimalloc is built as C: its operator new aborts where it would throw, traced or not. */
static void test_bad_alloc_mimalloc(void **state)
{
	char dir[256], *argv[] = { PROG("cxx_bad_alloc_mi"), NULL };

	(void)state;
	test_dir(dir, sizeof(dir), "bad_alloc_mi");
	assert_int_equal(record_run(dir, "bad_alloc_mi", argv), 128 + SIGABRT);
	assert_int_equal(model_heap(dir, root_pid(dir)).unknown_frees, 0);
}

/* The blocks of two sizes: each must be allocated once, then released once. */
struct once {
	uint32_t pid;
	uint64_t size_a, size_b;
	struct mt_u64map live;		/* addr -> 1 */
	uint64_t allocs, releases, double_allocs;
};

static int once__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	const struct mt_alloc *a = (const void *)h;
	struct once *p = ctx;
	int rc;

	if (h->type != MT_REC_ALLOC || h->pid != p->pid || !a->addr)
		return 0;
	if (mt_func__is_free(a->func)) {
		p->releases += mt_u64map__del(&p->live, a->addr, NULL);
		return 0;
	}
	if (a->size != p->size_a && a->size != p->size_b)
		return 0;
	p->allocs++;
	rc = mt_u64map__put(&p->live, a->addr, 1, NULL);
	assert_true(rc >= 0);
	p->double_allocs += rc == 1;
	return 0;
}

/* cxx_pairs' 1,500 blocks allocated once and released once each; and no release of the process was one of a block
 * released already (the model's unknown frees), no allocation one of a block still live (replaced). */
static void blocks_once(const char *dir, uint32_t pid)
{
	struct once p = { .pid = pid, .size_a = 3001, .size_b = 3002 };
	struct mt_read_status st;
	struct mt_heap_stats h;

	assert_int_equal(mt_artifact__read(dir, once__on_record, &p, &st), 0);
	assert_int_equal(p.allocs, 1500);
	assert_int_equal(p.double_allocs, 0);
	assert_int_equal(p.releases, 1500);
	assert_int_equal(p.live.count, 0);
	mt_u64map__release(&p.live);
	h = model_heap(dir, pid);
	assert_int_equal(h.unknown_frees, 0);
	assert_int_equal(h.replaced, 0);
}

/* cxx_pairs under libstdc++: new by its malloc's caller, new[] by its mark, deletes by their rank chain. */
static void test_cxx_pairs(void **state)
{
	char dir[256], *argv[] = { PROG("cxx_pairs"), NULL };
	uint32_t root;

	(void)state;
	test_dir(dir, sizeof(dir), "pairs");
	assert_int_equal(record_run(dir, "pairs", argv), 0);
	root = root_pid(dir);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW_ARRAY, 3001, MT_ALLOCATOR_LIBSTDCXX), 1000);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW, 3002, MT_ALLOCATOR_LIBSTDCXX), 500);
	assert_int_equal(allocs_by(dir, root, MT_FN_DELETE_ARRAY, ANY_SIZE, MT_ALLOCATOR_LIBSTDCXX), 1000);
	assert_int_equal(allocs_by(dir, root, MT_FN_DELETE, 3002, MT_ALLOCATOR_LIBSTDCXX), 500);
	assert_int_equal(allocs(dir, root, MT_FN_MALLOC, 3001) + allocs(dir, root, MT_FN_MALLOC, 3002), 0);
	assert_int_equal(allocs(dir, root, MT_FN_FREE, ANY_SIZE), 0);
	blocks_once(dir, root);
}

/* The same with --fast-cxx: libstdc++'s deletes and new[] are not probed, so each new[] is the new it jumps to, each
 * delete the free it ends in; the blocks and sizes stay exact. */
static void test_cxx_pairs_fast(void **state)
{
	char dir[256], *argv[] = { MT_BINARY, "record", "-q", "--fast-cxx", "-o", dir, "--", PROG("cxx_pairs"), NULL };
	uint32_t root;

	(void)state;
	test_dir(dir, sizeof(dir), "pairs_fast");
	assert_int_equal(run_named("pairs_fast", argv), 0);
	root = root_pid(dir);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW, 3001, MT_ALLOCATOR_LIBSTDCXX), 1000);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW, 3002, MT_ALLOCATOR_LIBSTDCXX), 500);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW_ARRAY, ANY_SIZE, ANY), 0);
	assert_int_equal(allocs_by(dir, root, MT_FN_DELETE, ANY_SIZE, ANY) +
			 allocs_by(dir, root, MT_FN_DELETE_ARRAY, ANY_SIZE, ANY), 0);
	assert_int_equal(allocs_by(dir, root, MT_FN_FREE, ANY_SIZE, MT_ALLOCATOR_GLIBC), 1500);
	blocks_once(dir, root);
}

/*
 * cxx_pairs with wrap_preload preloaded: its operator new/delete and malloc/free forward, one to the next, to glibc's.
 * Each call counts once, as the program made it (the wrapper's, outermost), the glibc calls inside nested in it:
 * sized delete -> delete -> free -> glibc's free is one release, whether each calls the next (-O0) or jumps to it
 * at one stack pointer (-O2).
 */
static void wrapped_pairs(const char *name, const char *lib)
{
	char dir[256], env[512], *argv[] = { "/usr/bin/env", env, PROG("cxx_pairs"), NULL };
	uint32_t root;

	snprintf(env, sizeof(env), "LD_PRELOAD=%s", lib);
	test_dir(dir, sizeof(dir), name);
	assert_int_equal(record_run(dir, name, argv), 0);
	root = root_pid(dir);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW_ARRAY, 3001, MT_ALLOCATOR_WRAPPER), 1000);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW, 3002, MT_ALLOCATOR_WRAPPER), 500);
	assert_int_equal(allocs_by(dir, root, MT_FN_DELETE_ARRAY, ANY_SIZE, MT_ALLOCATOR_WRAPPER), 1000);
	assert_int_equal(allocs_by(dir, root, MT_FN_DELETE, 3002, MT_ALLOCATOR_WRAPPER), 500);
	assert_int_equal(allocs_by(dir, root, MT_FN_DELETE, ANY_SIZE, ANY), 500);
	assert_int_equal(allocs_by(dir, root, MT_FN_DELETE_ARRAY, ANY_SIZE, ANY), 1000);
	assert_int_equal(allocs(dir, root, MT_FN_MALLOC, 3001) + allocs(dir, root, MT_FN_MALLOC, 3002), 0);
	blocks_once(dir, root);
	assert_int_equal(attach_log(dir, "/libwrap_preload_O0.so").rows + attach_log(dir, "/libwrap_preload_O2.so").rows,
			 1);
	assert_int_equal(attach_log(dir, strrchr(lib, '/')).kind, MT_ALLOCATOR_WRAPPER);
}

static void test_wrapper_calls(void **state)
{
	(void)state;
	wrapped_pairs("wrap_O0", PROG("libwrap_preload_O0.so"));
}

static void test_wrapper_tail_calls(void **state)
{
	(void)state;
	wrapped_pairs("wrap_O2", PROG("libwrap_preload_O2.so"));
}

/* glibc's libmemusage.so adds a header to each block: the sizes and addresses are the caller's, not glibc's. */
static void test_memusage_headers(void **state)
{
	char dir[256], *argv[] = { "/usr/bin/env", "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libmemusage.so",
				   PROG("alloc_sizes"), NULL };
	uint32_t root;

	(void)state;
	test_dir(dir, sizeof(dir), "memusage");
	assert_int_equal(record_run(dir, "memusage", argv), 0);
	root = root_pid(dir);
	assert_int_equal(allocs_by(dir, root, MT_FN_MALLOC, 3131, MT_ALLOCATOR_WRAPPER), 30);
	assert_int_equal(allocs_by(dir, root, MT_FN_MALLOC, 70000, MT_ALLOCATOR_WRAPPER), 10);
	assert_int_equal(allocs_by(dir, root, MT_FN_REALLOC, 4141, MT_ALLOCATOR_WRAPPER), 20);
	assert_int_equal(allocs_by(dir, root, MT_FN_CALLOC, 7 * 737, MT_ALLOCATOR_WRAPPER), 15);
	assert_int_equal(allocs(dir, root, ANY, 3131 + 16) + allocs(dir, root, ANY, 7 * 737 + 16), 0);
	/* libmemusage.so has no posix_memalign: glibc's is called */
	assert_int_equal(allocs_where(dir, root, MT_FN_POSIX_MEMALIGN, 2525, 256, MT_ALLOCATOR_GLIBC), 5);
	assert_int_equal(known_frees(dir, root), 60);
	assert_int_equal(attach_log(dir, "/libmemusage.so").kind, MT_ALLOCATOR_WRAPPER);
}

/* A C++ program exec'd by one: its process keeps its links, and BPF places the new image's operator new itself. */
static void test_cxx_exec(void **state)
{
	char dir[256], *argv[] = { PROG("cxx_pairs"), "exec", NULL };
	uint32_t root;

	(void)state;
	test_dir(dir, sizeof(dir), "pairs_exec");
	assert_int_equal(record_run(dir, "pairs_exec", argv), 0);
	root = root_pid(dir);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW, 3003, MT_ALLOCATOR_LIBSTDCXX), 10);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW_ARRAY, 3001, MT_ALLOCATOR_LIBSTDCXX), 1000);
	assert_int_equal(allocs_by(dir, root, MT_FN_NEW, 3002, MT_ALLOCATOR_LIBSTDCXX), 500);
	assert_int_equal(allocs(dir, root, MT_FN_MALLOC, 3001) + allocs(dir, root, MT_FN_MALLOC, 3002) +
			 allocs(dir, root, MT_FN_MALLOC, 3003), 0);
	blocks_once(dir, root);
}

/* The tools the hand-off tests run: CI installs them, so a missing one is a failure, not a skip. */
#define STRACE "/usr/bin/strace"
#define GDB "/usr/bin/gdb"

/* Issue 22: the pre-exec child never execs untraced. Under strace -f its PTRACE_TRACEME fails: it exits before
 * exec, and memtrack says why in one line and exits 2. The command's side effect does not happen. */
static void test_traceme_refused(void **state)
{
	char dir[256], flag[512], script[600], err[2048];
	char *argv[] = { STRACE, "-f", "-o", "/dev/null", MT_BINARY, "record", "-q", "-o", dir, "--", "/bin/sh", "-c",
			 script, NULL };

	(void)state;
	assert_int_equal(access(STRACE, X_OK), 0);
	test_dir(dir, sizeof(dir), "traceme_refused");
	snprintf(flag, sizeof(flag), "%s/traceme_refused.ran", tmp_root);
	snprintf(script, sizeof(script), "echo ran > %s", flag);
	/* under MEMTRACK_SANITIZE memtrack's own leak check would fail under strace's ptrace, exit 1 */
	setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
	assert_int_equal(run_named("traceme_refused", argv), 2);
	unsetenv("ASAN_OPTIONS");
	assert_int_equal(access(flag, F_OK), -1);
	assert_int_equal(access(dir, F_OK), -1);
	read_file("traceme_refused", "err", err, sizeof(err));
	assert_string_equal(err, "memtrack: cannot trace '/bin/sh': PTRACE_TRACEME: Operation not permitted (is "
				 "memtrack itself traced?)\n");
}

/* What one image did: the allocation records of the process that exec'd a file named name, from that exec on
 * (what its parent ran before it is not counted), its exit record, and the run's drops. */
struct image {
	const char *name;
	uint32_t pid;
	bool in;
	uint64_t calls, funcs[MT_FN__COUNT], size_3333;
	uint32_t exits;
	int32_t status;
	uint64_t drops[MT_DROP__COUNT];
};

static int image__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	struct image *im = ctx;
	const char *base;

	if (h->type == MT_REC_EXEC) {
		base = strrchr(((const struct mt_exec *)h)->path, '/');
		if (base && !strcmp(base + 1, im->name)) {
			im->pid = h->pid;
			im->in = true;
		} else if (h->pid == im->pid) {
			im->in = false;
		}
	} else if (h->type == MT_REC_ALLOC && im->in && h->pid == im->pid) {
		im->calls++;
		im->funcs[((const struct mt_alloc *)h)->func & MT_FUNC_MASK]++;
		im->size_3333 += ((const struct mt_alloc *)h)->size == 3333;
	} else if (h->type == MT_REC_EXIT && h->pid == im->pid) {
		im->exits++;
		im->status = ((const struct mt_exit *)h)->status;
	} else if (h->type == MT_REC_END) {
		memcpy(im->drops, ((const struct mt_end *)h)->drops, sizeof(im->drops));
	}
	return 0;
}

static struct image image__read(const char *dir, const char *name)
{
	struct image im = { .name = name };
	struct mt_read_status st;

	assert_int_equal(mt_artifact__read(dir, image__on_record, &im, &st), 0);
	assert_int_not_equal(im.pid, 0);
	return im;
}

/* alloc_glibc's image, exactly as test_glibc_functions counts it when it is the command itself; its exit record
 * comes from BPF when another tracer had it. */
static void image__is_alloc_glibc(const struct image *im)
{
	assert_int_equal(im->funcs[MT_FN_MALLOC], 14);
	assert_int_equal(im->funcs[MT_FN_CALLOC], 5);
	assert_int_equal(im->funcs[MT_FN_REALLOC], 4);
	assert_int_equal(im->funcs[MT_FN_REALLOCARRAY], 2);
	assert_int_equal(im->funcs[MT_FN_POSIX_MEMALIGN], 7);	/* the bad alignment's failure included */
	assert_int_equal(im->funcs[MT_FN_FREE], 37);
	assert_int_equal(im->calls, 14 + 5 + 4 + 2 + 7 + 7 + 2 + 2 + 37);
	assert_int_equal(im->exits, 1);
	assert_int_equal(im->status, 0);
}

/* Issue 17: strace -f under memtrack, and what it runs is still recorded, exactly. strace SEIZEs its child (memtrack's
 * tracee) and TRACEMEs in a feature test: each is handed over. */
static void test_handoff_strace(void **state)
{
	char dir[256], *argv[] = { STRACE, "-f", "-o", "/dev/null", PROG("alloc_glibc"), NULL };
	struct image im;

	(void)state;
	assert_int_equal(access(STRACE, X_OK), 0);
	test_dir(dir, sizeof(dir), "handoff_strace");
	assert_int_equal(record_run(dir, "handoff_strace", argv), 0);
	im = image__read(dir, "alloc_glibc");
	image__is_alloc_glibc(&im);
	assert_int_equal(im.drops[MT_DROP_HANDOFF], 0);	/* its exec's new file holds no allocator */
	assert_int_equal(im.drops[MT_DROP_HOLD], 0);
}

/* gdb runs its inferior, which calls PTRACE_TRACEME (through a shell): handed over, recorded exactly. */
static void test_handoff_gdb(void **state)
{
	char dir[256], out[4096], *argv[] = { GDB, "-nx", "-batch", "-ex", "run", "--args", PROG("alloc_glibc"), NULL };
	struct image im;

	(void)state;
	assert_int_equal(access(GDB, X_OK), 0);
	test_dir(dir, sizeof(dir), "handoff_gdb");
	assert_int_equal(record_run(dir, "handoff_gdb", argv), 0);
	read_file("handoff_gdb", "out", out, sizeof(out));
	assert_non_null(strstr(out, "exited normally]"));
	im = image__read(dir, "alloc_glibc");
	image__is_alloc_glibc(&im);
}

/*
 * gdb's inferior dlopens mimalloc: BPF must not hold the thread with a SIGSTOP, since memtrack no longer traces it
 * (gdb would report the signal, and -batch kill the program). The file is bound while it runs, and counted.
 */
static void test_handoff_no_hold(void **state)
{
	char dir[256], out[4096], *argv[] = { GDB, "-nx", "-batch", "-ex", "run", "--args", PROG("dlopen_mi"), NULL };
	struct image im;

	(void)state;
	test_dir(dir, sizeof(dir), "handoff_no_hold");
	assert_int_equal(record_run(dir, "handoff_no_hold", argv), 0);
	read_file("handoff_no_hold", "out", out, sizeof(out));
	assert_non_null(strstr(out, "exited normally]"));
	assert_null(strstr(out, "SIGSTOP"));
	im = image__read(dir, "dlopen_mi");
	assert_int_equal(im.drops[MT_DROP_HANDOFF], 1);
	assert_int_equal(im.drops[MT_DROP_HOLD], 0);
	assert_true(allocs_by(dir, im.pid, MT_FN_MALLOC, 4242, MT_ALLOCATOR_MIMALLOC) <= 100);
	assert_int_equal(im.exits, 1);
}

/* A child that calls PTRACE_TRACEME and is then traced by its parent: it works as without memtrack, and the
 * child's calls are recorded; its exit status (BPF's record: its parent reaps it) is its own. */
static void test_handoff_traceme(void **state)
{
	char dir[256], out[512], *argv[] = { PROG("traceme_child"), NULL };
	const struct mt_proc *child;
	struct mt_read_status st;
	struct mt_model *m = NULL;

	(void)state;
	test_dir(dir, sizeof(dir), "handoff_traceme");
	assert_int_equal(record_run(dir, "handoff_traceme", argv), 0);
	read_file("handoff_traceme", "out", out, sizeof(out));
	assert_string_equal(out, "traceme_child: the child exited with 7\n");
	assert_int_equal(mt_model__load(dir, &m, &st), 0);
	assert_int_equal(mt_model__nr_procs(m), 2);
	child = tree_only_child(m, mt_model__session(m)->root_pid);
	assert_true(child->exited);
	assert_int_equal(child->status, 7 << 8);
	assert_int_equal(allocs(dir, child->pid, MT_FN_MALLOC, 3333), 5);
	assert_int_equal(allocs(dir, child->pid, MT_FN_FREE, ANY_SIZE), 2);
	mt_model__free(m);
}

/* --no-handoff: no filter; the child's PTRACE_TRACEME fails as under any tracer. */
static void test_no_handoff(void **state)
{
	char dir[256], out[512], *argv[] = { MT_BINARY, "record", "-q", "--no-handoff", "-o", dir, "--",
					     PROG("traceme_child"), NULL };

	(void)state;
	test_dir(dir, sizeof(dir), "no_handoff");
	assert_int_equal(run_named("no_handoff", argv), 1);
	read_file("no_handoff", "out", out, sizeof(out));
	assert_string_equal(out, "traceme_child: PTRACE_TRACEME failed: Operation not permitted\n"
				 "traceme_child: the child did not stop (status 0x300)\n");
}

/* LeakSanitizer stops the world with PTRACE_ATTACH of each thread (memtrack's tracees): its report comes, and the
 * program exits as it does alone. Its frame #1 is as README's Limits say: main alone, the uretprobe trampoline (at
 * the top of the address space, minus 1) under memtrack, since ASan's malloc takes the stack inside the call. */
static void test_handoff_lsan(void **state)
{
	char dir[256], alone[4096], traced[4096], *argv[] = { PROG("asan_leak"), NULL }, *frame1;
	const char *summary = "SUMMARY: AddressSanitizer: 3000 byte(s) leaked in 3 allocation(s).\n";
	int rc = run_named("asan_alone", argv);

	(void)state;
	read_file("asan_alone", "err", alone, sizeof(alone));
	assert_non_null(strstr(alone, "ERROR: LeakSanitizer: detected memory leaks"));
	assert_non_null(strstr(alone, summary));
	frame1 = strstr(alone, "\n    #1 0x");
	assert_non_null(frame1);
	frame1[strcspn(frame1 + 1, "\n") + 1] = '\0';
	assert_non_null(strstr(frame1, " in main "));
	test_dir(dir, sizeof(dir), "handoff_lsan");
	assert_int_equal(record_run(dir, "handoff_lsan", argv), rc);
	read_file("handoff_lsan", "err", traced, sizeof(traced));
	assert_non_null(strstr(traced, "ERROR: LeakSanitizer: detected memory leaks"));
	assert_non_null(strstr(traced, summary));
	assert_non_null(strstr(traced, "\n    #1 0x7fffffffdfff  (<unknown module>)\n"));
	assert_null(strstr(traced, "fatal error"));
}

/* After memtrack has exited (--exit-with-command), a descendant's ptrace calls still work: the closer lets them
 * run (without it they would fail with ENOSYS). */
static void test_handoff_after_exit(void **state)
{
	char dir[256], out[512], script[2048], line[128] = "", *argv[] = { MT_BINARY, "record", "-q",
		"--exit-with-command", "-o", dir, "--", "/bin/sh", "-c", script, NULL };
	FILE *f;
	int i;

	(void)state;
	test_dir(dir, sizeof(dir), "handoff_after_exit");
	snprintf(out, sizeof(out), "%s/handoff_after_exit.late", tmp_root);
	snprintf(script, sizeof(script), "(sleep 1; %s > %s.tmp; mv %s.tmp %s) & exit 0", PROG("traceme_child"), out,
		 out, out);
	assert_int_equal(mt_test__run(argv, NULL, NULL), 0);
	wait_for_file(out);
	f = fopen(out, "r");
	assert_non_null(f);
	for (i = 0; i < 100 && !fgets(line, sizeof(line), f); i++)
		usleep(10000);
	fclose(f);
	assert_string_equal(line, "traceme_child: the child exited with 7\n");
}

/* DIR and each entry in it belong to uid:gid. */
static void dir_owned_by(const char *dir, uid_t uid, gid_t gid)
{
	const char *names[] = { "", "/events.mtz", "/memory_metadata.json" };
	char path[600];
	struct stat st;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", dir, names[i]);
		assert_int_equal(lstat(path, &st), 0);
		assert_int_equal(st.st_uid, uid);
		assert_int_equal(st.st_gid, gid);
	}
}

/* The command as uid:gid with the user's groups, its environment as given: what `id` and the shell say. */
static void user_output_is(const char *name, uid_t uid, gid_t gid, gid_t extra)
{
	char out[512], want[512];

	read_file(name, "out", out, sizeof(out));
	snprintf(want, sizeof(want), "%u\n%u\n%u %u\nenv kept\n", (unsigned int)uid, (unsigned int)gid,
		 (unsigned int)gid, (unsigned int)extra);
	assert_string_equal(out, want);
}

#define ID_SCRIPT "id -u; id -g; id -G; echo \"$MT_TEST_ENV\""

/* Issue 17: under sudo (SUDO_UID, SUDO_GID, memtrack root) the command runs as sudo's user, with its groups, and
 * DIR is that user's. */
static void test_sudo_user(void **state)
{
	char dir[256], *argv[] = { "/bin/sh", "-c", ID_SCRIPT, NULL }, uid[16], gid[16];
	const struct passwd *pw;
	gid_t extra;

	(void)state;
	pw = mt_test__user(&extra);
	snprintf(uid, sizeof(uid), "%u", (unsigned int)pw->pw_uid);
	snprintf(gid, sizeof(gid), "%u", (unsigned int)pw->pw_gid);
	test_dir(dir, sizeof(dir), "sudo_user");
	setenv("SUDO_UID", uid, 1);
	setenv("SUDO_GID", gid, 1);
	setenv("MT_TEST_ENV", "env kept", 1);
	assert_int_equal(record_run(dir, "sudo_user", argv), 0);
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	unsetenv("MT_TEST_ENV");
	user_output_is("sudo_user", pw->pw_uid, pw->pw_gid, extra);
	dir_owned_by(dir, pw->pw_uid, pw->pw_gid);
}

/* --user NAME does the same explicitly. */
static void test_user_option(void **state)
{
	char dir[256], *argv[] = { MT_BINARY, "record", "-q", "--user", MT_TEST_USER, "-o", dir, "--", "/bin/sh", "-c",
				   ID_SCRIPT, NULL };
	const struct passwd *pw;
	uid_t uid;
	gid_t gid, extra;

	(void)state;
	pw = mt_test__user(&extra);
	uid = pw->pw_uid;
	gid = pw->pw_gid;
	test_dir(dir, sizeof(dir), "user_option");
	setenv("MT_TEST_ENV", "env kept", 1);
	assert_int_equal(run_named("user_option", argv), 0);
	unsetenv("MT_TEST_ENV");
	user_output_is("user_option", uid, gid, extra);
	dir_owned_by(dir, uid, gid);
}

/* `record -o DIR` refused with exit 2 and reason: nothing written, the command not run. */
static void dir_refused(const char *dir, const char *name, const char *reason)
{
	char flag[512], script[600], err[1024], want[600];
	char *argv[] = { MT_BINARY, "record", "-q", "-o", (char *)dir, "--", "/bin/sh", "-c", script, NULL };

	snprintf(flag, sizeof(flag), "%s/%s.ran", tmp_root, name);
	snprintf(script, sizeof(script), "echo ran > %s", flag);
	assert_int_equal(run_named(name, argv), 2);
	assert_int_equal(access(flag, F_OK), -1);
	read_file(name, "err", err, sizeof(err));
	snprintf(want, sizeof(want), "memtrack: -o %s: %s\n", dir, reason);
	assert_string_equal(err, want);
}

/* Issue 17: DIR is never followed through a symlink, never a file, never another user's or a used directory. An
 * empty directory of the user's is taken. */
static void test_output_dir_refused(void **state)
{
	char target[256], link[256], file[256], full[256], other[256], empty[256], *argv[] = { PROG("alloc_ctor"), NULL };
	struct stat st;
	FILE *f;

	(void)state;
	test_dir(target, sizeof(target), "outdir_target");
	test_dir(link, sizeof(link), "outdir_link");
	assert_int_equal(mkdir(target, 0755), 0);
	assert_int_equal(symlink(target, link), 0);
	dir_refused(link, "outdir_link", "is a symlink");
	assert_int_equal(mt_test__dir_entries(target), 0);

	test_dir(file, sizeof(file), "outdir_file");
	f = fopen(file, "w");
	assert_non_null(f);
	fputs("kept\n", f);
	fclose(f);
	dir_refused(file, "outdir_file", "is not a directory");
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_size, 5);

	test_dir(full, sizeof(full), "outdir_full");
	assert_int_equal(record_run(full, "outdir_full_first", argv), 0);
	assert_int_equal(mt_test__dir_entries(full), 2);
	dir_refused(full, "outdir_full", "exists and is not empty");

	test_dir(other, sizeof(other), "outdir_other");
	assert_int_equal(mkdir(other, 0755), 0);
	assert_int_equal(chown(other, 65534, 65534), 0);
	dir_refused(other, "outdir_other", "belongs to uid 65534");
	assert_int_equal(mt_test__dir_entries(other), 0);

	test_dir(empty, sizeof(empty), "outdir_empty");
	assert_int_equal(mkdir(empty, 0700), 0);
	assert_int_equal(record_run(empty, "outdir_empty", argv), 0);
	assert_int_equal(allocs(empty, root_pid(empty), ANY, ANY_SIZE), 5);
}

/* The mode of DIR/modules/NAME. */
static mode_t module_mode(const char *dir, const char *file)
{
	char hex[2 * MT_BUILD_ID_MAX + 1], path[600];
	struct stat st;

	mt_test__build_id_hex(file, hex);
	snprintf(path, sizeof(path), "%s/modules/%s", dir, hex);
	assert_int_equal(stat(path, &st), 0);
	return st.st_mode & 07777;
}

/* Module copies (--portable) are 0600 at most (they sit beside stack bytes) and never wider than their original: a
 * 0500 program is copied 0400, libc (0644) 0600; DIR/modules is 0700. */
static void test_module_modes(void **state)
{
	char dir[256], prog[256], cmd[700], modules[300], *argv[] = { MT_BINARY, "record", "-q", "--stacks", "--portable",
								       "-o", dir, "--", prog, NULL };
	struct stat st;

	(void)state;
	test_dir(dir, sizeof(dir), "module_modes");
	test_dir(prog, sizeof(prog), "alloc_ctor_0500");
	snprintf(cmd, sizeof(cmd), "cp %s %s && chmod 0500 %s", PROG("alloc_ctor"), prog, prog);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(mt_test__run(argv, NULL, NULL), 0);
	assert_int_equal(module_mode(dir, prog), 0400);
	assert_int_equal(module_mode(dir, "/usr/lib/x86_64-linux-gnu/libc.so.6"), 0600);
	snprintf(modules, sizeof(modules), "%s/modules", dir);
	assert_int_equal(stat(modules, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
}

/* n copies of a small library in dir (lib0.so ...): each a file the next run of memtrack has not seen. */
static void lib_copies(const char *dir, int n)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "mkdir -p %s && for i in $(seq 0 %d); do cp /usr/lib/x86_64-linux-gnu/libz.so.1 "
		 "%s/lib$i.so; done", dir, n - 1, dir);
	assert_int_equal(system(cmd), 0);
}

/* memtrack recording dlopen_copies (its pid to NAME.pid), started and not waited for; its output in NAME.out. */
static pid_t copies_start(const char *name, const char *opt, const char *flags, const char *libs, const char *n)
{
	char dir[256], pidfile[300], out[300];
	char *argv[] = { MT_BINARY, "record", "-q", (char *)opt, "-o", dir, "--", PROG("dlopen_copies"), pidfile,
			 (char *)flags, (char *)libs, (char *)n, NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;

	test_dir(dir, sizeof(dir), name);
	snprintf(pidfile, sizeof(pidfile), "%s/%s.pid", tmp_root, name);
	snprintf(out, sizeof(out), "%s/%s.out", tmp_root, name);
	if (!opt[0])
		memmove(&argv[3], &argv[4], sizeof(argv) - 4 * sizeof(argv[0]));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_int_equal(posix_spawn(&pid, argv[0], &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	return pid;
}

static pid_t pid_from(const char *name)
{
	char path[300], line[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.pid", tmp_root, name);
	wait_for_file(path);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	return atoi(line);
}

/* The state letter of /proc/PID/stat, 0 when it is gone. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] ? p[2] : 0;
}

/* The command, ours to reap once memtrack is gone (the test is a subreaper), ends on its own within 10 s; a
 * command left stopped is killed, and fails the test. */
static void ends_on_its_own(pid_t cmd, const char *name, const char *want)
{
	char out[256];
	int status = 0, i;
	pid_t got = 0;

	for (i = 0; i < 1000 && !(got = waitpid(cmd, &status, WNOHANG)); i++)
		usleep(10000);
	if (!got) {
		fprintf(stderr, "%s: command %d still there, state %c\n", name, cmd, proc_state(cmd));
		kill(cmd, SIGKILL);
		waitpid(cmd, &status, 0);
	}
	assert_int_equal(got, cmd);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	read_file(name, "out", out, sizeof(out));
	assert_string_equal(out, want);
}

/*
 * Issue 22: memtrack SIGKILLed while it holds a thread it has not reaped yet (it is stopped itself): the hold's
 * ignored signal is delivered untraced and does nothing; with SIGURG, SIGWINCH and SIGCHLD blocked the hold is a
 * SIGSTOP, and the closer SIGCONTs it. Either way the command finishes on its own.
 */
static void hold_then_kill(const char *name, const char *flags, const char *libs)
{
	char go[300];
	pid_t mt, cmd;
	int i, fd;

	mt = copies_start(name, "", flags, libs, "3");
	cmd = pid_from(name);
	assert_int_equal(kill(mt, SIGSTOP), 0);
	snprintf(go, sizeof(go), "%s/go", libs);
	fd = open(go, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	for (i = 0; i < 500 && proc_state(cmd) != 't'; i++)
		usleep(10000);
	assert_int_equal(proc_state(cmd), 't');	/* held: its stop waits for memtrack */
	assert_int_equal(kill(mt, SIGKILL), 0);
	assert_int_equal(waitpid(mt, NULL, 0), mt);
	ends_on_its_own(cmd, name, "dlopen_copies: 3 opened\n");
	unlink(go);
}

static void test_held_then_killed(void **state)
{
	char libs[256];

	(void)state;
	test_dir(libs, sizeof(libs), "libs_held");
	lib_copies(libs, 3);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	hold_then_kill("held_killed", "w", libs);
	hold_then_kill("held_killed_stop", "wb", libs);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
}

/* SIGKILL at several moments of a run that dlopens 40 new files (a hold each): the command always finishes. */
static void test_killed_at_any_moment(void **state)
{
	char libs[256], name[64];
	pid_t mt, cmd;
	int k;

	(void)state;
	test_dir(libs, sizeof(libs), "libs_kill");
	lib_copies(libs, 40);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	for (k = 0; k < 8; k++) {
		snprintf(name, sizeof(name), "killed_%d", k);
		mt = copies_start(name, "", k < 5 ? "-" : "b", libs, "40");
		cmd = pid_from(name);
		usleep(k % 5 * 40000);
		kill(mt, SIGKILL);
		assert_int_equal(waitpid(mt, NULL, 0), mt);
		ends_on_its_own(cmd, name, "dlopen_copies: 40 opened\n");
	}
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
}

/* --exit-with-command: memtrack's normal exit while a descendant is held, or about to be: it finishes too. */
static void test_exit_with_command_holds(void **state)
{
	char libs[256];
	pid_t mt, cmd;
	int status;

	(void)state;
	test_dir(libs, sizeof(libs), "libs_outlive");
	lib_copies(libs, 40);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	mt = copies_start("outlive", "--exit-with-command", "f", libs, "40");
	cmd = pid_from("outlive");
	assert_int_equal(waitpid(mt, &status, 0), mt);
	assert_int_equal(status, 0);
	ends_on_its_own(cmd, "outlive", "dlopen_copies: 40 opened\n");
	mt = copies_start("outlive_stop", "--exit-with-command", "fb", libs, "40");
	cmd = pid_from("outlive_stop");
	assert_int_equal(waitpid(mt, &status, 0), mt);
	ends_on_its_own(cmd, "outlive_stop", "dlopen_copies: 40 opened\n");
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
}

/* Catchable signals that would have killed memtrack go to the command, as SIGTERM does: the command ends by
 * them, memtrack exits 128 + N, and the artifact is finished. */
static void test_fatal_signals_passed(void **state)
{
	static const int sigs[] = { SIGUSR1, SIGUSR2, SIGQUIT, SIGALRM, SIGPIPE, SIGXCPU };
	char dir[256], ready[300], script[400];
	char *argv[] = { MT_BINARY, "record", "-q", "-o", dir, "--", "/bin/sh", "-c", script, NULL };
	posix_spawnattr_t attr;
	sigset_t dfl;
	int status;
	size_t i;
	pid_t mt;

	(void)state;
	/* A shell's background job starts with SIGQUIT ignored, and the command would inherit that: defaults here. */
	sigemptyset(&dfl);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&dfl, sigs[i]);
	assert_int_equal(posix_spawnattr_init(&attr), 0);
	assert_int_equal(posix_spawnattr_setsigdefault(&attr, &dfl), 0);
	assert_int_equal(posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF), 0);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		snprintf(dir, sizeof(dir), "%s/fatal_%d", tmp_root, sigs[i]);
		snprintf(ready, sizeof(ready), "%s/fatal_%d.ready", tmp_root, sigs[i]);
		snprintf(script, sizeof(script), "touch %s; exec sleep 30", ready);
		assert_int_equal(posix_spawn(&mt, argv[0], NULL, &attr, argv, environ), 0);
		wait_for_file(ready);
		assert_int_equal(kill(mt, sigs[i]), 0);
		assert_int_equal(waitpid(mt, &status, 0), mt);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 128 + sigs[i]);
		assert_int_equal(query__run(dir, MT_REC_END, ANY, ANY, ANY_SIZE).end_seen, 1);
	}
	posix_spawnattr_destroy(&attr);
}

/* ---- where RSS goes at its peak ---- */

/* The bytes of a term's line of report's "Where RSS goes" block: "X MiB (N B)", or "N B" below 1 KiB. */
static int64_t rss_term_text(const char *out, const char *label)
{
	const char *p = strstr(out, "\nWhere RSS goes at its peak (");
	const char *paren;

	assert_non_null(p);
	p = strstr(p, label);
	assert_non_null(p);
	p += strlen(label) + strspn(p + strlen(label), " ");
	paren = strchr(p, '(');
	if (paren && paren < strchr(p, '%') && paren[1] != 't')	/* not "(the ..." */
		p = paren + 1;
	return strtoll(p, NULL, 10);
}

/* The first value of "key" in report --json's output (the totals' come before the rows'), signed. */
static int64_t json_i64(const char *out, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\": ", key);
	p = strstr(out, k);
	assert_non_null(p);
	return strtoll(p + strlen(k), NULL, 10);
}

/*
 * Issue 34 item 3: rss_gap holds 4 blocks of 1 MiB (each glibc's mmap of 1 MiB + a page, inside malloc, beside the
 * brk heap its tcache took), 8 MiB it mapped itself, and memtrack's binary mapped from its file, all touched. At the
 * RSS peak: the heap is the blocks, the program's mappings what it held at its end (the loader's) + 8 MiB, the
 * allocator-held what glibc mapped less the blocks, the file-backed at least the binary's pages; the terms add up
 * to the peak, and report's text and JSON say the same.
 */
static void test_rss_gap(void **state)
{
	const uint64_t pg = 4096, mib = 1 << 20, big = mib + pg;
	char dir[256], out[65536], *argv[] = { PROG("rss_gap"), MT_BINARY, NULL };
	char *rep[] = { "report", dir, NULL }, *json[] = { "report", "--json", dir, NULL };
	static const char *const labels[] = { "live heap:", "allocator-held:", "program mappings:", "file-backed:",
					       "shmem:", NULL };
	static const char *const keys[] = { "heap_bytes", "allocator_held_bytes", "program_mapped_bytes", "file_bytes",
					     "shmem_bytes", "rest_bytes" };
	int64_t terms[MT_RSS_TERM__COUNT], text[MT_RSS_TERM__COUNT];
	const struct mt_proc *p;
	struct brk_span b = { 0 };
	struct mt_read_status st;
	struct mt_model *m;
	struct stat sb;
	int i;

	(void)state;
	test_dir(dir, sizeof(dir), "rss_gap");
	assert_int_equal(record_run(dir, "rss_gap", argv), 0);
	assert_int_equal(stat(MT_BINARY, &sb), 0);
	b.root = root_pid(dir);
	assert_int_equal(mt_artifact__read(dir, brk_span__on_record, &b, &st), 0);
	assert_int_equal(mt_model__load(dir, &m, &st), 0);
	p = mt_model__find_proc(m, b.root);
	assert_non_null(p);
	assert_true(p->rss.records > 0);
	assert_int_equal(mt_rss_parts__terms(&p->rss.at_peak, terms), p->rss.peak_rss_bytes);
	assert_int_equal(terms[MT_RSS_TERM_HEAP], 4 * mib);
	assert_int_equal(terms[MT_RSS_TERM_PROGRAM], p->mapped.end_program_bytes + 8 * mib);
	assert_int_equal(terms[MT_RSS_TERM_PROGRAM], p->mapped.peak_program_bytes);
	assert_int_equal(p->rss.at_peak.allocator_bytes, 4 * big + (b.last - b.first));
	assert_int_equal(p->rss.at_peak.allocator_bytes, p->mapped.peak_allocator_bytes);
	assert_int_equal(terms[MT_RSS_TERM_ALLOCATOR_HELD], 4 * pg + (b.last - b.first));
	assert_true(terms[MT_RSS_TERM_FILE] >= (int64_t)(sb.st_size / pg * pg));
	assert_int_equal(terms[MT_RSS_TERM_HEAP] + terms[MT_RSS_TERM_ALLOCATOR_HELD] + terms[MT_RSS_TERM_PROGRAM] +
			 terms[MT_RSS_TERM_FILE] + terms[MT_RSS_TERM_SHMEM] + terms[MT_RSS_TERM_REST],
			 p->rss.peak_rss_bytes);
	assert_int_equal(mt_model__totals(m)->rss.peak_rss_bytes, p->rss.peak_rss_bytes);	/* one process */

	assert_int_equal(memtrack_run("rss_gap_text", out, sizeof(out), rep), 0);
	for (i = 0; labels[i]; i++)
		text[i] = rss_term_text(out, labels[i]);
	text[MT_RSS_TERM_REST] = rss_term_text(out, "the rest:");
	assert_int_equal(rss_term_text(out, "= peak RSS:"), p->rss.peak_rss_bytes);
	assert_int_equal(memtrack_run("rss_gap_json", out, sizeof(out), json), 0);
	for (i = 0; i < MT_RSS_TERM__COUNT; i++) {
		assert_int_equal(text[i], terms[i]);
		assert_int_equal(json_i64(out, keys[i]), terms[i]);
		/* the row's, after the totals' */
		assert_int_equal(json_i64(strstr(out, "\"processes\": ["), keys[i]), terms[i]);
	}
	assert_int_equal(json_i64(out, "rss_bytes"), p->rss.peak_rss_bytes);
	mt_model__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constructor_allocations), cmocka_unit_test(test_glibc_functions),
		cmocka_unit_test(test_realloc_chain),		 cmocka_unit_test(test_process_tree),
		cmocka_unit_test(test_threads),			 cmocka_unit_test(test_cross_cpu_order),			 cmocka_unit_test(test_summary_is_the_artifacts),
		cmocka_unit_test(test_exit_status),		 cmocka_unit_test(test_memory_syscalls),
		cmocka_unit_test(test_mapped_books),		 cmocka_unit_test(test_mapped_stacks),
		cmocka_unit_test(test_rss_gap),
		cmocka_unit_test(test_cannot_run),		 cmocka_unit_test(test_job_control),
		cmocka_unit_test(test_signal_forwarding),	 cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_attach_only_mapped),	 cmocka_unit_test(test_dlopen_mimalloc),
		cmocka_unit_test(test_dlopen_two_at_once),	 cmocka_unit_test(test_static_jemalloc),
		cmocka_unit_test(test_static_tcmalloc),		 cmocka_unit_test(test_cxx_new_delete),
		cmocka_unit_test(test_cxx_delete_jemalloc),	 cmocka_unit_test(test_command_keeps_nice),
		cmocka_unit_test(test_preloaded_jemalloc),	 cmocka_unit_test(test_preloaded_tcmalloc),
		cmocka_unit_test(test_preloaded_mimalloc),
		cmocka_unit_test(test_hold_invisible),		 cmocka_unit_test(test_exit_with_command),
		cmocka_unit_test(test_two_allocators_in_one_file), cmocka_unit_test(test_clock_tick),
		cmocka_unit_test(test_clock_precise),		 cmocka_unit_test(test_clock_coarse),
		cmocka_unit_test(test_call_slots),		 cmocka_unit_test(test_leader_exited),
		cmocka_unit_test(test_many_live_processes), cmocka_unit_test(test_shared_links_exact),
		cmocka_unit_test(test_shared_links_off),	 cmocka_unit_test(test_fd_limit_failures),
		cmocka_unit_test(test_subreaper_no_closer),
		cmocka_unit_test(test_tree_fork_exec),
		cmocka_unit_test(test_tree_vfork_exec),
		cmocka_unit_test(test_tree_vfork_alloc),
		cmocka_unit_test(test_tree_fork_100),
		cmocka_unit_test(test_tree_threads_frees),
		cmocka_unit_test(test_tree_threads_no_unknown_frees),
		cmocka_unit_test(test_rows_fork_exec),
		cmocka_unit_test(test_rows_exec_twice),
		cmocka_unit_test(test_rows_filters),
		cmocka_unit_test(test_window_real),
		cmocka_unit_test(test_suppress_site),
		cmocka_unit_test(test_suppress_builtin),
		cmocka_unit_test(test_leaks_one_number),
		cmocka_unit_test(test_fork_child_inherited_live),
		cmocka_unit_test(test_failed_calls),		 cmocka_unit_test(test_failed_calls_each),
		cmocka_unit_test(test_failed_new_nothrow),	 cmocka_unit_test(test_cxx_new_tcmalloc),
		cmocka_unit_test(test_cxx_new_mimalloc),	 cmocka_unit_test(test_bad_alloc_libstdcxx),
		cmocka_unit_test(test_bad_alloc_jemalloc), cmocka_unit_test(test_bad_alloc_wrapper),	 cmocka_unit_test(test_bad_alloc_tcmalloc),
		cmocka_unit_test(test_bad_alloc_mimalloc),	 cmocka_unit_test(test_cxx_pairs), cmocka_unit_test(test_cxx_pairs_fast),
		cmocka_unit_test(test_wrapper_calls),		 cmocka_unit_test(test_wrapper_tail_calls),
		cmocka_unit_test(test_memusage_headers),	 cmocka_unit_test(test_cxx_exec),
		cmocka_unit_test(test_traceme_refused),
		cmocka_unit_test(test_handoff_strace),
		cmocka_unit_test(test_handoff_gdb),
		cmocka_unit_test(test_handoff_no_hold),
		cmocka_unit_test(test_handoff_traceme),
		cmocka_unit_test(test_no_handoff),
		cmocka_unit_test(test_handoff_lsan),
		cmocka_unit_test(test_handoff_after_exit),
		cmocka_unit_test(test_sudo_user),
		cmocka_unit_test(test_user_option),
		cmocka_unit_test(test_output_dir_refused),
		cmocka_unit_test(test_module_modes),
		cmocka_unit_test(test_held_then_killed),
		cmocka_unit_test(test_killed_at_any_moment),
		cmocka_unit_test(test_exit_with_command_holds),
		cmocka_unit_test(test_fatal_signals_passed),
	};

	return mt_test__main("test_record", tests, sizeof(tests) / sizeof(tests[0]));
}
