// SPDX-License-Identifier: GPL-2.0-only
/* stacks.c — one pass over an artifact: stacks resolved with the mappings of their moment, accounted per stack. */
/*
 * The accounting is src/model's, record by record (src/stacks/stack_heap.c); DWARF chains (a hook's, or an index of
 * DIR/unwind.mtz: which one is load.c's choice) are preferred over FP chains; symbols are looked up lazily and cached.
 */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "common/array.h"
#include "common/log.h"
#include "model/model.h"
#include "model/replay.h"
#include "stacks/stacks.h"

#define FP_AT_MAX 2		/* mt_stack.truncated: the kernel's walk stopped at MT_FP_MAX words */

struct sym_cache_ent {
	const struct mt_module *mod;
	uint64_t vaddr;
	struct mt_sym sym;
};

struct mt_stacks {
	char *dir;
	struct mt_stacks_opts opts;
	struct mt_modules *mods;
	struct mt_aspaces spaces;
	struct mt_replay *replay;	/* the model, record by record (NULL with chains_only) */
	struct mt_reorder *reorder;	/* chains_only: the time order without the model */
	struct mt_stack_heap *heap;	/* the accounting by stack (NULL with chains_only) */
	struct mt_stack_mapped_books *mapped;	/* the program's mappings by stack (NULL with chains_only) */
	struct mt_model *model;		/* opts.keep_model: the replay's, once finished */

	struct mt_stack_entry *entries;
	size_t count;
	size_t cap;
	bool any;
	bool has_dwarf;
	bool has_kernel;	/* some stack's chosen chain is the kernel's CFI walk */

	struct mt_frame *ftab;		/* the distinct frames, by id; 0: the all-zero one */
	size_t nftab, cap_ftab;
	struct mt_u64map by_frame;	/* frame_key (the next key after a collision) → id */
	uint32_t *pool;			/* the chains: frame ids, each chain's in a row (an entry's handles index it) */
	size_t npool, cap_pool;

	struct mt_stack_dwarf *dw;	/* the DWARF results' extras, by entry dwarf_info */
	size_t ndw, cap_dw;
	uint64_t (*supp)[2];		/* by entry: what suppressions took (allocations, bytes); NULL before any */
	uint32_t *hash_index;		/* entry index + 1 by hash, open addressing (0: free): the load's, then
					 * mt_stacks__index_hashes' (NULL between) */
	size_t hash_mask;		/* hash_index's slots - 1 */

	struct sym_cache_ent *syms;
	size_t nsyms;
	size_t cap_syms;
	struct mt_u64map sym_index;	/* sym_key → index in syms */
};

/* ---- the stack table ---- */

/* Where hash's entry is in s->hash_index, or the free slot where it goes. */
static size_t hash_slot(const struct mt_stacks *s, uint64_t hash)
{
	size_t i = (hash ^ hash >> 32) & s->hash_mask;

	while (s->hash_index[i] && s->entries[s->hash_index[i] - 1].hash != hash)
		i = (i + 1) & s->hash_mask;
	return i;
}

/* s->hash_index made again, n slots (a power of two) for the entries so far. 0 or -ENOMEM. */
static int hash_rebuild(struct mt_stacks *s, size_t n)
{
	uint32_t *slots = calloc(n, sizeof(*slots));
	size_t i;

	if (!slots)
		return -ENOMEM;
	free(s->hash_index);
	s->hash_index = slots;
	s->hash_mask = n - 1;
	for (i = 0; i < s->count; i++)
		s->hash_index[hash_slot(s, s->entries[i].hash)] = (uint32_t)i + 1;
	return 0;
}

/* hash's entry, a new one (zero but its hash) when none yet; NULL on ENOMEM. */
static struct mt_stack_entry *entry_get(struct mt_stacks *s, uint64_t hash, size_t *idx)
{
	size_t slots = s->hash_index ? s->hash_mask + 1 : 0, i;
	struct mt_stack_entry *e;

	if (slots && s->hash_index[i = hash_slot(s, hash)]) {
		*idx = s->hash_index[i] - 1;
		return &s->entries[*idx];
	}
	/* at most half full, as mt_stacks__index_hashes makes it */
	if (s->count >= UINT32_MAX - 1 ||
	    mt_array__grow((void **)&s->entries, &s->cap, s->count, sizeof(*s->entries)) ||
	    ((s->count + 1) * 2 > slots && hash_rebuild(s, slots ? 2 * slots : 64)))
		return NULL;
	e = &s->entries[s->count];
	memset(e, 0, sizeof(*e));
	e->hash = hash;
	s->hash_index[hash_slot(s, hash)] = (uint32_t)s->count + 1;
	*idx = s->count++;
	return e;
}

