// SPDX-License-Identifier: GPL-2.0-only
/* flamegraph.c — `memtrack flamegraph`: stacks merged into collapsed lines, or drawn as an interactive SVG. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/log.h"
#include "common/text.h"
#include "report/flamegraph.h"
#include "report/sites.h"

#define FG_WIDTH 1200		/* SVG pixels */
#define FG_FRAME_H 16
#define FG_PAD 10
#define FG_TOP 48		/* title, buttons and the details line */
#define FG_CHAR_W 7.0		/* average glyph width at font-size 12 */
#define FG_MIN_W 0.1		/* narrower frames are merged into "...", where flamegraph.pl leaves them out */
#define FG_NOT_RECORDED "[stack not recorded]"

/* One call path: frame names outermost first, and its weight (and, in a diff, the weight before). */
struct fg_path {
	char **names;
	size_t n;
	uint64_t weight;
	uint64_t base;
};

struct fg_node {
	const char *name;
	uint64_t value;
	uint64_t base;
	struct fg_node *child;	/* first child; children come in path order */
	struct fg_node *last;
	struct fg_node *next;
};

const char *mt_fg_weight__unit(enum mt_fg_weight w)
{
	static const char *const units[][3] = {
		[MT_FG_BYTES] = { "bytes", "mapped bytes", "bytes (heap + mapped)" },
		[MT_FG_COUNT] = { "allocations", "mapping calls", "allocations and mapping calls" },
		[MT_FG_LEAKED] = { "leaked bytes", "leaked bytes", "leaked bytes" },
		[MT_FG_PEAK] = { "bytes live at the peak", "mapped bytes at their peak",
				 "bytes live at the peak (heap's + mappings')" },
		[MT_FG_LIVE] = { "bytes still live at the end", "bytes still mapped at the end",
				 "bytes still live or mapped at the end" },
	};
	unsigned int k = w & MT_FG_ALL ? 2 : w & MT_FG_MAPPED ? 1 : 0;

	return units[(w & MT_FG_WEIGHT_MASK) <= MT_FG_LIVE ? w & MT_FG_WEIGHT_MASK : MT_FG_BYTES][k];
}

int mt_fg_kind__parse(const char *cmd, const char *arg, enum mt_fg_weight *kind)
{
	if (!strcmp(arg, "heap"))
		*kind = 0;
	else if (!strcmp(arg, "mapped"))
		*kind = MT_FG_MAPPED;
	else if (!strcmp(arg, "all"))
		*kind = MT_FG_ALL;
	else {
		pr_err("%s: --kind is heap, mapped or all, not '%s'\n", cmd, arg);
		return -EINVAL;
	}
	return 0;
}

static uint64_t heap_weight(const struct mt_stacks *s, const struct mt_stack_entry *e, enum mt_fg_weight w)
{
	struct mt_stack_counts c;

	mt_stacks__counts(s, e, &c);
	switch (w & MT_FG_WEIGHT_MASK) {
	case MT_FG_COUNT: return c.allocations;
	case MT_FG_LEAKED: return c.leaked_bytes;
	case MT_FG_PEAK: return c.peak_bytes;
	case MT_FG_LIVE: return c.still_live_bytes;
	default: return c.bytes;
	}
}

/* A mapping is never leaked: the kernel ends it with its address space. */
static uint64_t mapped_weight(const struct mt_stack_mapped *m, enum mt_fg_weight w)
{
	switch (w & MT_FG_WEIGHT_MASK) {
	case MT_FG_COUNT: return m->calls;
	case MT_FG_LEAKED: return 0;
	case MT_FG_PEAK: return m->peak_bytes;
	case MT_FG_LIVE: return m->live_bytes;
	default: return m->bytes;
	}
}

uint64_t mt_fg_weight__of(const struct mt_stacks *s, const struct mt_stack_entry *e, enum mt_fg_weight w)
{
	if (w & MT_FG_MAPPED)
		return mapped_weight(mt_stacks__mapped_of(s, e), w);
	return heap_weight(s, e, w) + (w & MT_FG_ALL ? mapped_weight(mt_stacks__mapped_of(s, e), w) : 0);
}

/* ---- paths ---- */

struct name_list {
	char **v;
	size_t n;
	size_t cap;
};

