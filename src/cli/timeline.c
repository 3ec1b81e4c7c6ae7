// SPDX-License-Identifier: GPL-2.0-only
/* timeline.c — `memtrack timeline [--json] DIR > out.svg`: its options and exit status; the work is src/report. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/filter_opts.h"
#include "common/args.h"
#include "common/log.h"
#include "report/leaks.h"
#include "report/report.h"
#include "report/timeline.h"

#define TIMELINE_USAGE "memtrack timeline [--json] [--top N] [--points N] [SUPPRESS...] [FILTER...] DIR"

struct timeline_args {
	bool json;
	struct mt_timeline_opts o;
	const char *dir;
	struct mt_filter filter;
	bool filtered;			/* --pid, --exe, --from or --to given */
	struct mt_suppress_args sup;
};

static void timeline_usage(FILE *f)
{
	fputs("usage: " TIMELINE_USAGE " > out.svg\n"
	      "Live heap bytes over time, in total and per process, as the report counts them (blocks inherited at a\n"
	      "fork count in each holder, an exec discards the image's blocks): a standalone SVG with the peak marked\n"
	      "and the forks, execs and exits along the time axis; under the title, what leaked at exit (as `report`\n"
	      "counts it: suppressed leaks apart).\n"
	      "  --json      the series instead: {\"t_ns\": [...], \"total\": [...], \"processes\": [{\"pid\", \"exe\",\n"
	      "              \"peak_bytes\", \"live_bytes\": [...]}], \"others\", \"peak\", \"leaked_bytes\",\n"
	      "              \"suppressed_bytes\", \"events\"}\n"
	      "  --top N     processes drawn apart, the N with the highest peaks (default 5); the rest are \"others\"\n"
	      "  --points N  at most N points (default 2000): past that, each of N time buckets keeps its largest value\n"
	      MT_SUPPRESS_USAGE
	      "  -h, --help  this text\n"
	      "FILTER (--pid and --exe repeat):\n"
	      "  --pid P     process P's series only; the total is the sum of the processes the filter takes\n"
	      "  --exe NAME  processes while they run that executable (a path, or its base name) only\n"
	      "  --from T, --to T\n"
	      "              only from T to T seconds after the session started (decimals allowed); the peak is\n"
	      "              the window's\n"
	      "  --between A B  only from the first `mark A` line written to the control FIFO (record --paused,\n"
	      "              MEMTRACK_CONTROL) to the next `mark B`; the peak is the span's\n"
	      "Exit status: 0; 1 when DIR is damaged (the timeline covers the records before the damage);\n"
	      "2 when DIR cannot be read or the command line is wrong.\n", f);
}

static int timeline_option(void *ctx, int val, const char *name, const char *arg)
{
	struct timeline_args *a = ctx;
	unsigned long long n;

	switch (val) {
	case 'j':
		a->json = true;
		return 0;
	case 't':
	case 'p':
		if (mt_args__number(name, arg, val == 't' ? 1 : 2, 1000000, false, &n))
			return -EINVAL;
		*(val == 't' ? &a->o.top : &a->o.max_points) = n;
		return 0;
	case 'S':
	case 'N':
		return mt_suppress_args__add(&a->sup, "timeline", val == 'S' ? arg : NULL);
	case 'B':	/* two values: getopt has the first, the second is the next word */
		return mt_filter__between(&a->filter, "timeline", arg, mt_args__next_word());
	default:	/* MT_FILTER_OPT */
		a->filtered = true;
		return mt_filter_opts__take(&a->filter, "timeline", name, arg);
	}
}

/* 0: go on; 1: --help was printed; -EINVAL: a usage error was reported. */
static int timeline_args(int argc, char **argv, struct timeline_args *a)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "top", required_argument, NULL, 't' },
		{ "points", required_argument, NULL, 'p' },
		{ "between", required_argument, NULL, 'B' },
		{ "suppress", required_argument, NULL, 'S' },
		{ "no-default-suppress", no_argument, NULL, 'N' },
		MT_FILTER_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ret = mt_args__parse("timeline", argc, argv, opts, false, timeline_option, a, timeline_usage);

	if (ret)
		return ret;
	if ((a->filtered || a->filter.between[0]) && mt_filter__check(&a->filter, "timeline"))
		return -EINVAL;
	a->o.between[0] = a->filter.between[0];
	a->o.between[1] = a->filter.between[1];
	a->o.filter = a->filtered ? &a->filter : NULL;
	return mt_args__one_dir("timeline", TIMELINE_USAGE, argc, argv, &a->dir);
}

/* The timeline of the parsed command line on stdout: the exit status. */
static int timeline_run(const struct timeline_args *a)
{
	struct mt_suppressions *sup = mt_suppressions__from_args(&a->sup);
	struct mt_timeline_opts o = a->o;
	struct mt_read_status st;
	struct mt_timeline *t;
	char title[600];
	int err, ret;

	if (!sup)
		return 2;
	o.sup = sup;
	err = mt_timeline__build(a->dir, &o, &t, &st);
	mt_suppressions__free(sup);
	if (!t)
		return mt_report__exit_status(a->dir, err, &st, "timeline");
	snprintf(title, sizeof(title), "memtrack: live heap bytes over time, %s", a->dir);
	ret = a->json ? mt_timeline__json(stdout, t) : mt_timeline__svg(stdout, t, title);
	mt_timeline__free(t);
	if (!ret && fflush(stdout))
		ret = -errno;
	if (ret) {
		pr_err("timeline: writing to stdout: %s\n", strerror(-ret));
		return 2;
	}
	return mt_report__exit_status(a->dir, err, &st, "timeline");
}

int mt_cmd_timeline(int argc, char **argv)
{
	struct timeline_args a = { .filter = { .to_ns = MT_FILTER_END } };
	int ret = timeline_args(argc, argv, &a);

	ret = ret ? (ret > 0 ? 0 : 2) : timeline_run(&a);
	mt_filter__release(&a.filter);
	return ret;
}