/*
 * A return address is looked up at addr - 1: a call that ends its mapping returns just past it. False when addr lies
 * in no executable mapping of the process: then it cannot be a return address.
 */
static bool frame_resolve(struct mt_frame *f, uint64_t addr, struct mt_aspace *as)
{
	const struct mt_map *m = mt_aspace__find(as, addr - 1);

	memset(f, 0, sizeof(*f));
	f->addr = addr;
	f->mod = m ? m->mod : NULL;
	f->has_vaddr = m && m->has_bias;
	/* without the file there is no bias: the offset in the file is still worth printing */
	f->vaddr = f->has_vaddr ? addr - m->bias : m ? addr - m->start + m->pgoff : 0;
	return m && (m->prot & PROT_EXEC);
}

static uint64_t frame_key(const struct mt_frame *f)
{
	uint64_t h = f->addr * 0x9e3779b97f4a7c15ull;

	h ^= (f->vaddr + (uintptr_t)f->mod) * 0xc2b2ae3d27d4eb4full;
	h ^= (uint64_t)f->has_vaddr << 1 | (uint64_t)f->truncated << 2 | (uint64_t)f->stop << 8;
	return h ^ h >> 29;
}

static bool frame_same(const struct mt_frame *a, const struct mt_frame *b)
{
	return a->addr == b->addr && a->mod == b->mod && a->vaddr == b->vaddr && a->has_vaddr == b->has_vaddr &&
	       a->truncated == b->truncated && a->stop == b->stop;
}

/* The id of f in the frame table, added when it is new; -ENOMEM. */
static int64_t frame_intern(struct mt_stacks *s, const struct mt_frame *f)
{
	uint64_t key = frame_key(f), *id;

	while ((id = mt_u64map__find(&s->by_frame, key))) {
		if (frame_same(&s->ftab[*id], f))
			return (int64_t)*id;
		key++;	/* another frame has this key: the next one is f's */
	}
	if (s->nftab >= UINT32_MAX ||
	    mt_array__grow((void **)&s->ftab, &s->cap_ftab, s->nftab, sizeof(*s->ftab)) ||
	    mt_u64map__put(&s->by_frame, key, s->nftab, NULL) < 0)
		return -ENOMEM;
	s->ftab[s->nftab] = *f;
	return (int64_t)s->nftab++;
}

/* Room for a chain of n frames and one more (a stop or [truncated] frame), all the zero frame: its handle. */
static int64_t chain_new(struct mt_stacks *s, size_t n)
{
	size_t at = s->npool;

	while (s->npool + n + 1 > s->cap_pool)
		if (mt_array__grow((void **)&s->pool, &s->cap_pool, s->cap_pool, sizeof(*s->pool)))
			return -ENOMEM;
	if (at + n + 1 > UINT32_MAX)
		return -ENOMEM;
	memset(s->pool + at, 0, (n + 1) * sizeof(*s->pool));
	s->npool += n + 1;
	return (int64_t)at;
}

/*
 * The return addresses resolved into a new chain, with a spare slot for a [truncated] frame. With justify (FP chains)
 * the chain ends before the first word in no executable mapping: a frame without a frame pointer left rbp pointing at
 * data, and what the walk read from there on is not a chain. *n becomes the frames kept; *chain the handle.
 */
static int chain_resolve(struct mt_stacks *s, const __u64 *addrs, uint16_t *n, struct mt_aspace *as, bool justify,
			 uint32_t *chain)
{
	int64_t at = chain_new(s, *n), id;
	struct mt_frame f;
	uint16_t i;

	if (at < 0)
		return (int)at;
	for (i = 0; i < *n; i++) {
		if (!frame_resolve(&f, addrs[i], as) && justify)
			break;
		id = frame_intern(s, &f);
		if (id < 0)
			return (int)id;
		s->pool[at + i] = (uint32_t)id;
	}
	s->npool = (size_t)at + i + 1;	/* what justify left out goes back */
	*n = i;
	*chain = (uint32_t)at;
	return 0;
}

/*
 * The chain just made (the pool's last) given back when it is the same as another of the entry's, whose handle it
 * takes: where frame pointers are kept the kernel's CFI chain is the FP chain, and a million stacks hold both. The
 * other's spare slot is then this one's too, which only the chosen chain uses (entry_mark_cut).
 */
static void chain_share(struct mt_stacks *s, uint32_t other, uint16_t nother, uint32_t *chain, uint16_t n)
{
	if (n != nother || *chain == other || *chain + (size_t)n + 1 != s->npool ||
	    memcmp(s->pool + *chain, s->pool + other, n * sizeof(*s->pool)))
		return;
	s->npool = *chain;
	*chain = other;
}

