/* sites.c — top allocation sites: the stacks of an artifact merged by their symbolized frames, ranked. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/log.h"
#include "report/report.h"
#include "report/sites.h"

#define NAME_MAX_LEN 1024	/* C++ template names run long; past this they are cut */

struct site_build {
	struct mt_sites *out;
	bool with_offset;
	size_t cap;
	struct mt_u64map by_key;	/* FNV-1a of the joined frame names → index in out->sites */
	char **keys;			/* the joined names, to tell hash collisions apart */
};

static uint64_t fnv1a(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static void site_release(struct mt_site *site)
{
	size_t i;

	for (i = 0; i < site->nframes; i++) {
		free(site->frames[i].name);
		free(site->frames[i].srcline);
	}
	free(site->frames);
}

void mt_sites__free(struct mt_sites *sites)
{
	size_t i;

	if (!sites)
		return;
	for (i = 0; i < sites->count; i++)
		site_release(&sites->sites[i]);
	free(sites->sites);
	free(sites->by_count);
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

int mt_sites__expand_frame(struct mt_stacks *s, const struct mt_frame *f, bool with_offset, mt_frame_line_fn fn,
			   void *ctx)
{
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
			fl = (struct mt_frame_line){ name, src[i].file, src[i].line, src[i].inlined };
			mt_frame__name(f, &sym, with_offset && !src[i].inlined, name, sizeof(name));
			err = fn(&fl, ctx);
			if (err)
				return err;
		}
		return 0;
	}
	mt_stacks__symbolize(s, f, &sym);
	fl = (struct mt_frame_line){ name, sym.file, sym.line, false };
	mt_frame__name(f, &sym, with_offset, name, sizeof(name));
	return fn(&fl, ctx);
}

struct frames_out {
	struct mt_site *site;
	size_t cap;
};

static int frame_add(const struct mt_frame_line *fl, void *ctx)
{
	struct frames_out *o = ctx;
	struct mt_site_frame *sf;

	if (mt_array__grow((void **)&o->site->frames, &o->cap, o->site->nframes, sizeof(*o->site->frames)))
		return -ENOMEM;
	sf = &o->site->frames[o->site->nframes];
	*sf = (struct mt_site_frame){ strdup(fl->name), srcline_text(fl->file, fl->line), fl->inlined };
	if (!sf->name || (fl->file && !sf->srcline)) {
		free(sf->name);
		free(sf->srcline);
		return -ENOMEM;
	}
	o->site->nframes++;
	return 0;
}

/* The site's frames: each return address of the entry's chain expanded into its inline chain. */
static int site_frames(struct mt_stacks *s, const struct mt_stack_entry *e, bool with_offset, struct mt_site *site)
{
	struct frames_out o = { site, 0 };
	size_t i;
	int err = 0;

	for (i = 0; !err && i < e->nframes; i++)
		err = mt_sites__expand_frame(s, &e->frames[i], with_offset, frame_add, &o);
	return err;
}

char *mt_site__key(const struct mt_site *site)
{
	size_t i, len = 1;
	char *key, *p;

	for (i = 0; i < site->nframes; i++)
		len += strlen(site->frames[i].name) + 1;
	key = malloc(len);
	if (!key)
		return NULL;
	p = key;
	for (i = 0; i < site->nframes; i++)
		p += sprintf(p, "%s\n", site->frames[i].name);
	*p = '\0';
	return key;
}

static int sites_grow(struct site_build *b)
{
	struct mt_site *sites;
	char **keys;
	size_t cap;

	if (b->out->count < b->cap)
		return 0;
	cap = b->cap ? b->cap * 2 : 64;
	sites = realloc(b->out->sites, cap * sizeof(*sites));
	if (sites)
		b->out->sites = sites;
	keys = realloc(b->keys, cap * sizeof(*keys));
	if (keys)
		b->keys = keys;
	if (!sites || !keys)
		return -ENOMEM;
	b->cap = cap;
	return 0;
}

