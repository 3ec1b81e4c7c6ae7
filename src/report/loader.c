// SPDX-License-Identifier: GPL-2.0-only
/* loader.c — what the stack commands load first: DIR's stacks or sites, suppressed and named, or one error line. */
#include <errno.h>
#include <string.h>

#include "common/log.h"
#include "report/loader.h"
#include "report/report.h"

struct mt_stacks *mt_loader__stacks(const char *dir, const struct mt_suppressions *sup, unsigned int names,
				    const char *what, int *err, struct mt_read_status *st)
{
	return mt_loader__stacks_with(dir, NULL, sup, names, what, err, st);
}

struct mt_stacks *mt_loader__stacks_with(const char *dir, const struct mt_stacks_opts *opts,
					 const struct mt_suppressions *sup, unsigned int names, const char *what,
					 int *err, struct mt_read_status *st)
{
	struct mt_stacks *s;

	*err = mt_stacks__load(dir, opts, &s, st);
	if (!s) {
		mt_report__exit_status(dir, *err, st, what);
		return NULL;
	}
	if (!mt_stacks__any(s) && !mt_stacks__count(s)) {	/* --stacks was not given (or nothing was allocated) */
		pr_err("%s: recorded without --stacks: no allocation stacks (record with `memtrack record --stacks`)\n",
		       dir);
		mt_stacks__free(s);
		*err = -ENODATA;
		return NULL;
	}
	mt_suppressions__apply(sup, s);
	mt_modules__set_raw_names(mt_stacks__modules(s), names & MT_NAMES_RAW);
	mt_modules__set_full_names(mt_stacks__modules(s), names & MT_NAMES_FULL);
	return s;
}

struct mt_sites *mt_loader__sites_by_function(const char *dir, const struct mt_stacks_opts *opts,
					      const struct mt_suppressions *sup, unsigned int names, const char *what)
{
	static const struct mt_sites_opts by_functions = { .no_offsets = true, .detached = true };
	struct mt_read_status st;
	struct mt_sites *sites;
	struct mt_stacks *s;
	int err;

	s = mt_loader__stacks_with(dir, opts, sup, names, what, &err, &st);
	if (!s)
		return NULL;
	sites = mt_sites__build_with(s, &by_functions);
	mt_stacks__free(s);
	if (!sites)
		pr_err("%s: %s: sites: %s\n", what, dir, strerror(errno));
	return sites;
}