/* One frame resolved and interned: *id. */
static int frame_resolve_id(struct mt_stacks *s, uint64_t addr, struct mt_aspace *as, uint32_t *id)
{
	struct mt_frame f;
	int64_t got;

	frame_resolve(&f, addr, as);
	got = frame_intern(s, &f);
	if (got < 0)
		return (int)got;
	*id = (uint32_t)got;
	return 0;
}

const struct mt_frame *mt_stacks__frame(const struct mt_stacks *s, uint32_t chain, size_t i)
{
	return &s->ftab[s->pool[chain + i]];
}

const uint32_t *mt_stacks__chain(const struct mt_stacks *s, uint32_t chain)
{
	return s->pool + chain;
}

uint32_t mt_stacks__frame_ref(const struct mt_stacks *s, uint32_t chain, size_t i)
{
	return s->pool[chain + i];
}

const struct mt_frame *mt_stacks__frame_id(const struct mt_stacks *s, uint32_t id)
{
	return &s->ftab[id < s->nftab ? id : 0];
}

size_t mt_stacks__nr_frames(const struct mt_stacks *s)
{
	return s->nftab;
}

/* The chosen chain's spare slot (after nframes) gets f: a stop or [truncated] frame. */
static int entry_append(struct mt_stacks *s, struct mt_stack_entry *e, const struct mt_frame *f)
{
	int64_t id = frame_intern(s, f);

	if (id < 0)
		return (int)id;
	s->pool[e->frames + e->nframes++] = (uint32_t)id;
	return 0;
}

/* The capture budget cut the chosen chain: it ends in a [truncated] frame, in the slot its chain keeps for one. */
static int entry_mark_cut(struct mt_stacks *s, struct mt_stack_entry *e)
{
	struct mt_frame f;
	bool cut;

	if (e->kind == MT_CHAIN_KERNEL) {	/* a walk that stopped early says why, and where */
		if (e->kstop == MT_KSTOP_END)
			return 0;
		f = s->ftab[e->kstop_at];
		f.truncated = true;
		f.stop = e->kstop ? e->kstop : MT_KSTOP_READ;
		return entry_append(s, e, &f);
	}
	if (e->kind == MT_CHAIN_DWARF)
		cut = e->dwarf_stop == MT_STOP_BUDGET || e->dwarf_stop == MT_STOP_MAX_FRAMES;
	else
		cut = (e->truncated & FP_AT_MAX) && !e->fp_broken;
	if (!cut)
		return 0;
	return entry_append(s, e, &(struct mt_frame){ .truncated = true });
}

/*
 * DWARF over FP; but when DWARF stopped early and the FP chain agrees with every frame DWARF found, the FP chain's
 * longer tail is the better guess for the rest.
 */
static void entry_choose(const struct mt_stacks *s, struct mt_stack_entry *e)
{
	uint16_t i, n = e->ndwarf;

	e->kind = MT_CHAIN_FP;
	e->frames = e->fp;
	e->nframes = e->nfp;
	if (e->has_kchain) {
		e->kind = MT_CHAIN_KERNEL;
		e->frames = e->kchain;
		e->nframes = e->nk;
		return;
	}
	/*
	 * A caller with a uretprobe pending (another tool's) returns to the kernel's trampoline, in no mapping: the
	 * kernel's walk put the real return address in the FP chain, so DWARF's last frame is not one.
	 */
	if (e->dwarf_stop == MT_STOP_NO_MODULE && n && !mt_stacks__frame(s, e->dwarf, n - 1)->mod && n <= e->nfp &&
	    mt_stacks__frame(s, e->fp, n - 1)->addr != mt_stacks__frame(s, e->dwarf, n - 1)->addr)
		n--;
	if (!e->has_dwarf || !n)
		return;
	e->kind = MT_CHAIN_DWARF;
	e->frames = e->dwarf;
	e->nframes = n;
	if (e->dwarf_stop == MT_STOP_END || e->nfp <= n)
		return;
	for (i = 0; i < n; i++)
		if (mt_stacks__frame(s, e->fp, i)->addr != mt_stacks__frame(s, e->dwarf, i)->addr)
			return;
	e->kind = MT_CHAIN_DWARF_FP;
	e->frames = e->fp;
	e->nframes = e->nfp;
}

static int entry_set_dwarf(struct mt_stacks *s, struct mt_stack_entry *e, const struct mt_unwind_rec *u,
			   struct mt_aspace *as)
{
	const char *detail = mt_unwind_rec__detail(u);
	size_t nbits = (u->nframes + 7) / 8;
	struct mt_stack_dwarf *d;
	int err;

