/* SPDX-License-Identifier: GPL-2.0-only */
/* filter_opts.h — the FILTER options (--pid, --exe, --from, --to) of report, dump, flamegraph, pprof, timeline. */
#ifndef MEMTRACK_FILTER_OPTS_H
#define MEMTRACK_FILTER_OPTS_H

#include <getopt.h>

#include "model/filter.h"

/* The struct option val of every FILTER option: a command's option callback hands it to mt_filter_opts__take. */
#define MT_FILTER_OPT 'P'

/* The entries of a command's struct option table (each command's usage says what they narrow for it). */
#define MT_FILTER_OPTIONS                                         \
	{ "pid", required_argument, NULL, MT_FILTER_OPT },        \
	{ "exe", required_argument, NULL, MT_FILTER_OPT },        \
	{ "from", required_argument, NULL, MT_FILTER_OPT },       \
	{ "to", required_argument, NULL, MT_FILTER_OPT }

/* The --help lines of --pid and --exe for the commands that draw allocation stacks (pprof, flamegraph); each adds
 * what --from and --to mean for it. */
#define MT_FILTER_STACKS_USAGE                                                                       \
	"  --pid P         process P's allocations only\n"                                           \
	"  --exe NAME      those of images of that executable only: a path, or its base name\n"     \
	"  --from T, --to T\n"

/* The FILTER option name (its struct option name, "pid") with its value into f, for cmd's messages: 0, or -EINVAL
 * after one error line, -ENOMEM (mt_filter__option). */
int mt_filter_opts__take(struct mt_filter *f, const char *cmd, const char *name, const char *arg);

#endif /* MEMTRACK_FILTER_OPTS_H */
