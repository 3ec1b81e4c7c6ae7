/* model.c — turns the record stream into per-process and total heap accounting, through a time-order window. */
/*
 * Semantics (kept in step with "Semantics used by reports" in docs/REPORT.md):
 *
 * Order. Records pass through a reorder window of MT_REORDER_WINDOW records (a min-heap keyed by ts_ns, then
 * arrival order) before they are accounted, so accounting sees time order as long as no record is more than the
 * window late. With the tick's times (the default) most neighbours have equal times and keep their arrival order.
 * Later ones are accounted when they come out and counted in totals.late_records.
 *
 * Processes are keyed by pid (the thread group id); its threads share its blocks. One is created by
 * MT_REC_SESSION (the root: pid = hdr.pid, ppid = tracer_pid), by MT_REC_FORK (the child, ppid = hdr.pid; it
 * inherits the parent's exe and comm), or by the first record of an unknown pid (ppid 0). A fork of a pid whose
 * process has exited is pid reuse: a new process entry. exe and comm come from the last MT_REC_EXEC. MT_REC_END
 * creates no process.
 *
 * Heap (MT_REC_ALLOC, per hdr.pid). Identity, per process and in total, in blocks and in bytes:
 *   inherited + allocations - frees - replaced - exec_discarded - leaked = live (0 once finished)
 *  - fork (vfork and every MT_FORK_* alike): the child starts with the blocks live in its parent at the fork:
 *    inherited_allocations/inherited_bytes, live in the child from then on (its peak counts them). They are shared
 *    with the parent, copy on write (blocks.c): a fork costs the changes since the parent's last fork, not its
 *    table. A child seen before its fork record (beyond the window) inherits nothing.
 *  - func != MT_FN_FREE, addr != 0: an allocation: allocations += 1, allocated_bytes += size, live[addr] = size.
 *    addr == 0 is a failed call: failed_allocations += 1, nothing else.
 *  - realloc/reallocarray with old_addr != 0: addr != 0 is a free of old_addr then an allocation of addr (moving or
 *    in place alike: one free + one allocation); addr == 0 and size == 0 (realloc(p, 0), which frees p in glibc) is
 *    a free of old_addr only; addr == 0 and size != 0 failed: p is untouched, failed_allocations += 1.
 *    realloc(NULL, n) is a plain allocation.
 *  - MT_FN_FREE, addr != 0, of a live block (its own or inherited): frees += 1, freed_bytes += its size. free(NULL)
 *    is ignored. A release that matches no live block is not a free:
 *    - of a block the same thread freed last, no allocation having returned the address since: libc releasing its
 *      cache of it (glibc's tcache flush when a thread ends): internal_releases += 1;
 *    - else an address never seen allocated (allocated before tracing, by an untraced path, or inside libc):
 *      unknown_frees += 1 — except the latest such release of a thread, held until the thread allocates again:
 *      when a thread-exit record (MT_REC_THREAD_EXIT) comes first it was libc's release of its own cache
 *      (glibc's tcache struct), internal_releases += 1; exec, exit and the end of the stream count it unknown.
 *    The free side of a realloc is never held nor internal.
 *  - an allocation at an address already live (its free was lost): the old block counts in replaced and
 *    replaced_bytes and is gone; the new one is live.
 *  - live bytes per process and in total (the sum over processes, inherited blocks in each holder); peak_live_bytes
 *    is the highest value reached, peak_ts_ns the first time it was reached, relative to the session record's
 *    ts_ns when there is one, else to the first record's (in time order); earlier timestamps clamp to 0.
 *  - MT_REC_EXEC ends the image: its live blocks are exec_discarded_allocations/_bytes (not leaks) and the new
 *    image starts empty. MT_REC_EXIT records the wait status, exited = true, live → leaked. At the end of the
 *    stream whatever is still live (processes that never exited) becomes leaked too; they stay exited = false.
 *  - average size (computed by the reports) = allocated_bytes / allocations, 0 when there are none.
 *
 * Mappings (MT_REC_SYSCALL) are counted apart from the heap, successful calls (ret >= 0) only: mmap calls and
 * bytes (length), munmap calls and bytes, mremap calls, brk calls.
 *
 * MT_REC_END: complete = true, its wait status, drops[] by enum mt_drop, dropped_events = their sum. Without an
 * END record the run did not finish (complete = false) and the drop counts are unknown (reported as 0 here).
 *
 * MT_REC_ATTACH with an error counts in attach_failed: a file whose probes could not be bound, its calls missing.
 *
 * Records of an unknown type, or shorter than their type's struct, are skipped and counted in bad_records.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "common/pqueue.h"
#include "common/u64map.h"
#include "model/blocks.h"
#include "model/model.h"

/* ---- reorder window ---- */