/* Collapsed-format names cannot hold the separator or a line break. */
static int name_add(const struct mt_frame_line *fl, void *ctx)
{
	struct name_list *l = ctx;
	char *p;

	if (mt_array__grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v)))
		return -ENOMEM;
	l->v[l->n] = strdup(fl->name);
	if (!l->v[l->n])
		return -ENOMEM;
	for (p = l->v[l->n++]; *p; p++)
		if (*p == ';' || *p == '\n' || *p == '\r')
			*p = ':';
	return 0;
}

static void path_release(struct fg_path *p)
{
	size_t k;

	for (k = 0; k < p->n; k++)
		free(p->names[k]);
	free(p->names);
}

static void paths_free(struct fg_path *paths, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		path_release(&paths[i]);
	free(paths);
}

/* The entry's frames, each return address expanded into its inline chain, then turned outermost first. */
static int path_fill(struct mt_stacks *s, const struct mt_stack_entry *e, struct fg_path *p)
{
	struct name_list l = { 0 };
	size_t i;
	char *t;
	int err = 0;

	if (!e->defined)
		err = name_add(&(struct mt_frame_line){ .name = FG_NOT_RECORDED }, &l);
	for (i = 0; !err && e->defined && i < e->nframes; i++)
		err = mt_sites__expand_frame(s, mt_stacks__frame(s, e->frames, i), false, name_add, &l);
	for (i = 0; i < l.n / 2; i++) {
		t = l.v[i];
		l.v[i] = l.v[l.n - 1 - i];
		l.v[l.n - 1 - i] = t;
	}
	p->names = l.v;
	p->n = l.n;
	return err;
}

static int path_cmp(const void *a, const void *b)
{
	const struct fg_path *x = a, *y = b;
	size_t i;
	int c;

	for (i = 0; i < x->n && i < y->n; i++) {
		c = strcmp(x->names[i], y->names[i]);
		if (c)
			return c;
	}
	return x->n < y->n ? -1 : x->n > y->n;
}

/* Sorted, equal paths merged (their weights added). Returns the new count. */
static size_t paths_merge_equal(struct fg_path *paths, size_t n)
{
	size_t i, k;

	mt_array__sort(paths, n, sizeof(*paths), path_cmp);
	for (i = k = 0; i < n; i++) {
		if (k && !path_cmp(&paths[k - 1], &paths[i])) {
			paths[k - 1].weight += paths[i].weight;
			paths[k - 1].base += paths[i].base;
			path_release(&paths[i]);
			continue;
		}
		paths[k++] = paths[i];
	}
	return k;
}

/* Every path with a weight, sorted frame by frame, equal ones merged. */
static int paths_build(struct mt_stacks *s, enum mt_fg_weight w, struct fg_path **out, size_t *count)
{
	size_t i, n = 0, total = mt_stacks__count(s);
	struct fg_path *paths = calloc(total ? total : 1, sizeof(*paths));
	int err = 0;

	if (!paths)
		return -ENOMEM;
	for (i = 0; !err && i < total; i++) {
		const struct mt_stack_entry *e = mt_stacks__entry(s, i);

		if (!mt_fg_weight__of(s, e, w))
			continue;
		paths[n].weight = mt_fg_weight__of(s, e, w);
		err = path_fill(s, e, &paths[n++]);
	}
	if (err) {
		paths_free(paths, n);
		return err;
	}
	*out = paths;
	*count = paths_merge_equal(paths, n);
	return 0;
}

/* after's paths with before's weights as their base: the union, before's own paths with weight 0. */
static int paths_build_diff(struct mt_stacks *before, struct mt_stacks *after, enum mt_fg_weight w,
			    struct fg_path **out, size_t *count)
{
	struct fg_path *a, *b, *all;
	size_t na, nb, i;
	int err;

	err = paths_build(after, w, &a, &na);
	if (err)
		return err;
	err = paths_build(before, w, &b, &nb);
	if (err) {
		paths_free(a, na);
		return err;
	}
	all = realloc(a, (na + nb ? na + nb : 1) * sizeof(*all));
	if (!all) {
		paths_free(a, na);
		paths_free(b, nb);
		return -ENOMEM;
	}
	for (i = 0; i < nb; i++) {
		all[na + i] = b[i];
		all[na + i].base = b[i].weight;
		all[na + i].weight = 0;
	}
	free(b);
	*out = all;
	*count = paths_merge_equal(all, na + nb);
	return 0;
}

