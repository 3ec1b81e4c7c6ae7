// SPDX-License-Identifier: GPL-2.0-only
/* pprof.c — `memtrack pprof`: its options and exit status; the profile is src/report/pprof.c */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/commands.h"
#include "common/args.h"
#include "common/log.h"
#include "report/pprof.h"
#include "report/report.h"
#include "report/sites.h"

#define PPROF_USAGE "memtrack pprof [--no-demangle] DIR > out.pb.gz"

static void pprof_usage(FILE *f)
{
	fputs("usage: " PPROF_USAGE "\n"
	      "The allocation stacks of a run recorded with --stacks as a gzipped pprof profile (profile.proto),\n"
	      "for `pprof -http=: out.pb.gz` and the tools that read it. Sample types: alloc_objects and alloc_space\n"
	      "(allocations, bytes), inuse_objects and inuse_space (the blocks still live at exit, exec or the end);\n"
	      "each location carries its inlined functions.\n"
	      "  --no-demangle   names as the ELF files spell them (_ZN...)\n"
	      "  -h, --help      this text\n"
	      "Exit status: 0; 1 when DIR is damaged (the profile covers the records before the damage);\n"
	      "2 when DIR cannot be read, was recorded without --stacks, stdout is a terminal, or the command line\n"
	      "is wrong.\n", f);
}

static int pprof_option(void *ctx, int val, const char *name, const char *arg)
{
	bool *raw_names = ctx;

	(void)val;
	(void)name;
	(void)arg;
	*raw_names = true;	/* --no-demangle, its one option */
	return 0;
}

/* 0: go on; 1: --help was printed; -EINVAL: a usage error was reported. */
static int pprof_args(int argc, char **argv, bool *raw_names, const char **dir)
{
	static const struct option opts[] = {
		{ "no-demangle", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ret = mt_args__parse("pprof", argc, argv, opts, false, pprof_option, raw_names, pprof_usage);

	if (ret)
		return ret;
	return mt_args__one_dir("pprof", PPROF_USAGE, argc, argv, dir);
}

int mt_cmd_pprof(int argc, char **argv)
{
	struct mt_read_status st;
	struct mt_stacks *s;
	bool raw_names = false;
	const char *dir;
	int err, ret;

	ret = pprof_args(argc, argv, &raw_names, &dir);
	if (ret)
		return ret > 0 ? 0 : 2;
	if (isatty(STDOUT_FILENO)) {
		pr_err("pprof: the profile is binary: redirect stdout to a file (%s)\n", PPROF_USAGE);
		return 2;
	}
	s = mt_sites__load(dir, raw_names, "profile", &err, &st);
	if (!s)
		return 2;
	ret = mt_pprof__write(stdout, s);
	mt_stacks__free(s);
	if (!ret && fflush(stdout))
		ret = -errno;
	if (ret) {
		pr_err("pprof: %s\n", strerror(-ret));
		return 2;
	}
	return mt_report__exit_status(dir, err, &st, "profile");
}
