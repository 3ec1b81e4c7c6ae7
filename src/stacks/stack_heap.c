// SPDX-License-Identifier: GPL-2.0-only
/* stack_heap.c — each process's live blocks with their stacks, following the model's decisions record by record. */
/*
 * The rules are src/model's, and the decisions that are not plain lookups come from the model itself (a replay,
 * src/model/replay.h, calls us right after the model accounted each record): whether a fork child inherited, and when
 * the total and each process reached their peaks. What this file adds is which stack every block came from:
 *
 * - Blocks: per process, `own` (address → packed size and stack, or TOMB for an inherited block freed here) over
 *   `base`, the blocks live at the last fork, in a persistent map (src/model/pmap.h) that the fork children share.
 *   A fork folds the parent's own into its base and hands the child a reference: the changes since the last fork,
 *   not the table, as in the model.
 * - Cells: per stack and per holder (each process, and all of them), the live blocks now and at the holder's peak.
 *   A peak is a record number; a cell is brought up to date (its live counts copied as "at the peak") the first time
 *   it changes after a newer peak, and at the end, so a new peak costs nothing.
 * - Temporaries (stacks/temps.c): a block freed by the thread that allocated it, with no other allocation of that
 *   thread in between (docs/REPORT.md says how heaptrack's per-process rule differs).
 * - A filter (mt_stack_heap__set_filter) leaves the blocks and the processes' cells as they are: it gates what is
 *   counted (counted()) and which processes' cells make up the total's (a process is taken by its current image).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/u64map.h"
#include "model/block_table.h"
#include "model/pmap.h"
#include "stacks/cell_index.h"
#include "stacks/counts.h"
#include "stacks/size_stats.h"
#include "stacks/stack_heap.h"
#include "stacks/temps.h"

#define TOMB (1ull << 63)		/* own: a base block this image freed */
#define OVF (1ull << 62)		/* size or stack did not fit: the low bits index ovf */
#define SIZE_BITS 40
#define SIZE_MASK ((1ull << SIZE_BITS) - 1)
#define STACK_LIMIT (1ull << 22)	/* stacks that fit above SIZE_BITS, below OVF */

enum block_end { END_FREED, END_REPLACED };

/* What a holder's blocks of a stack hold now and at its peak: all a stack's cell over all processes needs. */
struct live {
	uint64_t live_n, live_b;
	uint64_t peak_n, peak_b;	/* at the holder's peak */
	uint64_t snap;			/* the peak (a record number) that peak_n and peak_b belong to */
};

/* A process's cell's pairs (blocks, bytes) that most cells never change: in a record of their own, made on their
 * first change that is not zero. */
enum rare_pair {
	RARE_INHERITED,		/* of the live blocks, those inherited at the fork and held since (the model says which) */
	RARE_LEAKED,		/* leaked at the holder's exits */
	RARE_STILL_LIVE,	/* still live at the end */
	RARE__COUNT,
};

struct cell_rare {
	uint64_t v[RARE__COUNT][2];
};

struct cell {
	union {
		struct live live;
		struct {
			uint64_t live_n, live_b;
			uint64_t peak_n, peak_b;
			uint64_t snap;
		};
	};
	uint64_t made_n, made_b;	/* allocations the holder made with the stack (counted ones) */
	uint64_t gpeak_b, gsnap;	/* held at the total's peak, h->peak_seq's (peak_b's is the holder's) */
	uint32_t stack;			/* a process's cell: its stack and its process (index in procs) */
	uint32_t proc;
	uint32_t made_image;		/* the holder's image number at the first of its allocations */
	uint32_t rare;			/* index + 1 of its struct cell_rare (0: none, those counts are zero) */
};

struct hproc {
	const struct mt_proc *mp;	/* the model's process: stable while the model lives */
	struct mt_block_table own;
	struct mt_pmap *base;
	struct mt_cell_index cells;	/* stack → index in pcells (kept across execs: the peak is the process's) */
	uint32_t last_stack;		/* the last cell looked up, as most calls come from few stacks */
	uint64_t last_cell;		/* its index + 1 (0: none) */
	uint64_t peak_seen;		/* the model's peak_live_bytes when last looked at */
	uint64_t peak_seq;
	uint32_t index;			/* in procs */
	bool sel;			/* the filter takes its current image */
};

struct big_block {
	uint64_t size;
	uint32_t stack;
};