static void path_print(FILE *f, const struct fg_path *p)
{
	size_t k;

	for (k = 0; k < p->n; k++)
		fprintf(f, "%s%s", k ? ";" : "", p->names[k]);
	fputs(p->n ? " " : "[no frames] ", f);
}

int mt_flamegraph__collapsed(FILE *f, struct mt_stacks *s, enum mt_fg_weight w)
{
	struct fg_path *paths;
	size_t n, i;
	int err;

	err = paths_build(s, w, &paths, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		path_print(f, &paths[i]);
		fprintf(f, "%" PRIu64 "\n", paths[i].weight);
	}
	paths_free(paths, n);
	return ferror(f) ? -EIO : 0;
}

int mt_flamegraph__diff_collapsed(FILE *f, struct mt_stacks *before, struct mt_stacks *after, enum mt_fg_weight w)
{
	struct fg_path *paths;
	size_t n, i;
	int err;

	err = paths_build_diff(before, after, w, &paths, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		path_print(f, &paths[i]);
		fprintf(f, "%" PRIu64 " %" PRIu64 "\n", paths[i].base, paths[i].weight);
	}
	paths_free(paths, n);
	return ferror(f) ? -EIO : 0;
}

/* ---- the tree ---- */

static struct fg_node *node_child(struct fg_node *parent, const char *name)
{
	struct fg_node *c;

	if (parent->last && !strcmp(parent->last->name, name))
		return parent->last;	/* paths are sorted: a repeated child is always the last one */
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->name = name;
	if (parent->last)
		parent->last->next = c;
	else
		parent->child = c;
	parent->last = c;
	return c;
}

static void node_free(struct fg_node *n)
{
	struct fg_node *c, *next;

	for (c = n->child; c; c = next) {
		next = c->next;
		node_free(c);
		free(c);
	}
}

static int tree_build(struct fg_node *root, const struct fg_path *paths, size_t n)
{
	struct fg_node *node;
	size_t i, k;

	for (i = 0; i < n; i++) {
		root->value += paths[i].weight;
		root->base += paths[i].base;
		node = root;
		for (k = 0; k < paths[i].n; k++) {
			node = node_child(node, paths[i].names[k]);
			if (!node)
				return -ENOMEM;
			node->value += paths[i].weight;
			node->base += paths[i].base;
		}
	}
	return 0;
}

/* ---- the SVG ---- */

struct fg_draw {
	FILE *f;
	double scale;		/* pixels per unit of weight */
	size_t depth;		/* rows above the root */
	uint64_t total;
	const char *unit;
	bool diff;
	uint64_t max_delta;	/* in a diff: the largest change of a frame, for the colour scale */
};

/* What one rectangle shows: a node, or the "..." of a node's narrow children (merged of them). */
struct fg_box {
	const char *name;
	uint64_t x;		/* in units of weight from the left edge */
	uint64_t value;
	uint64_t base;
	size_t level;
	size_t merged;
};

/* flamegraph.pl's "hot" palette, seeded by the name so a function keeps its colour across graphs. */
static void hot_color(const char *name, int rgb[3])
{
	uint32_t h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	rgb[0] = 205 + (int)(h % 50);
	rgb[1] = (int)((h >> 8) % 230);
	rgb[2] = (int)((h >> 16) % 55);
}

/* difffolded's scale: red for growth, blue for shrinkage, the deeper the larger the change. */
static void diff_color(const struct fg_draw *d, const struct fg_box *b, int rgb[3])
{
	int64_t delta = (int64_t)(b->value - b->base);
	uint64_t mag = delta < 0 ? (uint64_t)-delta : (uint64_t)delta;
	int fade = 210 - (int)(210.0 * mag / d->max_delta);

	if (!delta) {
		rgb[0] = rgb[1] = rgb[2] = 236;
		return;
	}
	rgb[0] = delta > 0 ? 255 : fade;
	rgb[1] = fade;
	rgb[2] = delta > 0 ? fade : 255;
}

static void box_title(const struct fg_draw *d, const struct fg_box *b)
{
	double pct = 100.0 * b->value / d->total;

	fputs("<title>", d->f);
	mt_text__put_xml(d->f, b->name, SIZE_MAX);
	if (b->merged)
		fprintf(d->f, " (%zu frames narrower than %.1f px, ", b->merged, FG_MIN_W);
	else
		fputs(" (", d->f);
	if (d->diff)
		fprintf(d->f, "%" PRIu64 " %s, %+" PRId64 " since before, %.2f%%)</title>", b->value, d->unit,
			(int64_t)(b->value - b->base), pct);
	else
		fprintf(d->f, "%" PRIu64 " %s, %.2f%%)</title>", b->value, d->unit, pct);
}

