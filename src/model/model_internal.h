/* SPDX-License-Identifier: GPL-2.0-only */
/* model_internal.h — what model.c and window.c share: the model's structs, and its time window's entry points. */
#ifndef MEMTRACK_MODEL_INTERNAL_H
#define MEMTRACK_MODEL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "common/u64map.h"
#include "model/blocks.h"
#include "model/filter.h"
#include "model/mapped.h"
#include "model/model.h"

struct image {
	struct mt_image pub;
	struct mt_heap_stats win_start;	/* its counts when the time window opened, and when it closed */
	struct mt_heap_stats win_end;
	struct mt_leak_site *leaks;
	size_t nleaks, cap_leaks;
};

struct proc {
	struct mt_proc pub;
	size_t idx;			/* in procs */
	size_t image;			/* its current image, in images */
	struct mt_blocks *blocks;	/* that image's live blocks */
	struct mt_heap_stats win_start;
	struct mt_heap_stats win_end;
	bool matched;			/* one of its images is */
	uint64_t rss_in_tot;		/* what its resident memory adds to tot.rss now */
	struct mt_rss_parts rss_now;	/* its latest RSS record's counters (the kernel's fields only) */
	struct mt_rss_parts rss_now_in_tot;	/* what they add to mt_model.rss_tot now */
	struct mt_mapped *mapped;	/* its address space's anonymous private mappings */
	struct proc *vm_parent;		/* a vfork child until its exec: the process whose address space it runs in */
	bool vm_gone;			/* its last thread ended (MT_THREAD_EXIT_LAST): its mappings ended there */
	uint64_t mapped_in_tot[MT_MAPPED__COUNT];	/* what its mappings add to tot.mapped now */
	uint64_t gone_in_tot[MT_MAPPED__COUNT];	/* vm_gone until its exit record: what they added then */
};

enum window { WIN_BEFORE, WIN_OPEN, WIN_CLOSED };

struct mt_model {
	struct mt_reorder *reorder;
	struct proc **procs;		/* in first-seen order */
	size_t nr_procs, cap_procs;
	struct image **images;		/* in the order they began */
	size_t nr_images, cap_images;
	struct mt_u64map pids;		/* pid + 1 → index in procs of the latest process with that pid */
	struct proc *last_proc;		/* proc_get's last answer, for last_pid, which proc_lookup sees first: most */
	uint32_t last_pid;		/* records follow one of the same process's; proc_new drops it */
	struct mt_totals tot;
	struct mt_heap_stats left_out;	/* where the images the filter leaves out count, instead of tot */
	struct mt_session_info session;
	struct mt_model_opts opts;
	struct mt_filter filter;	/* opts.filter's, or everything */
	bool window;			/* the filter narrows the time */
	enum window win;
	struct mt_heap_stats tot_start, tot_end;
	struct mt_rss_parts rss_tot;	/* the sum of the procs' rss_now_in_tot */
	uint64_t gone_tot[MT_MAPPED__COUNT];	/* the sum of the procs' gone_in_tot */
	struct mt_u64map stack_ids;	/* leak_sites: stack hash → id, 1 .. nr_stacks */
	uint32_t last_stack;		/* the id stack_id gave last (0: none): a loop allocates at one site */
	uint64_t *stack_hashes;		/* id - 1 → hash */
	size_t nr_stacks, cap_stacks;
	struct mt_u64map withheld;	/* hashes of the MT_STACK_WITHHELD definitions seen (value unused) */
	bool resumed;			/* a start mark was seen */
	bool paused;			/* a stop mark was the last mark: recording is off */
	uint64_t last_rel;		/* the latest record's time, relative to base_ts */
	bool have_base;
	uint64_t base_ts;		/* what peak timestamps are relative to */
	bool finished;
	mt_model_observer_fn observer;	/* called after each record is accounted, or NULL */
	void *observer_ctx;
};

static inline struct image *cur_image(const struct mt_model *m, const struct proc *p)
{
	return m->images[p->image];
}

static inline uint64_t rel_ts(const struct mt_model *m, uint64_t ts)
{
	return ts > m->base_ts ? ts - m->base_ts : 0;
}

/* Where p's current image counts. */
static inline struct mt_blocks_acct image_acct(struct mt_model *m, struct proc *p)
{
	struct image *img = cur_image(m, p);

	return (struct mt_blocks_acct){ &img->pub.heap, &p->pub.heap,
					img->pub.selected ? &m->tot.heap : &m->left_out, m->resumed, m->paused,
					m->session.attached && !img->pub.from_exec };
}

/*
 * What p holds now, term by term: its latest RSS record's counters and its books. Between its last thread's end
 * (vm_gone: the mappings ended) and its exit record, whose RSS record carries the last counters, the books it
 * ended with.
 */
static inline struct mt_rss_parts proc_rss_parts(const struct proc *p)
{
	struct mt_rss_parts r = p->rss_now;

	r.heap_bytes = p->pub.heap.live_bytes;
	r.allocator_bytes = p->vm_gone ? p->pub.mapped.end_allocator_bytes : p->pub.mapped.allocator_bytes;
	r.program_bytes = p->vm_gone ? p->pub.mapped.end_program_bytes : p->pub.mapped.program_bytes;
	return r;
}

/* The same summed over the processes whose image the filter takes. */
static inline struct mt_rss_parts tot_rss_parts(const struct mt_model *m)
{
	struct mt_rss_parts r = m->rss_tot;

	r.heap_bytes = m->tot.heap.live_bytes;
	r.allocator_bytes = m->tot.mapped.allocator_bytes + m->gone_tot[MT_MAPPED_ALLOCATOR];
	r.program_bytes = m->tot.mapped.program_bytes + m->gone_tot[MT_MAPPED_PROGRAM];
	return r;
}

/* window.c: the time window (--from/--to, --between): counts at its start and end, peaks only inside. */
/* Peaks are counted now: no window, or an open one. */
bool mt_window__peaks_counted(const struct mt_model *m);
/* p's live bytes (and the totals') may have reached a new peak at ts. */
void mt_window__note_peak(struct mt_model *m, struct proc *p, uint64_t ts);
/* Before a record is accounted: the window opens or closes at it. */
void mt_window__step(struct mt_model *m, const struct mt_rec_hdr *rec);
/* At the end of the stream: an open window closes, and the counts become the window's. */
void mt_window__finish(struct mt_model *m);
/* img is alive in the window. */
bool mt_window__image_in(const struct mt_model *m, const struct image *img);

#endif /* MEMTRACK_MODEL_INTERNAL_H */