struct mt_stack_heap {
	struct mt_counts counts;	/* by stack */
	struct live *gcells;		/* by stack: over all processes (a whole cell there was 128 bytes a stack) */
	size_t nstacks;			/* the length of both */
	size_t nused;			/* the stacks seen: the highest index + 1 given, + 1 */
	bool shed;			/* finish frees the blocks and cells (mt_stack_heap__shed) */
	struct mt_stack_counts totals;
	struct cell *pcells;
	size_t npcells, cap_pcells;
	struct cell_rare *rare;		/* by a cell's rare - 1 */
	size_t nrare, cap_rare;
	struct hproc **procs;		/* each its own allocation: pointers to them outlive a new one */
	size_t nprocs, cap_procs;
	struct mt_u64map by_mproc;	/* model process → index in procs */
	uint32_t last_pid;		/* the last process looked up: pid and process, until the next fork */
	struct hproc *last_proc;
	uint64_t seq;			/* records seen */
	uint64_t peak_seq, peak_seen, peak_ts;
	uint64_t inherited_seen;	/* the model's total inherited_allocations after the last record */
	struct mt_temps temps;
	struct mt_size_stats sizes;
	struct big_block *ovf;
	size_t novf, cap_ovf;
	struct mt_heap_proc *out_procs;	/* after finish, by index in procs */
	struct mt_proc_peak *pp;	/* after finish: grouped by stack, pp_start[stack] .. pp_start[stack + 1] */
	uint32_t *pp_start;		/* by stack (32 bits: there are fewer peaks than cells) */
	struct mt_heap_image *images;	/* after finish: every image of procs, by process then image number */
	size_t nimages;
	size_t *image_start;		/* by index in procs: its image 0's index in images */
	const struct mt_filter *filter;	/* NULL: everything counts */
	const struct mt_model *model;	/* the one of the record being applied */
	uint64_t now;			/* the time of the record being applied */
	uint64_t live_taken;		/* the live bytes of the processes the filter takes */
	bool opened;			/* the filter's window has begun */
	bool closed;			/* and ended */
};

struct mt_stack_heap *mt_stack_heap__new(void)
{
	return calloc(1, sizeof(struct mt_stack_heap));
}

void mt_stack_heap__set_filter(struct mt_stack_heap *h, const struct mt_filter *f)
{
	h->filter = f;
}

/* What p does now counts: no filter, or p is taken and the window is open. */
static bool counted(const struct mt_stack_heap *h, const struct hproc *p)
{
	return !h->filter || (p->sel && !h->closed && h->now >= h->filter->from_ns);
}

void mt_stack_heap__free(struct mt_stack_heap *h)
{
	size_t i;

	if (!h)
		return;
	for (i = 0; i < h->nprocs; i++) {
		mt_block_table__release(&h->procs[i]->own);
		mt_pmap__release(h->procs[i]->base);
		mt_cell_index__release(&h->procs[i]->cells);
		free(h->procs[i]);
	}
	free(h->procs);
	mt_counts__release(&h->counts);
	free(h->gcells);
	free(h->pcells);
	free(h->rare);
	mt_u64map__release(&h->by_mproc);
	mt_temps__release(&h->temps);
	free(h->ovf);
	free(h->out_procs);
	free(h->pp);
	free(h->pp_start);
	free(h->images);
	free(h->image_start);
	free(h);
}

/* Pair p of stack's counts (index + 1; 0: none) changes by n blocks and b bytes. 0 or -ENOMEM. */
static int cnt_add(struct mt_stack_heap *h, uint32_t stack, enum mt_count_pair p, uint64_t n, uint64_t b)
{
	return mt_counts__add(&h->counts, stack, p, n, b);
}

/* Room for stack in counts and gcells, the new ones zero. */
static int stacks_reserve(struct mt_stack_heap *h, uint32_t stack)
{
	size_t n = h->nstacks ? h->nstacks : 64;
	void *g;

	if (stack >= h->nused)
		h->nused = (size_t)stack + 1;
	if (stack < h->nstacks)
		return 0;
	while (n <= stack)
		n *= 2;
	g = realloc(h->gcells, n * sizeof(*h->gcells));
	if (g)
		h->gcells = g;
	if (!g || mt_counts__reserve(&h->counts, n))
		return -ENOMEM;
	memset(h->gcells + h->nstacks, 0, (n - h->nstacks) * sizeof(*h->gcells));
	h->nstacks = n;
	return 0;
}

void mt_stack_heap__shed(struct mt_stack_heap *h)
{
	h->shed = true;
}

/* ---- cells ---- */

/* Brought up to the peak snap (see the top), then changed by n blocks and b bytes (two's complement for less). */
static void cell_add(struct live *c, uint64_t snap, uint64_t n, uint64_t b)
{
	if (c->snap != snap) {
		c->peak_n = c->live_n;
		c->peak_b = c->live_b;
		c->snap = snap;
	}
	c->live_n += n;
	c->live_b += b;
}

/* Where the cells' stacks are, for the processes' cell indexes. */
static struct mt_cell_keys cell_keys(const struct mt_stack_heap *h)
{
	return (struct mt_cell_keys){ h->pcells ? &h->pcells[0].stack : NULL, sizeof(*h->pcells) };
}