	if (!detail)
		return 0;	/* malformed: as if there were no DWARF result */
	e->ndwarf = u->nframes;
	err = chain_resolve(s, mt_unwind_rec__frames(u), &e->ndwarf, as, false, &e->dwarf);
	if (err)
		return err;
	chain_share(s, e->fp, e->nfp, &e->dwarf, e->ndwarf);
	if (s->ndw >= UINT32_MAX || mt_array__grow((void **)&s->dw, &s->cap_dw, s->ndw, sizeof(*s->dw)))
		return -ENOMEM;
	d = &s->dw[s->ndw];
	*d = (struct mt_stack_dwarf){ .error = u->error };
	d->detail = detail[0] ? strdup(detail) : "";	/* most have none: not one allocation each */
	if (u->nofp_known && nbits && (d->nofp = malloc(nbits)))
		memcpy(d->nofp, mt_unwind_rec__nofp(u), nbits);
	if (!d->detail || (u->nofp_known && nbits && !d->nofp)) {
		free(d->nofp);
		return -ENOMEM;
	}
	e->dwarf_info = (uint32_t)s->ndw++;
	e->has_dwarf = true;
	e->dwarf_stop = u->reason;
	return 0;
}

static const struct mt_unwind_rec *stack_dwarf(struct mt_stacks *s, const struct mt_stack *rec, struct mt_aspace *as,
					       int *err)
{
	*err = 0;
	if (s->opts.hook)
		return s->opts.hook(s->opts.hook_ctx, rec, rec->hdr.size, as, err);
	return mt_unwind_index__find(s->opts.dwarf, rec->hash);
}

/* The kernel's CFI chain after the raw bytes, when the definition has one (and it fits the record). */
static int entry_set_kchain(struct mt_stacks *s, struct mt_stack_entry *e, const struct mt_stack *rec,
			    struct mt_aspace *as)
{
	size_t at = sizeof(*rec) + (size_t)rec->nfp * 8 + rec->nbytes;
	const struct mt_kchain *k = (const void *)((const uint8_t *)rec + at);
	int err;

	if (!(rec->flags & MT_STACK_F_KCHAIN) || rec->hdr.size < at + sizeof(*k) ||
	    rec->hdr.size < at + sizeof(*k) + (size_t)k->n * 8)
		return 0;
	e->nk = k->n;
	err = chain_resolve(s, (const __u64 *)(k + 1), &e->nk, as, false, &e->kchain);
	if (err)
		return err;
	chain_share(s, e->fp, e->nfp, &e->kchain, e->nk);
	e->has_kchain = true;
	e->kstop = k->stop;
	e->kfp_frames = k->fp_frames;
	if (k->stop_pc)
		err = frame_resolve_id(s, k->stop_pc, as, &e->kstop_at);
	if (!err && k->fp_pc)
		err = frame_resolve_id(s, k->fp_pc, as, &e->kfp_at);
	return err;
}

static int apply_stack(struct mt_stacks *s, const struct mt_stack *rec)
{
	struct mt_aspace *as = mt_aspaces__get(&s->spaces, rec->hdr.pid);
	const struct mt_unwind_rec *u;
	struct mt_stack_entry *e;
	size_t idx;
	int err;

	if (rec->hdr.size < sizeof(*rec) + (size_t)rec->nfp * 8 + rec->nbytes)
		return 0;	/* malformed */
	e = entry_get(s, rec->hash, &idx);
	if (!e)
		return -ENOMEM;
	s->any = true;
	if (e->defined)
		return 0;	/* defined again after an eviction in the kernel: the first definition stands */
	e->defined = true;
	e->pid = rec->hdr.pid;
	e->ts_ns = rec->hdr.ts_ns;
	e->truncated = rec->truncated;
	e->nfp = rec->nfp;
	err = chain_resolve(s, (const __u64 *)(rec + 1), &e->nfp, as, true, &e->fp);
	if (err)
		return err;
	e->fp_broken = e->nfp < rec->nfp;
	err = s->opts.fp_chains ? 0 : entry_set_kchain(s, e, rec, as);
	if (err)
		return err;
	u = stack_dwarf(s, rec, as, &err);
	if (err)
		return err;
	if (u) {
		err = entry_set_dwarf(s, e, u, as);
		if (err)
			return err;
	}
	entry_choose(s, e);
	err = entry_mark_cut(s, e);
	if (err)
		return err;
	s->has_dwarf |= e->kind == MT_CHAIN_DWARF || e->kind == MT_CHAIN_DWARF_FP;
	s->has_kernel |= e->kind == MT_CHAIN_KERNEL;
	return 0;
}

/* ---- records, in time order ---- */

