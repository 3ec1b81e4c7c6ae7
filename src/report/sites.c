// SPDX-License-Identifier: GPL-2.0-only
/* sites.c — top allocation sites: the stacks of an artifact merged by their symbolized frames, ranked. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/log.h"
#include "common/plural.h"
#include "common/strmap.h"
#include "common/text.h"
#include "report/format.h"
#include "report/sites.h"

#define NAME_MAX_LEN 1024	/* C++ template names run long; past this they are cut */
#define BIG_BITS 4096		/* a filter of the largest allocations' stacks or sites: 20 of a million */

/* A stack frame's expansion (its inline chain) in mt_sites.lines, made the first time a stack holds the frame. */
struct xrange {
	uint32_t at;
	uint16_t n;
	bool done;
};

/*
 * Sites share their strings: each distinct name and srcline is kept once (out->strs), each stack frame expanded
 * once (lines, by the stacks' frame id), and a site's frames are ids into those, so a million call
 * paths over a few hundred return addresses cost their frame arrays, not a million times their text.
 */
struct site_build {
	struct mt_sites *out;
	const struct mt_stack_heap *heap;	/* NULL: no accounting beyond the entries' */
	const struct mt_stacks *s;
	bool with_offset;
	bool share;			/* sites may share the stacks' chains and peaks (!mt_sites_opts.detached) */
	uint32_t *slots;		/* the sites by site_key, open addressing: index in out->sites + 1 (0: free) */
	size_t mask;			/* slots - 1: twice the stacks at least, a power of two */
	const struct mt_size_stats *sizes;	/* the heap's, with the largest allocations (NULL: no heap) */
	uint32_t largest[MT_LARGEST_MAX];	/* the order of the site of each, UINT32_MAX: none */
	uint64_t big_stacks[BIG_BITS / 64];	/* bit (stack index + 1) % BIG_BITS of each (big_set) */
	struct mt_strmap strs;		/* out->strs while they are built */
	uint32_t *map;			/* by the stacks' frame id: its one line in out->lines (UINT32_MAX: not one) */
	struct xrange *xr;		/* by the stacks' frame id */
	size_t nxf, cap_xf;		/* out->lines: the expansions, strings from out->strs */
	size_t nids, cap_ids;		/* out->ids: a site's are at its ids (an offset until sites_link) */
};

/* A site of mt_sites__build: its frames and strings are the sites'. */
static void site_release(struct mt_site *site)
{
	if (site->own_procs)
		free((void *)site->procs);
	free(site->mapped);
}

void mt_sites__free(struct mt_sites *sites)
{
	size_t i;

	if (!sites)
		return;
	for (i = 0; i < sites->nall; i++)
		site_release(&sites->sites[i]);
	free(sites->sites);
	free(sites->by_mapped);
	free(sites->by_count);
	free(sites->by_peak);
	free(sites->by_temporary);
	free(sites->procs);
	free(sites->images);
	for (i = 0; i < sites->nstrs; i++)
		free(sites->strs[i]);
	free(sites->strs);
	free(sites->lines);
	free(sites->ids);
	free(sites->by_frame);
	free(sites);
}

static char *srcline_text(const char *file, int line)
{
	const char *base;
	char *text;

	if (!file)
		return NULL;
	base = strrchr(file, '/');
	if (asprintf(&text, "%s:%d", base ? base + 1 : file, line) < 0)
		return NULL;
	return text;
}

