// SPDX-License-Identifier: GPL-2.0-only
/* view.c — `memtrack view`: its options, what the page is made of, writing it; the page is src/report/view.c */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli/commands.h"
#include "common/args.h"
#include "common/log.h"
#include "report/leaks.h"
#include "report/loader.h"
#include "report/metadata.h"
#include "report/view.h"
#include "cli/view_diff.h"

#define VIEW_USAGE "memtrack view [-o FILE.html] [--fp] DIR | BEFORE AFTER"

/* What the page is made of, once loaded. */
struct view_parts {
	struct mt_model *m;
	struct mt_timeline *timeline;
	struct mt_view_steps *steps;
	struct mt_stacks *stacks;
	struct mt_sites *sites;
	struct mt_suppressions *sup;
	struct mt_leaks *leaks;
	struct mt_metadata *metadata;
};

static void view_usage(FILE *f)
{
	fputs("usage: " VIEW_USAGE "\n"
	      "One self-contained HTML page of a run recorded with --stacks, for any browser, offline: the report's\n"
	      "header and totals, the live heap over time per process (RSS on its own axis), and a flame graph of the\n"
	      "allocations in a window dragged on the timeline, of the bytes live at an instant clicked (the peak\n"
	      "first), or of the leaks; search, zoom, an inverted view, a root per process or per executable; tables\n"
	      "of the top sites (bytes, count, peak, temporaries), the leaks by site, the executables and the\n"
	      "processes, sorted by a click on a column, a row zooming the flame graph to its frames.\n"
	      "With two DIRs, BEFORE and AFTER: one page comparing them as `memtrack diff` does, both commands and\n"
	      "totals side by side with the changes, both timelines on one time axis from each run's start, a flame\n"
	      "graph of AFTER coloured by the change from BEFORE (red more, blue less; sized by before, after or the\n"
	      "larger on request, so that what only BEFORE had shows), and the sites by their change.\n"
	      "  -o FILE.html  write the page there (replacing the file at that name) instead of stdout\n"
	      "  --fp          the frame-pointer chains, not the DWARF ones\n"
	      "  -h, --help    this text\n"
	      "Exit status: 0; 1 when DIR is damaged (the page covers the records before the damage); 2 when DIR\n"
	      "cannot be read, was recorded without --stacks, or the command line is wrong.\n", f);
}

static int view_option(void *ctx, int val, const char *name, const char *arg)
{
	struct mt_view_args *a = ctx;

	(void)name;
	if (val == 'o')
		a->out = arg;
	else
		a->fp = true;
	return 0;
}

/* 0: go on; 1: --help was printed; -EINVAL: a usage error was reported. */
static int view_args(int argc, char **argv, struct mt_view_args *a)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "fp", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ret = mt_args__parse_short("view", argc, argv, opts, "o:", false, view_option, a, view_usage);

	if (ret)
		return ret;
	if (argc - optind == 2) {	/* BEFORE AFTER */
		a->dir = argv[optind];
		a->after = argv[optind + 1];
		return 0;
	}
	if (argc - optind > 2) {
		pr_err("view: one DIR, or two: BEFORE AFTER (usage: %s)\n", VIEW_USAGE);
		return -EINVAL;
	}
	return mt_args__one_dir("view", VIEW_USAGE, argc, argv, &a->dir);
}

static void parts_free(struct view_parts *p)
{
	mt_metadata__free(p->metadata);
	mt_leaks__free(p->leaks);
	mt_suppressions__free(p->sup);
	mt_sites__free(p->sites);
	mt_stacks__free(p->stacks);
	mt_view_steps__free(p->steps);
	mt_timeline__free(p->timeline);
	mt_model__free(p->m);
}