/* One frame: data-x/-w in units of weight and data-l (the row) for the script's zoom; the label as it fits. */
static void box_write(const struct fg_draw *d, const struct fg_box *b)
{
	double x = FG_PAD + b->x * d->scale, w = b->value * d->scale;
	double y = FG_TOP + (double)(d->depth - b->level) * FG_FRAME_H;
	size_t fit = w >= 4 * FG_CHAR_W ? (size_t)(w / FG_CHAR_W) - 1 : 0, len = strlen(b->name);	/* 3 glyphs */
	int rgb[3] = { 200, 200, 200 };

	if (d->diff)
		diff_color(d, b, rgb);
	else if (!b->merged)
		hot_color(b->name, rgb);
	fprintf(d->f, "<g class=\"f\" data-x=\"%" PRIu64 "\" data-w=\"%" PRIu64 "\" data-l=\"%zu\">", b->x, b->value,
		b->level);
	box_title(d, b);
	fprintf(d->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" rx=\"2\"/>",
		x, y, w, FG_FRAME_H - 1, rgb[0], rgb[1], rgb[2]);
	fprintf(d->f, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + FG_FRAME_H - 4);
	if (fit) {
		mt_text__put_xml(d->f, b->name, len > fit ? fit - 2 : fit);
		if (len > fit)
			fputs("..", d->f);
	}
	fputs("</text></g>\n", d->f);
}

/* Wide children side by side in path order, then one "..." for the narrow ones (zooming in shows it). */
static void draw_node(const struct fg_draw *d, const struct fg_node *n, uint64_t x, size_t level)
{
	struct fg_box rest = { .name = "...", .level = level + 1 };
	const struct fg_node *c;
	uint64_t cx = x;

	box_write(d, &(struct fg_box){ n->name, x, n->value, n->base, level, 0 });
	for (c = n->child; c; c = c->next) {
		if (!c->value)
			continue;	/* in a diff: before's alone */
		if (c->value * d->scale < FG_MIN_W) {
			rest.value += c->value;
			rest.base += c->base;
			rest.merged++;
			continue;
		}
		draw_node(d, c, cx, level + 1);
		cx += c->value;
	}
	rest.x = cx;
	if (rest.merged)
		box_write(d, &rest);
}

/* Rows draw_node fills above n; *max_delta grows to the largest change of a frame above n. */
static size_t node_depth(const struct fg_node *n, double scale, uint64_t *max_delta)
{
	const struct fg_node *c;
	size_t depth = 0, sub;
	bool narrow = false;
	uint64_t mag;

	for (c = n->child; c; c = c->next) {
		if (!c->value)
			continue;
		mag = c->value > c->base ? c->value - c->base : c->base - c->value;
		if (mag > *max_delta)
			*max_delta = mag;
		if (c->value * scale < FG_MIN_W) {
			narrow = true;
			continue;
		}
		sub = node_depth(c, scale, max_delta) + 1;
		if (sub > depth)
			depth = sub;
	}
	return narrow && !depth ? 1 : depth;
}

/*
 * The script: frames carry their place in units of weight (data-x, data-w) and their row (data-l); a click zooms
 * by placing every frame again relative to the clicked one (its ancestors full width and faded, the rest hidden).
 * search() colours the frames whose name matches and shows the share of the whole they cover, each unit counted
 * once however many matching frames stack on it. No external files: the SVG must work offline and as one file.
 */
