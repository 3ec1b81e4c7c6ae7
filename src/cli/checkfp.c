// SPDX-License-Identifier: GPL-2.0-only
/* checkfp.c — `memtrack check-fp`: its options and exit status; the printing is src/report/checkfp.c */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "common/args.h"
#include "common/log.h"
#include "report/checkfp.h"
#include "report/report.h"

struct checkfp_args {
	bool json;
	bool strict;
	const char *dir;
};

static void checkfp_usage(FILE *f)
{
	fputs("usage: memtrack check-fp [--json] [--strict] DIR\n"
	      "Compares each stack's frame-pointer chain with its DWARF chain (DIR/unwind.mtz, else unwound now):\n"
	      "per module, the share of complete and correct FP chains; per function whose missing frame pointer\n"
	      "broke chains, the stacks and bytes affected.\n"
	      "  --json      {\"modules\": [...], \"divergences\": [...]} instead of text\n"
	      "  --strict    exit 1 when any chain diverges\n"
	      "  -h, --help  this text\n"
	      "Exit status: 0; 1 with --strict and a divergence, or when DIR is damaged; 2 when DIR cannot be read\n"
	      "or the command line is wrong.\n", f);
}

static int checkfp_option(void *ctx, int val, const char *name, const char *arg)
{
	struct checkfp_args *a = ctx;

	(void)name;
	(void)arg;
	if (val == 'j')
		a->json = true;
	else
		a->strict = true;
	return 0;
}

static int checkfp_args(int argc, char **argv, struct checkfp_args *a)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "strict", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ret = mt_args__parse("check-fp", argc, argv, opts, false, checkfp_option, a, checkfp_usage);

	if (ret)
		return ret;
	return mt_args__one_dir("check-fp", "memtrack check-fp [--json] [--strict] DIR", argc, argv, &a->dir);
}

int mt_cmd_check_fp(int argc, char **argv)
{
	struct checkfp_args a = { 0 };
	struct mt_read_status st;
	struct mt_checkfp c;
	struct mt_stacks *s;
	int err, ret;

	ret = checkfp_args(argc, argv, &a);
	if (ret)
		return ret > 0 ? 0 : 2;
	err = mt_stacks__require(a.dir, "check-fp", &st);
	if (err)
		return err == -ENODATA ? 2 : mt_report__exit_status(a.dir, err, &st, "check");
	err = mt_stacks__load(a.dir, NULL, &s, &st);	/* DIR/unwind.mtz, or unwound now and cached */
	if (!s)
		return mt_report__exit_status(a.dir, err, &st, "check");
	ret = mt_checkfp__run(s, &c);
	if (!ret)
		ret = a.json ? mt_checkfp__json(stdout, &c) : mt_checkfp__text(stdout, &c);
	if (!ret && fflush(stdout))
		ret = -errno;
	mt_stacks__free(s);
	if (ret) {
		pr_err("check-fp: %s\n", strerror(-ret));
		return 2;
	}
	ret = mt_report__exit_status(a.dir, err, &st, "check");
	if (!ret && a.strict && c.ndivs)
		ret = 1;
	mt_checkfp__release(&c);
	return ret;
}