#define REORDER_SLOT 320	/* fits every fixed-size record (mt_exec is 304); bigger ones are malloc'd */

struct mt_reorder {
	mt_reorder_fn fn;
	void *ctx;
	size_t window;
	uint64_t last_ts;		/* of the last record emitted */
	uint64_t late;
	struct mt_pqueue held;		/* the records by ts_ns (equal ones in arrival order): a slot, or malloc'd */
	unsigned char *slots;		/* window + 1 slots of REORDER_SLOT bytes */
	void **free_slots;		/* stack of unused slots */
	size_t nr_free;
};

static void rec_release(struct mt_reorder *r, void *rec);

struct mt_reorder *mt_reorder__new(size_t window, mt_reorder_fn fn, void *ctx)
{
	struct mt_reorder *r;
	size_t i;

	if (!window || !fn) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fn = fn;
	r->ctx = ctx;
	r->window = window;
	r->slots = calloc(window + 1, REORDER_SLOT);
	r->free_slots = calloc(window + 1, sizeof(*r->free_slots));
	if (!r->slots || !r->free_slots) {
		mt_reorder__free(r);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i <= window; i++)
		r->free_slots[r->nr_free++] = r->slots + i * REORDER_SLOT;
	return r;
}

void mt_reorder__free(struct mt_reorder *r)
{
	if (!r)
		return;
	while (r->held.n)
		rec_release(r, mt_pqueue__pop(&r->held));
	mt_pqueue__release(&r->held);
	free(r->free_slots);
	free(r->slots);
	free(r);
}

static void *rec_copy(struct mt_reorder *r, const struct mt_rec_hdr *rec)
{
	void *copy;

	if (rec->size <= REORDER_SLOT && r->nr_free)
		copy = r->free_slots[--r->nr_free];
	else
		copy = malloc(rec->size);
	if (copy)
		memcpy(copy, rec, rec->size);
	return copy;
}

static void rec_release(struct mt_reorder *r, void *rec)
{
	unsigned char *p = rec;

	if (p >= r->slots && p < r->slots + (r->window + 1) * REORDER_SLOT)
		r->free_slots[r->nr_free++] = rec;
	else
		free(rec);
}

/* Pops the smallest record and hands it to fn. */
static int emit_min(struct mt_reorder *r)
{
	uint64_t ts = mt_pqueue__top(&r->held)->key;
	void *rec = mt_pqueue__pop(&r->held);
	int err;

	if (ts < r->last_ts)
		r->late++;
	else
		r->last_ts = ts;
	err = r->fn(rec, r->ctx);
	rec_release(r, rec);
	return err;
}

int mt_reorder__push(struct mt_reorder *r, const struct mt_rec_hdr *rec)
{
	void *copy;

	if (rec->size < sizeof(*rec))
		return -EINVAL;
	copy = rec_copy(r, rec);
	if (!copy)
		return -ENOMEM;
	if (mt_pqueue__push(&r->held, rec->ts_ns, copy)) {
		rec_release(r, copy);
		return -ENOMEM;
	}
	if (r->held.n > r->window)
		return emit_min(r);
	return 0;
}

int mt_reorder__flush(struct mt_reorder *r)
{
	int err;

	while (r->held.n) {
		err = emit_min(r);
		if (err)
			return err;
	}
	return 0;
}

uint64_t mt_reorder__late(const struct mt_reorder *r)
{
	return r->late;
}

/* ---- the model ---- */

struct proc {
	struct mt_proc pub;
	struct mt_blocks *blocks;	/* its image's live blocks */
};

struct mt_model {
	struct mt_reorder *reorder;
	struct proc **procs;		/* in first-seen order */
	size_t nr_procs;
	size_t cap_procs;
	struct mt_u64map pids;		/* pid + 1 → index in procs of the latest process with that pid */
	struct mt_totals tot;
	struct mt_session_info session;
	bool have_base;
	uint64_t base_ts;		/* what peak timestamps are relative to */
	bool finished;
};

