// SPDX-License-Identifier: GPL-2.0-only
/* model.c — the record stream as heap accounting per image, per process and in total, filtered on request. */
/*
 * The counting rules are docs/REPORT.md's "Semantics used by reports", their one statement: change them there with
 * the code. Where they live: the time-order window in reorder.c (MT_REORDER_WINDOW); the live blocks, their marks
 * (window, stack id) in the word that holds the size, and what a fork shares in blocks.c and pmap.c; processes,
 * images and the identity's counters here; --pid, --exe and the windows in filter.c and window.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "common/array.h"
#include "common/u64map.h"
#include "model/blocks.h"
#include "model/mapped.h"
#include "model/model.h"
#include "model/model_internal.h"

static int model_apply(const struct mt_rec_hdr *rec, void *ctx);

struct mt_model *mt_model__new(void)
{
	return mt_model__new_with(NULL);
}

struct mt_model *mt_model__new_with(const struct mt_model_opts *opts)
{
	struct mt_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->reorder = mt_reorder__new(MT_REORDER_WINDOW, model_apply, m);
	if (!m->reorder) {
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	if (opts)
		m->opts = *opts;
	m->filter = m->opts.filter ? *m->opts.filter : (struct mt_filter){ .to_ns = MT_FILTER_END };
	m->window = mt_filter__has_window(&m->filter);
	return m;
}

void mt_model__free(struct mt_model *m)
{
	size_t i;

	if (!m)
		return;
	mt_reorder__free(m->reorder);
	for (i = 0; i < m->nr_procs; i++) {
		mt_blocks__free(m->procs[i]->blocks);
		mt_mapped__free(m->procs[i]->mapped);
		free(m->procs[i]);
	}
	for (i = 0; i < m->nr_images; i++) {
		free(m->images[i]->leaks);
		free(m->images[i]);
	}
	free(m->procs);
	free(m->images);
	mt_u64map__release(&m->pids);
	mt_u64map__release(&m->stack_ids);
	mt_u64map__release(&m->withheld);
	free(m->stack_hashes);
	for (i = 0; m->session.argv && m->session.argv[i]; i++)
		free(m->session.argv[i]);
	free(m->session.argv);
	free(m);
}

static bool heap_empty(const struct mt_heap_stats *h)
{
	static const struct mt_heap_stats zero;

	return !memcmp(h, &zero, sizeof(zero));
}

/* The image's exe and comm; the filter decides on it while it has counted nothing. */
static void image_name(struct mt_model *m, struct image *img, const char *exe, const char *comm)
{
	memcpy(img->pub.exe, exe, sizeof(img->pub.exe));
	img->pub.exe[sizeof(img->pub.exe) - 1] = '\0';
	memcpy(img->pub.comm, comm, sizeof(img->pub.comm));
	img->pub.comm[sizeof(img->pub.comm) - 1] = '\0';
	if (heap_empty(&img->pub.heap))
		img->pub.selected = mt_filter__matches(&m->filter, img->pub.pid, img->pub.exe, img->pub.comm);
}

/* p's next image, begun at ts, named as p is now. 0 or -ENOMEM. */
static int image_new(struct mt_model *m, struct proc *p, uint64_t ts, bool from_exec)
{
	struct image *img;

	if (mt_array__grow((void **)&m->images, &m->cap_images, m->nr_images, sizeof(*m->images)))
		return -ENOMEM;
	img = calloc(1, sizeof(*img));
	if (!img)
		return -ENOMEM;
	img->pub.pid = p->pub.pid;
	img->pub.image = p->pub.nr_images++;
	img->pub.proc = p->idx;
	img->pub.parent = SIZE_MAX;
	img->pub.from_exec = from_exec;
	img->pub.start_ns = ts;
	image_name(m, img, p->pub.exe, p->pub.comm);
	p->image = m->nr_images;
	m->images[m->nr_images++] = img;
	return 0;
}

static struct proc *proc_lookup(const struct mt_model *m, uint32_t pid)
{
	const uint64_t *e;

	if (m->last_proc && m->last_pid == pid)
		return m->last_proc;
	e = mt_u64map__find(&m->pids, (uint64_t)pid + 1);
	return e ? m->procs[*e] : NULL;
}

/* A new process entry for pid (the latest with that pid from now on), with its first image. NULL on ENOMEM. */
static struct proc *proc_new(struct mt_model *m, uint32_t pid, uint32_t ppid, uint64_t ts)
{
	struct proc *p;
	uint64_t old;

