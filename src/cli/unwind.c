// SPDX-License-Identifier: GPL-2.0-only
/* unwind.c — `memtrack unwind [--stats] [--list] DIR`: DWARF-unwinds every stack definition into DIR/unwind.mtz. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "common/args.h"
#include "common/log.h"
#include "common/plural.h"
#include "report/report.h"
#include "stacks/unwind_run.h"
#include "unwind/unwinder.h"

struct unwind_args {
	bool stats;
	bool list;
	unsigned long long repeat;
	const char *dir;
};

static void unwind_usage(FILE *f)
{
	fputs("usage: memtrack unwind [--stats] [--list] [--repeat N] DIR\n"
	      "DWARF-unwinds every stack of a run recorded with --stacks, from its registers and stack bytes and the\n"
	      "module files (DIR/modules, the module cache), into DIR/unwind.mtz, which report, dump, flamegraph and\n"
	      "check-fp use (they unwind on first use and keep the file themselves: this command is for its\n"
	      "statistics). Prints why unwinding stopped early per stack (the first ten; --list: every stack), then\n"
	      "counts by reason.\n"
	      "  --stats     the unwinding rate: stacks per second of one core's CPU time\n"
	      "  --list      one line per stack\n"
	      "  --repeat N  unwind each stack N times (to measure the rate on a small DIR)\n"
	      "  -h, --help  this text\n"
	      "Exit status: 0; 1 when DIR is damaged (the stacks before the damage are unwound);\n"
	      "2 when DIR cannot be read or written, or the command line is wrong.\n", f);
}

static int unwind_option(void *ctx, int val, const char *name, const char *arg)
{
	struct unwind_args *a = ctx;

	if (val == 's')
		a->stats = true;
	else if (val == 'l')
		a->list = true;
	else
		return mt_args__number(name, arg, 1, 1000000000, false, &a->repeat);
	return 0;
}

static int unwind_args(int argc, char **argv, struct unwind_args *a)
{
	static const struct option opts[] = {
		{ "stats", no_argument, NULL, 's' },
		{ "list", no_argument, NULL, 'l' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ret = mt_args__parse("unwind", argc, argv, opts, false, unwind_option, a, unwind_usage);

	if (ret)
		return ret;
	return mt_args__one_dir("unwind", "memtrack unwind [--stats] [--list] DIR", argc, argv, &a->dir);
}

static void print_summary(const struct mt_unwind_summary *r, const char *dir, const struct unwind_args *a)
{
	uint64_t ns = r->cpu_ns, n = r->unwinds;
	size_t i;

	printf("%s: %" PRIu64 " %s unwound, %" PRIu64 " %s, into %s/" MT_UNWIND_FILE "\n", dir, r->stacks,
	       mt_plural__of(r->stacks, "stack", "stacks"), r->frames, mt_plural__of(r->frames, "frame", "frames"), dir);
	printf("stopped because:\n");
	for (i = 0; i < MT_STOP__COUNT; i++)
		if (r->reasons[i] || i == MT_STOP_END)
			printf("  %-36s %8" PRIu64 "\n", mt_unwind_stop__text(i), r->reasons[i]);
	if (a->stats)
		printf("rate: %" PRIu64 " %s in %.3f ms of CPU: %.0f stacks/s on one core (module tables cached)\n", n,
		       mt_plural__of(n, "unwind", "unwinds"), ns / 1e6, ns ? n * 1e9 / ns : 0.0);
}

int mt_cmd_unwind(int argc, char **argv)
{
	struct unwind_args a = { .repeat = 1 };
	struct mt_unwind_summary sum = { 0 };
	struct mt_read_status st = { 0 };
	struct mt_unwind_opts o;
	char *dir;
	int err, werr, ret;

	err = unwind_args(argc, argv, &a);
	if (err)
		return err > 0 ? 0 : 2;
	/* before anything is written: DIR must be a readable artifact, and one with stacks */
	err = mt_stacks__require(a.dir, "unwind", &st);
	if (err)
		return err == -ENODATA ? 2 : mt_report__exit_status(a.dir, err, &st, "unwinding");
	o = (struct mt_unwind_opts){ .repeat = a.repeat, .list = a.list, .out = stdout };
	dir = mt_stacks__dir_of(a.dir);
	if (!dir) {
		pr_err("unwind: %s\n", strerror(ENOMEM));
		return 2;
	}
	werr = mt_unwind__write(a.dir, &o, &sum, &st, &err);
	if (werr) {
		pr_err("unwind: writing %s/" MT_UNWIND_FILE ": %s\n", dir, strerror(-werr));
		free(dir);
		return 2;
	}
	if (!err || err == -EBADMSG)
		print_summary(&sum, dir, &a);
	ret = fflush(stdout) ? 2 : mt_report__exit_status(a.dir, err, &st, "unwinding");
	free(dir);
	return ret;
}
