/* flamegraph.c — `memtrack flamegraph [--collapsed] [--weight bytes|count|leaked] DIR`: stacks as a flame graph. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/log.h"
#include "report/flamegraph.h"
#include "report/report.h"

#define FG_WIDTH 1200		/* SVG pixels */
#define FG_FRAME_H 16
#define FG_PAD 10
#define FG_TOP 44		/* title and the details line */
#define FG_CHAR_W 7.0		/* average glyph width at font-size 12 */
#define FG_MIN_W 0.1		/* frames narrower than this are left out, as flamegraph.pl does */

/* One call path: frame names outermost first, and its weight. */
struct fg_path {
	char **names;
	size_t n;
	uint64_t weight;
};

struct fg_node {
	const char *name;
	uint64_t value;
	struct fg_node *child;	/* first child; children come in path order */
	struct fg_node *last;
	struct fg_node *next;
};

static uint64_t entry_weight(const struct mt_stack_entry *e, enum mt_fg_weight w)
{
	return w == MT_FG_COUNT ? e->allocations : w == MT_FG_LEAKED ? e->leaked_bytes : e->bytes;
}

/* Collapsed-format names cannot hold the separator or a line break. */
static char *fg_name(struct mt_stacks *s, const struct mt_frame *f)
{
	char buf[512], *p;
	struct mt_sym sym;

	mt_stacks__symbolize(s, f, &sym);
	mt_frame__name(f, &sym, false, buf, sizeof(buf));
	for (p = buf; *p; p++)
		if (*p == ';' || *p == '\n' || *p == '\r')
			*p = ':';
	return strdup(buf);
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

static int path_fill(struct mt_stacks *s, const struct mt_stack_entry *e, struct fg_path *p)
{
	size_t k, n = e->defined ? e->nframes : 1;

	p->names = calloc(n ? n : 1, sizeof(*p->names));
	if (!p->names)
		return -ENOMEM;
	p->n = n;
	if (!e->defined) {
		p->names[0] = strdup("[stack not recorded]");
		return p->names[0] ? 0 : -ENOMEM;
	}
	for (k = 0; k < n; k++) {
		p->names[k] = fg_name(s, &e->frames[n - 1 - k]);	/* outermost first */
		if (!p->names[k])
			return -ENOMEM;
	}
	return 0;
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

static bool path_same(const struct fg_path *x, const struct fg_path *y)
{
	return !path_cmp(x, y);
}

/* Every path with a weight, sorted frame by frame, equal ones merged. */
static int paths_build(struct mt_stacks *s, enum mt_fg_weight w, struct fg_path **out, size_t *count)
{
	size_t i, n = 0, total = mt_stacks__count(s), k;
	struct fg_path *paths = calloc(total ? total : 1, sizeof(*paths));
	int err = 0;

	if (!paths)
		return -ENOMEM;
	for (i = 0; !err && i < total; i++) {
		const struct mt_stack_entry *e = mt_stacks__entry(s, i);

		if (!entry_weight(e, w))
			continue;
		paths[n].weight = entry_weight(e, w);
		err = path_fill(s, e, &paths[n++]);
	}
	if (err) {
		paths_free(paths, n);
		return err;
	}
	mt_array__sort(paths, n, sizeof(*paths), path_cmp);
	for (i = k = 0; i < n; i++) {
		if (k && path_same(&paths[k - 1], &paths[i])) {
			paths[k - 1].weight += paths[i].weight;
			path_release(&paths[i]);
			continue;
		}
		paths[k++] = paths[i];
	}
	*out = paths;
	*count = k;
	return 0;
}

int mt_flamegraph__collapsed(FILE *f, struct mt_stacks *s, enum mt_fg_weight w)
{
	struct fg_path *paths;
	size_t n, i, k;
	int err;

	err = paths_build(s, w, &paths, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		for (k = 0; k < paths[i].n; k++)
			fprintf(f, "%s%s", k ? ";" : "", paths[i].names[k]);
		fprintf(f, "%s%" PRIu64 "\n", paths[i].n ? " " : "[no frames] ", paths[i].weight);
	}
	paths_free(paths, n);
	return ferror(f) ? -EIO : 0;
}

/* ---- the SVG ---- */

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

static int tree_build(struct fg_node *root, const struct fg_path *paths, size_t n, size_t *depth)
{
	struct fg_node *node;
	size_t i, k;

	for (i = 0; i < n; i++) {
		root->value += paths[i].weight;
		node = root;
		for (k = 0; k < paths[i].n; k++) {
			node = node_child(node, paths[i].names[k]);
			if (!node)
				return -ENOMEM;
			node->value += paths[i].weight;
		}
		if (paths[i].n > *depth)
			*depth = paths[i].n;
	}
	return 0;
}

static void xml_text(FILE *f, const char *s, size_t max)
{
	size_t i;

	for (i = 0; s[i] && i < max; i++) {
		switch (s[i]) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			fputc((unsigned char)s[i] < 0x20 ? '?' : s[i], f);
		}
	}
}

/* flamegraph.pl's "hot" palette, seeded by the name so a function keeps its colour across graphs. */
static void fg_color(const char *name, int *r, int *g, int *b)
{
	uint32_t h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	*r = 205 + (int)(h % 50);
	*g = (int)((h >> 8) % 230);
	*b = (int)((h >> 16) % 55);
}

struct fg_draw {
	FILE *f;
	double scale;		/* pixels per unit of weight */
	size_t depth;		/* frames of the deepest path, the root excluded */
	uint64_t total;
	const char *unit;
};

static void draw_node(const struct fg_draw *d, const struct fg_node *n, double x, size_t level)
{
	double w = n->value * d->scale, y = FG_TOP + (double)(d->depth - level) * FG_FRAME_H, cx = x;
	size_t fit = w > 3 * FG_CHAR_W ? (size_t)(w / FG_CHAR_W) - 1 : 0;
	const struct fg_node *c;
	int r, g, b;

	if (w < FG_MIN_W)
		return;
	fg_color(n->name, &r, &g, &b);
	fputs("<g><title>", d->f);
	xml_text(d->f, n->name, SIZE_MAX);
	fprintf(d->f, " (%" PRIu64 " %s, %.2f%%)</title>", n->value, d->unit, 100.0 * n->value / d->total);
	fprintf(d->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" rx=\"2\"/>",
		x, y, w, FG_FRAME_H - 1, r, g, b);
	if (fit) {
		fprintf(d->f, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + FG_FRAME_H - 4);
		xml_text(d->f, n->name, strlen(n->name) > fit ? fit - 2 : fit);
		if (strlen(n->name) > fit)
			fputs("..", d->f);
		fputs("</text>", d->f);
	}
	fputs("</g>\n", d->f);
	for (c = n->child; c; c = c->next) {
		draw_node(d, c, cx, level + 1);
		cx += c->value * d->scale;
	}
}

static void svg_head(FILE *f, double height, const char *title)
{
	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" "
		"xmlns=\"http://www.w3.org/2000/svg\" onload=\"init(evt)\">\n", FG_WIDTH, height, FG_WIDTH, height);
	fputs("<style>text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; pointer-events: none; }\n"
	      "g:hover rect { stroke: #000; stroke-width: 0.5; } #title { font-size: 17px; }</style>\n"
	      "<script><![CDATA[\n"
	      "var details;\n"
	      "function init(evt) { details = document.getElementById('details'); }\n"
	      "function show(e) { var g = e.target.closest('g'); if (g && details) details.textContent = "
	      "g.querySelector('title').textContent; }\n"
	      "function hide(e) { if (details) details.textContent = ' '; }\n"
	      "document.addEventListener('mouseover', show); document.addEventListener('mouseout', hide);\n"
	      "]]></script>\n", f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" fill=\"#f8f8f0\"/>\n", FG_WIDTH, height);
	fprintf(f, "<text id=\"title\" x=\"%d\" y=\"22\" text-anchor=\"middle\">", FG_WIDTH / 2);
	xml_text(f, title, SIZE_MAX);
	fprintf(f, "</text>\n<text id=\"details\" x=\"%d\" y=\"38\"> </text>\n", FG_PAD);
}

int mt_flamegraph__svg(FILE *f, struct mt_stacks *s, enum mt_fg_weight w, const char *title)
{
	static const char *const units[] = { [MT_FG_BYTES] = "bytes", [MT_FG_COUNT] = "allocations",
					     [MT_FG_LEAKED] = "bytes leaked" };
	struct fg_node root = { .name = "all" };
	struct fg_draw d = { .f = f, .unit = units[w] };
	struct fg_path *paths;
	size_t n;
	int err;

	err = paths_build(s, w, &paths, &n);
	if (err)
		return err;
	err = tree_build(&root, paths, n, &d.depth);
	if (!err) {
		d.total = root.value ? root.value : 1;
		d.scale = (FG_WIDTH - 2.0 * FG_PAD) / d.total;
		svg_head(f, FG_TOP + (d.depth + 1.0) * FG_FRAME_H + FG_PAD, title);
		if (root.value)
			draw_node(&d, &root, FG_PAD, 0);
		else
			fprintf(f, "<text x=\"%d\" y=\"%d\">no allocation stacks</text>\n", FG_PAD, FG_TOP + 12);
		fputs("</svg>\n", f);
	}
	node_free(&root);
	paths_free(paths, n);
	return err ? err : ferror(f) ? -EIO : 0;
}
