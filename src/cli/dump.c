// SPDX-License-Identifier: GPL-2.0-only
/* dump.c — `memtrack dump`: its options and exit status; the printing is src/report/dump.c */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "cli/commands.h"
#include "cli/filter_opts.h"
#include "common/args.h"
#include "common/log.h"
#include "report/report.h"
#include "stacks/stacks.h"
#include "unwind/unwinder.h"

#define DUMP_USAGE "memtrack dump [--pid P] [--exe NAME] [--from T] [--to T] DIR"

static void dump_usage(FILE *f)
{
	fputs("usage: " DUMP_USAGE "\n"
	      "Every record of a recorded run, in time order, as one JSON object per line.\n"
	      "  --pid P      process P's records only (repeatable; a fork record is its parent's and its child's)\n"
	      "  --exe NAME   the records of images of that executable only, a path or its base name (repeatable)\n"
	      "  --from T, --to T\n"
	      "               records from T to T seconds after the session started (decimals allowed)\n"
	      "  -h, --help   this text\n"
	      "Exit status: 0; 1 when DIR is damaged (the records before the damage are printed);\n"
	      "2 when DIR cannot be read or the command line is wrong.\n", f);
}

struct dump_filter {
	struct mt_filter *filter;
	bool *filtered;
};

static int dump_option(void *ctx, int val, const char *name, const char *arg)
{
	struct dump_filter *f = ctx;

	(void)val;	/* every option is a filter */
	*f->filtered = true;
	return mt_filter_opts__take(f->filter, "dump", name, arg);
}

/* 0: go on; 1: --help was printed; -EINVAL: a usage error was reported. *filtered: a filter was given. */
static int dump_args(int argc, char **argv, const char **dir, struct mt_filter *filter, bool *filtered)
{
	static const struct option opts[] = {
		MT_FILTER_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dump_filter f = { filter, filtered };
	int ret = mt_args__parse("dump", argc, argv, opts, false, dump_option, &f, dump_usage);

	if (ret)
		return ret;
	if (*filtered && mt_filter__check(filter, "dump"))
		return -EINVAL;
	return mt_args__one_dir("dump", DUMP_USAGE, argc, argv, dir);
}

int mt_cmd_dump(int argc, char **argv)
{
	struct mt_filter filter = { .to_ns = MT_FILTER_END };
	struct mt_read_status st;
	bool filtered = false;
	const char *dir;
	int err, ret;

	ret = dump_args(argc, argv, &dir, &filter, &filtered);
	if (ret) {
		mt_filter__release(&filter);
		return ret > 0 ? 0 : 2;
	}
	err = mt_dump__write_filtered(stdout, dir, filtered ? &filter : NULL, &st);
	mt_filter__release(&filter);
	if (fflush(stdout))
		ret = -errno;
	else if (ferror(stdout))
		ret = -EIO;
	if (ret) {
		pr_err("dump: writing to stdout: %s\n", strerror(-ret));
		return 2;
	}
	return mt_report__exit_status(dir, err, &st, "dump");
}
