// SPDX-License-Identifier: GPL-2.0-only
/* view_diff.c — `memtrack view BEFORE AFTER`: both runs loaded as `memtrack diff` loads them, then the page. */
#include "cli/view_diff.h"

#include <errno.h>
#include <string.h>

#include "common/log.h"
#include "report/leaks.h"
#include "report/loader.h"
#include "report/report.h"
#include "report/sites.h"
#include "report/view_diff.h"

/* One run: its model, timeline and sites by function path (diff's), and how its read went. */
struct vd_run {
	struct mt_model *m;
	struct mt_timeline *timeline;
	struct mt_sites *sites;
	struct mt_read_status st;
	int err;
};

/* 0, or the exit status after a message. */
static int vd_run_load(const char *dir, const struct mt_suppressions *sup, bool fp, struct vd_run *r)
{
	struct mt_stacks_opts so = { .fp_chains = fp };
	struct mt_read_status st;
	int err;

	r->err = mt_model__load(dir, &r->m, &r->st);
	if (!r->m)
		return mt_report__exit_status(dir, r->err, &r->st, "view");
	err = mt_timeline__build(dir, NULL, &r->timeline, &st);
	if (!r->timeline)
		return mt_report__exit_status(dir, err, &st, "view");
	r->sites = mt_loader__sites_by_function(dir, &so, sup, 0, "view");
	return r->sites ? 0 : 2;
}

static void vd_run_release(struct vd_run *r)
{
	mt_sites__free(r->sites);
	mt_timeline__free(r->timeline);
	mt_model__free(r->m);
}

static int vd_page(FILE *f, const void *ctx)
{
	return mt_view_diff__html(f, ctx);
}

/* diff's comparison, then the page. 0 or -errno after a message. */
static int vd_write(const struct mt_view_args *a, const struct vd_run *r)
{
	struct mt_view_diff_input in = { { { a->dir, r[0].m, r[0].timeline }, { a->after, r[1].m, r[1].timeline } } };
	struct mt_diff *d;
	int ret;

	d = mt_diff__build(mt_model__totals(r[0].m), r[0].sites, mt_model__totals(r[1].m), r[1].sites);
	if (!d) {
		ret = -errno;
		pr_err("view: %s\n", strerror(-ret));
		return ret;
	}
	in.diff = d;
	ret = mt_view_cli__write(a->out, vd_page, &in);
	mt_diff__free(d);
	return ret;
}

int mt_view_diff__cmd(const struct mt_view_args *a)
{
	const char *dirs[2] = { a->dir, a->after };
	struct vd_run r[2] = { 0 };
	struct mt_suppressions *sup = mt_suppressions__new(true);
	int ret = 0, i, st;

	if (!sup) {
		pr_err("view: %s\n", strerror(ENOMEM));
		return 2;
	}
	for (i = 0; i < 2 && !ret; i++)
		ret = vd_run_load(dirs[i], sup, a->fp, &r[i]);
	mt_suppressions__free(sup);
	if (!ret && vd_write(a, r))
		ret = 2;
	for (i = 0; !ret && i < 2; i++) {	/* a damaged DIR: 1, as diff says it */
		st = mt_report__exit_status(dirs[i], r[i].err, &r[i].st, "view");
		ret = st > ret ? st : ret;
	}
	vd_run_release(&r[0]);
	vd_run_release(&r[1]);
	return ret;
}