/* Adds v to a heap stat of the process and of the totals. */
#define STAT_ADD(m, p, field, v) do {			\
	(p)->pub.heap.field += (v);			\
	(m)->tot.heap.field += (v);			\
} while (0)

/* Where the blocks of p count. */
#define ACCT(m, p) (&(struct mt_blocks_acct){ &(p)->pub.heap, &(m)->tot.heap })

static int model_apply(const struct mt_rec_hdr *rec, void *ctx);

struct mt_model *mt_model__new(void)
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
		free(m->procs[i]);
	}
	free(m->procs);
	mt_u64map__release(&m->pids);
	for (i = 0; m->session.argv && m->session.argv[i]; i++)
		free(m->session.argv[i]);
	free(m->session.argv);
	free(m);
}

static struct proc *proc_lookup(const struct mt_model *m, uint32_t pid)
{
	const uint64_t *e = mt_u64map__find(&m->pids, (uint64_t)pid + 1);

	return e ? m->procs[*e] : NULL;
}

/* A new process entry for pid (the latest with that pid from now on). NULL on ENOMEM. */
static struct proc *proc_new(struct mt_model *m, uint32_t pid, uint32_t ppid)
{
	struct proc *p, **procs;
	uint64_t old;

	if (m->nr_procs == m->cap_procs) {
		size_t cap = m->cap_procs ? m->cap_procs * 2 : 16;

		procs = realloc(m->procs, cap * sizeof(*procs));
		if (!procs)
			return NULL;
		m->procs = procs;
		m->cap_procs = cap;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->blocks = mt_blocks__new();
	if (!p->blocks || mt_u64map__put(&m->pids, (uint64_t)pid + 1, m->nr_procs, &old) < 0) {
		mt_blocks__free(p->blocks);
		free(p);
		return NULL;
	}
	p->pub.pid = pid;
	p->pub.ppid = ppid;
	m->procs[m->nr_procs++] = p;
	return p;
}

static struct proc *proc_get(struct mt_model *m, uint32_t pid)
{
	struct proc *p = proc_lookup(m, pid);

	return p ? p : proc_new(m, pid, 0);
}

static uint64_t rel_ts(const struct mt_model *m, uint64_t ts)
{
	return ts > m->base_ts ? ts - m->base_ts : 0;
}

static void note_peak(struct mt_model *m, struct proc *p, uint64_t ts)
{
	struct mt_heap_stats *ph = &p->pub.heap, *th = &m->tot.heap;

	if (ph->live_bytes > ph->peak_live_bytes) {
		ph->peak_live_bytes = ph->live_bytes;
		ph->peak_ts_ns = rel_ts(m, ts);
	}
	if (th->live_bytes > th->peak_live_bytes) {
		th->peak_live_bytes = th->live_bytes;
		th->peak_ts_ns = rel_ts(m, ts);
	}
}

static int apply_alloc(struct mt_model *m, const struct mt_alloc *a)
{
	bool is_realloc = mt_func__is_realloc(a->func);
	struct proc *p = proc_get(m, a->hdr.pid);
	int err;

	if (!p)
		return -ENOMEM;
	if (mt_func__is_free(a->func))
		return a->addr ? mt_blocks__on_free(p->blocks, ACCT(m, p), a->hdr.tid, a->addr, false) : 0;
	if (is_realloc && a->old_addr && (a->addr || !a->size)) {
		err = mt_blocks__on_free(p->blocks, ACCT(m, p), a->hdr.tid, a->old_addr, true);
		if (err)
			return err;
	}
	if (!a->addr) {
		mt_blocks__on_call(p->blocks, ACCT(m, p), a->hdr.tid);
		if (!is_realloc || !a->old_addr || a->size)
			STAT_ADD(m, p, failed_allocations, 1);
		return 0;
	}
	err = mt_blocks__on_alloc(p->blocks, ACCT(m, p), a->hdr.tid, a->addr, a->size);
	if (!err)
		note_peak(m, p, a->hdr.ts_ns);
	return err;
}

static int apply_syscall(struct mt_model *m, const struct mt_syscall *s)
{
	struct proc *p = proc_get(m, s->hdr.pid);

	if (!p)
		return -ENOMEM;
	if (s->ret < 0)
		return 0;
	switch (s->sys) {
	case MT_SYS_MMAP:
		STAT_ADD(m, p, mmap_calls, 1);
		STAT_ADD(m, p, mmap_bytes, s->size);
		break;
	case MT_SYS_MUNMAP:
		STAT_ADD(m, p, munmap_calls, 1);
		STAT_ADD(m, p, munmap_bytes, s->size);
		break;
	case MT_SYS_MREMAP:
		STAT_ADD(m, p, mremap_calls, 1);
		break;
	case MT_SYS_BRK:
		STAT_ADD(m, p, brk_calls, 1);
		break;
	default:
		m->tot.bad_records++;
		break;
	}
	return 0;
}

static int apply_fork(struct mt_model *m, const struct mt_fork *f)
{
	struct proc *parent = proc_get(m, f->hdr.pid), *child;
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
		child = proc_new(m, f->child, f->hdr.pid);
		if (!child)
			return -ENOMEM;
	}
	memcpy(child->pub.exe, parent->pub.exe, sizeof(child->pub.exe));
	memcpy(child->pub.comm, parent->pub.comm, sizeof(child->pub.comm));
	child->pub.start_ns = f->hdr.ts_ns;
	err = mt_blocks__inherit(child->blocks, ACCT(m, child), parent->blocks, &parent->pub.heap);
	if (!err)
		note_peak(m, child, f->hdr.ts_ns);
	return err;
}