static struct cell *pcell_get(struct mt_stack_heap *h, struct hproc *p, uint32_t stack)
{
	uint32_t idx;

	if (p->last_cell && p->last_stack == stack)
		return &h->pcells[p->last_cell - 1];
	idx = mt_cell_index__find(&p->cells, stack, cell_keys(h));
	if (!idx) {
		if (mt_array__grow((void **)&h->pcells, &h->cap_pcells, h->npcells, sizeof(*h->pcells)))
			return NULL;
		h->pcells[h->npcells] = (struct cell){ .stack = stack, .proc = p->index };
		if (mt_cell_index__add(&p->cells, stack, (uint32_t)h->npcells, cell_keys(h)))
			return NULL;
		idx = (uint32_t)++h->npcells;
	}
	p->last_stack = stack;
	p->last_cell = idx;
	return &h->pcells[idx - 1];
}

/* Pair p of c changes by n blocks and b bytes (two's complement for less). 0 or -ENOMEM. */
static int rare_add(struct mt_stack_heap *h, struct cell *c, enum rare_pair p, uint64_t n, uint64_t b)
{
	if (!c->rare) {
		if (!n && !b)
			return 0;
		if (h->nrare >= UINT32_MAX ||
		    mt_array__grow((void **)&h->rare, &h->cap_rare, h->nrare, sizeof(*h->rare)))
			return -ENOMEM;
		h->rare[h->nrare] = (struct cell_rare){ 0 };
		c->rare = (uint32_t)++h->nrare;
	}
	h->rare[c->rare - 1].v[p][0] += n;
	h->rare[c->rare - 1].v[p][1] += b;
	return 0;
}

/* The blocks (i 0) or bytes (i 1) of pair p of c. */
static uint64_t rare_get(const struct mt_stack_heap *h, const struct cell *c, enum rare_pair p, int i)
{
	return c->rare ? h->rare[c->rare - 1].v[p][i] : 0;
}

/* A process's cell brought up to the total's peak: what it held then, before it changes. */
static void cell_gsnap(struct cell *c, uint64_t gseq)
{
	if (c->gsnap != gseq) {
		c->gpeak_b = c->live_b;
		c->gsnap = gseq;
	}
}

/* stack's live blocks in p (and in all) change by n blocks and b bytes. */
static int live_change(struct mt_stack_heap *h, struct hproc *p, uint32_t stack, uint64_t n, uint64_t b)
{
	struct cell *c = pcell_get(h, p, stack);

	if (!c)
		return -ENOMEM;
	if (p->sel)
		cell_gsnap(c, h->peak_seq);
	cell_add(&c->live, p->peak_seq, n, b);
	if (p->sel) {
		cell_add(&h->gcells[stack], h->peak_seq, n, b);
		h->live_taken += b;
	}
	return 0;
}

/* ---- blocks ---- */

static int block_pack(struct mt_stack_heap *h, uint64_t size, uint32_t stack, uint64_t *val)
{
	if (size <= SIZE_MASK && stack < STACK_LIMIT) {
		*val = (uint64_t)stack << SIZE_BITS | size;
		return 0;
	}
	/* a block of a terabyte or more, or past four million stacks: kept aside, for good */
	if (mt_array__grow((void **)&h->ovf, &h->cap_ovf, h->novf, sizeof(*h->ovf)))
		return -ENOMEM;
	h->ovf[h->novf] = (struct big_block){ size, stack };
	*val = OVF | h->novf++;
	return 0;
}

static void block_unpack(const struct mt_stack_heap *h, uint64_t val, uint64_t *size, uint32_t *stack)
{
	if (val & OVF) {
		*size = h->ovf[val & ~OVF].size;
		*stack = h->ovf[val & ~OVF].stack;
		return;
	}
	*size = val & SIZE_MASK;
	*stack = (uint32_t)(val >> SIZE_BITS);
}

/* The block live at addr in p's image (its own, or inherited and not freed here); *own: p's own entry of addr,
 * or NULL, for the change that follows (block_remove, heap_alloc) without a probe of its own. */
static bool block_find(const struct hproc *p, uint64_t addr, uint64_t *val, uint64_t **own)
{
	uint64_t *e = mt_block_table__find(&p->own, addr);

	*own = e;
	if (e) {
		*val = *e;
		return !(*e & TOMB);
	}
	return p->base && mt_pmap__find(p->base, addr, val);
}

/* The live block at addr leaves p's image: its own entry e (block_find's) goes, or hides base's from now on. */
static int block_remove(struct hproc *p, uint64_t addr, uint64_t *e)
{
	if (e && p->base && mt_pmap__find(p->base, addr, NULL)) {
		*e = TOMB;
		return 0;
	}
	if (e) {
		mt_block_table__del_found(&p->own, e);
		return 0;
	}
	return mt_block_table__put(&p->own, addr, TOMB, NULL) < 0 ? -ENOMEM : 0;
}