/* The stack a record names, and for what (MT_STACK_NAMED_*): 0 for none. */
static uint64_t record_stack(const struct mt_rec_hdr *rec, uint8_t *named)
{
	const struct mt_alloc *a = (const void *)rec;
	const struct mt_syscall *c = (const void *)rec;

	*named = rec->type == MT_REC_ALLOC ? MT_STACK_NAMED_ALLOC : MT_STACK_NAMED_MAP;
	if (rec->type == MT_REC_ALLOC && rec->size >= sizeof(*a) && !mt_func__is_free(a->func))
		return a->stack;
	if (rec->type == MT_REC_SYSCALL && rec->size >= sizeof(*c))
		return c->stack;
	return 0;
}

/* m: the model that has just accounted rec (NULL with chains_only: nothing is accounted). */
static int apply_record(struct mt_stacks *s, const struct mt_rec_hdr *rec, const struct mt_model *m)
{
	uint64_t hash;
	uint32_t stack = 0;
	uint8_t named;
	size_t idx;
	int err;

	err = mt_aspaces__apply(&s->spaces, rec);
	if (err)
		return err;
	if (rec->type == MT_REC_STACK)
		return rec->size >= sizeof(struct mt_stack) ? apply_stack(s, (const struct mt_stack *)rec) : 0;
	hash = record_stack(rec, &named);
	if (hash && (m || mt_stacks__find(s, hash) != SIZE_MAX)) {	/* chains_only: the defined ones */
		if (!entry_get(s, hash, &idx))
			return -ENOMEM;
		s->entries[idx].named |= named;
		stack = named == MT_STACK_NAMED_ALLOC ? idx + 1 : 0;
	}
	if (!m)
		return 0;
	err = mt_stack_mapped__apply(s->mapped, rec);
	if (err)
		return err;
	if (s->opts.observe) {
		err = s->opts.observe(s->opts.observe_ctx, s, mt_replay__rel_ts(s->replay, rec->ts_ns));
		if (err)
			return err;
	}
	return mt_stack_heap__apply(s->heap, rec, stack, m, mt_replay__rel_ts(s->replay, rec->ts_ns));
}

static int chain_record(const struct mt_rec_hdr *rec, void *ctx)
{
	return apply_record(ctx, rec, NULL);
}

static int replay_record(const struct mt_rec_hdr *rec, const struct mt_replay *r, void *ctx)
{
	return apply_record(ctx, rec, mt_replay__model(r));
}

/* ---- loading ---- */

char *mt_stacks__dir_of(const char *path)
{
	struct stat sb;
	char *copy, *dir;

	if (stat(path, &sb) || S_ISDIR(sb.st_mode))
		return strdup(path);
	copy = strdup(path);
	if (!copy)
		return NULL;
	dir = strdup(dirname(copy));
	free(copy);
	return dir;
}

static int load_one(struct mt_stacks *s, const struct mt_rec_hdr *rec)
{
	return s->replay ? mt_replay__push(s->replay, rec) : mt_reorder__push(s->reorder, rec);
}

/* Without a hook nothing reads the raw stack bytes: the window then holds definitions without them. */
static int load_push(const struct mt_rec_hdr *rec, void *ctx)
{
	struct mt_stacks *s = ctx;
	const struct mt_stack *st = (const void *)rec;
	union {
		struct mt_stack st;
		__u64 words[(sizeof(struct mt_stack) + MT_FP_MAX * 8 + sizeof(struct mt_kchain)) / 8 + MT_KCHAIN_MAX + 1];
	} copy;
	size_t fixed, tail;

	if (s->opts.hook || rec->type != MT_REC_STACK || rec->size < sizeof(*st) || st->nfp > MT_FP_MAX)
		return load_one(s, rec);
	fixed = sizeof(*st) + (size_t)st->nfp * 8;
	if (rec->size < fixed + st->nbytes)
		return load_one(s, rec);	/* malformed: apply_stack skips it */
	tail = rec->size - fixed - st->nbytes;	/* the kernel's CFI chain, kept */
	if (tail > sizeof(copy) - fixed)
		tail = 0;
	memcpy(&copy, rec, fixed);
	memcpy((uint8_t *)&copy + fixed, (const uint8_t *)rec + fixed + st->nbytes, tail);
	copy.st.hdr.size = fixed + tail;
	copy.st.nbytes = 0;
	return load_one(s, &copy.st.hdr);
}

static struct mt_stacks *stacks_new(const char *path, const struct mt_stacks_opts *opts)
{
	struct mt_stacks *s = calloc(1, sizeof(*s));
	bool ok;

