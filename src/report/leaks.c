// SPDX-License-Identifier: GPL-2.0-only
/* leaks.c — leaked blocks by allocation site: which are suppressed (a file's patterns, the built-in list), listing. */
/*
 * The model keeps each live block's stack id and hands over, per image, what it held when it exited (leaked) or
 * when the stream ended (still live), by stack hash. Here each hash is symbolized once (src/stacks/stacks.c's chains,
 * DWARF over FP), tested against the suppressions once, and the images' leaks are merged into sites by their
 * symbolized frames. Without stacks a site is an image's exe, and only patterns that match the exe apply.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/log.h"
#include "common/plural.h"
#include "common/text.h"
#include "common/u64map.h"
#include "report/format.h"
#include "report/leaks.h"
#include "report/sites.h"

/* ---- suppressions ---- */

enum rule_kind {
	RULE_PATTERN,		/* a file's leak:PATTERN: any frame's function, module or source file; else the exe */
	RULE_ANY_FUNC,		/* some frame is this function */
	RULE_CALLER_FUNC,	/* the allocator's caller is this function */
	RULE_CALLER_MODULE,	/* the allocator's caller lies in a module whose name matches */
	RULE_EH_POOL,		/* libstdc++'s emergency pool: its caller in libstdc++, in no named function but it */
};

struct rule {
	enum rule_kind kind;
	char *text;		/* the pattern, function or module */
	char *name;		/* what the report calls it: "leak:PATTERN" or the built-in's description */
	bool builtin;
};

struct mt_suppressions {
	struct rule *v;
	size_t n, cap;
};

/* Runtime one-offs that every program of their kind leaves at exit (heaptrack keeps a list like it). */
static const struct {
	enum rule_kind kind;
	const char *text, *name;
} builtins[] = {
	{ RULE_EH_POOL, "^libstdc++.so", "libstdc++'s emergency exception pool" },
	{ RULE_CALLER_FUNC, "_IO_file_doallocate", "stdio buffers" },
	{ RULE_CALLER_FUNC, "_IO_wfile_doallocate", "stdio buffers (wide)" },
	{ RULE_CALLER_MODULE, "^ld-linux", "the dynamic linker's own (ld.so)" },
	{ RULE_ANY_FUNC, "__nss_module_allocate", "glibc's NSS modules" },
	{ RULE_ANY_FUNC, "__gconv_read_conf", "glibc's iconv configuration" },
	{ RULE_ANY_FUNC, "__new_exitfn", "glibc's atexit list" },
	{ RULE_ANY_FUNC, "tzset_internal", "glibc's time zone" },
};

static int rule_add(struct mt_suppressions *s, enum rule_kind kind, const char *text, const char *name,
		    bool builtin)
{
	struct rule *r;

	if (mt_array__grow((void **)&s->v, &s->cap, s->n, sizeof(*s->v)))
		return -ENOMEM;
	r = &s->v[s->n];
	*r = (struct rule){ kind, strdup(text), strdup(name), builtin };
	if (!r->text || !r->name) {
		free(r->text);
		free(r->name);
		return -ENOMEM;
	}
	s->n++;
	return 0;
}

void mt_suppressions__free(struct mt_suppressions *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++) {
		free(s->v[i].text);
		free(s->v[i].name);
	}
	free(s->v);
	free(s);
}

struct mt_suppressions *mt_suppressions__new(bool with_builtins)
{
	struct mt_suppressions *s = calloc(1, sizeof(*s));
	size_t i;

	for (i = 0; s && with_builtins && i < sizeof(builtins) / sizeof(builtins[0]); i++) {
		if (rule_add(s, builtins[i].kind, builtins[i].text, builtins[i].name, true)) {
			mt_suppressions__free(s);
			errno = ENOMEM;
			return NULL;
		}
	}
	return s;
}

/* One line of a suppressions file: 0 (a pattern added, or nothing to add), -EINVAL, -ENOMEM. */
static int suppression_line(struct mt_suppressions *s, char *line)
{
	char *end = line + strlen(line), name[600];

	while (end > line && strchr(" \t\r\n", end[-1]))
		*--end = '\0';
	line += strspn(line, " \t");
	if (!*line || *line == '#')
		return 0;
	if (strncmp(line, "leak:", 5) || !line[5])
		return -EINVAL;
	snprintf(name, sizeof(name), "%s", line);
	return rule_add(s, RULE_PATTERN, line + 5, name, false);
}