static int block_end(struct mt_stack_heap *h, struct hproc *p, uint64_t addr, uint64_t val, enum block_end how)
{
	struct cell *cell;
	uint64_t size;
	uint32_t stack;
	int err = 0;

	block_unpack(h, val, &size, &stack);
	if (mt_model__left_inherited(h->model, p->mp->pid, addr)) {
		cell = pcell_get(h, p, stack);
		err = cell ? rare_add(h, cell, RARE_INHERITED, -1, -size) : -ENOMEM;
		if (err)
			return err;
	}
	if (counted(h, p))
		err = cnt_add(h, stack, how == END_FREED ? MT_CP_FREED : MT_CP_REPLACED, 1, size);
	return err ? err : live_change(h, p, stack, -1, -size);
}

/* ---- processes ---- */

/* pid's process as the model has it now (a new one after pid reuse); NULL on ENOMEM. */
static struct hproc *proc_find(struct mt_stack_heap *h, const struct mt_model *m, uint32_t pid)
{
	const struct mt_proc *mp = mt_model__find_proc(m, pid);
	uint64_t *idx;
	struct hproc *p;

	if (!mp)
		return NULL;
	idx = mt_u64map__find(&h->by_mproc, (uintptr_t)mp);
	if (idx)
		return h->procs[*idx];
	if (mt_array__grow((void **)&h->procs, &h->cap_procs, h->nprocs, sizeof(*h->procs)))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p || mt_u64map__put(&h->by_mproc, (uintptr_t)mp, h->nprocs, NULL) < 0) {
		free(p);
		return NULL;
	}
	p->mp = mp;
	p->index = (uint32_t)h->nprocs;
	p->sel = !h->filter || mt_filter__matches(h->filter, mp->pid, mp->exe, mp->comm);
	h->procs[h->nprocs++] = p;
	return p;
}

/* The same, through a one-entry cache: only a fork (or the session) gives a pid another process. */
static struct hproc *proc_of(struct mt_stack_heap *h, const struct mt_model *m, uint32_t pid)
{
	if (h->last_proc && h->last_pid == pid)
		return h->last_proc;
	h->last_proc = proc_find(h, m, pid);
	h->last_pid = pid;
	return h->last_proc;
}

enum image_end_how {
	IMG_EXEC,	/* discarded */
	IMG_EXIT,	/* leaked */
	IMG_END,	/* still live: the stream ended */
};

struct image_end {
	struct mt_stack_heap *h;
	struct hproc *p;
	enum image_end_how how;
	int err;
};

static void cell_end(uint32_t idx, void *ctx)
{
	struct image_end *x = ctx;
	struct cell *c = &x->h->pcells[idx];
	uint64_t n = c->live_n, b = c->live_b;
	uint64_t inh_n = rare_get(x->h, c, RARE_INHERITED, 0), inh_b = rare_get(x->h, c, RARE_INHERITED, 1);
	uint32_t stack = c->stack;
	int err = 0;

	if (!n && !b)
		return;
	if (!counted(x->h, x->p)) {
	} else if (x->how == IMG_EXEC) {
		err = cnt_add(x->h, stack, MT_CP_DISCARDED, n, b);
	} else if (x->how == IMG_EXIT) {
		err = cnt_add(x->h, stack, MT_CP_LEAKED, n - inh_n, b - inh_b);
		if (!err)
			err = cnt_add(x->h, stack, MT_CP_INHERITED_LIVE, inh_n, inh_b);
		if (!err)
			err = rare_add(x->h, c, RARE_LEAKED, n - inh_n, b - inh_b);
	} else {
		err = cnt_add(x->h, stack, MT_CP_STILL_LIVE, n, b);
		if (!err)
			err = rare_add(x->h, c, RARE_STILL_LIVE, n, b);
	}
	if (err)
		x->err = err;
	if (c->rare)
		x->h->rare[c->rare - 1].v[RARE_INHERITED][0] = x->h->rare[c->rare - 1].v[RARE_INHERITED][1] = 0;
	if (x->p->sel)
		cell_gsnap(c, x->h->peak_seq);
	cell_add(&c->live, x->p->peak_seq, -n, -b);
	if (x->p->sel) {
		cell_add(&x->h->gcells[stack], x->h->peak_seq, -n, -b);
		x->h->live_taken -= b;
	}
}

/* The image ends (discarded, leaked or still live): every stack's live blocks in it, and the blocks themselves. */
static int image_end(struct mt_stack_heap *h, struct hproc *p, enum image_end_how how)
{
	struct image_end x = { h, p, how, 0 };

	mt_cell_index__for_each(&p->cells, cell_end, &x);
	mt_block_table__release(&p->own);
	mt_pmap__release(p->base);
	p->base = NULL;
	return x.err;
}

