// SPDX-License-Identifier: GPL-2.0-only
/* pprof.c — `memtrack pprof`: its options and exit status; the profile is src/report/pprof.c */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/commands.h"
#include "cli/filter_opts.h"
#include "common/args.h"
#include "common/log.h"
#include "report/flamegraph.h"
#include "report/leaks.h"
#include "report/loader.h"
#include "report/metadata.h"
#include "report/pprof.h"
#include "report/report.h"
#include "report/sites.h"

#define PPROF_USAGE "memtrack pprof [--kind K] [--no-demangle] [--full-names] [FILTER...] [SUPPRESS...] DIR > out.pb.gz"

static void pprof_usage(FILE *f)
{
	fputs("usage: " PPROF_USAGE "\n"
	      "The allocation stacks of a run recorded with --stacks as a gzipped pprof profile (profile.proto),\n"
	      "for `pprof -http=: out.pb.gz` and the tools that read it. Sample types: alloc_objects and alloc_space\n"
	      "(allocations, bytes), inuse_objects and inuse_space (the blocks leaked at exit, as `report` counts\n"
	      "them: suppressed leaks left out); each location carries its inlined functions. A sample per stack\n"
	      "and process, labelled pid (a number), exe and each `record --label` KEY (strings, also the\n"
	      "profile's comments), for backends such as Pyroscope and Parca (docs/FLEET.md).\n"
	      "  --kind K        heap (default): the allocations; mapped: the program's anonymous private\n"
	      "                  mappings by the call that made them (alloc_objects: mapping calls,\n"
	      "                  alloc_space: bytes mapped, inuse_space: still mapped at exit or at the end;\n"
	      "                  a sample per stack, no pid or exe); all: both summed\n"
	      "  --no-demangle   names as the ELF files spell them (_ZN...)\n"
	      "  --full-names    C++ names whole: template arguments are elided by default (std::vector<…>::push_back)\n"
	      MT_SUPPRESS_USAGE
	      "  -h, --help      this text\n"
	      "FILTER (whose stacks, and when; --pid and --exe repeat), as for `memtrack report`:\n"
	      MT_FILTER_STACKS_USAGE
	      "                  allocations from T to T seconds after the session started (decimals allowed);\n"
	      "                  inuse: what leaked at exits in it\n"
	      "Exit status: 0; 1 when DIR is damaged (the profile covers the records before the damage);\n"
	      "2 when DIR cannot be read, was recorded without --stacks, stdout is a terminal, or the command line\n"
	      "is wrong.\n", f);
}

struct pprof_args {
	unsigned int names;	/* MT_NAMES_* */
	enum mt_pprof_kind kind;
	struct mt_suppress_args sup;
	struct mt_filter filter;
	bool filtered;		/* a FILTER option was given */
	const char *dir;
};

static int pprof_kind(const char *arg, enum mt_pprof_kind *out)
{
	enum mt_fg_weight k = 0;
	int err = mt_fg_kind__parse("pprof", arg, &k);

	*out = k == MT_FG_MAPPED ? MT_PPROF_MAPPED : k == MT_FG_ALL ? MT_PPROF_ALL : MT_PPROF_HEAP;
	return err;
}

static int pprof_option(void *ctx, int val, const char *name, const char *arg)
{
	struct pprof_args *a = ctx;

	if (val == MT_FILTER_OPT) {
		a->filtered = true;
		return mt_filter_opts__take(&a->filter, "pprof", name, arg);
	}
	if (val == 'k')
		return pprof_kind(arg, &a->kind);
	if (val == 'n' || val == 'F') {
		a->names |= val == 'n' ? MT_NAMES_RAW : MT_NAMES_FULL;
		return 0;
	}
	return mt_suppress_args__add(&a->sup, "pprof", val == 'S' ? arg : NULL);
}

/* 0: go on; 1: --help was printed; -EINVAL: a usage error was reported. */
static int pprof_args(int argc, char **argv, struct pprof_args *a)
{
	static const struct option opts[] = {
		{ "kind", required_argument, NULL, 'k' },
		{ "no-demangle", no_argument, NULL, 'n' },
		{ "full-names", no_argument, NULL, 'F' },
		{ "suppress", required_argument, NULL, 'S' },
		{ "no-default-suppress", no_argument, NULL, 'N' },
		MT_FILTER_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ret = mt_args__parse("pprof", argc, argv, opts, false, pprof_option, a, pprof_usage);

	if (ret)
		return ret;
	if (a->filtered && mt_filter__check(&a->filter, "pprof"))
		return -EINVAL;
	return mt_args__one_dir("pprof", PPROF_USAGE, argc, argv, &a->dir);
}

/* The profile of the parsed command line on stdout: the exit status. */
static int pprof_run(const struct pprof_args *a)
{
	struct mt_stacks_opts opts = { .filter = a->filtered ? &a->filter : NULL };
	struct mt_suppressions *sup;
	struct mt_metadata *md;
	struct mt_read_status st;
	struct mt_stacks *s;
	const char *dir;
	int err, ret;

	dir = a->dir;
	if (isatty(STDOUT_FILENO)) {
		pr_err("pprof: the profile is binary: redirect stdout to a file (%s)\n", PPROF_USAGE);
		return 2;
	}
	sup = mt_suppressions__from_args(&a->sup);
	s = sup ? mt_loader__stacks_with(dir, &opts, sup, a->names, "profile", &err, &st) : NULL;
	mt_suppressions__free(sup);
	if (!s)
		return 2;
	md = mt_metadata__load(dir, "the profile has no labels");
	ret = mt_pprof__write_kind(stdout, s, md, a->kind);
	mt_metadata__free(md);
	mt_stacks__free(s);
	if (!ret && fflush(stdout))
		ret = -errno;
	if (ret) {
		pr_err("pprof: %s\n", strerror(-ret));
		return 2;
	}
	return mt_report__exit_status(dir, err, &st, "profile");
}

int mt_cmd_pprof(int argc, char **argv)
{
	struct pprof_args a = { .filter = { .to_ns = MT_FILTER_END } };
	int ret = pprof_args(argc, argv, &a);

	ret = ret ? (ret > 0 ? 0 : 2) : pprof_run(&a);
	mt_filter__release(&a.filter);
	return ret;
}