int mt_suppressions__load(struct mt_suppressions *s, const char *path)
{
	char *line = NULL;
	size_t cap = 0, nr = 0;
	int err = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		err = -errno;
		pr_err("report: --suppress %s: %s\n", path, strerror(-err));
		return err;
	}
	while (!err && getline(&line, &cap, f) >= 0) {
		nr++;
		err = suppression_line(s, line);
	}
	if (err == -EINVAL)
		pr_err("report: --suppress %s:%zu: not a suppression (one `leak:FUNCTION_OR_MODULE` a line, `#` "
		       "comments)\n", path, nr);
	else if (!err && ferror(f))
		err = -EIO;
	if (err && err != -EINVAL)
		pr_err("report: --suppress %s: %s\n", path, strerror(-err));
	free(line);
	fclose(f);
	return err;
}

/*
 * LSan's template match, which heaptrack uses too: `*` matches any run, a leading `^` and a trailing `$` anchor the
 * pattern, and otherwise it may match anywhere in str.
 */
static bool glob(const char *p, const char *pe, const char *s, bool rest_ok)
{
	for (; p < pe; p++, s++) {
		if (*p == '*') {
			for (;; s++) {
				if (glob(p + 1, pe, s, rest_ok))
					return true;
				if (!*s)
					return false;
			}
		}
		if (*s != *p)
			return false;
	}
	return rest_ok || !*s;
}

static bool template_match(const char *tmpl, const char *str)
{
	bool start = tmpl[0] == '^';
	const char *p = tmpl + start, *pe = p + strlen(p);
	bool end = pe > p && pe[-1] == '$';

	if (!str)
		return false;
	pe -= end;
	if (start)
		return glob(p, pe, str, !end);
	for (; *str; str++)
		if (glob(p, pe, str, !end))
			return true;
	return glob(p, pe, str, !end);
}

/* ---- a stack against the rules ---- */

struct line_test {
	const struct rule *r;
};

/* A function (inlined ones too) or its source file. */
static int line_matches(const struct mt_frame_line *fl, void *ctx)
{
	const struct rule *r = ((struct line_test *)ctx)->r;

	if (r->kind == RULE_ANY_FUNC)
		return !strcmp(fl->name, r->text);
	return template_match(r->text, fl->name) || template_match(r->text, fl->file);
}

static bool any_frame(struct mt_stacks *s, const struct mt_stack_entry *e, const struct rule *r)
{
	struct line_test t = { r };
	size_t i;

	for (i = 0; i < e->nframes; i++) {
		const struct mt_frame *f = mt_stacks__frame(s, e->frames, i);

		if (r->kind == RULE_PATTERN && f->mod &&
		    (template_match(r->text, f->mod->path) || template_match(r->text, f->mod->name)))
			return true;
		if (mt_sites__expand_frame(s, f, false, line_matches, &t) > 0)
			return true;
	}
	return false;
}

/* The built-in rules look at the allocator's caller: the chain's first return address. */
static bool caller_matches(struct mt_stacks *s, const struct mt_stack_entry *e, const struct rule *r)
{
	const struct mt_frame *f = e->nframes ? mt_stacks__frame(s, e->frames, 0) : NULL;
	struct mt_sym sym;

	if (!f || f->truncated || !f->mod)
		return false;
	if (r->kind == RULE_CALLER_MODULE)
		return template_match(r->text, f->mod->name);
	mt_stacks__symbolize(s, f, &sym);
	if (r->kind == RULE_CALLER_FUNC)
		return sym.func && !strcmp(sym.func, r->text);
	/* the pool's constructor is a local symbol: Debian's libstdc++ keeps none, debug files name it */
	return template_match(r->text, f->mod->name) &&
	       (!sym.func || strstr(sym.func, "pool") || template_match("^_GLOBAL__sub_I_", sym.func) ||
		template_match("^__static_initialization", sym.func));
}

