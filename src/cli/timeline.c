/* timeline.c — `memtrack timeline [--json] DIR > out.svg`: its options and exit status; the work is src/report. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "common/args.h"
#include "common/log.h"
#include "report/report.h"
#include "report/timeline.h"

#define TIMELINE_USAGE "memtrack timeline [--json] [--top N] [--points N] [--between A B] DIR"

struct timeline_args {
	bool json;
	struct mt_timeline_opts o;
	const char *dir;
};

static void timeline_usage(FILE *f)
{
	fputs("usage: " TIMELINE_USAGE " > out.svg\n"
	      "Live heap bytes over time, in total and per process, as the report counts them (blocks inherited at a\n"
	      "fork count in each holder, an exec discards the image's blocks): a standalone SVG with the peak marked\n"
	      "and the forks, execs and exits along the time axis.\n"
	      "  --json      the series instead: {\"t_ns\": [...], \"total\": [...], \"processes\": [{\"pid\", \"exe\",\n"
	      "              \"peak_bytes\", \"live_bytes\": [...]}], \"others\", \"peak\", \"events\"}\n"
	      "  --top N     processes drawn apart, the N with the highest peaks (default 5); the rest are \"others\"\n"
	      "  --points N  at most N points (default 2000): past that, each of N time buckets keeps its largest value\n"
	      "  --between A B  only from the first `mark A` line written to the control FIFO (record --paused,\n"
	      "              MEMTRACK_CONTROL) to the next `mark B`; the peak is the span's\n"
	      "  -h, --help  this text\n"
	      "Exit status: 0; 1 when DIR is damaged (the timeline covers the records before the damage);\n"
	      "2 when DIR cannot be read or the command line is wrong.\n", f);
}

/* 0: go on; 1: --help was printed; -EINVAL: a usage error was reported. */
static int timeline_args(int argc, char **argv, struct timeline_args *a)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "top", required_argument, NULL, 't' },
		{ "points", required_argument, NULL, 'p' },
		{ "between", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long n;
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'j') {
			a->json = true;
		} else if (c == 't' || c == 'p') {
			if (mt_args__number(c == 't' ? "top" : "points", optarg, c == 't' ? 1 : 2, 1000000, false, &n))
				return -EINVAL;
			*(c == 't' ? &a->o.top : &a->o.max_points) = n;
		} else if (c == 'B') {	/* two values: getopt has the first, the second is the next word */
			a->o.between[0] = optarg;
			a->o.between[1] = argv[optind] ? argv[optind++] : NULL;
			if (!a->o.between[1] || !*a->o.between[1] || !*optarg) {
				pr_err("timeline: --between takes two mark labels\n");
				return -EINVAL;
			}
		} else if (c == 'h') {
			timeline_usage(stdout);
			return 1;
		} else {
			return mt_args__bad_option("timeline", argv);
		}
	}
	return mt_args__one_dir("timeline", TIMELINE_USAGE, argc, argv, &a->dir);
}

int mt_cmd_timeline(int argc, char **argv)
{
	struct timeline_args a = { 0 };
	struct mt_read_status st;
	struct mt_timeline *t;
	char title[600];
	int err, ret;

	ret = timeline_args(argc, argv, &a);
	if (ret)
		return ret > 0 ? 0 : 2;
	err = mt_timeline__build(a.dir, &a.o, &t, &st);
	if (!t)
		return mt_report__exit_status(a.dir, err, &st, "timeline");
	snprintf(title, sizeof(title), "memtrack: live heap bytes over time, %s", a.dir);
	ret = a.json ? mt_timeline__json(stdout, t) : mt_timeline__svg(stdout, t, title);
	mt_timeline__free(t);
	if (!ret && fflush(stdout))
		ret = -errno;
	if (ret) {
		pr_err("timeline: writing to stdout: %s\n", strerror(-ret));
		return 2;
	}
	return mt_report__exit_status(a.dir, err, &st, "timeline");
}