static int sites_add(struct site_build *b, struct mt_stacks *s, const struct mt_stack_entry *e)
{
	struct mt_site site = { .bytes = e->bytes, .count = e->allocations, .leaked_bytes = e->leaked_bytes,
				.stacks = 1, .order = b->out->count };
	uint64_t h, *idx;
	char *key;
	int err;

	err = site_frames(s, e, b->with_offset, &site);
	key = err ? NULL : mt_site__key(&site);
	if (!key) {
		site_release(&site);
		return -ENOMEM;
	}
	h = fnv1a(key, strlen(key));
	idx = mt_u64map__find(&b->by_key, h);
	if (idx && !strcmp(b->keys[*idx], key)) {
		struct mt_site *t = &b->out->sites[*idx];

		t->bytes += site.bytes;
		t->count += site.count;
		t->leaked_bytes += site.leaked_bytes;
		t->stacks++;
		site_release(&site);
		free(key);
		return 0;
	}
	err = sites_grow(b);
	if (!err && !idx)	/* a collision keeps its own unindexed site */
		err = mt_u64map__put(&b->by_key, h, b->out->count, NULL) < 0 ? -ENOMEM : 0;
	if (err) {
		site_release(&site);
		free(key);
		return err;
	}
	b->keys[b->out->count] = key;
	b->out->sites[b->out->count++] = site;
	return 0;
}

static int by_bytes(const void *a, const void *b)
{
	const struct mt_site *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int by_count(const void *a, const void *b)
{
	const struct mt_site *x = *(struct mt_site *const *)a, *y = *(struct mt_site *const *)b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void build_release(struct site_build *b)
{
	size_t i;

	for (i = 0; i < b->out->count; i++)
		free(b->keys[i]);
	free(b->keys);
	mt_u64map__release(&b->by_key);
}

struct mt_sites *mt_sites__build(struct mt_stacks *s)
{
	return mt_sites__build_with(s, NULL);
}

struct mt_sites *mt_sites__build_with(struct mt_stacks *s, const struct mt_sites_opts *opts)
{
	struct site_build b = { .with_offset = !opts || !opts->no_offsets };
	size_t i;
	int err = 0;

	b.out = calloc(1, sizeof(*b.out));
	if (!b.out)
		return NULL;
	b.out->any = mt_stacks__any(s);
	b.out->dwarf = mt_stacks__has_dwarf(s);
	for (i = 0; !err && i < mt_stacks__count(s); i++) {
		const struct mt_stack_entry *e = mt_stacks__entry(s, i);

		if (!e->allocations)
			continue;
		if (!e->defined) {
			b.out->undefined_allocations += e->allocations;
			b.out->undefined_bytes += e->bytes;
			continue;
		}
		err = sites_add(&b, s, e);
	}
	build_release(&b);
	if (!err) {
		mt_array__sort(b.out->sites, b.out->count, sizeof(*b.out->sites), by_bytes);
		b.out->by_count = malloc((b.out->count ? b.out->count : 1) * sizeof(*b.out->by_count));
		err = b.out->by_count ? 0 : -ENOMEM;
	}
	if (err) {
		mt_sites__free(b.out);
		errno = -err;
		return NULL;
	}
	for (i = 0; i < b.out->count; i++)
		b.out->by_count[i] = &b.out->sites[i];
	mt_array__sort(b.out->by_count, b.out->count, sizeof(*b.out->by_count), by_count);
	return b.out;
}

void mt_sites__json_frames(struct mt_json *j, const struct mt_site *site)
{
	size_t i;

	mt_json__begin_array(j);
	for (i = 0; i < site->nframes; i++) {
		mt_json__begin_object(j);
		mt_json__kv_string(j, "name", site->frames[i].name);
		if (site->frames[i].srcline)
			mt_json__kv_string(j, "srcline", site->frames[i].srcline);
		else
			mt_json__kv_null(j, "srcline");
		mt_json__kv_bool(j, "inlined", site->frames[i].inlined);
		mt_json__end_object(j);
	}
	mt_json__end_array(j);
}

/* No allocation named a stack: --stacks was not given (or nothing was allocated at all). */
struct mt_stacks *mt_sites__load(const char *dir, bool raw_names, const char *what, int *err,
				 struct mt_read_status *st)
{
	struct mt_stacks *s;

	*err = mt_stacks__load(dir, NULL, &s, st);
	if (!s) {
		mt_report__exit_status(dir, *err, st, what);
		return NULL;
	}
	if (!mt_stacks__any(s) && !mt_stacks__count(s)) {
		pr_err("%s: recorded without --stacks: no allocation stacks (record with `memtrack record --stacks`)\n",
		       dir);
		mt_stacks__free(s);
		*err = -ENODATA;
		return NULL;
	}
	mt_modules__set_raw_names(mt_stacks__modules(s), raw_names);
	return s;
}
