// SPDX-License-Identifier: GPL-2.0-only
/* filter_opts.c — a FILTER option as getopt names it ("pid") given to the model's filter as the user wrote it. */
#include <stdio.h>

#include "cli/filter_opts.h"

int mt_filter_opts__take(struct mt_filter *f, const char *cmd, const char *name, const char *arg)
{
	char opt[16];

	snprintf(opt, sizeof(opt), "--%s", name);
	return mt_filter__option(f, cmd, opt, arg);
}
