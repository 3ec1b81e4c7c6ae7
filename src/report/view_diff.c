// SPDX-License-Identifier: GPL-2.0-only
/* view_diff.c — `memtrack view BEFORE AFTER`'s data: diff's totals and matched sites, both runs' timelines. */
#include "report/view_diff.h"

#include <errno.h>
#include <string.h>

#include "common/json.h"
#include "common/u64map.h"
#include "report/report.h"
#include "report/view_page.h"

/* The sites' frames as a table: each line of a sites' frame table (a frame's expansion) once, by its address. */
struct vd_frames {
	struct mt_json *j;
	struct mt_u64map index;		/* struct mt_site_frame * → its index in "frames" */
	size_t count;
};

/* A site's frames into "frames", those not there yet. 0 or -ENOMEM. */
static int vd_frames_add(struct vd_frames *vf, const struct mt_site *site)
{
	const struct mt_site_frame *sf;
	size_t i;

	for (i = 0; i < site->nframes; i++) {
		sf = mt_site__frame(site, i);
		if (mt_u64map__find(&vf->index, (uintptr_t)sf))
			continue;
		if (mt_u64map__put(&vf->index, (uintptr_t)sf, vf->count++, NULL) < 0)
			return -ENOMEM;
		mt_json__begin_array(vf->j);
		mt_json__string(vf->j, sf->name);
		if (sf->srcline)
			mt_json__string(vf->j, sf->srcline);
		else
			mt_json__null(vf->j);
		mt_json__end_array(vf->j);
	}
	return 0;
}

/* A run's numbers at a site, [bytes, count, leaked bytes] as diff compares them, or 0 when it has no such site. */
static void vd_side(struct mt_json *j, const struct mt_site *s)
{
	if (!s) {
		mt_json__u64(j, 0);
		return;
	}
	mt_json__begin_array(j);
	mt_json__u64(j, s->bytes);
	mt_json__u64(j, s->count);
	mt_json__u64(j, s->leaked_bytes);
	mt_json__end_array(j);
}

/* One matched site: its path of frame indexes, outermost first (after's frames, or before's when it is gone). */
static void vd_site(struct mt_json *j, const struct vd_frames *vf, const struct mt_diff_site *ds)
{
	const struct mt_site *shown = ds->after ? ds->after : ds->before;
	size_t i;

	mt_json__begin_array(j);
	mt_json__begin_array(j);
	for (i = shown->nframes; i > 0; i--)
		mt_json__u64(j, *mt_u64map__find(&vf->index, (uintptr_t)mt_site__frame(shown, i - 1)));
	mt_json__end_array(j);
	vd_side(j, ds->before);
	vd_side(j, ds->after);
	mt_json__end_array(j);
}

/* "frames", then "sites" in diff's order. 0 or -ENOMEM. */
static int vd_sites_json(struct mt_json *j, const struct mt_diff *d)
{
	struct vd_frames vf = { .j = j };
	size_t i;
	int err = 0;

	mt_json__key(j, "frames");
	mt_json__begin_array(j);
	for (i = 0; !err && i < d->count; i++)
		err = vd_frames_add(&vf, d->sites[i].after ? d->sites[i].after : d->sites[i].before);
	mt_json__end_array(j);
	mt_json__key(j, "sites");
	mt_json__begin_array(j);
	for (i = 0; !err && i < d->count; i++)
		vd_site(j, &vf, &d->sites[i]);
	mt_json__end_array(j);
	mt_u64map__release(&vf.index);
	return err;
}

/* key: then a value another writer puts straight into the FILE. */
static void vd_raw_key(struct mt_json *j, const char *key)
{
	mt_json__key(j, key);
	j->after_key = false;	/* the value is written: what comes next is the object's next key */
}

/* A run: its DIR, report --json's totals and processes, timeline --json's object. 0 or -errno. */
static int vd_run_json(struct mt_json *j, const char *key, const struct mt_view_run *r)
{
	int err;

	mt_json__key(j, key);
	mt_json__begin_object(j);
	mt_json__kv_string(j, "dir", r->dir);
	vd_raw_key(j, "report");
	err = mt_report__json_with(j->f, r->m, NULL, NULL, 0);
	vd_raw_key(j, "timeline");
	if (!err)
		err = mt_timeline__json(j->f, r->timeline);
	mt_json__end_object(j);
	return err;
}

static int vd_data(FILE *f, const void *ctx)
{
	const struct mt_view_diff_input *in = ctx;
	struct mt_json j;
	int err;

	mt_json__init(&j, f, 0);
	mt_json__begin_object(&j);
	err = vd_run_json(&j, "before", &in->runs[0]);
	if (!err)
		err = vd_run_json(&j, "after", &in->runs[1]);
	vd_raw_key(&j, "diff");
	if (!err)
		err = mt_diff__json(f, in->diff, 0);
	if (!err)
		err = vd_sites_json(&j, in->diff);
	mt_json__end_object(&j);
	return err ? err : mt_json__error(&j);
}

int mt_view_diff__html(FILE *f, const struct mt_view_diff_input *in)
{
	char title[2 * 4096 + 8];

	snprintf(title, sizeof(title), "%s vs %s", in->runs[0].dir, in->runs[1].dir);
	return mt_view_page__html(f, MT_VIEW_PAGE_DIFF, title, vd_data, in);
}