/* The first rule that suppresses the stack (e NULL: none, then exe is all there is), or -1. */
static int rule_of(const struct mt_suppressions *sup, struct mt_stacks *s, const struct mt_stack_entry *e,
		   const char *exe)
{
	size_t i;
	bool hit;

	for (i = 0; sup && i < sup->n; i++) {
		const struct rule *r = &sup->v[i];

		if (!e)
			hit = r->kind == RULE_PATTERN && template_match(r->text, exe);
		else if (r->kind == RULE_PATTERN || r->kind == RULE_ANY_FUNC)
			hit = any_frame(s, e, r);
		else
			hit = caller_matches(s, e, r);
		if (hit)
			return (int)i;
	}
	return -1;
}

int mt_suppressions__apply(const struct mt_suppressions *sup, struct mt_stacks *s)
{
	const struct mt_stack_entry *e;
	size_t i, n = s && mt_stacks__any(s) ? mt_stacks__count(s) : 0;
	struct mt_stack_counts c;

	for (i = 0; sup && i < n; i++) {
		e = mt_stacks__entry(s, i);
		mt_stacks__counts(s, e, &c);
		if (c.leaked_allocations && e->nframes && rule_of(sup, s, e, NULL) >= 0)
			mt_stacks__suppress(s, i);
	}
	return 0;
}

void mt_suppressions__dir_total(const char *path, const struct mt_filter *filter, const struct mt_suppressions *sup,
				uint64_t *count, uint64_t *bytes)
{
	struct mt_stacks_opts opts = { .filter = filter };
	struct mt_stacks *s = NULL;

	*count = *bytes = 0;
	if (!sup || mt_stacks__probe(path) != 1)
		return;
	mt_stacks__load(path, &opts, &s, NULL);
	if (!s)
		return;
	mt_suppressions__apply(sup, s);
	mt_sites__suppressed_total(s, count, bytes);
	mt_stacks__free(s);
}

int mt_suppress_args__add(struct mt_suppress_args *a, const char *cmd, const char *file)
{
	if (!file) {
		a->no_default = true;
		return 0;
	}
	if (a->nfiles == MT_SUPPRESS_MAX) {
		pr_err("%s: --suppress: at most %d files\n", cmd, MT_SUPPRESS_MAX);
		return -EINVAL;
	}
	a->files[a->nfiles++] = file;
	return 0;
}

struct mt_suppressions *mt_suppressions__from_args(const struct mt_suppress_args *a)
{
	struct mt_suppressions *sup = mt_suppressions__new(!a->no_default);
	size_t i;

	if (!sup) {
		pr_err("suppressions: %s\n", strerror(errno));
		return NULL;
	}
	for (i = 0; i < a->nfiles; i++) {
		if (mt_suppressions__load(sup, a->files[i])) {
			mt_suppressions__free(sup);
			return NULL;
		}
	}
	return sup;
}

/* ---- the sites ---- */

struct resolved {			/* a stack hash (or an image's exe without one), looked at once */
	char *key;			/* what sites merge by: the frames as text, or the exe */
	struct mt_site frames;		/* only its frames are used (mt_format__frames_json prints them) */
	uint64_t stack;
	char *exe;			/* no stack: the image's */
	int rule;
};

struct item {				/* what one image held at one site */
	size_t res;
	bool still;
	uint32_t pid;
	uint64_t count, bytes;
};

struct lsite {
	size_t res;
	bool still;
	bool suppressed;
	uint64_t count, bytes;
	uint32_t *pids;
	size_t npids, cap_pids;
};

struct mt_leaks {
	const struct mt_suppressions *sup;
	struct mt_stacks *stacks;
	struct mt_u64map res_of;	/* stack hash → index in res */
	struct mt_u64map entry_of;	/* leaked stack hash → its entry's index (UINT64_MAX: none), when found */
	bool found;			/* entry_of holds the leaked stacks' entries, not mt_stacks__index_hashes */
	struct resolved *res;
	size_t nres, cap_res;
	struct item *items;
	size_t nitems, cap_items;
	struct lsite *sites;
	size_t nsites;
	uint64_t *rule_count, *rule_bytes;
	uint64_t *img_count, *img_bytes;	/* suppressed, per image */
	size_t nimages;
	uint64_t sup_count, sup_bytes;
	bool dwarf;
};

