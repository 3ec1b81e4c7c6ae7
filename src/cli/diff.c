// SPDX-License-Identifier: GPL-2.0-only
/* diff.c — `memtrack diff`: its options and exit status; the comparison is src/report/diff.c */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cli/commands.h"
#include "common/args.h"
#include "common/log.h"
#include "report/diff.h"
#include "report/leaks.h"
#include "report/loader.h"
#include "report/report.h"
#include "report/sites.h"

#define DIFF_USAGE "memtrack diff [--json] [--sites N] [--no-demangle] [--full-names] [SUPPRESS...] BEFORE AFTER"

static void diff_usage(FILE *f)
{
	fputs("usage: " DIFF_USAGE "\n"
	      "What changed from one run recorded with --stacks to another: allocations, bytes, peak and leaks in\n"
	      "total, then the allocation sites ranked by the change in bytes. A site is its call path of\n"
	      "functions, inlined ones included, so it matches across builds and address layouts.\n"
	      "  --json          {\"totals\": {...}, \"sites\": [{\"frames\", \"bytes_delta\", \"count_delta\",\n"
	      "                  \"leaked_bytes_delta\", \"before\", \"after\"}]} instead of text\n"
	      "  --sites N       sites shown (default 10; 0 leaves them out)\n"
	      "  --no-demangle   names as the ELF files spell them (_ZN...)\n"
	      "  --full-names    C++ names whole: template arguments are elided by default (std::vector<…>::push_back)\n"
	      MT_SUPPRESS_USAGE
	      "  -h, --help      this text\n"
	      "Exit status: 0; 1 when a DIR is damaged (the diff covers the records before the damage);\n"
	      "2 when a DIR cannot be read, was recorded without --stacks, or the command line is wrong.\n", f);
}

struct diff_args {
	bool json;
	unsigned int names;	/* MT_NAMES_* */
	unsigned long long top;
	struct mt_suppress_args sup;
	const char *dirs[2];
};

static int diff_option(void *ctx, int val, const char *name, const char *arg)
{
	struct diff_args *a = ctx;

	if (val == 'j')
		a->json = true;
	else if (val == 'n' || val == 'F')
		a->names |= val == 'n' ? MT_NAMES_RAW : MT_NAMES_FULL;
	else if (val == 'S' || val == 'N')
		return mt_suppress_args__add(&a->sup, "diff", val == 'S' ? arg : NULL);
	else
		return mt_args__number(name, arg, 0, 1000000, false, &a->top);
	return 0;
}

/* 0: go on; 1: --help was printed; -EINVAL: a usage error was reported. */
static int diff_args(int argc, char **argv, struct diff_args *a)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "sites", required_argument, NULL, 's' },
		{ "no-demangle", no_argument, NULL, 'n' },
		{ "full-names", no_argument, NULL, 'F' },
		{ "suppress", required_argument, NULL, 'S' },
		{ "no-default-suppress", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ret = mt_args__parse("diff", argc, argv, opts, false, diff_option, a, diff_usage);

	if (ret)
		return ret;
	if (argc - optind != 2) {
		pr_err("diff: two DIRs, BEFORE and AFTER (usage: %s)\n", DIFF_USAGE);
		return -EINVAL;
	}
	a->dirs[0] = argv[optind];
	a->dirs[1] = argv[optind + 1];
	return 0;
}

/* One run: its model and its sites by function path. */
struct diff_side {
	struct mt_model *model;
	struct mt_sites *sites;
	struct mt_read_status st;
	int err;
};

static int side_load(const char *dir, const struct mt_suppressions *sup, unsigned int names, struct diff_side *d)
{
	d->err = mt_model__load(dir, &d->model, &d->st);
	if (!d->model)
		return mt_report__exit_status(dir, d->err, &d->st, "diff");
	d->sites = mt_loader__sites_by_function(dir, NULL, sup, names, "diff");
	return d->sites ? 0 : 2;
}

static void side_release(struct diff_side *d)
{
	mt_sites__free(d->sites);
	mt_model__free(d->model);
}

static int diff_write(const struct diff_args *a, struct diff_side *sd)
{
	struct mt_diff *d;
	int ret;

	d = mt_diff__build(mt_model__totals(sd[0].model), sd[0].sites, mt_model__totals(sd[1].model), sd[1].sites);
	if (!d)
		return -errno;
	ret = a->json ? mt_diff__json(stdout, d, a->top) : mt_diff__text(stdout, d, a->dirs[0], a->dirs[1], a->top);
	mt_diff__free(d);
	if (!ret && fflush(stdout))
		ret = -errno;
	return ret;
}

int mt_cmd_diff(int argc, char **argv)
{
	struct diff_args a = { .top = 10 };
	struct diff_side sd[2] = { 0 };
	struct mt_suppressions *sup;
	int ret, i, st;

	ret = diff_args(argc, argv, &a);
	if (ret)
		return ret > 0 ? 0 : 2;
	sup = mt_suppressions__from_args(&a.sup);
	if (!sup)
		return 2;
	for (i = 0, ret = 0; i < 2 && !ret; i++)
		ret = side_load(a.dirs[i], sup, a.names, &sd[i]);
	mt_suppressions__free(sup);
	if (!ret && (ret = diff_write(&a, sd))) {
		pr_err("diff: %s\n", strerror(-ret));
		ret = 2;
	}
	for (i = 0; !ret && i < 2; i++) {
		st = mt_report__exit_status(a.dirs[i], sd[i].err, &sd[i].st, "diff");
		ret = st > ret ? st : ret;
	}
	side_release(&sd[0]);
	side_release(&sd[1]);
	return ret;
}