/* The stacks, sampled at the page's edges on the way; what report adds to the model. -errno after a message. */
static int view_stacks(const struct mt_view_args *a, struct view_parts *p, int *err, struct mt_read_status *st)
{
	struct mt_stacks_opts opts = { .fp_chains = a->fp, .observe = mt_view_steps__observe, .heap_counts = true };

	p->steps = mt_view_steps__new(mt_view__end_ns(p->m), MT_VIEW_EDGES);
	if (!p->steps)
		return -ENOMEM;
	opts.observe_ctx = p->steps;
	p->sup = mt_suppressions__new(true);
	if (!p->sup)
		return -ENOMEM;
	p->stacks = mt_loader__stacks_with(a->dir, &opts, p->sup, 0, "view", err, st);
	if (!p->stacks)
		return -ENODATA;
	if (mt_view_steps__finish(p->steps, p->stacks))
		return -ENOMEM;
	p->sites = mt_sites__build(p->stacks);
	p->leaks = p->sites ? mt_leaks__build(p->m, p->stacks, p->sup) : NULL;
	if (!p->leaks)
		return -ENOMEM;
	p->metadata = mt_metadata__load(a->dir, "the rows have no command lines");
	return 0;
}

/* The model, the timeline, the stacks: 0, or the exit status after a message. *err: the stacks' read result. */
static int view_load(const struct mt_view_args *a, struct view_parts *p, int *err, struct mt_read_status *st)
{
	struct mt_model_opts mo = { NULL, true };
	struct mt_timeline_opts to = { .exes = true };	/* a big tree's lines by executable */
	int ret;

	ret = mt_model__load_with(a->dir, &mo, &p->m, st);
	if (!p->m)
		return mt_report__exit_status(a->dir, ret, st, "view");
	ret = mt_timeline__build(a->dir, &to, &p->timeline, st);
	if (!p->timeline)
		return mt_report__exit_status(a->dir, ret, st, "view");
	ret = view_stacks(a, p, err, st);
	if (ret == -ENOMEM)
		pr_err("view: %s: %s\n", a->dir, strerror(ENOMEM));
	return ret ? 2 : 0;
}

/* The page into a new file next to out, renamed over it once whole: no file is written through. 0 or -errno. */
static int view_write_file(const char *out, mt_view_page_fn page, const void *ctx)
{
	size_t len = strlen(out);
	char *tmp = malloc(len + 16);
	FILE *f;
	int fd, err;

	if (!tmp)
		return -ENOMEM;
	snprintf(tmp, len + 16, "%s.XXXXXX", out);
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
		goto free_tmp;
	}
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		goto unlink_tmp;
	}
	fchmod(fd, 0644);
	err = page(f, ctx);
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, out))
		err = -errno;
unlink_tmp:
	if (err)
		unlink(tmp);
free_tmp:
	free(tmp);
	return err;
}

int mt_view_cli__write(const char *out, mt_view_page_fn page, const void *ctx)
{
	int ret;

	if (out)
		ret = view_write_file(out, page, ctx);
	else if (isatty(STDOUT_FILENO))
		ret = -ENOTTY;
	else if (!(ret = page(stdout, ctx)) && fflush(stdout))
		ret = -errno;
	if (ret == -ENOTTY)
		pr_err("view: the page is HTML: give -o FILE.html or redirect stdout (%s)\n", VIEW_USAGE);
	else if (ret)
		pr_err("view: writing %s: %s\n", out ? out : "to stdout", strerror(-ret));
	return ret;
}

static int view_page(FILE *f, const void *ctx)
{
	return mt_view__html(f, ctx);
}

static int view_write(const struct mt_view_args *a, const struct view_parts *p)
{
	struct mt_report_extra x = { .metadata = p->metadata, .leaks = p->leaks, .with_sites = true };
	struct mt_view_input in = { a->dir, p->m, p->stacks, p->sites, &x, p->timeline, p->steps };

	return mt_view_cli__write(a->out, view_page, &in);
}

int mt_cmd_view(int argc, char **argv)
{
	struct mt_view_args a = { 0 };
	struct view_parts p = { 0 };
	struct mt_read_status st;
	int err = 0, ret;

	ret = view_args(argc, argv, &a);
	if (ret)
		return ret > 0 ? 0 : 2;
	if (a.after)
		return mt_view_diff__cmd(&a);
	ret = view_load(&a, &p, &err, &st);
	if (!ret)
		ret = view_write(&a, &p) ? 2 : mt_report__exit_status(a.dir, err, &st, "view");
	parts_free(&p);
	return ret;
}