	if (mt_array__grow((void **)&m->procs, &m->cap_procs, m->nr_procs, sizeof(*m->procs)))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->blocks = mt_blocks__new();
	p->mapped = mt_mapped__new();
	if (p->mapped)
		mt_mapped__set_note(p->mapped, m->opts.mapped_note, m->opts.mapped_ctx);
	p->idx = m->nr_procs;
	p->pub.pid = pid;
	p->pub.ppid = ppid;
	if (!p->blocks || !p->mapped || image_new(m, p, ts, false) ||
	    mt_u64map__put(&m->pids, (uint64_t)pid + 1, m->nr_procs, &old) < 0) {
		mt_blocks__free(p->blocks);
		mt_mapped__free(p->mapped);
		free(p);
		return NULL;
	}
	m->procs[m->nr_procs++] = p;
	m->last_proc = NULL;	/* pid may have named the one it cached */
	return p;
}

static struct proc *proc_get(struct mt_model *m, uint32_t pid, uint64_t ts)
{
	struct proc *p = proc_lookup(m, pid);

	if (!p)
		p = proc_new(m, pid, 0, ts);
	m->last_proc = p;
	m->last_pid = pid;
	return p;
}

/* ---- the blocks an image ended with, by stack ---- */

/* The stack id of an allocation's hash (0 for none, or when ids ran out). 0 or -ENOMEM. */
static int stack_id(struct mt_model *m, uint64_t hash, uint32_t *id)
{
	uint64_t *found;

	*id = 0;
	if (!hash || !m->opts.leak_sites)
		return 0;
	if (m->last_stack && m->stack_hashes[m->last_stack - 1] == hash) {
		*id = m->last_stack;
		return 0;
	}
	found = mt_u64map__find(&m->stack_ids, hash);
	if (found) {
		*id = m->last_stack = (uint32_t)*found;
		return 0;
	}
	if (m->nr_stacks >= MT_BLOCKS_STACK_MAX)
		return 0;
	if (mt_array__grow((void **)&m->stack_hashes, &m->cap_stacks, m->nr_stacks, sizeof(*m->stack_hashes)) ||
	    mt_u64map__put(&m->stack_ids, hash, m->nr_stacks + 1, NULL) < 0)
		return -ENOMEM;
	m->stack_hashes[m->nr_stacks++] = hash;
	*id = m->last_stack = (uint32_t)m->nr_stacks;
	return 0;
}

struct collect {
	const struct mt_model *m;
	struct image *img;
	struct mt_u64map by_id;		/* stack id → index in img->leaks */
	bool exit;			/* leaks: the blocks inherited and never freed are not the image's */
	int err;
};

static void collect_one(uint64_t size, uint32_t stack, bool inherited, void *ctx)
{
	struct collect *c = ctx;
	struct image *img = c->img;
	uint64_t *at = mt_u64map__find(&c->by_id, stack), idx;

	if (inherited && c->exit)
		return;
	if (!at) {
		if (c->err || mt_array__grow((void **)&img->leaks, &img->cap_leaks, img->nleaks, sizeof(*img->leaks)) ||
		    mt_u64map__put(&c->by_id, stack, img->nleaks, NULL) < 0) {
			c->err = -ENOMEM;
			return;
		}
		idx = img->nleaks++;
		img->leaks[idx] = (struct mt_leak_site){ stack ? c->m->stack_hashes[stack - 1] : 0, 0, 0 };
	} else {
		idx = *at;
	}
	img->leaks[idx].count++;
	img->leaks[idx].bytes += size;
}

/*
 * What p's current image holds as it ends with the stream, or leaks at its exit (its own blocks: not those
 * inherited and never freed), by stack, when that is asked for.
 */
static int image_collect(struct mt_model *m, struct proc *p, bool exit)
{
	struct image *img = cur_image(m, p);
	struct collect c = { m, img, { 0 }, exit, 0 };
	const struct mt_heap_stats *h = &img->pub.heap;
	uint64_t inh_n = 0, inh_b = 0;

	if (exit)
		inh_n = mt_blocks__inherited_live(p->blocks, &inh_b);
	if (!m->opts.leak_sites || !img->pub.selected || !mt_window__peaks_counted(m) || h->live_allocations == inh_n)
		return 0;
	if (!m->nr_stacks) {
		collect_one(h->live_bytes - inh_b, 0, false, &c);
		if (!c.err)
			img->leaks[0].count = h->live_allocations - inh_n;
	} else {
		mt_blocks__for_each_live(p->blocks, collect_one, &c);
	}
	mt_u64map__release(&c.by_id);
	return c.err;
}

/* ---- the records ---- */