	if (!s)
		return NULL;
	if (opts)
		s->opts = *opts;
	s->dir = mt_stacks__dir_of(path);
	s->mods = s->dir ? mt_modules__new(s->dir) : NULL;
	if (s->opts.chains_only) {
		s->reorder = mt_reorder__new(MT_REORDER_WINDOW, chain_record, s);
		ok = s->reorder;
	} else {
		s->mapped = mt_stack_mapped__new();
		s->replay = mt_replay__new_with(replay_record, s, &(struct mt_model_opts){
			.filter = s->opts.filter, .leak_sites = s->opts.keep_model,
			.mapped_note = mt_stack_mapped__note, .mapped_ctx = s->mapped });
		s->heap = mt_stack_heap__new();
		ok = s->replay && s->heap && s->mapped;
		if (ok)
			mt_stack_heap__set_filter(s->heap, s->opts.filter);
		if (ok && !s->opts.heap_counts)	/* no cells read after the load */
			mt_stack_heap__shed(s->heap);
	}
	if (!ok || !s->mods) {
		mt_stacks__free(s);
		return NULL;
	}
	mt_aspaces__init(&s->spaces, s->mods);
	if (frame_intern(s, &(struct mt_frame){ 0 }) < 0) {	/* id 0, what an entry's frame ids start as */
		mt_stacks__free(s);
		return NULL;
	}
	return s;
}

/* Every record out of the window; with the model, the leaks at the end and each stack's counts. */
static int stacks_finish(struct mt_stacks *s)
{
	int err;

	if (!s->replay)
		return mt_reorder__flush(s->reorder);
	err = mt_replay__finish(s->replay);
	/* only the records named stacks by hash, and the model has delivered them all: it goes before the heap's
	 * end (mt_stacks__index_hashes makes it again for those who look hashes up after the load) */
	free(s->hash_index);
	s->hash_index = NULL;
	if (!err)
		err = mt_stack_mapped__finish(s->mapped);
	if (!err)
		err = mt_stack_heap__finish(s->heap, mt_replay__model(s->replay));
	if (!err && s->opts.keep_model)
		s->model = mt_replay__take_model(s->replay);
	mt_replay__free(s->replay);	/* stack_heap kept what it needs of the model */
	s->replay = NULL;
	return err;
}

int mt_stacks__read(const char *path, const struct mt_stacks_opts *opts, struct mt_stacks **out,
		    struct mt_read_status *st)
{
	struct mt_read_status local;
	struct mt_stacks *s;
	int err, ferr;