void mt_leaks__free(struct mt_leaks *l)
{
	size_t i, k;

	if (!l)
		return;
	for (i = 0; i < l->nres; i++) {
		for (k = 0; k < l->res[i].frames.nframes; k++) {
			free(l->res[i].frames.frames[k].name);
			free(l->res[i].frames.frames[k].srcline);
		}
		free(l->res[i].frames.frames);
		free(l->res[i].key);
		free(l->res[i].exe);
	}
	for (i = 0; i < l->nsites; i++)
		free(l->sites[i].pids);
	mt_u64map__release(&l->res_of);
	mt_u64map__release(&l->entry_of);
	free(l->res);
	free(l->items);
	free(l->sites);
	free(l->rule_count);
	free(l->rule_bytes);
	free(l->img_count);
	free(l->img_bytes);
	free(l);
}

/* The entry of a leaked stack's hash (SIZE_MAX: none). */
static size_t leaks_entry(const struct mt_leaks *l, uint64_t hash)
{
	const uint64_t *v;

	if (!l->found)
		return mt_stacks__find(l->stacks, hash);
	v = mt_u64map__find(&l->entry_of, hash);
	return v && *v != UINT64_MAX ? (size_t)*v : SIZE_MAX;
}

/* A stack's frames, key and rule; a hash with no definition (or no chain) is named by its value. */
static int resolve_stack(struct mt_leaks *l, struct resolved *r, uint64_t hash)
{
	const struct mt_stack_entry *e = l->stacks ? mt_stacks__entry(l->stacks, leaks_entry(l, hash)) : NULL;
	struct mt_site_frames o = { &r->frames, 0 };
	struct mt_frame_line fl = { NULL, NULL, 0, false };
	char name[48];
	size_t i;
	int err = 0;

	if (e && !e->nframes)
		e = NULL;
	for (i = 0; e && !err && i < e->nframes; i++)
		err = mt_sites__expand_frame(l->stacks, mt_stacks__frame(l->stacks, e->frames, i), true,
					     mt_site__add_frame, &o);
	if (!e) {
		snprintf(name, sizeof(name), "[stack %#" PRIx64 " undefined]", hash);
		fl.name = name;
		err = mt_site__add_frame(&fl, &o);
	}
	r->key = err ? NULL : mt_site__key(&r->frames);
	r->rule = e ? rule_of(l->sup, l->stacks, e, NULL) : -1;
	return err ? err : r->key ? 0 : -ENOMEM;
}

/* The resolved entry of an image's site: one per stack hash, one per image without a stack. */
static int resolve(struct mt_leaks *l, const struct mt_image *img, uint64_t hash, size_t *out)
{
	const uint64_t *found = hash ? mt_u64map__find(&l->res_of, hash) : NULL;
	struct resolved *r;
	int err;

	if (found) {
		*out = *found;
		return 0;
	}
	if (mt_array__grow((void **)&l->res, &l->cap_res, l->nres, sizeof(*l->res)))
		return -ENOMEM;
	r = &l->res[l->nres];
	*r = (struct resolved){ .stack = hash, .rule = -1 };
	if (hash && l->stacks) {
		err = resolve_stack(l, r, hash);
	} else {
		r->exe = strndup(img->exe[0] ? img->exe : img->comm, sizeof(img->exe));
		r->key = r->exe ? strdup(r->exe) : NULL;
		r->rule = r->exe ? rule_of(l->sup, NULL, NULL, r->exe) : -1;
		err = r->key ? 0 : -ENOMEM;
	}
	l->nres++;	/* freed with the rest, even when half made */
	if (err || (hash && mt_u64map__put(&l->res_of, hash, l->nres - 1, NULL) < 0))
		return err ? err : -ENOMEM;
	*out = l->nres - 1;
	return 0;
}