static int apply_alloc(struct mt_model *m, const struct mt_alloc *a)
{
	bool is_realloc = mt_func__is_realloc(a->func);
	struct proc *p = proc_get(m, a->hdr.pid, a->hdr.ts_ns);
	struct mt_block_tag tag = { 0, m->window && m->win == WIN_BEFORE };
	struct mt_blocks_acct ac;
	int err;

	if (!p)
		return -ENOMEM;
	ac = image_acct(m, p);
	mt_blocks__record_begin(p->blocks);
	if (mt_func__is_free(a->func))
		return a->addr ? mt_blocks__on_free(p->blocks, &ac, a->hdr.tid, a->addr, false) : 0;
	if (is_realloc && a->old_addr && (a->addr || !a->size)) {
		err = mt_blocks__on_free(p->blocks, &ac, a->hdr.tid, a->old_addr, true);
		if (err)
			return err;
	}
	if (!a->addr) {
		mt_blocks__on_call(p->blocks, &ac, a->hdr.tid);
		if (!is_realloc || !a->old_addr || a->size)
			MT_ACCT_ADD(&ac, failed_allocations, 1);
		return 0;
	}
	m->tot.stacks |= a->stack != 0;
	err = stack_id(m, a->stack, &tag.stack);
	if (!err)
		err = mt_blocks__on_alloc(p->blocks, &ac, a->hdr.tid, a->addr, a->size, &tag);
	if (!err)
		mt_window__note_peak(m, p, a->hdr.ts_ns);
	return err;
}

/* ---- anonymous private mappings ---- */

static void mapped_peak(struct mt_mapped_stats *s, uint64_t rel)
{
	if (s->program_bytes > s->peak_program_bytes) {
		s->peak_program_bytes = s->program_bytes;
		s->peak_program_ts_ns = rel;
	}
	if (s->allocator_bytes > s->peak_allocator_bytes)
		s->peak_allocator_bytes = s->allocator_bytes;
}

static void mapped_put(struct mt_mapped_stats *s, uint64_t prog, uint64_t alloc)
{
	s->program_bytes = prog;
	s->allocator_bytes = alloc;
}

/* p's address space holds what its books say from ts: its image's, its own, and the total's when the filter takes
 * its image. */
static void mapped_update(struct mt_model *m, struct proc *p, uint64_t ts)
{
	uint64_t prog = mt_mapped__bytes(p->mapped, MT_MAPPED_PROGRAM);
	uint64_t alloc = mt_mapped__bytes(p->mapped, MT_MAPPED_ALLOCATOR);
	struct mt_mapped_stats *t = &m->tot.mapped;
	struct image *img = cur_image(m, p);

	t->program_bytes -= p->mapped_in_tot[MT_MAPPED_PROGRAM];
	t->allocator_bytes -= p->mapped_in_tot[MT_MAPPED_ALLOCATOR];
	p->mapped_in_tot[MT_MAPPED_PROGRAM] = img->pub.selected ? prog : 0;
	p->mapped_in_tot[MT_MAPPED_ALLOCATOR] = img->pub.selected ? alloc : 0;
	t->program_bytes += p->mapped_in_tot[MT_MAPPED_PROGRAM];
	t->allocator_bytes += p->mapped_in_tot[MT_MAPPED_ALLOCATOR];
	mapped_put(&img->pub.mapped, prog, alloc);
	mapped_put(&p->pub.mapped, prog, alloc);
	if (!mt_window__peaks_counted(m))
		return;
	mapped_peak(&img->pub.mapped, rel_ts(m, ts));
	mapped_peak(&p->pub.mapped, rel_ts(m, ts));
	mapped_peak(t, rel_ts(m, ts));
}

static void mapped_keep_end(struct mt_mapped_stats *s)
{
	s->end_program_bytes = s->program_bytes;
	s->end_allocator_bytes = s->allocator_bytes;
}

/* p's current image ends (exec, exit) with what it holds; the process too when it exits. Ending empties the books. */
static void mapped_end(struct mt_model *m, struct proc *p, bool exit, uint64_t ts)
{
	mapped_keep_end(&cur_image(m, p)->pub.mapped);
	if (exit)
		mapped_keep_end(&p->pub.mapped);
	mt_mapped__clear(p->mapped);
	p->vm_parent = NULL;
	mapped_update(m, p, ts);
}

/*
 * p's mappings end before its exit record (gone), whose RSS record may still come with the counters of its last
 * moments: what they added to the totals is kept for the totals' terms until that exit record (!gone).
 */
static void mapped_gone(struct mt_model *m, struct proc *p, bool gone)
{
	int i;

	for (i = 0; i < MT_MAPPED__COUNT; i++) {
		m->gone_tot[i] -= p->gone_in_tot[i];
		p->gone_in_tot[i] = gone ? p->mapped_in_tot[i] : 0;
		m->gone_tot[i] += p->gone_in_tot[i];
	}
}