static const char fg_script[] =
	"var frames = [], details, matched, unzoombtn, searchbtn, searching = null;\n"
	"function init(evt) {\n"
	"  var gs = document.getElementsByClassName('f'), i, g, t;\n"
	"  details = document.getElementById('details'); matched = document.getElementById('matched');\n"
	"  unzoombtn = document.getElementById('unzoom'); searchbtn = document.getElementById('search');\n"
	"  for (i = 0; i < gs.length; i++) {\n"
	"    g = gs[i]; t = g.getElementsByTagName('title')[0].textContent;\n"
	"    g.fx = +g.getAttribute('data-x'); g.fw = +g.getAttribute('data-w'); g.fl = +g.getAttribute('data-l');\n"
	"    g.fname = t.substring(0, t.lastIndexOf(' ('));\n"
	"    g.frect = g.getElementsByTagName('rect')[0]; g.ftext = g.getElementsByTagName('text')[0];\n"
	"    g.ffill = g.frect.getAttribute('fill');\n"
	"    if (g.fl == 0) fg.total = g.fw;\n"
	"    frames.push(g);\n"
	"  }\n"
	"  document.addEventListener('click', click); document.addEventListener('keydown', key);\n"
	"  document.addEventListener('mouseover', show); document.addEventListener('mouseout', hide);\n"
	"}\n"
	"function label(g, w) {\n"
	"  var fit = Math.floor(w / fg.cw) - 1, n = g.fname;\n"
	"  g.ftext.textContent = w < 4 * fg.cw ? '' : n.length > fit ? n.substring(0, fit - 2) + '..' : n;\n"
	"}\n"
	"function place(g, x, w) {\n"
	"  g.frect.setAttribute('x', (fg.pad + x).toFixed(1)); g.frect.setAttribute('width', w.toFixed(1));\n"
	"  g.ftext.setAttribute('x', (fg.pad + x + 3).toFixed(1)); label(g, w);\n"
	"}\n"
	"function zoom(z) {\n"
	"  var i, g, k = fg.w / z.fw;\n"
	"  for (i = 0; i < frames.length; i++) {\n"
	"    g = frames[i];\n"
	"    if (g.fl < z.fl && g.fx <= z.fx && g.fx + g.fw >= z.fx + z.fw) {\n"
	"      g.classList.add('parent'); g.classList.remove('hide'); place(g, 0, fg.w);\n"
	"    } else if (g.fl >= z.fl && g.fx >= z.fx && g.fx + g.fw <= z.fx + z.fw) {\n"
	"      g.classList.remove('parent'); g.classList.remove('hide'); place(g, (g.fx - z.fx) * k, g.fw * k);\n"
	"    } else {\n"
	"      g.classList.add('hide');\n"
	"    }\n"
	"  }\n"
	"  unzoombtn.classList.remove('hide');\n"
	"}\n"
	"function unzoom() {\n"
	"  var i, g, k = fg.w / fg.total;\n"
	"  for (i = 0; i < frames.length; i++) {\n"
	"    g = frames[i]; g.classList.remove('parent'); g.classList.remove('hide'); place(g, g.fx * k, g.fw * k);\n"
	"  }\n"
	"  unzoombtn.classList.add('hide');\n"
	"}\n"
	"function reset_search() {\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    frames[i].frect.setAttribute('fill', frames[i].ffill); frames[i].classList.remove('match');\n"
	"  }\n"
	"  searching = null; searchbtn.textContent = 'Search'; matched.textContent = ' ';\n"
	"}\n"
	"function search(term) {\n"
	"  var i, g, re = null, r = [], sum = 0, end = 0;\n"
	"  reset_search();\n"
	"  if (!term) return 0;\n"
	"  try { re = new RegExp(term); } catch (err) { re = null; }\n"
	"  for (i = 0; i < frames.length; i++) {\n"
	"    g = frames[i];\n"
	"    if (re ? !re.test(g.fname) : g.fname.indexOf(term) < 0) continue;\n"
	"    g.frect.setAttribute('fill', 'rgb(230,0,230)'); g.classList.add('match'); r.push([g.fx, g.fx + g.fw]);\n"
	"  }\n"
	"  r.sort(function (a, b) { return a[0] - b[0]; });\n"
	"  for (i = 0; i < r.length; i++) {\n"
	"    if (r[i][1] <= end) continue;\n"
	"    sum += r[i][1] - Math.max(r[i][0], end); end = r[i][1];\n"
	"  }\n"
	"  searching = term; searchbtn.textContent = 'Reset Search';\n"
	"  matched.textContent = 'Matched: ' + (100 * sum / fg.total).toFixed(2) + '%';\n"
	"  return sum / fg.total;\n"
	"}\n"
	"function search_prompt() {\n"
	"  if (searching !== null) { reset_search(); return; }\n"
	"  var t = prompt('Search frames (a regular expression):', '');\n"
	"  if (t) search(t);\n"
	"}\n"
	"function click(e) {\n"
	"  var t = e.target, g = t.closest ? t.closest('g.f') : null;\n"
	"  if (t.id == 'unzoom') unzoom();\n"
	"  else if (t.id == 'search') search_prompt();\n"
	"  else if (g && g.fl == 0) unzoom();\n"
	"  else if (g) zoom(g);\n"
	"}\n"
	"function key(e) {\n"
	"  if (e.key == 'F3' || ((e.ctrlKey || e.metaKey) && e.key == 'f')) { e.preventDefault(); search_prompt(); }\n"
	"  else if (e.key == 'Escape') reset_search();\n"
	"}\n"
	"function show(e) {\n"
	"  var g = e.target.closest ? e.target.closest('g.f') : null;\n"
	"  if (g) details.textContent = g.getElementsByTagName('title')[0].textContent;\n"
	"}\n"
	"function hide(e) { details.textContent = ' '; }\n";

