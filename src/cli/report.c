// SPDX-License-Identifier: GPL-2.0-only
/* report.c — `memtrack report`: its options and exit status; the printing is src/report/report.c */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli/commands.h"
#include "cli/filter_opts.h"
#include "common/args.h"
#include "common/log.h"
#include "report/leaks.h"
#include "report/metadata.h"
#include "report/report.h"
#include "report/sizes.h"
#include "report/sites.h"

struct report_args {
	bool json;
	bool attach;
	bool full_paths;
	bool sites_given;
	bool leaks;
	bool sizes;
	bool fp;
	bool full_names;
	enum mt_report_rows rows;	/* --by-pid, --by-exe */
	size_t top;
	struct mt_suppress_args sup;
	struct mt_filter filter;
	char filtered[16];		/* the first of --pid, --exe, --from, --to and --between given, or "" */
	const char *dir;
};

/* What the report is made of, once loaded. */
struct report_parts {
	struct mt_model *m;
	struct mt_stacks *stacks;
	struct mt_sites *sites;
	struct mt_suppressions *sup;
	struct mt_leaks *leaks;
	struct mt_metadata *metadata;
};

#define REPORT_USAGE "memtrack report [--json] [--attach | --sites N] DIR"

static void report_usage(FILE *f)
{
	fputs("usage: memtrack report [--json] [--sites N] [--full-paths] [--sizes] [--fp] [--full-names] [--by-pid | --by-exe] [FILTER...] [SUPPRESS...] DIR\n"
	      "       memtrack report --leaks [--json] [--sites N] [FILTER...] [SUPPRESS...] DIR\n"
	      "       memtrack report --attach [--json] DIR\n"
	      "Heap allocation statistics of a recorded run: totals, then one row per process image (a process that\n"
	      "execs has one per program it ran), then (recorded with --stacks) the top allocation sites by bytes and\n"
	      "by count.\n"
	      "  --json        one JSON object {\"totals\", \"processes\", \"sites\"} instead of text\n"
	      "  --sites N     sites in each ranking (default 10; 0 leaves the section out; with --leaks: all)\n"
	      "  --full-paths  source files by their whole path, not relative to their compilation directory\n"
	      "  --sizes       also a histogram by power-of-two size class and the 20 largest allocations\n"
	      "  --fp          the frame-pointer chains, not the DWARF ones (which are unwound on first use)\n"
	      "  --full-names  C++ names whole: template arguments are elided by default (std::vector<…>::push_back)\n"
	      "  --by-pid      one row per process image, however many (the default up to 12)\n"
	      "  --by-exe      one row per executable, however few (the default above 12 images)\n"
	      "  --leaks       the leaked blocks instead, by allocation site (by process without stacks), largest\n"
	      "                first; with --json: {\"totals\", \"leaks\", \"still_live\"}\n"
	      "  --attach      the attach log instead: each file looked at, its probes, how long its thread was held\n"
	      "                (with --json: {\"attach\": [...]}, the records as `memtrack dump` prints them)\n"
	      "FILTER (what is counted; --pid and --exe repeat):\n"
	      "  --pid P       process P's images only\n"
	      "  --exe NAME    images of that executable only: a path, or its base name\n"
	      "  --from T, --to T\n"
	      "                what happened from T to T seconds after the session started (decimals allowed);\n"
	      "                frees of blocks allocated before T are counted apart\n"
	      "  --between A B what happened from the first `mark A` line written to the control FIFO (record\n"
	      "                --paused, MEMTRACK_CONTROL) to the next `mark B`, in the records' order (both\n"
	      "                must be there)\n"
	      "SUPPRESS (leaks not reported; `*` any run, `^` `$` anchors; without stacks PATTERN can only match\n"
	      "the exe):\n"
	      MT_SUPPRESS_USAGE
	      "  -h, --help    this text\n"
	      "Exit status: 0 (a filter that matches nothing included); 1 when DIR is damaged (the report covers the\n"
	      "records before the damage); 2 when DIR cannot be read or the command line is wrong.\n", f);
}

/* The attach log is all --attach prints; --leaks prints no sites ranking. One message for each such pair. */
static int report_conflicts(const struct report_args *a)
{
	const char *other = a->sites_given ? "--sites" : a->full_paths ? "--full-paths" : a->leaks ? "--leaks" :
			    a->sup.nfiles ? "--suppress" : a->sup.no_default ? "--no-default-suppress" :
			    a->filtered[0] ? a->filtered : NULL;

	if (a->attach && other) {
		pr_err("report: --attach prints the attach log only: %s does not go with it (usage: %s)\n", other,
		       REPORT_USAGE);
		return -EINVAL;
	}
	return a->filtered[0] ? mt_filter__check(&a->filter, "report") : 0;
}