/* The address space a process's syscalls change: a vfork child's is its parent's until it execs. */
static struct proc *mapped_holder(struct proc *p)
{
	return p->vm_parent ? p->vm_parent : p;
}

static int mapped_fork(struct mt_model *m, struct proc *parent, struct proc *child, const struct mt_fork *f)
{
	int err;

	if (f->flags & MT_FORK_SHARED_VM) {
		child->vm_parent = mapped_holder(parent);
		return 0;
	}
	err = mt_mapped__copy(child->mapped, mapped_holder(parent)->mapped);
	if (!err)
		mapped_update(m, child, f->hdr.ts_ns);
	return err;
}

static int apply_syscall(struct mt_model *m, const struct mt_syscall *s)
{
	struct proc *p = proc_get(m, s->hdr.pid, s->hdr.ts_ns), *vm;
	struct mt_blocks_acct ac;
	int err;

	if (!p)
		return -ENOMEM;
	if (s->ret < 0)
		return 0;
	ac = image_acct(m, p);
	switch (s->sys) {
	case MT_SYS_MMAP:
		MT_ACCT_ADD(&ac, mmap_calls, 1);
		MT_ACCT_ADD(&ac, mmap_bytes, s->size);
		break;
	case MT_SYS_MUNMAP:
		MT_ACCT_ADD(&ac, munmap_calls, 1);
		MT_ACCT_ADD(&ac, munmap_bytes, s->size);
		break;
	case MT_SYS_MREMAP:
		MT_ACCT_ADD(&ac, mremap_calls, 1);
		break;
	case MT_SYS_BRK:
		MT_ACCT_ADD(&ac, brk_calls, 1);
		break;
	default:
		m->tot.bad_records++;
		return 0;
	}
	vm = mapped_holder(p);
	err = mt_mapped__apply(vm->mapped, s);
	if (!err)
		mapped_update(m, vm, s->hdr.ts_ns);
	return err;
}

static int apply_fork(struct mt_model *m, const struct mt_fork *f)
{
	struct proc *parent = proc_get(m, f->hdr.pid, f->hdr.ts_ns), *child;
	struct mt_blocks_acct ac;
	struct image *img;
	int err;

	if (!parent)
		return -ENOMEM;
	child = proc_lookup(m, f->child);
	if (child && !child->pub.exited) {
		/* seen before its fork record (reordered beyond the window): adopt it, without the parent's blocks
		 * (its frees of them were unknown already) */
		if (!child->pub.ppid)
			child->pub.ppid = f->hdr.pid;
		if (child->pub.exe[0] || child->pub.comm[0])
			return 0;
	} else {
		child = proc_new(m, f->child, f->hdr.pid, f->hdr.ts_ns);
		if (!child)
			return -ENOMEM;
	}
	memcpy(child->pub.exe, parent->pub.exe, sizeof(child->pub.exe));
	memcpy(child->pub.comm, parent->pub.comm, sizeof(child->pub.comm));
	child->pub.start_ns = f->hdr.ts_ns;
	img = cur_image(m, child);
	img->pub.parent = parent->image;
	image_name(m, img, child->pub.exe, child->pub.comm);
	ac = image_acct(m, child);
	err = mt_blocks__inherit(child->blocks, &ac, parent->blocks, &cur_image(m, parent)->pub.heap);
	if (!err)
		mt_window__note_peak(m, child, f->hdr.ts_ns);
	return err ? err : mapped_fork(m, parent, child, f);
}

/* ---- resident memory: the MT_REC_RSS records ---- */

static void rss_peak(struct mt_rss_stats *r, uint64_t rel, const struct mt_rss_parts *now)
{
	if (r->rss_bytes > r->peak_rss_bytes) {
		r->peak_rss_bytes = r->rss_bytes;
		r->peak_rss_ts_ns = rel;
		r->at_peak = *now;
	}
}

/* The kernel's counters of t, less those of sub, plus those of add. */
static void rss_parts_move(struct mt_rss_parts *t, const struct mt_rss_parts *sub, const struct mt_rss_parts *add)
{
	t->anon += add->anon - sub->anon;
	t->file += add->file - sub->file;
	t->shmem += add->shmem - sub->shmem;
	t->swap += add->swap - sub->swap;
}

/*
 * p holds what the counters k say from ts (none from its exit): its image's, its own, and the total's when the
 * filter takes its image; a peak keeps the books of the moment with them.
 */