bool mt_sites__runtime_module(const char *path)
{
	static const char *const prefixes[] = {
		"libc.so", "libm.so", "libpthread.so", "libdl.so", "libstdc++.so", "libc++.so", "libc++abi.so",
		"libgcc_s.so", "ld-linux", "libjemalloc.so", "libtcmalloc", "libmimalloc.so",
	};
	const char *base = path ? strrchr(path, '/') : NULL;
	size_t i;

	base = base ? base + 1 : path;
	for (i = 0; base && i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(base, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

int mt_sites__expand_frame(struct mt_stacks *s, const struct mt_frame *f, bool with_offset, mt_frame_line_fn fn,
			   void *ctx)
{
	bool runtime = f->mod && mt_sites__runtime_module(f->mod->path[0] ? f->mod->path : f->mod->name);
	const struct mt_src_frame *src;
	struct mt_frame_line fl;
	char name[NAME_MAX_LEN];
	struct mt_sym sym;
	size_t n, i;
	int err;

	if (f->mod && f->has_vaddr && !mt_module__frames(f->mod, f->vaddr, &src, &n)) {
		for (i = 0; i < n; i++) {
			sym = (struct mt_sym){ .func = src[i].func, .offset = src[i].offset, .file = src[i].file,
						 .line = src[i].line };
			fl = (struct mt_frame_line){ name, src[i].file, src[i].line, src[i].inlined, runtime };
			mt_frame__name(f, &sym, with_offset && !src[i].inlined, name, sizeof(name));
			err = fn(&fl, ctx);
			if (err)
				return err;
		}
		return 0;
	}
	mt_stacks__symbolize(s, f, &sym);
	fl = (struct mt_frame_line){ name, sym.file, sym.line, false, runtime };
	mt_frame__name(f, &sym, with_offset, name, sizeof(name));
	return fn(&fl, ctx);
}

int mt_site__add_frame(const struct mt_frame_line *fl, void *ctx)
{
	struct mt_site_frames *o = ctx;
	struct mt_site_frame *sf;

	if (mt_array__grow((void **)&o->site->frames, &o->cap, o->site->nframes, sizeof(*o->site->frames)))
		return -ENOMEM;
	sf = &o->site->frames[o->site->nframes];
	*sf = (struct mt_site_frame){ strdup(fl->name), srcline_text(fl->file, fl->line), fl->inlined, fl->runtime };
	if (!sf->name || (fl->file && !sf->srcline)) {
		free(sf->name);
		free(sf->srcline);
		return -ENOMEM;
	}
	o->site->nframes++;
	return 0;
}

/* text kept once among the sites' strings (NULL stays NULL); NULL on ENOMEM. */
static char *str_intern(struct site_build *b, const char *text, bool *nomem)
{
	int64_t i;

	if (!text)
		return NULL;
	i = mt_strmap__intern(&b->strs, text, NULL);
	if (i < 0) {
		*nomem = true;
		return NULL;
	}
	return b->strs.strs[i];
}

/* An mt_frame_line_fn over a site_build: fl appended to the expansions, its strings interned. */
static int xframe_add(const struct mt_frame_line *fl, void *ctx)
{
	struct site_build *b = ctx;
	char *src = srcline_text(fl->file, fl->line);	/* once per distinct return address: kept if new */
	struct mt_site_frame *sf;
	bool nomem = fl->file && !src;

	if (nomem || mt_array__grow((void **)&b->out->lines, &b->cap_xf, b->nxf, sizeof(*b->out->lines))) {
		free(src);
		return -ENOMEM;
	}
	sf = &b->out->lines[b->nxf];
	*sf = (struct mt_site_frame){ str_intern(b, fl->name, &nomem), str_intern(b, src, &nomem), fl->inlined,
				      fl->runtime };
	free(src);
	if (nomem)
		return -ENOMEM;
	b->nxf++;
	return 0;
}

/* The expansion of frame i of the entry's chain, made the first time. */
static const struct xrange *xframe(struct site_build *b, struct mt_stacks *s, const struct mt_stack_entry *e,
				   size_t i)
{
	struct xrange *x = &b->xr[mt_stacks__frame_ref(s, e->frames, i)];
	size_t at = b->nxf;

	if (x->done)
		return x;
	if (mt_sites__expand_frame(s, mt_stacks__frame(s, e->frames, i), b->with_offset, xframe_add, b) ||
	    at > UINT32_MAX || b->nxf - at > UINT16_MAX)
		return NULL;
	*x = (struct xrange){ (uint32_t)at, (uint16_t)(b->nxf - at), true };
	if (x->n == 1)
		b->map[mt_stacks__frame_ref(s, e->frames, i)] = x->at;
	return x;
}

/* The site's frames: each return address of the entry's chain expanded into its inline chain; ids appended. */
static int site_frames(struct site_build *b, struct mt_stacks *s, const struct mt_stack_entry *e,
		       struct mt_site *site)
{
	const struct xrange *x;
	size_t i, k;

	site->ids = (const uint32_t *)(uintptr_t)b->nids;	/* an offset into out->ids until sites_link */
	for (i = 0; i < e->nframes; i++) {
		x = xframe(b, s, e, i);
		if (!x)
			return -ENOMEM;
		for (k = 0; k < x->n; k++) {
			if (mt_array__grow((void **)&b->out->ids, &b->cap_ids, b->nids, sizeof(*b->out->ids)))
				return -ENOMEM;
			b->out->ids[b->nids++] = x->at + k;
		}
		site->nframes += x->n;
	}
	return 0;
}

/* Where a site's ids are while they are built: its stack's chain (through map), else an offset into out->ids. */
static const uint32_t *site_ids(const struct site_build *b, const struct mt_site *site)
{
	return site->chain ? site->ids : b->out->ids + (uintptr_t)site->ids;
}

/* The name of a site's frame i while the sites are built. */
static const char *site_name(const struct site_build *b, const struct mt_site *site, const uint32_t *ids, size_t i)
{
	return b->out->lines[site->chain ? b->map[ids[i]] : ids[i]].name;
}

/* What identifies a site, as the names joined (mt_site__key) would: its names are interned, so their pointers. */
static uint64_t site_key(const struct site_build *b, const struct mt_site *site)
{
	const uint32_t *ids = site_ids(b, site);
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < site->nframes; i++)
		h = (h ^ (uintptr_t)site_name(b, site, ids, i)) * 0x100000001b3ull;
	h ^= site->nframes;
	return h ^ h >> 32;
}

static bool site_same(const struct site_build *b, const struct mt_site *x, const struct mt_site *y)
{
	const uint32_t *xi = site_ids(b, x), *yi = site_ids(b, y);
	size_t i;

	if (x->nframes != y->nframes)
		return false;
	for (i = 0; i < x->nframes; i++)
		if (site_name(b, x, xi, i) != site_name(b, y, yi, i))
			return false;
	return true;
}

/* The slot of the site with the same frames, or the free one where it goes: a hash table of 32-bit indexes, which
 * compares sites, not keys, is a quarter of a table of keys. */
static uint32_t *sites_slot(struct site_build *b, const struct mt_site *site)
{
	size_t i = site_key(b, site) & b->mask;

	while (b->slots[i] && !site_same(b, &b->out->sites[b->slots[i] - 1], site))
		i = (i + 1) & b->mask;
	return &b->slots[i];
}

/*
 * A new site whose frames are its stack's, one line each, reads them through its stack's chain: the ids it appended
 * go back. A million call paths would otherwise copy every chain.
 */
static void site_share_chain(struct site_build *b, const struct mt_stack_entry *e, struct mt_site *site)
{
	const uint32_t *chain = mt_stacks__chain(b->s, e->frames);
	size_t i;

	if (!b->share || site->nframes != e->nframes)
		return;
	for (i = 0; i < e->nframes; i++)
		if (b->map[chain[i]] == UINT32_MAX)
			return;
	b->nids -= site->nframes;
	site->ids = chain;
	site->chain = true;
}

/*
 * After the build, when out->lines and out->ids move no more: the sites point into them; a site of a shared chain
 * into by_frame, the one-line frames' lines by frame id (a pointer less in each of a million sites). 0 or -ENOMEM.
 */
static int sites_link(struct site_build *b)
{
	size_t i, n = mt_stacks__nr_frames(b->s);
	struct mt_sites *out = b->out;
	bool chains = false;

	for (i = 0; i < out->nall; i++) {
		out->sites[i].ids = site_ids(b, &out->sites[i]);
		out->sites[i].frames = out->lines;
		chains |= out->sites[i].chain;
	}
	if (!chains)
		return 0;
	out->by_frame = calloc(n, sizeof(*out->by_frame));
	if (!out->by_frame)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (b->map[i] != UINT32_MAX)
			out->by_frame[i] = out->lines[b->map[i]];
	for (i = 0; i < out->nall; i++)
		if (out->sites[i].chain)
			out->sites[i].frames = out->by_frame;
	return 0;
}

char *mt_site__key(const struct mt_site *site)
{
	size_t i, len = 1;
	char *key, *p;

	for (i = 0; i < site->nframes; i++)
		len += strlen(mt_site__frame(site, i)->name) + 1;
	key = malloc(len);
	if (!key)
		return NULL;
	p = key;
	for (i = 0; i < site->nframes; i++)
		p += sprintf(p, "%s\n", mt_site__frame(site, i)->name);
	*p = '\0';
	return key;
}

/* It only leaked blocks made before a window (pprof's concern): in no site's list. */
static bool proc_peak_empty(const struct mt_proc_peak *pp)
{
	return !pp->allocations && !pp->bytes && !pp->made_allocations;
}

/* The site's list, shared with a stack (or none yet), becomes its own: a second stack's are added to it. */
static int site_own_procs(struct mt_site *site)
{
	struct mt_proc_peak *v;

	if (site->own_procs || !site->nprocs)
		return 0;
	v = malloc(site->nprocs * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memcpy(v, site->procs, site->nprocs * sizeof(*v));
	site->procs = v;
	site->own_procs = true;
	return 0;
}

/* A stack's per-process peaks added into its site's list (both in process order): shared when it is the first. */
static int site_add_procs(struct site_build *b, struct mt_site *site, const struct mt_proc_peak *pp, size_t n)
{
	struct mt_proc_peak *v;
	size_t i, j = 0;

	for (i = 0; b->share && !site->nprocs && i < n && !proc_peak_empty(&pp[i]); i++)
		;
	if (n && i == n) {
		site->procs = pp;
		site->nprocs = n;
		return 0;
	}
	if (site_own_procs(site))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (proc_peak_empty(&pp[i]))
			continue;
		while (j < site->nprocs && site->procs[j].proc < pp[i].proc)
			j++;
		v = (struct mt_proc_peak *)site->procs;	/* the site's own (site_own_procs), or none */
		if (j < site->nprocs && v[j].proc == pp[i].proc) {
			v[j].allocations += pp[i].allocations;
			v[j].bytes += pp[i].bytes;
			v[j].made_allocations += pp[i].made_allocations;
			v[j].made_bytes += pp[i].made_bytes;
			if (v[j].image == UINT32_MAX)
				v[j].image = pp[i].image;
			continue;
		}
		v = realloc(v, (site->nprocs + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		site->procs = v;
		site->own_procs = true;
		memmove(v + j + 1, v + j, (site->nprocs - j) * sizeof(*v));
		v[j] = pp[i];
		v[j].leaked_allocations = v[j].leaked_bytes = 0;	/* not summed */
		site->nprocs++;
	}
	return 0;
}

/* The entry's program mappings into its site's: the site gets books of its own with the first. 0 or -ENOMEM. */
static int site_add_mapped(const struct mt_stacks *s, struct mt_site *t, const struct mt_stack_entry *e)
{
	const struct mt_stack_mapped *m = mt_stacks__mapped_of(s, e);
	static const struct mt_stack_mapped none;

	if (!memcmp(m, &none, sizeof(none)))
		return 0;
	if (!t->mapped && !(t->mapped = calloc(1, sizeof(*t->mapped))))
		return -ENOMEM;
	t->mapped->calls += m->calls;
	t->mapped->bytes += m->bytes;
	t->mapped->inherited_bytes += m->inherited_bytes;
	t->mapped->unmapped_bytes += m->unmapped_bytes;
	t->mapped->discarded_bytes += m->discarded_bytes;
	t->mapped->exited_bytes += m->exited_bytes;
	t->mapped->live_bytes += m->live_bytes;
	t->mapped->peak_bytes += m->peak_bytes;
	return 0;
}

/* The entry's numbers into its site (a new one, or one with the same frames). */
static int site_count(struct site_build *b, struct mt_site *t, const struct mt_stack_entry *e, size_t idx,
		      const struct mt_stack_counts *c)
{
	const struct mt_proc_peak *pp;
	size_t n = b->heap ? mt_stack_heap__proc_peaks(b->heap, idx + 1, &pp) : 0;
	uint64_t sup_n, sup_b;

	t->bytes += c->bytes;
	t->count += c->allocations;
	t->leaked_bytes += c->leaked_bytes;
	t->leaked_allocations += c->leaked_allocations;
	mt_stacks__suppressed(b->s, e, &sup_n, &sup_b);
	t->suppressed_bytes += sup_b;
	t->suppressed_allocations += sup_n;
	t->peak_bytes += c->peak_bytes;
	t->peak_allocations += c->peak_allocations;
	t->temporary_allocations += c->temporary_allocations;
	t->temporary_bytes += c->temporary_bytes;
	t->stacks++;
	t->heap |= c->allocations || c->inherited_allocations;
	return site_add_mapped(b->s, t, e) || site_add_procs(b, t, pp, n) ? -ENOMEM : 0;
}

static void big_set(uint64_t *bits, size_t i)
{
	bits[i / 64 % (BIG_BITS / 64)] |= 1ull << i % 64;
}

/* Whether i may be one of those set: most are not, and the filter says so at once. */
static bool big_test(const uint64_t *bits, size_t i)
{
	return bits[i / 64 % (BIG_BITS / 64)] >> i % 64 & 1;
}

/* The entry's site (its order) kept when the entry made one of the largest allocations: a few of a million. */
static void sites_note_largest(struct site_build *b, size_t eidx, uint32_t order)
{
	size_t k;

	if (!b->sizes || !big_test(b->big_stacks, eidx + 1))
		return;
	for (k = 0; k < b->sizes->nlargest; k++)
		if (b->sizes->largest[k].stack == eidx + 1)
			b->largest[k] = order;
}

/* The sites array holds a site per entry at most: sized once, no doubling that would hold two arrays a moment. */
static int sites_add(struct site_build *b, struct mt_stacks *s, const struct mt_stack_entry *e, size_t eidx,
		     const struct mt_stack_counts *c)
{
	struct mt_site site = { .order = b->out->nall };
	uint32_t *slot;
	int err;

	err = site_frames(b, s, e, &site);
	if (err)
		return err;
	slot = sites_slot(b, &site);
	if (*slot) {
		sites_note_largest(b, eidx, *slot - 1);
		b->nids -= site.nframes;	/* the site's own ids stand */
		return site_count(b, &b->out->sites[*slot - 1], e, eidx, c);
	}
	site_share_chain(b, e, &site);
	err = site_count(b, &site, e, eidx, c);
	if (err) {
		site_release(&site);
		return err;
	}
	sites_note_largest(b, eidx, (uint32_t)b->out->nall);
	*slot = (uint32_t)b->out->nall + 1;
	b->out->sites[b->out->nall++] = site;
	return 0;
}

static void build_release(struct site_build *b)
{
	free(b->slots);
	mt_strmap__release(&b->strs);
	free(b->xr);
	free(b->map);
}

static int by_mapped(const void *a, const void *b)
{
	const struct mt_site *x = *(const struct mt_site *const *)a, *y = *(const struct mt_site *const *)b;

	if (x->mapped->bytes != y->mapped->bytes)
		return x->mapped->bytes > y->mapped->bytes ? -1 : 1;
	if (x->mapped->peak_bytes != y->mapped->peak_bytes)
		return x->mapped->peak_bytes > y->mapped->peak_bytes ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static bool site_mapped(const struct mt_site *site)
{
	return site->mapped && (site->mapped->bytes || site->mapped->inherited_bytes);
}

/* The sites with program mappings, by mapped bytes: counted first, a few of a million sites. 0 or -ENOMEM. */
static int sites_mapped(struct mt_sites *out)
{
	size_t i, n = 0;

	for (i = 0; i < out->nall; i++)
		n += site_mapped(&out->sites[i]);
	out->by_mapped = malloc((n ? n : 1) * sizeof(*out->by_mapped));
	if (!out->by_mapped)
		return -ENOMEM;
	for (i = 0; i < out->nall; i++)
		if (site_mapped(&out->sites[i]))
			out->by_mapped[out->nmapped++] = &out->sites[i];
	mt_array__sort(out->by_mapped, out->nmapped, sizeof(*out->by_mapped), by_mapped);
	return 0;
}

/* The images of the processes, and how many exes made allocations at some site. */
static int sites_images(struct mt_sites *out, const struct mt_stack_heap *heap)
{
	size_t i, k, n = mt_stack_heap__nr_images(heap);
	bool *made = calloc(n ? n : 1, sizeof(*made));

	out->images = malloc((n ? n : 1) * sizeof(*out->images));
	if (!out->images || !made) {
		free(made);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		out->images[i] = *mt_stack_heap__image(heap, i);
	out->nimages = n;
	for (i = 0; i < out->count; i++)
		for (k = 0; k < out->sites[i].nprocs; k++)
			if (out->sites[i].procs[k].image < n)
				made[out->sites[i].procs[k].image] = true;
	for (i = 0; i < n; i++) {
		for (k = 0; made[i] && k < i; k++)
			if (made[k] && !strcmp(out->images[k].exe, out->images[i].exe))
				break;
		out->makers += made[i] && k == i;
	}
	free(made);
	return 0;
}

/* The largest allocations with their sites, found by order in one pass (sorted, the sites moved). */
static void sites_largest(struct site_build *b, const struct mt_size_stats *z)
{
	uint64_t orders[BIG_BITS / 64] = { 0 };
	struct mt_sites *out = b->out;
	size_t i, k;

	for (k = 0; k < z->nlargest; k++) {
		out->largest[k] = (struct mt_site_big){ z->largest[k].size, z->largest[k].pid, z->largest[k].ts_ns,
							NULL };
		if (b->largest[k] != UINT32_MAX)
			big_set(orders, b->largest[k]);
	}
	out->nlargest = z->nlargest;
	for (i = 0; z->nlargest && i < out->nall; i++)
		for (k = 0; big_test(orders, out->sites[i].order) && k < z->nlargest; k++)
			if (b->largest[k] == out->sites[i].order)
				out->largest[k].site = &out->sites[i];
}

/* What the accounting knows beyond the sites: totals, sizes, the largest allocations with their sites. */
static int sites_extras(struct site_build *b)
{
	struct mt_sites *out = b->out;
	size_t i;

	if (!b->heap)
		return 0;
	out->totals = *mt_stack_heap__totals(b->heap);
	out->totals.peak_bytes = mt_stack_heap__peak_bytes(b->heap);
	out->peak_ts_ns = mt_stack_heap__peak_ts(b->heap);
	out->sizes = *mt_stack_heap__sizes(b->heap);
	out->nprocs = mt_stack_heap__nr_procs(b->heap);
	out->procs = malloc((out->nprocs ? out->nprocs : 1) * sizeof(*out->procs));
	if (!out->procs)
		return -ENOMEM;
	for (i = 0; i < out->nprocs; i++)
		out->procs[i] = *mt_stack_heap__proc(b->heap, i);
	if (sites_images(out, b->heap))
		return -ENOMEM;
	sites_largest(b, mt_stack_heap__sizes(b->heap));
	return 0;
}

struct mt_sites *mt_sites__build(struct mt_stacks *s)
{
	return mt_sites__build_with(s, NULL);
}

/* A chain that ends before the stack's end: its allocations counted by why, for the report's hint. */
static void sites_count_cut(struct mt_sites *out, const struct mt_stacks *s, const struct mt_stack_entry *e,
			    uint64_t allocations)
{
	const struct mt_frame *last = e->nframes ? mt_stacks__frame(s, e->frames, e->nframes - 1) : NULL, *fp_at;

	if (e->kind == MT_CHAIN_KERNEL && e->kfp_frames) {
		out->fp_walk_allocations += allocations;
		if (allocations > out->fp_module_allocations) {
			fp_at = mt_stacks__frame_id(s, e->kfp_at);
			out->fp_module = fp_at->mod ? fp_at->mod->name : "anonymous executable memory";
			out->fp_module_allocations = allocations;
		}
	}
	if (!last || !last->truncated)
		return;
	out->cut_allocations[last->stop < MT_KSTOP__COUNT ? last->stop : 0] += allocations;
	if ((last->stop == MT_KSTOP_NO_INFO || last->stop == MT_KSTOP_LOADING) && last->mod &&
	    allocations > out->cut_module_allocations) {
		out->cut_module = last->mod->name;
		out->cut_module_allocations = allocations;
	}
}

/* The sites array down to its sites: where stacks merged, most of the site per stack it was made for is unused. */
static void sites_fit(struct mt_sites *out)
{
	struct mt_site *v = realloc(out->sites, (out->nall ? out->nall : 1) * sizeof(*out->sites));

	if (v)
		out->sites = v;
}

static int sites_collect(struct site_build *b, struct mt_stacks *s)
{
	size_t i, n = mt_stacks__count(s);
	int err = 0;

	b->sizes = b->heap ? mt_stack_heap__sizes(b->heap) : NULL;
	memset(b->largest, 0xff, sizeof(b->largest));	/* UINT32_MAX: none */
	for (i = 0; b->sizes && i < b->sizes->nlargest; i++)
		big_set(b->big_stacks, b->sizes->largest[i].stack);
	b->out->sites = malloc((n ? n : 1) * sizeof(*b->out->sites));	/* its untouched pages cost nothing */
	b->xr = calloc(mt_stacks__nr_frames(s), sizeof(*b->xr));
	b->map = malloc(mt_stacks__nr_frames(s) * sizeof(*b->map));
	for (b->mask = 1; b->mask < 2 * n; b->mask <<= 1)
		;
	b->slots = calloc(b->mask--, sizeof(*b->slots));
	if (!b->out->sites || !b->xr || !b->map || !b->slots)
		return -ENOMEM;
	memset(b->map, 0xff, mt_stacks__nr_frames(s) * sizeof(*b->map));	/* UINT32_MAX: not one line */
	for (i = 0; !err && i < n; i++) {
		const struct mt_stack_entry *e = mt_stacks__entry(s, i);
		struct mt_stack_counts c;

		mt_stacks__counts(s, e, &c);
		if (!c.allocations && !c.inherited_allocations && !mt_stacks__mapped_of(s, e)->bytes &&
		    !mt_stacks__mapped_of(s, e)->inherited_bytes)
			continue;
		if (!e->defined && !c.allocations && !c.inherited_allocations)
			continue;	/* a mapping's undefined stack: its bytes are in no site */
		if (!e->defined) {
			b->out->undefined_allocations += c.allocations;
			b->out->undefined_bytes += c.bytes;
			continue;
		}
		sites_count_cut(b->out, s, e, c.allocations);
		err = sites_add(b, s, e, i, &c);
	}
	return err;
}

void mt_sites__suppressed_total(const struct mt_stacks *s, uint64_t *count, uint64_t *bytes)
{
	size_t i, n = s ? mt_stacks__count(s) : 0;
	uint64_t c, b;

	*count = *bytes = 0;
	for (i = 0; i < n; i++) {
		mt_stacks__suppressed(s, mt_stacks__entry(s, i), &c, &b);
		*count += c;
		*bytes += b;
	}
}

struct mt_sites *mt_sites__build_with(struct mt_stacks *s, const struct mt_sites_opts *opts)
{
	struct site_build b = { .with_offset = !opts || !opts->no_offsets, .share = !opts || !opts->detached,
				.heap = mt_stacks__heap(s), .s = s };
	struct mt_sites *out;
	int err;

	out = b.out = calloc(1, sizeof(*b.out));
	if (!b.out)
		return NULL;
	out->any = mt_stacks__any(s);
	out->dwarf = mt_stacks__has_dwarf(s);
	out->chains = mt_stacks__chains(s);
	out->chains_key = mt_stacks__chains_key(s);
	mt_sites__suppressed_total(s, &out->suppressed_allocations, &out->suppressed_bytes);
	err = sites_collect(&b, s);
	if (!err)
		err = sites_link(&b);
	sites_fit(out);
	free(b.slots);	/* the sites are made: what found and expanded them goes before the rankings come */
	free(b.xr);
	free(b.map);
	b.slots = NULL;
	b.xr = NULL;
	b.map = NULL;
	out->strs = mt_strmap__take(&b.strs, &out->nstrs);
	if (!err)
		err = mt_sites__sort(out->sites, out->nall);
	if (!err) {
		while (out->count < out->nall && out->sites[out->count].heap)
			out->count++;
		out->mapped_peak_bytes = mt_stack_mapped__peak_bytes(mt_stacks__mapped(s));
		err = sites_mapped(out);
	}
	if (!err)
		err = sites_extras(&b);
	build_release(&b);	/* before the rankings too */
	if (!err)
		err = mt_sites__rank(out);
	if (err) {
		mt_sites__free(out);
		errno = -err;
		return NULL;
	}
	return out;
}

/* ---- peaks, temporaries ---- */

void mt_sites__json_site_keys(struct mt_json *j, const struct mt_sites *sites, const struct mt_site *site)
{
	size_t i;

	mt_json__kv_u64(j, "peak_bytes", site->peak_bytes);
	mt_json__kv_u64(j, "peak_allocations", site->peak_allocations);
	mt_json__kv_u64(j, "temporary_allocations", site->temporary_allocations);
	mt_json__kv_u64(j, "temporary_bytes", site->temporary_bytes);
	mt_json__key(j, "process_peaks");
	mt_json__begin_array(j);
	for (i = 0; i < site->nprocs; i++) {
		if (!site->procs[i].bytes && !site->procs[i].allocations)
			continue;
		mt_json__begin_object(j);
		mt_json__kv_u64(j, "pid", sites->procs[site->procs[i].proc].pid);
		mt_json__kv_u64(j, "peak_bytes", site->procs[i].bytes);
		mt_json__kv_u64(j, "peak_allocations", site->procs[i].allocations);
		mt_json__end_object(j);
	}
	mt_json__end_array(j);
	mt_sites__json_processes(j, sites, site);
}

void mt_sites__json_processes(struct mt_json *j, const struct mt_sites *sites, const struct mt_site *site)
{
	const struct mt_proc_peak *sp;
	size_t i;

	mt_json__key(j, "processes");
	mt_json__begin_array(j);
	for (i = 0; i < site->nprocs; i++) {
		sp = &site->procs[i];
		if (!sp->made_allocations)
			continue;
		mt_json__begin_object(j);
		mt_json__kv_u64(j, "pid", sites->procs[sp->proc].pid);
		mt_json__kv_string_n(j, "exe", sp->image < sites->nimages ? sites->images[sp->image].exe : "",
				     MT_PATH_MAX);
		mt_json__kv_u64(j, "allocations", sp->made_allocations);
		mt_json__kv_u64(j, "bytes", sp->made_bytes);
		mt_json__end_object(j);
	}
	mt_json__end_array(j);
}

void mt_sites__json_site(struct mt_json *j, const struct mt_sites *sites, const struct mt_site *site, bool keys)
{
	mt_json__begin_object(j);
	mt_json__kv_u64(j, "bytes", site->bytes);
	mt_json__kv_u64(j, "count", site->count);
	mt_json__kv_u64(j, "leaked_bytes", site->leaked_bytes);
	mt_json__kv_u64(j, "suppressed_bytes", site->suppressed_bytes);
	mt_json__kv_u64(j, "stacks", site->stacks);
	if (keys)
		mt_sites__json_site_keys(j, sites, site);
	else
		mt_sites__json_processes(j, sites, site);
	mt_sites__json_frame_keys(j, site);
	mt_json__end_object(j);
}

void mt_sites__json_frame_keys(struct mt_json *j, const struct mt_site *site)
{
	size_t i;

	mt_json__key(j, "frames");
	mt_json__begin_array(j);
	for (i = 0; i < site->nframes; i++)
		mt_json__string(j, mt_site__frame(site, i)->name);
	mt_json__end_array(j);
	mt_json__key(j, "srclines");
	mt_json__begin_array(j);
	for (i = 0; i < site->nframes; i++) {
		if (mt_site__frame(site, i)->srcline)
			mt_json__string(j, mt_site__frame(site, i)->srcline);
		else
			mt_json__null(j);
	}
	mt_json__end_array(j);
}

/* Each process's share of the site at that process's own peak, when the run had more than one process. */
static void text_site_procs(FILE *f, const struct mt_sites *sites, const struct mt_site *site)
{
	const struct mt_heap_proc *p;
	char a[MT_HUMAN_MAX];
	size_t i;

	if (sites->nprocs < 2)
		return;
	for (i = 0; i < site->nprocs; i++) {
		if (!site->procs[i].bytes && !site->procs[i].allocations)
			continue;
		p = &sites->procs[site->procs[i].proc];
		fprintf(f, "      pid %" PRIu32 " at its peak: %s in %" PRIu64 " %s (", p->pid,
			mt_format__human(a, site->procs[i].bytes), site->procs[i].allocations,
			mt_plural__of(site->procs[i].allocations, "block", "blocks"));
		mt_text__put(f, p->exe[0] ? p->exe : "?");
		fputs(")\n", f);
	}
}

/* The first top of a ranking of n. */
static size_t ranked(size_t n, size_t top)
{
	return n < top ? n : top;
}

int mt_sites__peak_text(FILE *f, const struct mt_sites *sites, size_t top)
{
	size_t i, n = ranked(sites->npeak, top);
	uint64_t total = sites->totals.peak_bytes;
	const struct mt_site *site;
	char a[2 * MT_HUMAN_MAX];

	if (!sites->any || !n)
		return ferror(f) ? -EIO : 0;
	fprintf(f, "\ntop sites at peak (%zu of %zu %s; %s live at %.6f s):\n", n, sites->count,
		mt_plural__of(sites->count, "site", "sites"), mt_format__size(a, total), sites->peak_ts_ns / 1e9);
	for (i = 0; i < n; i++) {
		site = &sites->sites[sites->by_peak[i]];
		fprintf(f, "  #%-3zu %s in %" PRIu64 " %s (%.1f%%)\n", i + 1, mt_format__size(a, site->peak_bytes),
			site->peak_allocations, mt_plural__of(site->peak_allocations, "block", "blocks"),
			total ? 100.0 * site->peak_bytes / total : 0.0);
		text_site_procs(f, sites, site);
		mt_format__frames_text(f, site, false);
	}
	return ferror(f) ? -EIO : 0;
}

int mt_sites__temporary_text(FILE *f, const struct mt_sites *sites, size_t top)
{
	size_t i, with = sites->ntemporary, n = ranked(with, top);
	const struct mt_stack_counts *t = &sites->totals;
	const struct mt_site *site;
	char a[2 * MT_HUMAN_MAX];

	fprintf(f, "\ntemporary allocations: %" PRIu64 " of %" PRIu64 " %s (%.1f%%), %s\n", t->temporary_allocations,
		t->allocations, mt_plural__of(t->allocations, "allocation", "allocations"),
		t->allocations ? 100.0 * t->temporary_allocations / t->allocations : 0.0,
		mt_format__size(a, t->temporary_bytes));
	if (!sites->any || !n)
		return ferror(f) ? -EIO : 0;
	fprintf(f, "top temporary sites (%zu of %zu %s with temporary allocations):\n", n, with,
		mt_plural__of(with, "site", "sites"));
	for (i = 0; i < n; i++) {
		site = &sites->sites[sites->by_temporary[i]];
		fprintf(f, "  #%-3zu %" PRIu64 " temporary of %" PRIu64 " %s, %s\n", i + 1, site->temporary_allocations,
			site->count, mt_plural__of(site->count, "allocation", "allocations"),
			mt_format__size(a, site->temporary_bytes));
		mt_format__frames_text(f, site, false);
	}
	return ferror(f) ? -EIO : 0;
}

int mt_sites__mapped_text(FILE *f, const struct mt_sites *sites, size_t top)
{
	size_t i, n = sites->nmapped < top ? sites->nmapped : top;
	char a[2 * MT_HUMAN_MAX], b[2 * MT_HUMAN_MAX], c[2 * MT_HUMAN_MAX];
	const struct mt_site *site;

	if (!sites->any || !n)
		return ferror(f) ? -EIO : 0;
	fprintf(f, "\ntop sites by mapped bytes (%zu of %zu %s with program mappings; %s mapped at their peak):\n",
		n, sites->nmapped, mt_plural__of(sites->nmapped, "site", "sites"),
		mt_format__size(a, sites->mapped_peak_bytes));
	for (i = 0; i < n; i++) {
		site = sites->by_mapped[i];
		fprintf(f, "  #%-3zu %s mapped in %" PRIu64 " %s, %s at the peak, %s unmapped\n", i + 1,
			mt_format__size(a, site->mapped->bytes), site->mapped->calls,
			mt_plural__of(site->mapped->calls, "call", "calls"), mt_format__size(b, site->mapped->peak_bytes),
			mt_format__size(c, site->mapped->unmapped_bytes));
		mt_format__frames_text(f, site, false);
	}
	return ferror(f) ? -EIO : 0;
}

static void json_mapped(struct mt_json *j, const struct mt_sites *sites, size_t top)
{
	size_t i, n = sites->nmapped < top ? sites->nmapped : top;
	const struct mt_site *site;

	mt_json__kv_u64(j, "mapped_peak_bytes", sites->mapped_peak_bytes);
	mt_json__key(j, "sites_by_mapped");
	mt_json__begin_array(j);
	for (i = 0; i < n; i++) {
		site = sites->by_mapped[i];
		mt_json__begin_object(j);
		mt_json__kv_u64(j, "mapped_bytes", site->mapped->bytes);
		mt_json__kv_u64(j, "mapping_calls", site->mapped->calls);
		mt_json__kv_u64(j, "inherited_bytes", site->mapped->inherited_bytes);
		mt_json__kv_u64(j, "unmapped_bytes", site->mapped->unmapped_bytes);
		mt_json__kv_u64(j, "discarded_bytes", site->mapped->discarded_bytes);
		mt_json__kv_u64(j, "exited_bytes", site->mapped->exited_bytes);
		mt_json__kv_u64(j, "live_bytes", site->mapped->live_bytes);
		mt_json__kv_u64(j, "peak_bytes", site->mapped->peak_bytes);
		mt_sites__json_frame_keys(j, site);
		mt_json__end_object(j);
	}
	mt_json__end_array(j);
}

static void json_ranked(struct mt_json *j, const char *key, const struct mt_sites *sites, const uint32_t *v, size_t n)
{
	size_t i;

	mt_json__key(j, key);
	mt_json__begin_array(j);
	for (i = 0; i < n; i++)
		mt_sites__json_site(j, sites, &sites->sites[v[i]], true);
	mt_json__end_array(j);
}

void mt_sites__json_sections(struct mt_json *j, const struct mt_sites *sites, size_t top)
{
	mt_json__kv_u64(j, "peak_live_bytes", sites->totals.peak_bytes);
	mt_json__kv_u64(j, "peak_ts_ns", sites->peak_ts_ns);
	json_ranked(j, "sites_at_peak", sites, sites->by_peak, ranked(sites->npeak, top));
	mt_json__kv_u64(j, "temporary_allocations", sites->totals.temporary_allocations);
	mt_json__kv_u64(j, "temporary_bytes", sites->totals.temporary_bytes);
	json_ranked(j, "sites_by_temporary", sites, sites->by_temporary, ranked(sites->ntemporary, top));
	json_mapped(j, sites, top);
}
