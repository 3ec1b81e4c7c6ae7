// SPDX-License-Identifier: GPL-2.0-only
/* checkstacks.c — `memtrack check-stacks`: its options and exit status; the printing is src/report/checkstacks.c */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "common/args.h"
#include "common/log.h"
#include "report/checkstacks.h"
#include "report/report.h"

struct checkstacks_args {
	bool json;
	bool strict;
	const char *dir;
};

static void checkstacks_usage(FILE *f)
{
	fputs("usage: memtrack check-stacks [--json] [--strict] DIR\n"
	      "Compares each stack's in-kernel chain (the kernel's CFI walk, its key) with its DWARF chain\n"
	      "(libunwind on the raw stack bytes: DIR/unwind.mtz, else unwound now), and the frame-pointer chain with\n"
	      "both: per module, the agreement rates and the first divergence.\n"
	      "  --json      {\"modules\": [...]} instead of text\n"
	      "  --strict    exit 1 when any in-kernel chain differs from its DWARF chain\n"
	      "  -h, --help  this text\n"
	      "Exit status: 0; 1 with --strict and a divergence, or when DIR is damaged; 2 when DIR cannot be read\n"
	      "or the command line is wrong.\n", f);
}

static int checkstacks_option(void *ctx, int val, const char *name, const char *arg)
{
	struct checkstacks_args *a = ctx;

	(void)name;
	(void)arg;
	if (val == 'j')
		a->json = true;
	else
		a->strict = true;
	return 0;
}

static int checkstacks_args(int argc, char **argv, struct checkstacks_args *a)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "strict", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ret = mt_args__parse("check-stacks", argc, argv, opts, false, checkstacks_option, a, checkstacks_usage);

	if (ret)
		return ret;
	return mt_args__one_dir("check-stacks", "memtrack check-stacks [--json] [--strict] DIR", argc, argv, &a->dir);
}

int mt_cmd_check_stacks(int argc, char **argv)
{
	struct checkstacks_args a = { 0 };
	struct mt_read_status st;
	struct mt_checkstacks c;
	struct mt_stacks *s;
	int err, ret;

	ret = checkstacks_args(argc, argv, &a);
	if (ret)
		return ret > 0 ? 0 : 2;
	err = mt_stacks__require(a.dir, "check-stacks", &st);
	if (err)
		return err == -ENODATA ? 2 : mt_report__exit_status(a.dir, err, &st, "check");
	err = mt_stacks__load(a.dir, NULL, &s, &st);	/* DIR/unwind.mtz, or unwound now and cached */
	if (!s)
		return mt_report__exit_status(a.dir, err, &st, "check");
	ret = mt_checkstacks__run(s, &c);
	if (!ret)
		ret = a.json ? mt_checkstacks__json(stdout, &c) : mt_checkstacks__text(stdout, &c);
	if (!ret && fflush(stdout))
		ret = -errno;
	mt_stacks__free(s);
	if (ret) {
		pr_err("check-stacks: %s\n", strerror(-ret));
		mt_checkstacks__release(&c);
		return 2;
	}
	ret = mt_report__exit_status(a.dir, err, &st, "check");
	if (!ret && a.strict && c.diverged)
		ret = 1;
	mt_checkstacks__release(&c);
	return ret;
}