static int report_option(void *ctx, int val, const char *name, const char *arg)
{
	struct report_args *a = ctx;
	unsigned long long top;
	int err;

	switch (val) {
	case 'j': a->json = true; return 0;
	case 'a': a->attach = true; return 0;
	case 'f': a->full_paths = true; return 0;
	case 'l': a->leaks = true; return 0;
	case 'n': return mt_suppress_args__add(&a->sup, "report", NULL);
	case 'z': a->sizes = true; return 0;
	case 'F': a->fp = true; return 0;
	case 'N': a->full_names = true; return 0;
	case 'R': a->rows = MT_ROWS_BY_PID; return 0;
	case 'E': a->rows = MT_ROWS_BY_EXE; return 0;
	case 'S': return mt_suppress_args__add(&a->sup, "report", arg);
	case MT_FILTER_OPT:
		if (!a->filtered[0])
			snprintf(a->filtered, sizeof(a->filtered), "--%s", name);
		return mt_filter_opts__take(&a->filter, "report", name, arg);
	case 'B':	/* two values: getopt has the first, the second is the next word */
		if (!a->filtered[0])
			snprintf(a->filtered, sizeof(a->filtered), "--between");
		return mt_filter__between(&a->filter, "report", arg, mt_args__next_word());
	default:	/* --sites */
		err = mt_args__number(name, arg, 0, 1000000, false, &top);
		a->top = top;
		a->sites_given = true;
		return err;
	}
}

/* 0: go on; 1: --help was printed; -EINVAL: a usage error was reported. */
static int report_args(int argc, char **argv, struct report_args *a)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "attach", no_argument, NULL, 'a' },
		{ "sites", required_argument, NULL, 's' },
		{ "full-paths", no_argument, NULL, 'f' },
		{ "leaks", no_argument, NULL, 'l' },
		{ "suppress", required_argument, NULL, 'S' },
		{ "no-default-suppress", no_argument, NULL, 'n' },
		{ "sizes", no_argument, NULL, 'z' },
		{ "fp", no_argument, NULL, 'F' },
		{ "full-names", no_argument, NULL, 'N' },
		{ "by-pid", no_argument, NULL, 'R' },
		{ "by-exe", no_argument, NULL, 'E' },
		MT_FILTER_OPTIONS,
		{ "between", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ret = mt_args__parse("report", argc, argv, opts, false, report_option, a, report_usage);

	if (ret)
		return ret;
	if (report_conflicts(a))
		return -EINVAL;
	return mt_args__one_dir("report", REPORT_USAGE, argc, argv, &a->dir);
}

static int report_attach(const struct report_args *a)
{
	struct mt_read_status st;
	int err, werr = 0;

	err = a->json ? mt_dump__attach_json(stdout, a->dir, &st) : mt_report__attach(stdout, a->dir, &st);
	if (fflush(stdout))
		werr = errno;
	else if (ferror(stdout))
		werr = EIO;
	if (werr) {
		pr_err("report: writing to stdout: %s\n", strerror(werr));
		return 2;
	}
	return mt_report__exit_status(a->dir, err, &st, "report");
}

static void parts_free(struct report_parts *p)
{
	mt_metadata__free(p->metadata);
	mt_leaks__free(p->leaks);
	mt_suppressions__free(p->sup);
	mt_sites__free(p->sites);
	mt_stacks__free(p->stacks);
	mt_model__free(p->m);
}

/* --between's marks are in DIR, A then B: else there is no window to report. 0, or 2 after one error line. */
static int report_between_found(const struct report_args *a, const struct mt_model *m)
{
	const struct mt_totals *t = mt_model__totals(m);

	if (!a->filter.between[0] || t->between_closed)
		return 0;
	if (t->between_open)
		pr_err("report: %s has no `mark %s` line after `mark %s`\n", a->dir, a->filter.between[1],
		       a->filter.between[0]);
	else
		pr_err("report: %s has no `mark %s` line\n", a->dir, a->filter.between[0]);
	return 2;
}

/*
 * The model and the stacks. Without a filter the stacks' read makes the model too (the same model, one read of DIR
 * instead of two: a replay is most of a report's time); with one, the model is the filtered one and the stacks
 * are read after it. *err and *st: the model's read. 0, or the exit status after one error line.
 */