struct fold {
	struct mt_pmap **base;
	int err;
};

static void fold_one(uint64_t addr, uint64_t val, void *ctx)
{
	struct fold *f = ctx;
	int err;

	if (f->err)
		return;
	err = val & TOMB ? mt_pmap__del(f->base, addr) : mt_pmap__put(f->base, addr, val);
	if (err < 0)
		f->err = err;
}

struct inherit {
	struct mt_stack_heap *h;
	struct hproc *child;
	int err;
};

static void cell_inherit(uint32_t idx, void *ctx)
{
	struct inherit *x = ctx;
	const struct cell *c = &x->h->pcells[idx];
	uint64_t n = c->live_n, b = c->live_b;
	uint32_t stack = c->stack;
	struct cell *cc;

	if ((!n && !b) || x->err)
		return;
	if (counted(x->h, x->child))
		x->err = cnt_add(x->h, stack, MT_CP_INHERITED, n, b);
	if (!x->err)
		x->err = live_change(x->h, x->child, stack, n, b);
	cc = x->err ? NULL : pcell_get(x->h, x->child, stack);
	if (!x->err)
		x->err = cc ? rare_add(x->h, cc, RARE_INHERITED, n, b) : -ENOMEM;
}

/*
 * The child starts with the parent's live blocks: the parent's own ones go into its base, which the child then
 * shares; the child's own (a child seen before its fork record) stay over it, as in the model.
 */
static int inherit(struct mt_stack_heap *h, struct hproc *parent, struct hproc *child)
{
	struct fold f = { &parent->base, 0 };
	struct inherit x = { h, child, 0 };

	if (parent == child)
		return 0;
	mt_block_table__for_each(&parent->own, fold_one, &f);
	if (f.err)
		return f.err;
	mt_block_table__release(&parent->own);
	mt_pmap__release(child->base);
	child->base = mt_pmap__share(parent->base);
	/* cell_inherit reads a parent cell before it changes the child's, which may move pcells */
	mt_cell_index__for_each(&parent->cells, cell_inherit, &x);
	return x.err;
}

/* ---- records ---- */

static int heap_free(struct mt_stack_heap *h, struct hproc *p, const struct mt_alloc *a, uint64_t addr)
{
	uint64_t val, size, *own;
	uint32_t stack;
	int err = 0;

	if (!block_find(p, addr, &val, &own))
		return 0;	/* unknown, or libc's internal release: no free (the model's rules) */
	if (mt_temps__free(&h->temps, a->hdr.pid, a->hdr.tid, addr) && counted(h, p)) {
		block_unpack(h, val, &size, &stack);
		err = cnt_add(h, stack, MT_CP_TEMPORARY, 1, size);
	}
	if (!err)
		err = block_remove(p, addr, own);	/* nothing above changes p->own */
	return err ? err : block_end(h, p, addr, val, END_FREED);
}

/* One more allocation of size made by p's current image with the cell's stack. */
static void made_note(struct cell *c, const struct hproc *p, uint64_t size)
{
	if (!c->made_n)
		c->made_image = p->mp->nr_images ? p->mp->nr_images - 1 : 0;
	c->made_n++;
	c->made_b += size;
}

static int heap_alloc(struct mt_stack_heap *h, struct hproc *p, const struct mt_alloc *a, uint32_t stack,
		      uint64_t rel_ts)
{
	uint64_t old, val, *own;
	int err;

	if (block_find(p, a->addr, &old, &own)) {
		err = block_end(h, p, a->addr, old, END_REPLACED);	/* its free was lost; p->own unchanged */
		if (err)
			return err;
	}
	err = block_pack(h, a->size, stack, &val);
	if (!err && own)
		*own = val;
	else if (!err)
		err = mt_block_table__put(&p->own, a->addr, val, NULL) < 0 ? -ENOMEM : 0;
	if (err)
		return err;
	err = live_change(h, p, stack, 1, a->size);
	if (err)
		return err;
	if (counted(h, p)) {
		cnt_add(h, stack, MT_CP_ALLOCATED, 1, a->size);	/* an inline pair: no allocation to fail */
		mt_size_stats__note(&h->sizes, a->size, stack, a->hdr.pid, rel_ts);
		made_note(pcell_get(h, p, stack), p, a->size);	/* the cell live_change just used */
	}
	return mt_temps__alloc(&h->temps, a->hdr.pid, a->hdr.tid, a->addr);
}

/* ---- the filter's window ---- */

static void cell_held(uint32_t idx, void *ctx)
{
	struct image_end *x = ctx;
	const struct cell *c = &x->h->pcells[idx];
	int err = cnt_add(x->h, c->stack, MT_CP_STILL_LIVE, c->live_n, c->live_b);

	if (err)
		x->err = err;
}

