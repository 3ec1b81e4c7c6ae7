// SPDX-License-Identifier: GPL-2.0-only
/* fork_inherit.c — the model's time and memory for 1,000 forks of a process holding 100,000 blocks (no kernel). */
/*
 * A synthetic record stream straight into mt_model__add: a parent allocates BLOCKS blocks, then forks FORKS
 * children, each of which frees one inherited block and allocates one of its own. Variants: children exit at
 * once or all stay alive to the end (each holding its inheritance), and the parent changes CHANGES blocks
 * between forks or none. Memory is malloc's in-use bytes (mallinfo2) once every record has left the reorder window,
 * children still alive, before the end of the stream; time covers the whole stream and mt_model__finish.
 *   usage: fork_inherit [FORKS [BLOCKS [CHANGES]]]   (default 1000 100000 10)
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "model/model.h"

struct stream {
	struct mt_model *m;
	uint64_t ts;
};

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static void hdr(struct mt_rec_hdr *h, struct stream *s, uint16_t type, uint16_t size, uint32_t pid)
{
	h->ts_ns = s->ts++;
	h->pid = h->tid = pid;
	h->type = type;
	h->size = size;
}

static void add(struct stream *s, const struct mt_rec_hdr *h)
{
	if (mt_model__add(s->m, h)) {
		fprintf(stderr, "fork_inherit: the model failed\n");
		exit(1);
	}
}

static void call(struct stream *s, uint32_t pid, int func, uint64_t addr, uint64_t size)
{
	struct mt_alloc a = { .addr = addr, .size = size, .func = func, .allocator = MT_ALLOCATOR_GLIBC };

	hdr(&a.hdr, s, MT_REC_ALLOC, sizeof(a), pid);
	add(s, &a.hdr);
}

static void fork_rec(struct stream *s, uint32_t parent, uint32_t child)
{
	struct mt_fork f = { .child = child };

	hdr(&f.hdr, s, MT_REC_FORK, sizeof(f), parent);
	add(s, &f.hdr);
}

static void exit_rec(struct stream *s, uint32_t pid)
{
	struct mt_exit x = { 0 };

	hdr(&x.hdr, s, MT_REC_EXIT, sizeof(x), pid);
	add(s, &x.hdr);
}

/* Failed syscalls, which count nowhere, until every record before them has left the reorder window. */
static void drain(struct stream *s)
{
	struct mt_syscall c = { .ret = -1, .sys = MT_SYS_MMAP };
	int i;

	for (i = 0; i < MT_REORDER_WINDOW; i++) {
		hdr(&c.hdr, s, MT_REC_SYSCALL, sizeof(c), 10);
		add(s, &c.hdr);
	}
}

/* The parent's block i, and a child's or a change's own. */
#define BLOCK(i) (0x10000000ull + 32 * (uint64_t)(i))
#define OWN(i) (0x40000000ull + 32 * (uint64_t)(i))

static void run(const char *label, int forks, int blocks, int changes, int alive)
{
	struct stream s = { mt_model__new(), 1 };
	size_t base = heap_in_use(), parent, held;
	double t0 = now_ms(), t1;
	int i, k;

	for (i = 0; i < blocks; i++)
		call(&s, 10, MT_FN_MALLOC, BLOCK(i), 24);
	drain(&s);
	parent = heap_in_use() - base;
	for (i = 0; i < forks; i++) {
		fork_rec(&s, 10, 100 + i);
		call(&s, 100 + i, MT_FN_FREE, BLOCK(i % blocks), 0);
		call(&s, 100 + i, MT_FN_MALLOC, OWN(i), 8);
		if (!alive)
			exit_rec(&s, 100 + i);
		for (k = 0; k < changes; k++) {
			call(&s, 10, MT_FN_FREE, BLOCK((i * changes + k) % blocks), 0);
			call(&s, 10, MT_FN_MALLOC, BLOCK((i * changes + k) % blocks), 40);
		}
	}
	drain(&s);
	held = heap_in_use() - base;
	if (mt_model__finish(s.m))
		exit(1);
	t1 = now_ms();
	printf("%-34s %5d forks x %6d blocks, %3d changes: %8.1f ms, %7.1f MiB held (parent alone %.1f MiB); "
	       "inherited %llu\n", label, forks, blocks, changes, t1 - t0, held / 1048576.0, parent / 1048576.0,
	       (unsigned long long)mt_model__totals(s.m)->heap.inherited_allocations);
	mt_model__free(s.m);
}

int main(int argc, char **argv)
{
	int forks = argc > 1 ? atoi(argv[1]) : 1000, blocks = argc > 2 ? atoi(argv[2]) : 100000;
	int changes = argc > 3 ? atoi(argv[3]) : 10;

	if (forks <= 0 || blocks <= 0 || changes < 0) {
		fputs("usage: fork_inherit [FORKS [BLOCKS [CHANGES]]]\n", stderr);
		return 2;
	}
	run("children exit, parent unchanged", forks, blocks, 0, 0);
	run("children exit, parent changes", forks, blocks, changes, 0);
	run("children alive, parent unchanged", forks, blocks, 0, 1);
	run("children alive, parent changes", forks, blocks, changes, 1);
	printf("a copy per child would hold %llu entries\n", (unsigned long long)forks * blocks);
	return 0;
}