static int report_load(const struct report_args *a, struct report_parts *p, int *err, struct mt_read_status *st)
{
	struct mt_stacks_opts opts = { .full_paths = a->full_paths, .fp_chains = a->fp, .keep_model = true };
	struct mt_model_opts mo = { &a->filter, true };
	struct mt_read_status sst;
	int ret, serr;

	if (!a->filtered[0]) {
		*err = mt_stacks__load(a->dir, &opts, &p->stacks, st);
		p->m = p->stacks ? mt_stacks__take_model(p->stacks) : NULL;
		return p->m ? 0 : mt_report__exit_status(a->dir, *err, st, "report");
	}
	*err = mt_model__load_with(a->dir, &mo, &p->m, st);
	ret = !p->m ? mt_report__exit_status(a->dir, *err, st, "report") : report_between_found(a, p->m);
	if (ret)
		return ret;
	opts.keep_model = false;
	serr = mt_stacks__load(a->dir, &opts, &p->stacks, &sst);
	if (!p->stacks) {
		pr_err("%s: stacks: %s\n", a->dir, sst.reason[0] ? sst.reason : strerror(-serr));
		return 2;
	}
	return 0;
}

/* The suppressions and what they suppress, the sites, the leaks, the command lines; 0 or 2 after an error line. */
static int report_extras(const struct report_args *a, struct report_parts *p)
{
	p->sup = mt_suppressions__from_args(&a->sup);
	if (!p->sup)
		return 2;
	mt_modules__set_full_names(mt_stacks__modules(p->stacks), a->full_names);
	mt_suppressions__apply(p->sup, p->stacks);
	if (!a->leaks)
		p->sites = mt_sites__build(p->stacks);
	if (a->leaks || p->sites)
		p->leaks = mt_leaks__build(p->m, p->stacks, p->sup);
	if (!p->leaks) {
		pr_err("%s: %s\n", a->dir, strerror(errno));
		return 2;
	}
	p->metadata = mt_metadata__load(a->dir, "the rows have no command lines");
	return 0;
}

/* The terminal's width when stdout is one, else 0 (the command lines are then cut to a fixed width). */
static unsigned int terminal_columns(void)
{
	struct winsize ws;

	if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || !ws.ws_col)
		return 0;
	return ws.ws_col;
}

/* The chosen output on stdout; 0 or -errno. */
static int report_print(const struct report_args *a, const struct report_parts *p)
{
	struct mt_report_extra x = { p->metadata, p->leaks, a->filtered[0] ? &a->filter : NULL, true, a->sizes,
				     a->rows, terminal_columns() };
	int ret;

	if (a->leaks)
		ret = a->json ? mt_report__leaks_json(stdout, p->m, &x, a->sites_given ? a->top : 0) :
				mt_report__leaks_text(stdout, p->m, a->dir, &x, a->sites_given ? a->top : 0);
	else if (a->json)
		ret = mt_report__json_with(stdout, p->m, &x, p->sites, a->top);
	else
		ret = mt_report__text_with(stdout, p->m, a->dir, &x);
	if (!ret && !a->leaks && !a->json && a->top && p->sites && p->sites->any &&
	    mt_model__totals(p->m)->images) {
		ret = mt_report__sites_text(stdout, p->sites, a->top);
		if (!ret)
			ret = mt_sites__by_exe_text(stdout, p->sites, a->top);
		if (!ret)
			ret = mt_sites__peak_text(stdout, p->sites, a->top);
		if (!ret)
			ret = mt_sites__temporary_text(stdout, p->sites, a->top);
		if (!ret && a->filtered[0])
			fputs("(the sites are the whole recording's: the filter does not narrow them)\n", stdout);
	}
	if (!ret && a->sizes && !a->leaks && !a->json && p->sites)
		ret = mt_sizes__text(stdout, p->sites);
	if (fflush(stdout) && !ret)
		ret = -errno;
	return ret;
}

int mt_cmd_report(int argc, char **argv)
{
	struct report_args a = { .top = 10, .filter = { .to_ns = MT_FILTER_END } };
	struct report_parts p = { 0 };
	struct mt_read_status st;
	int err, ret;

	ret = report_args(argc, argv, &a);
	if (ret || a.attach) {
		mt_filter__release(&a.filter);
		return ret ? (ret > 0 ? 0 : 2) : report_attach(&a);
	}
	ret = report_load(&a, &p, &err, &st);
	if (!ret)
		ret = report_extras(&a, &p);
	if (!ret) {
		ret = report_print(&a, &p);
		if (ret)
			pr_err("report: writing to stdout: %s\n", strerror(-ret));
		ret = ret ? 2 : mt_report__exit_status(a.dir, err, &st, "report");
	}
	parts_free(&p);
	mt_filter__release(&a.filter);
	return ret;
}