/* The window ends: what the processes it takes hold is still live, as report has it; nothing counts
 * from now on. */
static int window_close(struct mt_stack_heap *h)
{
	struct image_end x = { h, NULL, IMG_END, 0 };
	size_t i;

	for (i = 0; i < h->nprocs; i++)
		if (h->procs[i]->sel)
			mt_cell_index__for_each(&h->procs[i]->cells, cell_held, &x);
	h->closed = true;
	return x.err;
}

/*
 * The window begins before the record that opens it: as in the model, what is live then is the peak so far. A
 * record number of its own, so that a free in that record leaves the peak as it was.
 */
static void window_open(struct mt_stack_heap *h)
{
	h->opened = true;
	if (!h->live_taken)
		return;
	h->peak_seq = h->seq++;
	h->peak_seen = h->live_taken;
}

/* As the model's apply_alloc: a release, realloc's free side then its allocation, a failed call. */
static int apply_alloc(struct mt_stack_heap *h, struct hproc *p, const struct mt_alloc *a, uint32_t stack,
		       uint64_t rel_ts)
{
	int err;

	if (mt_func__is_free(a->func))
		return a->addr ? heap_free(h, p, a, a->addr) : 0;
	if (mt_func__is_realloc(a->func) && a->old_addr && (a->addr || !a->size)) {
		err = heap_free(h, p, a, a->old_addr);
		if (err)
			return err;
	}
	return a->addr ? heap_alloc(h, p, a, stack, rel_ts) : 0;
}

/* After the record: a new peak of the total, and of the process the record could raise (p, or NULL). */
static void peaks_note(struct mt_stack_heap *h, const struct mt_model *m, struct hproc *p)
{
	const struct mt_heap_stats *tot = &mt_model__totals(m)->heap;

	if (tot->peak_live_bytes > h->peak_seen) {
		h->peak_seen = tot->peak_live_bytes;
		h->peak_seq = h->seq;
	}
	if (p && p->mp->heap.peak_live_bytes > p->peak_seen) {
		p->peak_seen = p->mp->heap.peak_live_bytes;
		p->peak_seq = h->seq;
	}
}

static int apply_fork(struct mt_stack_heap *h, const struct mt_model *m, const struct mt_fork *f,
		      struct hproc **child)
{
	uint64_t inherited = mt_model__totals(m)->heap.inherited_allocations;
	struct hproc *parent = proc_of(h, m, f->hdr.pid);
	bool did = inherited != h->inherited_seen;

	h->inherited_seen = inherited;
	*child = proc_of(h, m, f->child);
	if (!parent || !*child)
		return -ENOMEM;
	return did ? inherit(h, parent, *child) : 0;	/* the model decides: a late child inherits nothing */
}

int mt_stack_heap__apply(struct mt_stack_heap *h, const struct mt_rec_hdr *rec, uint32_t stack,
			 const struct mt_model *m, uint64_t rel_ts)
{
	struct hproc *p = NULL;
	int err = 0;

	h->seq++;
	h->now = rel_ts;
	h->model = m;
	if (h->filter && !h->opened && rel_ts >= h->filter->from_ns)
		window_open(h);
	if (h->filter && !h->closed && rel_ts >= h->filter->to_ns)
		err = window_close(h);
	if (err)
		return err;
	if (rec->type == MT_REC_FORK || rec->type == MT_REC_SESSION)
		h->last_proc = NULL;	/* a pid may name another process from now on */
	switch (rec->type) {
	case MT_REC_ALLOC:
		if (rec->size < sizeof(struct mt_alloc))
			return 0;
		err = stacks_reserve(h, stack);
		p = err ? NULL : proc_of(h, m, rec->pid);
		err = p ? apply_alloc(h, p, (const struct mt_alloc *)rec, stack, rel_ts) : -ENOMEM;
		break;
	case MT_REC_FORK:
		if (rec->size < sizeof(struct mt_fork))
			return 0;
		err = apply_fork(h, m, (const struct mt_fork *)rec, &p);
		break;
	case MT_REC_EXEC:
	case MT_REC_EXIT:
		if (rec->size < mt_rec__min_size(rec->type))
			return 0;
		p = proc_of(h, m, rec->pid);
		if (!p)
			return -ENOMEM;
		err = image_end(h, p, rec->type == MT_REC_EXEC ? IMG_EXEC : IMG_EXIT);
		if (h->filter)	/* the model has the new image's exe now */
			p->sel = mt_filter__matches(h->filter, p->mp->pid, p->mp->exe, p->mp->comm);
		p = NULL;
		break;
	default:
		return 0;
	}
	if (!err)
		peaks_note(h, m, p);
	return err;
}

/* ---- the end ---- */

struct settle {
	struct mt_stack_heap *h;
	const struct hproc *p;
	size_t proc;
	bool fill;		/* second walk: pp gets the entries counted in the first */
};

