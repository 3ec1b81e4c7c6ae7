/* SPDX-License-Identifier: GPL-2.0-only */
/* view_page.h — the HTML around `memtrack view`'s pages: their data as JSON in a script element, CSS, scripts. */
#ifndef MEMTRACK_VIEW_PAGE_H
#define MEMTRACK_VIEW_PAGE_H

#include <stdio.h>

/* Which page: a recording's (view.js), or two recordings compared (view_diff.js). */
enum mt_view_page { MT_VIEW_PAGE_RUN, MT_VIEW_PAGE_DIFF };

/* Writes a page's data object (one JSON value) into f. 0 or -errno. */
typedef int (*mt_view_data_fn)(FILE *f, const void *ctx);

/*
 * The page titled "memtrack view: TITLE": the CSS, data(ctx)'s JSON in <script id="mt-data">, then the scripts
 * (src/report/view/: view_common.js and the page's own). Nothing is fetched when it is opened. 0, -EIO, -ENOMEM or
 * data's error.
 */
int mt_view_page__html(FILE *f, enum mt_view_page page, const char *title, mt_view_data_fn data, const void *ctx);

#endif /* MEMTRACK_VIEW_PAGE_H */
