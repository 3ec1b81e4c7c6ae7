// SPDX-License-Identifier: GPL-2.0-only
/* flamegraph.c — `memtrack flamegraph`: its options and exit status; the printing is src/report/flamegraph.c */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "cli/commands.h"
#include "cli/filter_opts.h"
#include "common/args.h"
#include "common/log.h"
#include "report/flamegraph.h"
#include "report/leaks.h"
#include "report/loader.h"
#include "report/metadata.h"
#include "report/report.h"
#include "report/sites.h"
#include "report/speedscope.h"

#define FG_USAGE "memtrack flamegraph [--format svg|collapsed|speedscope] [--weight W] [--kind K] [--fp] " \
		 "[--no-demangle] [--full-names] " \
		 "[FILTER...] [SUPPRESS...] (DIR | --diff BEFORE AFTER)"

static void flamegraph_usage(FILE *f)
{
	fputs("usage: " FG_USAGE " > out.svg\n"
	      "A flame graph of the allocation stacks of a run recorded with --stacks, DWARF-unwound (on first use,\n"
	      "then kept in DIR/unwind.mtz when DIR is writable). Functions inlined at a call are\n"
	      "frames of their own; C++ and Rust names are demangled. In the SVG a click zooms into a frame,\n"
	      "\"Reset Zoom\" zooms out, \"Search\" (or Ctrl-F) highlights the frames matching a regular expression\n"
	      "and shows their share; frames too narrow to draw are merged into one \"...\" frame per parent.\n"
	      "  --format F      svg (default); collapsed: \"outermost;...;innermost N\" lines (flamegraph.pl);\n"
	      "                  speedscope: speedscope's JSON file format, one profile per weight\n"
	      "  --collapsed     the same as --format collapsed\n"
	      "  --weight W      bytes allocated (default), count of allocations, leaked bytes (leaked at exit,\n"
	      "                  suppressed leaks left out, as `report` counts them), peak: the bytes live\n"
	      "                  when the total live bytes first reached their peak, or live: the bytes still\n"
	      "                  held at the end (processes without an exit record, or the window's end)\n"
	      "  --kind K        what the stacks hold: heap (default) the allocations; mapped: the program's\n"
	      "                  anonymous private mappings by the call that made them (bytes mapped, count\n"
	      "                  of mapping calls, peak: at the highest mapped total, live: still mapped at\n"
	      "                  the end; not leaked, not speedscope); all: both summed\n"
	      "  --fp            the frame-pointer chains the kernel walked, not DWARF's\n"
	      "  --diff          BEFORE AFTER: AFTER's graph, frames red where they grew since BEFORE, blue where\n"
	      "                  they shrank (matched by function names); collapsed: \"path BEFORE AFTER\" lines\n"
	      "  --no-demangle   names as the ELF files spell them (_ZN...)\n"
	      "  --full-names    C++ names whole: template arguments are elided by default (std::vector<…>::push_back)\n"
	      MT_SUPPRESS_USAGE
	      "  -h, --help      this text\n"
	      "FILTER (whose stacks, and when; --pid and --exe repeat; with --diff, for both runs):\n"
	      MT_FILTER_STACKS_USAGE
	      "                  what happened from T to T seconds after the session started (decimals allowed):\n"
	      "                  allocations in it; leaked: what leaked at exits in it; live: what was held at\n"
	      "                  its end; peak: what was live at the highest live total inside it\n"
	      "Exit status: 0; 1 when DIR is damaged (the graph covers the records before the damage);\n"
	      "2 when DIR cannot be read, was recorded without --stacks, or the command line is wrong.\n", f);
}

enum fg_format { FG_SVG, FG_COLLAPSED, FG_SPEEDSCOPE };

struct fg_args {
	enum fg_format format;
	enum mt_fg_weight weight;
	enum mt_fg_weight kind;	/* 0 (the heap), MT_FG_MAPPED or MT_FG_ALL */
	unsigned int names;	/* MT_NAMES_* */
	bool fp;
	bool diff;
	const char *dir;
	const char *before;	/* --diff */
	struct mt_filter filter;
	bool filtered;		/* a FILTER option was given */
	struct mt_suppress_args sup;
};