/* A cell of p brought up to p's last peak; its peak, when not empty, counted or put in pp by stack. */
static void cell_settle(uint32_t idx, void *ctx)
{
	struct settle *x = ctx;
	struct cell *c = &x->h->pcells[idx];
	uint64_t leak_n = rare_get(x->h, c, RARE_LEAKED, 0), leak_b = rare_get(x->h, c, RARE_LEAKED, 1);

	cell_add(&c->live, x->p->peak_seq, 0, 0);
	if (!c->peak_n && !c->peak_b && !c->made_n && !leak_n && !leak_b)
		return;
	if (!x->fill)
		x->h->pp_start[c->stack + 1]++;
	else
		x->h->pp[x->h->pp_start[c->stack]++] = (struct mt_proc_peak){
			(uint32_t)x->proc,
			c->made_n ? (uint32_t)(x->h->image_start[x->proc] + c->made_image) : UINT32_MAX,
			c->peak_n, c->peak_b, c->made_n, c->made_b, leak_n, leak_b };
}

/* Every process's peaks grouped by stack: a count, prefix sums, a fill (which moves each start to the next). */
static int proc_peaks_build(struct mt_stack_heap *h)
{
	struct settle x = { .h = h };
	size_t i;

	h->pp_start = calloc(h->nused + 2, sizeof(*h->pp_start));
	if (!h->pp_start)
		return -ENOMEM;
	for (x.fill = false;; x.fill = true) {
		for (i = 0; i < h->nprocs; i++) {
			x.p = h->procs[i];
			x.proc = i;
			mt_cell_index__for_each(&h->procs[i]->cells, cell_settle, &x);
		}
		if (x.fill)
			break;
		for (i = 0; i <= h->nused; i++)
			h->pp_start[i + 1] += h->pp_start[i];
		h->pp = malloc((h->pp_start[h->nused] ? h->pp_start[h->nused] : 1) * sizeof(*h->pp));
		if (!h->pp)
			return -ENOMEM;
	}
	/* the fill moved each start to the next one's: shift back */
	memmove(h->pp_start + 1, h->pp_start, h->nused * sizeof(*h->pp_start));
	h->pp_start[0] = 0;
	return 0;
}

static void totals_add(struct mt_stack_counts *t, const struct mt_stack_counts *c)
{
	const uint64_t *src = (const uint64_t *)c;
	uint64_t *dst = (uint64_t *)t;
	size_t i;

	for (i = 0; i < sizeof(*c) / sizeof(uint64_t); i++)
		dst[i] += src[i];
}

static int procs_copy(struct mt_stack_heap *h, const struct mt_model *m)
{
	size_t i, n = mt_model__nr_procs(m);
	const struct mt_proc *mp;
	struct mt_heap_proc *o;
	uint64_t *idx;

	h->out_procs = calloc(h->nprocs ? h->nprocs : 1, sizeof(*h->out_procs));
	if (!h->out_procs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		mp = mt_model__proc(m, i);
		idx = mt_u64map__find(&h->by_mproc, (uintptr_t)mp);
		if (!idx)
			continue;
		o = &h->out_procs[*idx];
		o->pid = mp->pid;
		o->model_index = i;
		memcpy(o->exe, mp->exe, sizeof(o->exe));
		o->peak_bytes = mp->heap.peak_live_bytes;
		o->peak_ts_ns = mp->heap.peak_ts_ns;
	}
	return 0;
}

static int by_proc_image(const void *a, const void *b)
{
	const struct mt_heap_image *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return x->image < y->image ? -1 : x->image > y->image;
}

/* Every image of the processes seen, with its exe, and where each process's begin. */
static int images_copy(struct mt_stack_heap *h, const struct mt_model *m)
{
	size_t i, n = mt_model__nr_images(m);
	const struct mt_image *img;
	uint64_t *idx;

	h->images = calloc(n ? n : 1, sizeof(*h->images));
	h->image_start = calloc(h->nprocs ? h->nprocs : 1, sizeof(*h->image_start));
	if (!h->images || !h->image_start)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		img = mt_model__image(m, i);
		idx = mt_u64map__find(&h->by_mproc, (uintptr_t)mt_model__proc(m, img->proc));
		if (!idx)
			continue;
		h->images[h->nimages] = (struct mt_heap_image){ *idx, img->pid, img->image };
		memcpy(h->images[h->nimages++].exe, img->exe, sizeof(img->exe));
	}
	mt_array__sort(h->images, h->nimages, sizeof(*h->images), by_proc_image);
	for (i = h->nimages; i-- > 0;)
		h->image_start[h->images[i].proc] = i;
	return 0;
}

/*
 * After finish most readers want the counts, the processes and the per-process peaks alone: the blocks, the cells
 * and the threads go, as they are the bulk of the memory with many stacks (the report builds its sites next).
 */
