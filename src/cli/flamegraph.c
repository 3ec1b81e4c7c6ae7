/* flamegraph.c — `memtrack flamegraph`: its options and exit status; the printing is src/report/flamegraph.c */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "cli/commands.h"
#include "common/args.h"
#include "common/log.h"
#include "report/flamegraph.h"
#include "report/report.h"

static void flamegraph_usage(FILE *f)
{
	fputs("usage: memtrack flamegraph [--collapsed] [--weight bytes|count|leaked] DIR > out.svg\n"
	      "A flame graph of the allocation stacks of a run recorded with --stacks (DWARF chains from\n"
	      "`memtrack unwind` when DIR has them, else frame-pointer chains).\n"
	      "  --collapsed     \"outermost;...;innermost N\" lines (flamegraph.pl, speedscope) instead of SVG\n"
	      "  --weight W      bytes allocated (default), count of allocations, or leaked bytes\n"
	      "  -h, --help      this text\n"
	      "Exit status: 0; 1 when DIR is damaged (the graph covers the records before the damage);\n"
	      "2 when DIR cannot be read or the command line is wrong.\n", f);
}

struct fg_args {
	bool collapsed;
	enum mt_fg_weight weight;
	const char *dir;
};

static int flamegraph_args(int argc, char **argv, struct fg_args *a)
{
	static const struct option opts[] = {
		{ "collapsed", no_argument, NULL, 'c' },
		{ "weight", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'c') {
			a->collapsed = true;
		} else if (c == 'w' && (!strcmp(optarg, "bytes") || !strcmp(optarg, "count") ||
					!strcmp(optarg, "leaked"))) {
			a->weight = optarg[0] == 'b' ? MT_FG_BYTES : optarg[0] == 'c' ? MT_FG_COUNT : MT_FG_LEAKED;
		} else if (c == 'w') {
			pr_err("flamegraph: --weight is bytes, count or leaked, not '%s'\n", optarg);
			return -EINVAL;
		} else if (c == 'h') {
			flamegraph_usage(stdout);
			return 1;
		} else {
			return mt_args__bad_option("flamegraph", argv);
		}
	}
	return mt_args__one_dir("flamegraph", "memtrack flamegraph [--collapsed] [--weight W] DIR", argc, argv,
			       &a->dir);
}

int mt_cmd_flamegraph(int argc, char **argv)
{
	struct fg_args a = { .weight = MT_FG_BYTES };
	struct mt_read_status st;
	struct mt_stacks *s;
	char title[300];
	int err, ret;

	ret = flamegraph_args(argc, argv, &a);
	if (ret)
		return ret > 0 ? 0 : 2;
	err = mt_stacks__load(a.dir, NULL, &s, &st);
	if (!s)
		return mt_report__exit_status(a.dir, err, &st, "flame graph");
	snprintf(title, sizeof(title), "memtrack: %s by allocation stack (%s chains)",
		 a.weight == MT_FG_COUNT ? "allocations" : a.weight == MT_FG_LEAKED ? "leaked bytes" : "bytes",
		 mt_stacks__has_dwarf(s) ? "DWARF" : "frame-pointer");
	ret = a.collapsed ? mt_flamegraph__collapsed(stdout, s, a.weight) :
			    mt_flamegraph__svg(stdout, s, a.weight, title);
	mt_stacks__free(s);
	if (!ret && fflush(stdout))
		ret = -errno;
	if (ret) {
		pr_err("flamegraph: %s\n", strerror(-ret));
		return 2;
	}
	return mt_report__exit_status(a.dir, err, &st, "flame graph");
}
