// SPDX-License-Identifier: GPL-2.0-only
/* format.c — sizes in human units and a site's frames, printed one way by every report section. */
#include <inttypes.h>

#include "common/text.h"
#include "report/format.h"
#include "report/sites.h"

const char *mt_format__human(char *buf, uint64_t bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(buf, MT_HUMAN_MAX, "%" PRIu64 " B", bytes);
		return buf;
	}
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	if (v >= 1023.95 && u < 3) {	/* would print as "1024.0" */
		v /= 1024;
		u++;
	}
	snprintf(buf, MT_HUMAN_MAX, "%.1f %s", v, units[u]);
	return buf;
}

const char *mt_format__size(char *buf, uint64_t bytes)
{
	char h[MT_HUMAN_MAX];

	if (bytes < 1024)
		return mt_format__human(buf, bytes);
	snprintf(buf, 2 * MT_HUMAN_MAX, "%s (%" PRIu64 " B)", mt_format__human(h, bytes), bytes);
	return buf;
}

void mt_format__frame_text(FILE *f, const struct mt_site_frame *fr, bool mark_inlined)
{
	fputs("        ", f);
	mt_text__put(f, fr->name);
	if (mark_inlined && fr->inlined)
		fputs(" [inlined]", f);
	if (fr->srcline) {
		fputs(" (", f);
		mt_text__put(f, fr->srcline);
		fputc(')', f);
	}
	fputc('\n', f);
}

void mt_format__frames_text(FILE *f, const struct mt_site *site, bool mark_inlined)
{
	size_t i;

	if (!site->nframes)
		fputs("        (no frames)\n", f);
	for (i = 0; i < site->nframes; i++)
		mt_format__frame_text(f, mt_site__frame(site, i), mark_inlined);
}

void mt_format__frames_json(struct mt_json *j, const struct mt_site *site)
{
	size_t i;

	mt_json__begin_array(j);
	for (i = 0; i < site->nframes; i++) {
		mt_json__begin_object(j);
		mt_json__kv_string(j, "name", mt_site__frame(site, i)->name);
		if (mt_site__frame(site, i)->srcline)
			mt_json__kv_string(j, "srcline", mt_site__frame(site, i)->srcline);
		else
			mt_json__kv_null(j, "srcline");
		mt_json__kv_bool(j, "inlined", mt_site__frame(site, i)->inlined);
		mt_json__end_object(j);
	}
	mt_json__end_array(j);
}