static int parse_format(const char *arg, enum fg_format *out)
{
	if (!strcmp(arg, "svg"))
		*out = FG_SVG;
	else if (!strcmp(arg, "collapsed"))
		*out = FG_COLLAPSED;
	else if (!strcmp(arg, "speedscope"))
		*out = FG_SPEEDSCOPE;
	else {
		pr_err("flamegraph: --format is svg, collapsed or speedscope, not '%s'\n", arg);
		return -EINVAL;
	}
	return 0;
}

static int parse_weight(const char *arg, enum mt_fg_weight *out)
{
	static const struct { const char *name; enum mt_fg_weight w; } weights[] = {
		{ "bytes", MT_FG_BYTES }, { "count", MT_FG_COUNT }, { "leaked", MT_FG_LEAKED }, { "peak", MT_FG_PEAK },
		{ "live", MT_FG_LIVE },
	};
	size_t i;

	for (i = 0; i < sizeof(weights) / sizeof(weights[0]); i++) {
		if (!strcmp(arg, weights[i].name)) {
			*out = weights[i].w;
			return 0;
		}
	}
	pr_err("flamegraph: --weight is bytes, count, leaked, peak or live, not '%s'\n", arg);
	return -EINVAL;
}

static int flamegraph_operands(int argc, char **argv, struct fg_args *a)
{
	if (!a->diff)
		return mt_args__one_dir("flamegraph", FG_USAGE, argc, argv, &a->dir);
	if (argc - optind != 2) {
		pr_err("flamegraph: --diff takes two DIRs, BEFORE and AFTER (usage: %s)\n", FG_USAGE);
		return -EINVAL;
	}
	if (a->format == FG_SPEEDSCOPE) {
		pr_err("flamegraph: --diff draws an SVG or writes collapsed lines, not speedscope\n");
		return -EINVAL;
	}
	a->before = argv[optind];
	a->dir = argv[optind + 1];
	return 0;
}

static int flamegraph_option(void *ctx, int val, const char *name, const char *arg)
{
	struct fg_args *a = ctx;

	switch (val) {
	case 'c': a->format = FG_COLLAPSED; return 0;
	case 'f': return parse_format(arg, &a->format);
	case 'w': return parse_weight(arg, &a->weight);
	case 'k': return mt_fg_kind__parse("flamegraph", arg, &a->kind);
	case 'd': a->diff = true; return 0;
	case 'n': a->names |= MT_NAMES_RAW; return 0;
	case 'F': a->names |= MT_NAMES_FULL; return 0;
	case 'p': a->fp = true; return 0;
	case 'S': return mt_suppress_args__add(&a->sup, "flamegraph", arg);
	case 'N': return mt_suppress_args__add(&a->sup, "flamegraph", NULL);
	default:	/* MT_FILTER_OPT */
		a->filtered = true;
		return mt_filter_opts__take(&a->filter, "flamegraph", name, arg);
	}
}