/* Image idx's sites into items; its suppressed leaks counted. */
static int image_items(struct mt_leaks *l, const struct mt_model *m, size_t idx)
{
	const struct mt_image *img = mt_model__image(m, idx);
	const struct mt_leak_site *ls;
	struct item *it;
	size_t i, n, r;
	int err;

	ls = mt_model__image_leaks(m, idx, &n);
	for (i = 0; i < n; i++) {
		err = resolve(l, img, l->stacks ? ls[i].stack : 0, &r);
		if (err || mt_array__grow((void **)&l->items, &l->cap_items, l->nitems, sizeof(*l->items)))
			return err ? err : -ENOMEM;
		it = &l->items[l->nitems++];
		*it = (struct item){ r, img->end != MT_IMAGE_EXIT, img->pid, ls[i].count, ls[i].bytes };
		if (it->still || l->res[r].rule < 0)
			continue;
		l->img_count[idx] += it->count;
		l->img_bytes[idx] += it->bytes;
		l->rule_count[l->res[r].rule] += it->count;
		l->rule_bytes[l->res[r].rule] += it->bytes;
		l->sup_count += it->count;
		l->sup_bytes += it->bytes;
	}
	return 0;
}

static const struct mt_leaks *sort_ctx;

static int item_cmp(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	int c;

	if (x->still != y->still)
		return x->still ? 1 : -1;
	c = strcmp(sort_ctx->res[x->res].key, sort_ctx->res[y->res].key);
	return c ? c : x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int site_cmp(const void *a, const void *b)
{
	const struct lsite *x = a, *y = b;

	if (x->still != y->still)
		return x->still ? 1 : -1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(sort_ctx->res[x->res].key, sort_ctx->res[y->res].key);
}

/* Items of one kind and key make a site; its pids are those of its items, once each. */
static int merge_items(struct mt_leaks *l)
{
	struct lsite *s = NULL;
	size_t i;

	sort_ctx = l;
	mt_array__sort(l->items, l->nitems, sizeof(*l->items), item_cmp);
	l->sites = calloc(l->nitems ? l->nitems : 1, sizeof(*l->sites));
	if (!l->sites)
		return -ENOMEM;
	for (i = 0; i < l->nitems; i++) {
		const struct item *it = &l->items[i];

		if (!s || s->still != it->still || strcmp(l->res[s->res].key, l->res[it->res].key)) {
			s = &l->sites[l->nsites++];
			*s = (struct lsite){ .res = it->res, .still = it->still,
					     .suppressed = !it->still && l->res[it->res].rule >= 0 };
		}
		s->count += it->count;
		s->bytes += it->bytes;
		if (s->npids && s->pids[s->npids - 1] == it->pid)
			continue;
		if (mt_array__grow((void **)&s->pids, &s->cap_pids, s->npids, sizeof(*s->pids)))
			return -ENOMEM;
		s->pids[s->npids++] = it->pid;
	}
	mt_array__sort(l->sites, l->nsites, sizeof(*l->sites), site_cmp);
	return 0;
}

#define LEAKS_MAP_MIN 4096	/* leaked hashes whose map is small whatever the stacks */

/* The matched images' leak sites, in all (their stacks, some of them the same). */
static size_t leaks_nsites(const struct mt_model *m)
{
	size_t i, n, all = 0;

	for (i = 0; i < mt_model__nr_images(m); i++)
		if (mt_model__image(m, i)->matched && mt_model__image_leaks(m, i, &n))
			all += n;
	return all;
}

/*
 * The entries of the leaked stacks: their hashes in a map, then one pass over the entries. An index of every entry
 * by hash (mt_stacks__index_hashes) would take 4 to 8 bytes a stack at the report's end, when most stacks leak
 * nothing; it is the smaller only when many of them leak (the map takes 23 to 46 bytes a hash).
 */
static int leaks_find_entries(struct mt_leaks *l, const struct mt_model *m)
{
	size_t i, k, n, count = mt_stacks__count(l->stacks), want = leaks_nsites(m);
	const struct mt_leak_site *ls;
	uint64_t *v;

	if (want > LEAKS_MAP_MIN && want > count / 8)
		return mt_stacks__index_hashes(l->stacks);
	l->found = true;
	for (i = 0; i < mt_model__nr_images(m); i++) {
		ls = mt_model__image(m, i)->matched ? mt_model__image_leaks(m, i, &n) : NULL;
		for (k = 0; ls && k < n; k++)
			if (ls[k].stack && mt_u64map__put(&l->entry_of, ls[k].stack, UINT64_MAX, NULL) < 0)
				return -ENOMEM;
	}
	for (i = 0; l->entry_of.count && i < count; i++) {
		v = mt_u64map__find(&l->entry_of, mt_stacks__entry(l->stacks, i)->hash);
		if (v)
			*v = i;
	}
	return 0;
}

static int leaks_init(struct mt_leaks *l, const struct mt_model *m)
{
	size_t nrules = l->sup ? l->sup->n : 0;

	l->nimages = mt_model__nr_images(m);
	l->rule_count = calloc(nrules + 1, sizeof(uint64_t));
	l->rule_bytes = calloc(nrules + 1, sizeof(uint64_t));
	l->img_count = calloc(l->nimages + 1, sizeof(uint64_t));
	l->img_bytes = calloc(l->nimages + 1, sizeof(uint64_t));
	if (!l->rule_count || !l->rule_bytes || !l->img_count || !l->img_bytes)
		return -ENOMEM;
	if (l->stacks && leaks_find_entries(l, m))
		return -ENOMEM;
	l->dwarf = l->stacks && mt_stacks__has_dwarf(l->stacks);
	return 0;
}

struct mt_leaks *mt_leaks__build(const struct mt_model *m, struct mt_stacks *stacks,
				 const struct mt_suppressions *sup)
{
	struct mt_leaks *l = calloc(1, sizeof(*l));
	size_t i;
	int err;

	if (!l)
		return NULL;
	l->sup = sup;
	l->stacks = stacks && mt_stacks__any(stacks) ? stacks : NULL;
	err = leaks_init(l, m);
	for (i = 0; !err && i < l->nimages; i++)
		if (mt_model__image(m, i)->matched)
			err = image_items(l, m, i);
	if (!err)
		err = merge_items(l);
	if (err) {
		mt_leaks__free(l);
		errno = -err;
		return NULL;
	}
	return l;
}

void mt_leaks__suppressed(const struct mt_leaks *l, size_t idx, uint64_t *count, uint64_t *bytes)
{
	*count = !l ? 0 : idx == SIZE_MAX ? l->sup_count : idx < l->nimages ? l->img_count[idx] : 0;
	*bytes = !l ? 0 : idx == SIZE_MAX ? l->sup_bytes : idx < l->nimages ? l->img_bytes[idx] : 0;
}

/* ---- printing ---- */

void mt_leaks__suppressions_text(FILE *f, const struct mt_leaks *l)
{
	bool first = true;
	size_t i;

	for (i = 0; l && l->sup && i < l->sup->n; i++) {
		if (!l->rule_count[i])
			continue;
		fprintf(f, "%s", first ? " (" : "; ");
		mt_text__put(f, l->sup->v[i].name);
		fprintf(f, ": %" PRIu64, l->rule_count[i]);
		first = false;
	}
	if (!first)
		fputc(')', f);
}

void mt_leaks__suppressions_json(struct mt_json *j, const struct mt_leaks *l)
{
	size_t i;

	mt_json__key(j, "suppressions");
	mt_json__begin_array(j);
	for (i = 0; l && l->sup && i < l->sup->n; i++) {
		if (!l->rule_count[i])
			continue;
		mt_json__begin_object(j);
		mt_json__kv_string(j, "suppression", l->sup->v[i].name);
		mt_json__kv_bool(j, "builtin", l->sup->v[i].builtin);
		mt_json__kv_u64(j, "allocations", l->rule_count[i]);
		mt_json__kv_u64(j, "bytes", l->rule_bytes[i]);
		mt_json__end_object(j);
	}
	mt_json__end_array(j);
}

#define PIDS_SHOWN 5

static void site_text(FILE *f, const struct mt_leaks *l, size_t rank, const struct lsite *s)
{
	const struct resolved *r = &l->res[s->res];
	char a[2 * MT_HUMAN_MAX];
	size_t i;

	fprintf(f, "  #%-3zu %s in %" PRIu64 " %s; %s", rank, mt_format__size(a, s->bytes), s->count,
		mt_plural__of(s->count, "block", "blocks"), mt_plural__of(s->npids, "pid", "pids"));
	for (i = 0; i < s->npids && i < PIDS_SHOWN; i++)
		fprintf(f, "%s %" PRIu32, i ? "," : "", s->pids[i]);
	if (s->npids > PIDS_SHOWN)
		fprintf(f, " and %zu more", s->npids - PIDS_SHOWN);
	if (r->exe) {
		fputs(": ", f);
		mt_text__put(f, r->exe);
	}
	fputc('\n', f);
	if (!r->exe)
		mt_format__frames_text(f, &r->frames, false);
}

/* The sites of one kind (still live or not), suppressed ones left out; how many there were. */
static size_t kind_count(const struct mt_leaks *l, bool still)
{
	size_t i, n = 0;

	for (i = 0; i < l->nsites; i++)
		n += l->sites[i].still == still && !l->sites[i].suppressed;
	return n;
}

static void kind_text(FILE *f, const struct mt_leaks *l, bool still, size_t top)
{
	size_t i, n = kind_count(l, still), shown = 0;
	const char *what = still ? "still live at the end (no exit record: not leaks)" : "leaked at exit";

	if (!n) {
		fprintf(f, "\n%s: none\n", what);
		return;
	}
	fprintf(f, "\n%s, by %s (%zu %s", what, l->stacks ? "allocation site" : "process", n,
		mt_plural__of(n, l->stacks ? "site" : "image", l->stacks ? "sites" : "images"));
	if (l->stacks)
		fprintf(f, ", %s chains", mt_stacks__chains(l->stacks));
	if (top && top < n)
		fprintf(f, ", the %zu largest):\n", top);
	else
		fputs(", largest first):\n", f);
	for (i = 0; i < l->nsites && (!top || shown < top); i++) {
		if (l->sites[i].still != still || l->sites[i].suppressed)
			continue;
		site_text(f, l, ++shown, &l->sites[i]);
	}
}

int mt_leaks__text(FILE *f, const struct mt_leaks *l, size_t top)
{
	if (!l->stacks)
		fputs("\n(recorded without --stacks: leaks are listed by process; `memtrack record --stacks` records "
		      "their allocation sites)\n", f);
	kind_text(f, l, false, top);
	if (kind_count(l, true))
		kind_text(f, l, true, top);
	return ferror(f) ? -EIO : 0;
}

static void site_json(struct mt_json *j, const struct mt_leaks *l, const struct lsite *s)
{
	const struct resolved *r = &l->res[s->res];
	size_t i;

	mt_json__begin_object(j);
	mt_json__kv_u64(j, "allocations", s->count);
	mt_json__kv_u64(j, "bytes", s->bytes);
	if (r->stack)
		mt_json__kv_u64(j, "stack", r->stack);
	else
		mt_json__kv_null(j, "stack");
	if (r->exe)
		mt_json__kv_string(j, "exe", r->exe);
	mt_json__key(j, "pids");
	mt_json__begin_array(j);
	for (i = 0; i < s->npids; i++)
		mt_json__u64(j, s->pids[i]);
	mt_json__end_array(j);
	mt_json__key(j, "frames");
	mt_format__frames_json(j, &r->frames);
	mt_json__end_object(j);
}

static void kind_json(struct mt_json *j, const struct mt_leaks *l, bool still, size_t top)
{
	size_t i, shown = 0;

	mt_json__key(j, still ? "still_live" : "leaks");
	mt_json__begin_array(j);
	for (i = 0; i < l->nsites && (!top || shown < top); i++) {
		if (l->sites[i].still != still || l->sites[i].suppressed)
			continue;
		site_json(j, l, &l->sites[i]);
		shown++;
	}
	mt_json__end_array(j);
}

void mt_leaks__json(struct mt_json *j, const struct mt_leaks *l, size_t top)
{
	kind_json(j, l, false, top);
	kind_json(j, l, true, top);
}