static void heap_shed(struct mt_stack_heap *h)
{
	size_t i;

	for (i = 0; i < h->nprocs; i++) {
		mt_cell_index__release(&h->procs[i]->cells);
		h->procs[i]->last_cell = 0;
	}
	free(h->pcells);
	h->pcells = NULL;
	h->npcells = h->cap_pcells = 0;
	free(h->rare);
	h->rare = NULL;
	h->nrare = h->cap_rare = 0;
}

/* The same, before the per-process peaks are made from the cells: what they do not need goes first. */
static void heap_shed_early(struct mt_stack_heap *h)
{
	size_t i;

	for (i = 0; i < h->nprocs; i++) {
		mt_block_table__release(&h->procs[i]->own);
		mt_pmap__release(h->procs[i]->base);
		h->procs[i]->base = NULL;
	}
	free(h->gcells);
	h->gcells = NULL;
	mt_temps__release(&h->temps);
}

int mt_stack_heap__finish(struct mt_stack_heap *h, const struct mt_model *m)
{
	struct mt_stack_counts k;
	size_t i;
	int err = 0;

	if (h->pp_start)
		return 0;
	for (i = 0; i < h->nprocs && !err; i++)
		err = image_end(h, h->procs[i], IMG_END);
	if (!err)
		err = stacks_reserve(h, 0);
	if (err)
		return err;
	for (i = 0; i < h->nused; i++) {
		cell_add(&h->gcells[i], h->peak_seq, 0, 0);
		err = cnt_add(h, (uint32_t)i, MT_CP_PEAK, h->gcells[i].peak_n, h->gcells[i].peak_b);
		if (err)
			return err;
		mt_counts__get(&h->counts, i, &k);
		totals_add(&h->totals, &k);
	}
	mt_counts__shrink(&h->counts, h->nused);	/* the counts are all there is from now on */
	for (i = 0; i < h->npcells; i++)
		cell_gsnap(&h->pcells[i], h->peak_seq);
	h->peak_ts = mt_model__totals(m)->heap.peak_ts_ns;
	if (h->shed)
		heap_shed_early(h);
	err = procs_copy(h, m);
	if (!err)
		err = images_copy(h, m);
	if (!err)
		err = proc_peaks_build(h);
	if (!err && h->shed)
		heap_shed(h);
	return err;
}

void mt_stack_heap__counts(const struct mt_stack_heap *h, uint32_t stack, struct mt_stack_counts *out)
{
	mt_counts__get(&h->counts, stack, out);
}

uint64_t mt_stack_heap__peak_bytes(const struct mt_stack_heap *h)
{
	return h->peak_seen;
}

uint64_t mt_stack_heap__peak_ts(const struct mt_stack_heap *h)
{
	return h->peak_ts;
}

const struct mt_stack_counts *mt_stack_heap__totals(const struct mt_stack_heap *h)
{
	return &h->totals;
}

size_t mt_stack_heap__nr_procs(const struct mt_stack_heap *h)
{
	return h->out_procs ? h->nprocs : 0;
}

const struct mt_heap_proc *mt_stack_heap__proc(const struct mt_stack_heap *h, size_t idx)
{
	return h->out_procs && idx < h->nprocs ? &h->out_procs[idx] : NULL;
}

size_t mt_stack_heap__proc_peaks(const struct mt_stack_heap *h, uint32_t stack, const struct mt_proc_peak **out)
{
	*out = NULL;
	if (!h->pp_start || stack >= h->nused)
		return 0;
	*out = h->pp + h->pp_start[stack];
	return h->pp_start[stack + 1] - h->pp_start[stack];
}

size_t mt_stack_heap__nr_images(const struct mt_stack_heap *h)
{
	return h->nimages;
}

const struct mt_heap_image *mt_stack_heap__image(const struct mt_stack_heap *h, size_t idx)
{
	return idx < h->nimages ? &h->images[idx] : NULL;
}

const struct mt_size_stats *mt_stack_heap__sizes(const struct mt_stack_heap *h)
{
	return &h->sizes;
}

size_t mt_stack_heap__nr_cells(const struct mt_stack_heap *h)
{
	return h->npcells;
}

size_t mt_stack_heap__nr_rare_cells(const struct mt_stack_heap *h)
{
	return h->nrare;
}

void mt_stack_heap__cell(const struct mt_stack_heap *h, size_t idx, struct mt_heap_cell *out)
{
	const struct cell *c = &h->pcells[idx];

	*out = (struct mt_heap_cell){ c->proc, c->stack, c->made_n, c->made_b,
				      (int64_t)(c->live_b + rare_get(h, c, RARE_STILL_LIVE, 1)),
				      rare_get(h, c, RARE_LEAKED, 1), c->gsnap == h->peak_seq ? c->gpeak_b : c->live_b };
}
