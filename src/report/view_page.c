// SPDX-License-Identifier: GPL-2.0-only
/* view_page.c — one self-contained HTML file around a `memtrack view` page's data, CSS and scripts. */
#include "report/view_page.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/text.h"

/* The pages' own CSS and JS, src/report/view/ as arrays (CMake makes view_assets.h with embed.cmake). */
#include "view_assets.h"

/* buf into f with every '<' as \u003c: the JSON stays the same, and no "</script>" can end its element early. */
static void put_script_safe(FILE *f, const char *buf, size_t len)
{
	const char *lt;

	while (len && (lt = memchr(buf, '<', len))) {
		fwrite(buf, 1, (size_t)(lt - buf), f);
		fputs("\\u003c", f);
		len -= (size_t)(lt - buf) + 1;
		buf = lt + 1;
	}
	fwrite(buf, 1, len, f);
}

static void put_page(FILE *f, enum mt_view_page page, const char *title, const char *data, size_t len)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>memtrack view: ", f);
	mt_text__put_xml(f, title, strlen(title));
	fputs("</title>\n<style>\n", f);
	fwrite(mt_view_css, 1, sizeof(mt_view_css), f);
	fputs("</style></head>\n<body>\n<script id=\"mt-data\" type=\"application/json\">", f);
	put_script_safe(f, data, len);
	fputs("</script>\n<script>\n", f);
	fwrite(mt_view_common_js, 1, sizeof(mt_view_common_js), f);
	if (page == MT_VIEW_PAGE_DIFF)
		fwrite(mt_view_diff_js, 1, sizeof(mt_view_diff_js), f);
	else
		fwrite(mt_view_js, 1, sizeof(mt_view_js), f);
	fputs("</script>\n</body></html>\n", f);
}

int mt_view_page__html(FILE *f, enum mt_view_page page, const char *title, mt_view_data_fn data, const void *ctx)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mf = open_memstream(&buf, &len);
	int err;

	if (!mf)
		return -ENOMEM;
	err = data(mf, ctx);
	if (fclose(mf) && !err)
		err = -ENOMEM;
	if (!err)
		put_page(f, page, title, buf, len);
	free(buf);
	if (!err && ferror(f))
		err = -EIO;
	return err;
}
