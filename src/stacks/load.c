// SPDX-License-Identifier: GPL-2.0-only
/* load.c — which DWARF chains a stacks load uses: a hook's, DIR/unwind.mtz, or unwound now and cached there. */
/*
 * The policy sits above both the reader (stacks.c) and the unwind run (unwind_run.c, which reads through
 * mt_stacks__read itself), so neither calls the other back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacks/stacks.h"
#include "stacks/unwind_run.h"

/* With DIR/unwind.mtz's chains when it is good, else with the cache's hook: unwound during this read. */
static int load_dwarf(const char *path, const struct mt_stacks_opts *opts, struct mt_stacks **out,
		      struct mt_read_status *st)
{
	struct mt_stacks_opts with = *opts;
	struct mt_unwind_index *ix = NULL;
	struct mt_unwind_run *cache = NULL;
	char *dir = mt_stacks__dir_of(path);
	int err = dir ? mt_unwind_index__read(dir, &ix) : -ENOMEM;

	if (!err && !ix) {
		cache = mt_unwind_run__cache(dir, false);
		err = cache ? 0 : -ENOMEM;
		with.hook = mt_unwind_run__hook;
		with.hook_ctx = cache;
	}
	free(dir);
	if (err) {
		*out = NULL;
		snprintf(st->reason, sizeof(st->reason), "%s", strerror(-err));
		return err;
	}
	with.dwarf = ix;
	err = mt_stacks__read(path, &with, out, st);
	mt_unwind_run__finish(cache, *out ? err : -ECANCELED);
	mt_unwind_index__free(ix);	/* the entries hold copies of what they use */
	return err;
}

int mt_stacks__load(const char *path, const struct mt_stacks_opts *opts, struct mt_stacks **out,
		    struct mt_read_status *st)
{
	static const struct mt_stacks_opts none;
	struct mt_read_status local;

	if (!opts)
		opts = &none;
	if (opts->hook || opts->fp_chains)
		return mt_stacks__read(path, opts, out, st);
	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	return load_dwarf(path, opts, out, st);
}

/*
 * DIR/unwind.mtz's chains for a reader that walks the records itself (dump): the file when it is good; else, when
 * the recording has stacks, unwound now and cached (memory only when DIR cannot take the file).
 */
int mt_unwind_index__load(const char *dir, struct mt_unwind_index **out)
{
	struct mt_stacks_opts opts = { .hook = mt_unwind_run__hook, .chains_only = true };
	struct mt_read_status st;
	struct mt_unwind_run *r;
	struct mt_stacks *s;
	int err = mt_unwind_index__read(dir, out);

	if (err || *out || mt_stacks__probe(dir) <= 0)
		return err;
	r = mt_unwind_run__cache(dir, true);
	if (!r)
		return -ENOMEM;
	opts.hook_ctx = r;
	err = mt_stacks__read(dir, &opts, &s, &st);
	mt_stacks__free(s);
	if (!err || err == -EBADMSG)
		*out = mt_unwind_run__take_index(r);
	mt_unwind_run__finish(r, err);
	return err == -ENOMEM ? err : 0;
}
