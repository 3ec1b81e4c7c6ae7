/* dump.c — `memtrack dump`: its options and exit status; the printing is src/report/dump.c */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cli/commands.h"
#include "common/args.h"
#include "common/log.h"
#include "report/report.h"
#include "unwind/stacks.h"
#include "unwind/unwinder.h"

static void dump_usage(FILE *f)
{
	fputs("usage: memtrack dump DIR\n"
	      "Every record of a recorded run, in time order, as one JSON object per line.\n"
	      "  -h, --help  this text\n"
	      "Exit status: 0; 1 when DIR is damaged (the records before the damage are printed);\n"
	      "2 when DIR cannot be read or the command line is wrong.\n", f);
}

/* 0: go on; 1: --help was printed; -EINVAL: a usage error was reported. */
static int dump_args(int argc, char **argv, const char **dir)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;	/* getopt state is global: start over */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			dump_usage(stdout);
			return 1;
		}
		return mt_args__bad_option("dump", argv);
	}
	return mt_args__one_dir("dump", "memtrack dump DIR", argc, argv, dir);
}

int mt_cmd_dump(int argc, char **argv)
{
	struct mt_read_status st;
	const char *dir;
	int err, ret;

	ret = dump_args(argc, argv, &dir);
	if (ret)
		return ret > 0 ? 0 : 2;
	err = mt_dump__write(stdout, dir, &st);
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