/* 0: go on; 1: --help was printed; -EINVAL: a usage error was reported. */
static int flamegraph_args(int argc, char **argv, struct fg_args *a)
{
	static const struct option opts[] = {
		{ "collapsed", no_argument, NULL, 'c' },
		{ "format", required_argument, NULL, 'f' },
		{ "weight", required_argument, NULL, 'w' },
		{ "kind", required_argument, NULL, 'k' },
		{ "diff", no_argument, NULL, 'd' },
		{ "no-demangle", no_argument, NULL, 'n' },
		{ "full-names", no_argument, NULL, 'F' },
		{ "fp", no_argument, NULL, 'p' },
		{ "suppress", required_argument, NULL, 'S' },
		{ "no-default-suppress", no_argument, NULL, 'N' },
		MT_FILTER_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ret = mt_args__parse("flamegraph", argc, argv, opts, false, flamegraph_option, a, flamegraph_usage);

	if (ret)
		return ret;
	if (a->filtered && mt_filter__check(&a->filter, "flamegraph"))
		return -EINVAL;
	if (a->kind == MT_FG_MAPPED && a->weight == MT_FG_LEAKED) {
		pr_err("flamegraph: mappings are not leaked (the kernel ends them with the process): "
		       "--kind mapped takes --weight bytes, count, peak or live\n");
		return -EINVAL;
	}
	if (a->kind && a->format == FG_SPEEDSCOPE) {
		pr_err("flamegraph: speedscope's profiles are the heap's: --kind mapped or all draws an SVG or "
		       "writes collapsed lines\n");
		return -EINVAL;
	}
	a->weight |= a->kind;
	return flamegraph_operands(argc, argv, a);
}

/* The title: what is drawn, and the labels the AFTER (or only) recording was made with. */
static char *flamegraph_title(const struct fg_args *a, const struct mt_stacks *before, const struct mt_stacks *s)
{
	struct mt_metadata *md = mt_metadata__load(a->dir, "the graph has no labels");
	char *labels = mt_labels__text(mt_metadata__labels(md)), *title = NULL;

	mt_metadata__free(md);
	if (labels && asprintf(&title, "memtrack: %s by %s stack (%s chains)%s%s%s%s%s%s",
			       mt_fg_weight__unit(a->weight),
			       a->kind == MT_FG_MAPPED ? "mapping" : a->kind ? "allocation and mapping" : "allocation",
			       mt_stacks__chains(s), before ? ", red: grown since " : "",
			       before ? a->before : "", before ? ", blue: shrunk" : "", *labels ? " [" : "", labels,
			       *labels ? "]" : "") < 0)
		title = NULL;
	free(labels);
	return title;
}

static int flamegraph_write(const struct fg_args *a, struct mt_stacks *before, struct mt_stacks *s)
{
	char *title;
	int err;

	if (before && a->format == FG_COLLAPSED)
		return mt_flamegraph__diff_collapsed(stdout, before, s, a->weight);
	if (a->format == FG_COLLAPSED)
		return mt_flamegraph__collapsed(stdout, s, a->weight);
	title = flamegraph_title(a, before, s);
	if (!title)
		return -ENOMEM;
	if (a->format == FG_SPEEDSCOPE)
		err = mt_speedscope__write(stdout, s, title);
	else if (before)
		err = mt_flamegraph__diff_svg(stdout, before, s, a->weight, title);
	else
		err = mt_flamegraph__svg(stdout, s, a->weight, title);
	free(title);
	return err;
}

/* The graph of the parsed command line on stdout: the exit status. */
static int flamegraph_run(const struct fg_args *a)
{
	struct mt_stacks_opts opts = { .fp_chains = a->fp, .filter = a->filtered ? &a->filter : NULL };
	struct mt_read_status st, bst;
	struct mt_stacks *s = NULL, *before = NULL;
	struct mt_suppressions *sup = mt_suppressions__from_args(&a->sup);
	int err, berr = 0, ret;

	if (!sup || (a->diff && !(before = mt_loader__stacks_with(a->before, &opts, sup, a->names, "flame graph",
								&berr, &bst)))) {
		mt_suppressions__free(sup);
		return 2;
	}
	s = mt_loader__stacks_with(a->dir, &opts, sup, a->names, "flame graph", &err, &st);
	mt_suppressions__free(sup);
	if (!s) {
		mt_stacks__free(before);
		return 2;
	}
	ret = flamegraph_write(a, before, s);
	mt_stacks__free(before);
	mt_stacks__free(s);
	if (!ret && fflush(stdout))
		ret = -errno;
	if (ret) {
		pr_err("flamegraph: %s\n", strerror(-ret));
		return 2;
	}
	ret = a->diff ? mt_report__exit_status(a->before, berr, &bst, "flame graph") : 0;
	err = mt_report__exit_status(a->dir, err, &st, "flame graph");
	return ret > err ? ret : err;
}

int mt_cmd_flamegraph(int argc, char **argv)
{
	struct fg_args a = { .format = FG_SVG, .weight = MT_FG_BYTES, .filter = { .to_ns = MT_FILTER_END } };
	int ret = flamegraph_args(argc, argv, &a);

	ret = ret ? (ret > 0 ? 0 : 2) : flamegraph_run(&a);
	mt_filter__release(&a.filter);
	return ret;
}