static void rss_set(struct mt_model *m, struct proc *p, const struct mt_rss_parts *k, uint64_t ts)
{
	static const struct mt_rss_parts none;
	struct image *img = cur_image(m, p);
	uint64_t bytes = k->anon + k->file + k->shmem;
	struct mt_rss_parts now;

	m->tot.rss.rss_bytes -= p->rss_in_tot;
	p->rss_in_tot = img->pub.selected ? bytes : 0;
	m->tot.rss.rss_bytes += p->rss_in_tot;
	rss_parts_move(&m->rss_tot, &p->rss_now_in_tot, img->pub.selected ? k : &none);
	p->rss_now_in_tot = img->pub.selected ? *k : none;
	p->rss_now = *k;
	img->pub.rss.rss_bytes = bytes;
	p->pub.rss.rss_bytes = bytes;
	if (!mt_window__peaks_counted(m))
		return;
	now = proc_rss_parts(p);
	rss_peak(&img->pub.rss, rel_ts(m, ts), &now);
	rss_peak(&p->pub.rss, rel_ts(m, ts), &now);
	now = tot_rss_parts(m);
	rss_peak(&m->tot.rss, rel_ts(m, ts), &now);
}

static int apply_rss(struct mt_model *m, const struct mt_rss *r)
{
	struct proc *p = proc_get(m, r->hdr.pid, r->hdr.ts_ns);
	struct mt_rss_parts k = { .anon = r->anon, .file = r->file, .shmem = r->shmem, .swap = r->swap };

	if (!p)
		return -ENOMEM;
	m->tot.rss.records++;
	p->pub.rss.records++;
	cur_image(m, p)->pub.rss.records++;
	rss_set(m, p, &k, r->hdr.ts_ns);
	return 0;
}

uint64_t mt_rss_parts__terms(const struct mt_rss_parts *parts, int64_t terms[MT_RSS_TERM__COUNT])
{
	terms[MT_RSS_TERM_HEAP] = (int64_t)parts->heap_bytes;
	terms[MT_RSS_TERM_ALLOCATOR_HELD] = (int64_t)(parts->allocator_bytes - parts->heap_bytes);
	terms[MT_RSS_TERM_PROGRAM] = (int64_t)parts->program_bytes;
	terms[MT_RSS_TERM_FILE] = (int64_t)parts->file;
	terms[MT_RSS_TERM_SHMEM] = (int64_t)parts->shmem;
	terms[MT_RSS_TERM_REST] = (int64_t)(parts->anon - parts->allocator_bytes - parts->program_bytes);
	return parts->anon + parts->file + parts->shmem;
}

/* An exec ends the image and begins the next; it only names one that never ran (the root before its exec). */
static int apply_exec(struct mt_model *m, const struct mt_exec *e)
{
	struct proc *p = proc_get(m, e->hdr.pid, e->hdr.ts_ns);
	struct mt_blocks_acct ac;
	struct image *img;
	bool unnamed;

	if (!p)
		return -ENOMEM;
	img = cur_image(m, p);
	unnamed = !img->pub.from_exec && !img->pub.exe[0] && !img->pub.comm[0] && heap_empty(&img->pub.heap);
	if (!unnamed) {
		ac = image_acct(m, p);
		mt_blocks__end(p->blocks, &ac, MT_BLOCKS_EXEC);
		mapped_end(m, p, false, e->hdr.ts_ns);
		img->pub.end = MT_IMAGE_EXEC;
		img->pub.end_ns = e->hdr.ts_ns;
	}
	memcpy(p->pub.exe, e->path, sizeof(p->pub.exe));
	p->pub.exe[sizeof(p->pub.exe) - 1] = '\0';
	memcpy(p->pub.comm, e->comm, sizeof(p->pub.comm));
	p->pub.comm[sizeof(p->pub.comm) - 1] = '\0';
	if (!unnamed)
		return image_new(m, p, e->hdr.ts_ns, true);
	img->pub.from_exec = true;
	image_name(m, img, p->pub.exe, p->pub.comm);
	return 0;
}

/* The current image ends: by exit (leaked), or with the stream (still live). */
static int image_end(struct mt_model *m, struct proc *p, enum mt_blocks_end how, uint64_t ts)
{
	struct image *img = cur_image(m, p);
	struct mt_blocks_acct ac = image_acct(m, p);
	int err = 0;

	if (img->pub.end == MT_IMAGE_LIVE) {
		err = image_collect(m, p, how == MT_BLOCKS_EXIT);
		if (how == MT_BLOCKS_EXIT) {
			if (!p->vm_gone)
				mapped_end(m, p, true, ts);
			img->pub.end = MT_IMAGE_EXIT;
			img->pub.end_ns = ts;
		} else {
			mapped_keep_end(&img->pub.mapped);
			mapped_keep_end(&p->pub.mapped);
		}
	} else {
		how = MT_BLOCKS_EXIT;	/* records after its exit: leaked with it */
		mt_mapped__clear(p->mapped);
		mapped_update(m, p, ts);
	}
	mt_blocks__end(p->blocks, &ac, how);
	return err;
}