	*out = NULL;
	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	s = stacks_new(path, opts);
	if (!s) {
		snprintf(st->reason, sizeof(st->reason), "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	err = mt_artifact__read(path, load_push, s, st);
	if (err && err != -EBADMSG)
		goto err_free;
	ferr = stacks_finish(s);
	if (ferr) {
		err = ferr;
		goto err_free;
	}
	*out = s;
	return err;

err_free:
	mt_stacks__free(s);
	if (!st->reason[0])
		snprintf(st->reason, sizeof(st->reason), "%s", strerror(-err));
	return err;
}

struct mt_model *mt_stacks__take_model(struct mt_stacks *s)
{
	struct mt_model *m = s->model;

	s->model = NULL;
	return m;
}

void mt_stacks__free(struct mt_stacks *s)
{
	size_t i;

	if (!s)
		return;
	mt_model__free(s->model);
	mt_replay__free(s->replay);
	mt_reorder__free(s->reorder);
	mt_stack_heap__free(s->heap);
	mt_stack_mapped__free(s->mapped);
	for (i = 0; i < s->ndw; i++) {
		free(s->dw[i].nofp);
		if (s->dw[i].detail[0])
			free((char *)s->dw[i].detail);
	}
	free(s->dw);
	free(s->supp);
	free(s->hash_index);
	free(s->entries);
	free(s->ftab);
	mt_u64map__release(&s->by_frame);
	free(s->pool);
	free(s->syms);
	mt_u64map__release(&s->sym_index);
	mt_aspaces__release(&s->spaces);
	mt_modules__free(s->mods);
	free(s->dir);
	free(s);
}

bool mt_stacks__any(const struct mt_stacks *s)
{
	return s->any;
}

/* Stops the read at the first stack definition (1) or allocation without a stack (2). */
static int probe_stop(const struct mt_rec_hdr *rec, void *ctx)
{
	const struct mt_alloc *a = (const void *)rec;

	(void)ctx;
	if (rec->type == MT_REC_STACK)
		return 1;
	return rec->type == MT_REC_ALLOC && rec->size >= sizeof(*a) && !a->stack ? 2 : 0;
}

int mt_stacks__probe(const char *path)
{
	struct mt_read_status st;
	int err = mt_artifact__read(path, probe_stop, NULL, &st);

	return err == 1 ? 1 : err == 2 || !err || err == -EBADMSG ? 0 : err;
}

/* Stops the read at the first stack definition: mt_artifact__read hands back the 1. */
static int require_stop(const struct mt_rec_hdr *rec, void *ctx)
{
	(void)ctx;
	return rec->type == MT_REC_STACK;
}

int mt_stacks__require(const char *path, const char *cmd, struct mt_read_status *st)
{
	struct mt_read_status local;
	int err = mt_artifact__read(path, require_stop, NULL, st ? st : &local);

	if (err == 1)
		return 0;
	if (err && err != -EBADMSG)
		return err;
	pr_err("%s: %s has no allocation stacks: record them with `memtrack record --stacks -o DIR -- COMMAND`\n", cmd,
	       path);
	return -ENODATA;
}

bool mt_stacks__has_dwarf(const struct mt_stacks *s)
{
	return s->has_dwarf;
}

const char *mt_stacks__chains(const struct mt_stacks *s)
{
	return s->has_kernel ? "in-kernel CFI" : s->has_dwarf ? "DWARF" : "frame-pointer";
}

const char *mt_stacks__chains_key(const struct mt_stacks *s)
{
	return s->has_kernel ? "kernel" : s->has_dwarf ? "dwarf" : "fp";
}

const struct mt_stack_heap *mt_stacks__heap(const struct mt_stacks *s)
{
	return s->heap;
}

const struct mt_stack_mapped_books *mt_stacks__mapped(const struct mt_stacks *s)
{
	return s->mapped;
}

size_t mt_stacks__count(const struct mt_stacks *s)
{
	return s->count;
}

const struct mt_stack_entry *mt_stacks__entry(const struct mt_stacks *s, size_t idx)
{
	return idx < s->count ? &s->entries[idx] : NULL;
}

struct mt_modules *mt_stacks__modules(const struct mt_stacks *s)
{
	return s->mods;
}

void mt_stacks__suppress(struct mt_stacks *s, size_t idx)
{
	struct mt_stack_counts c;

	if (idx >= s->count || !s->heap)
		return;
	if (!s->supp && !(s->supp = calloc(s->count, sizeof(*s->supp)))) {
		pr_err("memtrack: suppressions: %s\n", strerror(ENOMEM));
		return;	/* the leaks stay unsuppressed */
	}
	mt_stack_heap__counts(s->heap, (uint32_t)idx + 1, &c);	/* the heap's are never suppressed */
	s->supp[idx][0] = c.leaked_allocations;
	s->supp[idx][1] = c.leaked_bytes;
}

void mt_stacks__counts(const struct mt_stacks *s, const struct mt_stack_entry *e, struct mt_stack_counts *out)
{
	size_t idx = (size_t)(e - s->entries);

	if (!s->heap) {
		memset(out, 0, sizeof(*out));
		return;
	}
	mt_stack_heap__counts(s->heap, (uint32_t)idx + 1, out);
	if (s->supp) {
		out->leaked_allocations -= s->supp[idx][0];
		out->leaked_bytes -= s->supp[idx][1];
	}
}

void mt_stacks__suppressed(const struct mt_stacks *s, const struct mt_stack_entry *e, uint64_t *allocations,
			   uint64_t *bytes)
{
	size_t idx = (size_t)(e - s->entries);

	*allocations = s->supp ? s->supp[idx][0] : 0;
	*bytes = s->supp ? s->supp[idx][1] : 0;
}

/*
 * A hash table of 32-bit indexes that compares the entries' hashes: sorting (hash, index) pairs made three times the
 * table's size for a moment, at the report's peak.
 */
int mt_stacks__index_hashes(struct mt_stacks *s)
{
	size_t n;

	if (s->hash_index || !s->count)
		return 0;
	if (s->count >= UINT32_MAX)
		return -ENOMEM;
	for (n = 2; n < 2 * s->count; n <<= 1)
		;
	return hash_rebuild(s, n);
}

size_t mt_stacks__find(const struct mt_stacks *s, uint64_t hash)
{
	size_t i;

	if (!s->hash_index)
		return SIZE_MAX;
	i = hash_slot(s, hash);
	return s->hash_index[i] ? s->hash_index[i] - 1 : SIZE_MAX;
}

const struct mt_stack_mapped *mt_stacks__mapped_of(const struct mt_stacks *s, const struct mt_stack_entry *e)
{
	static const struct mt_stack_mapped none;
	const struct mt_stack_mapped *c = mt_stack_mapped__counts(s->mapped, e->hash);

	return c ? c : &none;
}

const struct mt_stack_dwarf *mt_stacks__dwarf_of(const struct mt_stacks *s, const struct mt_stack_entry *e)
{
	return e->has_dwarf && e->dwarf_info < s->ndw ? &s->dw[e->dwarf_info] : NULL;
}

/* ---- symbols ---- */

static void sym_lookup(struct mt_module *mod, uint64_t vaddr, struct mt_sym *out)
{
	const struct mt_symbol *sym = mt_module__symbol(mod, vaddr - 1);

	if (sym) {
		out->func = sym->name;
		out->offset = vaddr - sym->addr;
	}
	if (mt_module__srcline(mod, vaddr - 1, &out->file, &out->line))
		out->file = NULL;
	out->comp_dir = NULL;	/* mt_module__srcline does not give the unit's DW_AT_comp_dir (yet) */
}

void mt_stacks__symbolize(struct mt_stacks *s, const struct mt_frame *f, struct mt_sym *out)
{
	uint64_t key, *idx;
	struct sym_cache_ent *c;

	memset(out, 0, sizeof(*out));
	if (!f->mod || !f->has_vaddr)
		return;
	key = f->vaddr * 0x9e3779b97f4a7c15ull ^ (uintptr_t)f->mod;
	idx = mt_u64map__find(&s->sym_index, key);
	if (idx && s->syms[*idx].mod == f->mod && s->syms[*idx].vaddr == f->vaddr) {
		*out = s->syms[*idx].sym;
		return;
	}
	sym_lookup(f->mod, f->vaddr, out);
	if (idx)
		return;		/* a key collision: not cached */
	if (s->nsyms == s->cap_syms) {
		size_t cap = s->cap_syms ? s->cap_syms * 2 : 256;

		c = realloc(s->syms, cap * sizeof(*c));
		if (!c)
			return;
		s->syms = c;
		s->cap_syms = cap;
	}
	if (mt_u64map__put(&s->sym_index, key, s->nsyms, NULL) < 0)
		return;
	s->syms[s->nsyms++] = (struct sym_cache_ent){ f->mod, f->vaddr, *out };
}

/* Why the kernel's walk ended before the stack's end, as the chain's last frame says it. */
static void frame_stop_name(const struct mt_frame *f, char *buf, size_t len)
{
	switch (f->stop) {
	case MT_KSTOP_NO_INFO:
	case MT_KSTOP_LOADING:
		if (f->mod)
			snprintf(buf, len, "[no unwind info in %s]", f->mod->name);
		else
			snprintf(buf, len, "[no unwind info]");
		break;
	case MT_KSTOP_NO_MAPPING:
		snprintf(buf, len, "[anonymous executable memory]");
		break;
	case MT_KSTOP_DEPTH:
		snprintf(buf, len, "[depth limit]");
		break;
	default:
		snprintf(buf, len, "[stack unreadable]");
		break;
	}
}

char *mt_frame__name(const struct mt_frame *f, const struct mt_sym *sym, bool with_offset, char *buf, size_t len)
{
	/* "__libc_start_main@@GLIBC_2.34": the symbol version says which alias, not which function */
	int flen = sym->func ? (int)strcspn(sym->func, "@") : 0;

	if (f->truncated && f->stop)
		frame_stop_name(f, buf, len);
	else if (f->truncated)
		snprintf(buf, len, "%s", MT_FRAME_TRUNCATED);
	else if (sym->func && with_offset)
		snprintf(buf, len, "%.*s+0x%" PRIx64, flen, sym->func, sym->offset);
	else if (sym->func)
		snprintf(buf, len, "%.*s", flen, sym->func);
	else if (f->mod && with_offset)
		snprintf(buf, len, "[%s+0x%" PRIx64 "]", f->mod->name, f->vaddr);
	else if (f->mod)
		snprintf(buf, len, "[%s]", f->mod->name);
	else if (with_offset)
		snprintf(buf, len, "[0x%" PRIx64 "]", f->addr);
	else
		snprintf(buf, len, "[unknown]");
	return buf;
}

/* The part of file under dir (n bytes, no trailing '/'), or NULL when file is not under it. */
static const char *path_under(const char *file, const char *dir, size_t n)
{
	return n && !strncmp(file, dir, n) && file[n] == '/' ? file + n + 1 : NULL;
}

char *mt_sym__srcline(const struct mt_stacks *s, const struct mt_sym *sym, char *buf, size_t len)
{
	const char *file = sym->file, *rel = NULL;
	size_t n = sym->comp_dir ? strlen(sym->comp_dir) : 0;

	if (!file)
		return NULL;
	while (n > 1 && sym->comp_dir[n - 1] == '/')
		n--;
	if (!s->opts.full_paths && sym->comp_dir)
		rel = path_under(file, sym->comp_dir, n);
	else if (!s->opts.full_paths)
		rel = strrchr(file, '/') ? strrchr(file, '/') + 1 : NULL;
	snprintf(buf, len, "%s:%d", rel ? rel : file, sym->line);
	return buf;
}
