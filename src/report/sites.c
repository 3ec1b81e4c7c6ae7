/* sites.c — top allocation sites: the stacks of an artifact merged by their symbolized frames, ranked. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "report/sites.h"

#define NAME_MAX_LEN 512

struct site_build {
	struct mt_sites *out;
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

static char *srcline_text(const struct mt_sym *sym)
{
	const char *base;
	char *text;

	if (!sym->file)
		return NULL;
	base = strrchr(sym->file, '/');
	if (asprintf(&text, "%s:%d", base ? base + 1 : sym->file, sym->line) < 0)
		return NULL;
	return text;
}

/* The site's frames: names and source lines of the entry's chain. */
static int site_frames(struct mt_stacks *s, const struct mt_stack_entry *e, struct mt_site *site)
{
	char name[NAME_MAX_LEN];
	struct mt_sym sym;
	size_t i;

	site->frames = calloc(e->nframes ? e->nframes : 1, sizeof(*site->frames));
	if (!site->frames)
		return -ENOMEM;
	site->nframes = e->nframes;
	for (i = 0; i < e->nframes; i++) {
		mt_stacks__symbolize(s, &e->frames[i], &sym);
		site->frames[i].name = strdup(mt_frame__name(&e->frames[i], &sym, true, name, sizeof(name)));
		site->frames[i].srcline = srcline_text(&sym);
		if (!site->frames[i].name)
			return -ENOMEM;
	}
	return 0;
}

/* The frame names joined by newlines: what identifies a site. */
static char *site_key(const struct mt_site *site)
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

	err = site_frames(s, e, &site);
	key = err ? NULL : site_key(&site);
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
	struct site_build b = { 0 };
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