static int apply_exit(struct mt_model *m, const struct mt_exit *x)
{
	struct proc *p = proc_get(m, x->hdr.pid, x->hdr.ts_ns);

	if (!p)
		return -ENOMEM;
	p->pub.exited = true;
	p->pub.status = x->status;
	p->pub.exit_ns = x->hdr.ts_ns;
	rss_set(m, p, &(struct mt_rss_parts){ 0 }, x->hdr.ts_ns);
	mapped_gone(m, p, false);
	return image_end(m, p, MT_BLOCKS_EXIT, x->hdr.ts_ns);
}

/* A privileged process's call path: counted once, however often the kernel's LRU made it define it again. */
static int apply_stack(struct mt_model *m, const struct mt_stack *s)
{
	int added;

	if (!(s->truncated & MT_STACK_WITHHELD))
		return 0;
	added = mt_u64map__put(&m->withheld, s->hash, 1, NULL);
	if (added < 0)
		return added;
	m->tot.stacks_withheld += added == 0;
	return 0;
}

static void apply_thread_exit(struct mt_model *m, const struct mt_thread_exit *t)
{
	struct proc *p = proc_lookup(m, t->hdr.pid);
	struct mt_blocks_acct ac;

	m->tot.thread_exits++;
	if (p && (t->flags & MT_THREAD_EXIT_LAST) && !p->pub.exited && !p->vm_gone) {
		/* the kernel's moment, where the tracer's exit record may come after the parent's next fork */
		mapped_gone(m, p, true);
		mapped_end(m, p, true, t->hdr.ts_ns);
		p->vm_gone = true;
	}
	if (!p || (t->flags & MT_THREAD_EXIT_GROUP))
		return;
	ac = image_acct(m, p);
	mt_blocks__on_thread_exit(p->blocks, &ac, t->hdr.tid);
}

const char *mt_session__next_arg(const struct mt_session *s, size_t *pos, size_t *len)
{
	const char *str = (const char *)(s + 1);
	size_t avail;

	if (s->hdr.size <= sizeof(*s) || *pos >= s->hdr.size - sizeof(*s))
		return NULL;
	avail = s->hdr.size - sizeof(*s) - *pos;
	str += *pos;
	*len = strnlen(str, avail);
	*pos += *len + 1;
	return str;
}

static int session_argv(struct mt_session_info *si, const struct mt_session *s)
{
	size_t pos = 0, len, max = s->argc;
	const char *arg;

	if (s->hdr.size < sizeof(*s) + max)
		max = s->hdr.size - sizeof(*s);	/* every string takes at least its NUL */
	si->argv = calloc(max + 1, sizeof(*si->argv));
	if (!si->argv)
		return -ENOMEM;
	while (si->argc < max && (arg = mt_session__next_arg(s, &pos, &len))) {
		si->argv[si->argc] = strndup(arg, len);
		if (!si->argv[si->argc])
			return -ENOMEM;
		si->argc++;
	}
	return 0;
}

static int apply_session(struct mt_model *m, const struct mt_session *s)
{
	struct mt_session_info *si = &m->session;
	struct proc *root;

	if (si->present)
		return 0;
	si->present = true;
	si->root_pid = s->hdr.pid;
	si->tracer_pid = s->tracer_pid;
	si->ts_ns = s->hdr.ts_ns;
	si->realtime_ns = s->realtime_ns;
	root = proc_get(m, s->hdr.pid, s->hdr.ts_ns);
	if (!root)
		return -ENOMEM;
	if (!root->pub.ppid)
		root->pub.ppid = s->tracer_pid;
	root->pub.start_ns = s->hdr.ts_ns;
	return session_argv(si, s);
}

/* record --pid: the process ran before the recording; its image is named here, as an exec record names others'. */
static int apply_seized(struct mt_model *m, const struct mt_seized *s)
{
	struct proc *p = proc_get(m, s->hdr.pid, s->hdr.ts_ns);
	char exe[MT_PATH_MAX], comm[MT_COMM_MAX];

	if (!p)
		return -ENOMEM;
	m->session.attached = true;
	m->session.attached_ns = s->hdr.ts_ns;
	p->pub.ppid = s->ppid;
	memcpy(exe, s->path, sizeof(exe));
	exe[sizeof(exe) - 1] = '\0';
	memcpy(comm, s->comm, sizeof(comm));
	comm[sizeof(comm) - 1] = '\0';
	memcpy(p->pub.exe, exe, sizeof(exe));
	memcpy(p->pub.comm, comm, sizeof(comm));
	image_name(m, cur_image(m, p), exe, comm);
	return 0;
}