static void svg_head(FILE *f, double height, const char *title)
{
	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" "
		"xmlns=\"http://www.w3.org/2000/svg\" onload=\"init(evt)\">\n", FG_WIDTH, height, FG_WIDTH, height);
	fputs("<style>text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }\n"
	      "g.f text { pointer-events: none; } g.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; }\n"
	      ".hide { display: none; } .parent { opacity: 0.5; } .btn { cursor: pointer; fill: #335; }\n"
	      "#title { font-size: 17px; }</style>\n<script><![CDATA[\n", f);
	fprintf(f, "var fg = { w: %d, pad: %d, cw: %.1f, total: 1 };\n", FG_WIDTH - 2 * FG_PAD, FG_PAD, FG_CHAR_W);
	fputs(fg_script, f);
	fputs("]]></script>\n", f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" fill=\"#f8f8f0\"/>\n", FG_WIDTH, height);
	fprintf(f, "<text id=\"title\" x=\"%d\" y=\"22\" text-anchor=\"middle\">", FG_WIDTH / 2);
	mt_text__put_xml(f, title, SIZE_MAX);
	fprintf(f, "</text>\n<text id=\"unzoom\" class=\"btn hide\" x=\"%d\" y=\"22\">Reset Zoom</text>\n"
		"<text id=\"search\" class=\"btn\" x=\"%d\" y=\"22\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"40\"> </text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"40\" text-anchor=\"end\"> </text>\n",
		FG_PAD, FG_WIDTH - FG_PAD, FG_PAD, FG_WIDTH - FG_PAD);
}

static int svg_write(FILE *f, const struct fg_path *paths, size_t n, struct fg_draw *d, const char *title)
{
	struct fg_node root = { .name = "all" };
	int err;

	err = tree_build(&root, paths, n);
	if (!err) {
		d->f = f;
		d->total = root.value ? root.value : 1;
		d->scale = (FG_WIDTH - 2.0 * FG_PAD) / d->total;
		d->max_delta = root.value > root.base ? root.value - root.base : root.base - root.value;
		d->depth = node_depth(&root, d->scale, &d->max_delta);
		if (!d->max_delta)
			d->max_delta = 1;
		svg_head(f, FG_TOP + (d->depth + 1.0) * FG_FRAME_H + FG_PAD, title);
		if (root.value)
			draw_node(d, &root, 0, 0);
		else
			fprintf(f, "<text x=\"%d\" y=\"%d\">no allocation stacks</text>\n", FG_PAD, FG_TOP + 12);
		fputs("</svg>\n", f);
	}
	node_free(&root);
	return err ? err : ferror(f) ? -EIO : 0;
}

int mt_flamegraph__svg(FILE *f, struct mt_stacks *s, enum mt_fg_weight w, const char *title)
{
	struct fg_draw d = { .unit = mt_fg_weight__unit(w) };
	struct fg_path *paths;
	size_t n;
	int err;

	err = paths_build(s, w, &paths, &n);
	if (err)
		return err;
	err = svg_write(f, paths, n, &d, title);
	paths_free(paths, n);
	return err;
}

int mt_flamegraph__diff_svg(FILE *f, struct mt_stacks *before, struct mt_stacks *after, enum mt_fg_weight w,
			    const char *title)
{
	struct fg_draw d = { .unit = mt_fg_weight__unit(w), .diff = true };
	struct fg_path *paths;
	size_t n;
	int err;

	err = paths_build_diff(before, after, w, &paths, &n);
	if (err)
		return err;
	err = svg_write(f, paths, n, &d, title);
	paths_free(paths, n);
	return err;
}