static int apply_exec(struct mt_model *m, const struct mt_exec *e)
{
	struct proc *p = proc_get(m, e->hdr.pid);

	if (!p)
		return -ENOMEM;
	mt_blocks__end(p->blocks, ACCT(m, p), true);
	memcpy(p->pub.exe, e->path, sizeof(p->pub.exe));
	p->pub.exe[sizeof(p->pub.exe) - 1] = '\0';
	memcpy(p->pub.comm, e->comm, sizeof(p->pub.comm));
	p->pub.comm[sizeof(p->pub.comm) - 1] = '\0';
	return 0;
}

static int apply_exit(struct mt_model *m, const struct mt_exit *x)
{
	struct proc *p = proc_get(m, x->hdr.pid);

	if (!p)
		return -ENOMEM;
	p->pub.exited = true;
	p->pub.status = x->status;
	p->pub.exit_ns = x->hdr.ts_ns;
	mt_blocks__end(p->blocks, ACCT(m, p), false);
	return 0;
}

static void apply_thread_exit(struct mt_model *m, const struct mt_thread_exit *t)
{
	struct proc *p = proc_lookup(m, t->hdr.pid);

	m->tot.thread_exits++;
	if (p && !(t->flags & MT_THREAD_EXIT_GROUP))
		mt_blocks__on_thread_exit(p->blocks, ACCT(m, p), t->hdr.tid);
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
	root = proc_get(m, s->hdr.pid);
	if (!root)
		return -ENOMEM;
	if (!root->pub.ppid)
		root->pub.ppid = s->tracer_pid;
	root->pub.start_ns = s->hdr.ts_ns;
	return session_argv(si, s);
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

/* Accounts one record, in time order (the reorder window's callback). */
static int model_apply(const struct mt_rec_hdr *rec, void *ctx)
{
	struct mt_model *m = ctx;
	size_t min = mt_rec__min_size(rec->type);

	if (!m->have_base) {
		m->have_base = true;
		m->base_ts = rec->ts_ns;
	}
	m->tot.records++;
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
	case MT_REC_ATTACH: m->tot.attach_failed += ((const struct mt_attach *)rec)->err != 0; return 0;
	default: return 0;
	}
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

int mt_model__finish(struct mt_model *m)
{
	size_t i;
	int err;

	if (m->finished)
		return 0;
	err = mt_reorder__flush(m->reorder);
	if (err)
		return err;
	for (i = 0; i < m->nr_procs; i++)
		mt_blocks__end(m->procs[i]->blocks, ACCT(m, m->procs[i]), false);
	m->tot.processes = m->nr_procs;
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
	struct mt_read_status local;
	struct mt_model *m;
	int err, ferr;

	*out = NULL;
	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	m = mt_model__new();
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