static void apply_end(struct mt_model *m, const struct mt_end *e)
{
	size_t i;

	m->tot.complete = true;
	m->tot.end_status = e->status;
	m->tot.dropped_events = 0;
	for (i = 0; i < MT_DROP__COUNT; i++) {
		m->tot.drops[i] = e->drops[i];
		m->tot.dropped_events += e->drops[i];
	}
}

/*
 * A start makes the unknown frees after it paused_frees too; after a stop the recording has releases only (the
 * tracer keeps them: a block allocated while on may end while off) and an unknown one counts nowhere. A stop ends
 * every thread's held release (see
 * mt_blocks__on_free): the thread goes on unrecorded, so that release cannot be known to be its last.
 */
static void apply_mark(struct mt_model *m, const struct mt_mark *k)
{
	struct mt_blocks_acct a;
	size_t i;

	m->tot.marks++;
	m->resumed |= k->kind == MT_MARK_START;
	if (k->kind != MT_MARK_LABEL)
		m->paused = k->kind == MT_MARK_STOP;
	if (k->kind != MT_MARK_STOP)
		return;
	for (i = 0; i < m->nr_procs; i++) {
		if (m->procs[i]->pub.exited)
			continue;
		a = image_acct(m, m->procs[i]);
		mt_blocks__end_holds(m->procs[i]->blocks, &a);
	}
}

/* Accounts one record, in time order. */
static int model_account(struct mt_model *m, const struct mt_rec_hdr *rec)
{
	size_t min = mt_rec__min_size(rec->type);

	if (!m->have_base) {
		m->have_base = true;
		m->base_ts = rec->ts_ns;
	}
	if (m->window)
		mt_window__step(m, rec);
	m->last_rel = rel_ts(m, rec->ts_ns);
	m->tot.records++;
	if (rec->type == MT_REC_MARK && rec->size >= sizeof(struct mt_mark)) {
		apply_mark(m, (const struct mt_mark *)rec);
		return 0;
	}
	if (rec->type == MT_REC_THREAD_EXIT && rec->size >= sizeof(struct mt_thread_exit)) {
		apply_thread_exit(m, (const struct mt_thread_exit *)rec);
		return 0;
	}
	if (!min || rec->size < min) {
		m->tot.bad_records++;
		return 0;
	}
	switch (rec->type) {
	case MT_REC_ALLOC: return apply_alloc(m, (const struct mt_alloc *)rec);
	case MT_REC_SYSCALL: return apply_syscall(m, (const struct mt_syscall *)rec);
	case MT_REC_FORK: return apply_fork(m, (const struct mt_fork *)rec);
	case MT_REC_EXEC: return apply_exec(m, (const struct mt_exec *)rec);
	case MT_REC_EXIT: return apply_exit(m, (const struct mt_exit *)rec);
	case MT_REC_SESSION: return apply_session(m, (const struct mt_session *)rec);
	case MT_REC_END: apply_end(m, (const struct mt_end *)rec); return 0;
	case MT_REC_RSS: return apply_rss(m, (const struct mt_rss *)rec);
	case MT_REC_SEIZED: return apply_seized(m, (const struct mt_seized *)rec);
	case MT_REC_STACK: return apply_stack(m, (const struct mt_stack *)rec);
	case MT_REC_ATTACH: m->tot.attach_failed += ((const struct mt_attach *)rec)->err != 0; return 0;
	default: return 0;
	}
}

/* The reorder window's callback: the record accounted, then shown to the observer. */
static int model_apply(const struct mt_rec_hdr *rec, void *ctx)
{
	struct mt_model *m = ctx;
	int err = model_account(m, rec);

	if (!err && m->observer)
		err = m->observer(rec, m, m->observer_ctx);
	return err;
}

void mt_model__set_observer(struct mt_model *m, mt_model_observer_fn fn, void *ctx)
{
	m->observer = fn;
	m->observer_ctx = ctx;
}

int mt_model__add(struct mt_model *m, const struct mt_rec_hdr *rec)
{
	if (m->finished || rec->size < sizeof(*rec))
		return -EINVAL;
	/* the session's start is the time base, even when a record stamped earlier comes out first */
	if (!m->have_base && rec->type == MT_REC_SESSION) {
		m->have_base = true;
		m->base_ts = rec->ts_ns;
	}
	return mt_reorder__push(m->reorder, rec);
}

