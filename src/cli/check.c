// SPDX-License-Identifier: GPL-2.0-only
/* check.c — `memtrack check-fp` and `memtrack check-stacks`: their options and exit status, one driver for both; the
 * checks and their printing are src/report/checkfp.c and src/report/checkstacks.c. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "common/args.h"
#include "common/log.h"
#include "report/checkfp.h"
#include "report/checkstacks.h"
#include "report/report.h"

/* What tells the two commands apart: their words, and the check over the loaded stacks. */
struct check_kind {
	const char *name;
	const char *usage;
	void (*help)(FILE *f);
	/* Runs the check over s and prints it; *diverged: whether --strict fails. 0 or -errno. */
	int (*run)(struct mt_stacks *s, bool json, bool *diverged);
};

struct check_args {
	bool json;
	bool strict;
	const char *dir;
};

static void checkfp_help(FILE *f)
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

static void checkstacks_help(FILE *f)
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

static int checkfp_run(struct mt_stacks *s, bool json, bool *diverged)
{
	struct mt_checkfp c;
	int ret = mt_checkfp__run(s, &c);

	if (ret)
		return ret;
	ret = json ? mt_checkfp__json(stdout, &c) : mt_checkfp__text(stdout, &c);
	*diverged = c.ndivs != 0;
	mt_checkfp__release(&c);
	return ret;
}

static int checkstacks_run(struct mt_stacks *s, bool json, bool *diverged)
{
	struct mt_checkstacks c;
	int ret = mt_checkstacks__run(s, &c);

	if (ret)
		return ret;
	ret = json ? mt_checkstacks__json(stdout, &c) : mt_checkstacks__text(stdout, &c);
	*diverged = c.diverged != 0;
	mt_checkstacks__release(&c);
	return ret;
}

static int check_option(void *ctx, int val, const char *name, const char *arg)
{
	struct check_args *a = ctx;

	(void)name;
	(void)arg;
	if (val == 'j')
		a->json = true;
	else
		a->strict = true;
	return 0;
}

static int check_args(const struct check_kind *k, int argc, char **argv, struct check_args *a)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "strict", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ret = mt_args__parse(k->name, argc, argv, opts, false, check_option, a, k->help);

	if (ret)
		return ret;
	return mt_args__one_dir(k->name, k->usage, argc, argv, &a->dir);
}

static int check_main(const struct check_kind *k, int argc, char **argv)
{
	struct check_args a = { 0 };
	struct mt_read_status st;
	bool diverged = false;
	struct mt_stacks *s;
	int err, ret;

	ret = check_args(k, argc, argv, &a);
	if (ret)
		return ret > 0 ? 0 : 2;
	err = mt_stacks__require(a.dir, k->name, &st);
	if (err)
		return err == -ENODATA ? 2 : mt_report__exit_status(a.dir, err, &st, "check");
	err = mt_stacks__load(a.dir, NULL, &s, &st);	/* DIR/unwind.mtz, or unwound now and cached */
	if (!s)
		return mt_report__exit_status(a.dir, err, &st, "check");
	ret = k->run(s, a.json, &diverged);
	if (!ret && fflush(stdout))
		ret = -errno;
	mt_stacks__free(s);
	if (ret) {
		pr_err("%s: %s\n", k->name, strerror(-ret));
		return 2;
	}
	ret = mt_report__exit_status(a.dir, err, &st, "check");
	return !ret && a.strict && diverged ? 1 : ret;
}

int mt_cmd_check_fp(int argc, char **argv)
{
	static const struct check_kind k = { "check-fp", "memtrack check-fp [--json] [--strict] DIR", checkfp_help,
					     checkfp_run };

	return check_main(&k, argc, argv);
}

int mt_cmd_check_stacks(int argc, char **argv)
{
	static const struct check_kind k = { "check-stacks", "memtrack check-stacks [--json] [--strict] DIR",
					     checkstacks_help, checkstacks_run };

	return check_main(&k, argc, argv);
}