/* Which images are rows: selected and alive in the window; the processes they belong to. */
static void mark_matched(struct mt_model *m)
{
	size_t i;

	for (i = 0; i < m->nr_images; i++) {
		struct image *img = m->images[i];

		img->pub.matched = img->pub.selected && mt_window__image_in(m, img);
		img->pub.open_end = img->pub.end == MT_IMAGE_LIVE ||
				    (m->window && rel_ts(m, img->pub.end_ns) >= m->filter.to_ns);
		if (!img->pub.matched)
			continue;
		m->tot.images++;
		if (!m->procs[img->pub.proc]->matched)
			m->tot.processes++;
		m->procs[img->pub.proc]->matched = true;
	}
}

/* What the processes whose last image the filter takes held when they ended, summed. */
static void mapped_sum_ends(struct mt_model *m)
{
	size_t i;

	for (i = 0; i < m->nr_procs; i++) {
		const struct proc *p = m->procs[i];

		if (!cur_image(m, p)->pub.selected)
			continue;
		m->tot.mapped.end_program_bytes += p->pub.mapped.end_program_bytes;
		m->tot.mapped.end_allocator_bytes += p->pub.mapped.end_allocator_bytes;
	}
}

int mt_model__finish(struct mt_model *m)
{
	size_t i;
	int err;

	if (m->finished)
		return 0;
	err = mt_reorder__flush(m->reorder);
	if (err)
		return err;
	for (i = 0; i < m->nr_procs; i++) {
		err = image_end(m, m->procs[i], MT_BLOCKS_STILL_LIVE, 0);
		if (err)
			return err;
	}
	mapped_sum_ends(m);
	mt_window__finish(m);
	mark_matched(m);
	m->tot.late_records = mt_reorder__late(m->reorder);
	m->finished = true;
	return 0;
}

static int load_record(const struct mt_rec_hdr *rec, void *ctx)
{
	return mt_model__add(ctx, rec);
}

int mt_model__load(const char *path, struct mt_model **out, struct mt_read_status *st)
{
	return mt_model__load_with(path, NULL, out, st);
}

int mt_model__load_with(const char *path, const struct mt_model_opts *opts, struct mt_model **out,
			struct mt_read_status *st)
{
	struct mt_read_status local;
	struct mt_model *m;
	int err, ferr;

	*out = NULL;
	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	m = mt_model__new_with(opts);
	if (!m) {
		err = -errno;
		snprintf(st->reason, sizeof(st->reason), "%s", strerror(-err));
		return err;
	}
	err = mt_artifact__read(path, load_record, m, st);
	if (err && err != -EBADMSG)
		goto err_free_model;
	ferr = mt_model__finish(m);
	if (ferr) {
		err = ferr;
		goto err_free_model;
	}
	*out = m;
	return err;

err_free_model:
	mt_model__free(m);
	if (!st->reason[0])
		snprintf(st->reason, sizeof(st->reason), "%s", strerror(-err));
	return err;
}

const struct mt_filter *mt_model__filter(const struct mt_model *m)
{
	return &m->filter;
}

const struct mt_totals *mt_model__totals(const struct mt_model *m)
{
	return &m->tot;
}

const struct mt_session_info *mt_model__session(const struct mt_model *m)
{
	return &m->session;
}

size_t mt_model__nr_procs(const struct mt_model *m)
{
	return m->nr_procs;
}

const struct mt_proc *mt_model__proc(const struct mt_model *m, size_t idx)
{
	return idx < m->nr_procs ? &m->procs[idx]->pub : NULL;
}

const struct mt_proc *mt_model__find_proc(const struct mt_model *m, uint32_t pid)
{
	const struct proc *p = proc_lookup(m, pid);

	return p ? &p->pub : NULL;
}

bool mt_model__left_inherited(const struct mt_model *m, uint32_t pid, uint64_t addr)
{
	const struct proc *p = proc_lookup(m, pid);

	return p && p->blocks && mt_blocks__left_inherited(p->blocks, addr);
}

size_t mt_model__nr_images(const struct mt_model *m)
{
	return m->nr_images;
}

const struct mt_image *mt_model__image(const struct mt_model *m, size_t idx)
{
	return idx < m->nr_images ? &m->images[idx]->pub : NULL;
}

const struct mt_leak_site *mt_model__image_leaks(const struct mt_model *m, size_t idx, size_t *n)
{
	*n = idx < m->nr_images ? m->images[idx]->nleaks : 0;
	return *n ? m->images[idx]->leaks : NULL;
}
