/* SPDX-License-Identifier: GPL-2.0-only */
/* view_diff.h — `memtrack view BEFORE AFTER` (view_diff.c) and what it shares with `memtrack view DIR` (view.c). */
#ifndef MEMTRACK_CLI_VIEW_DIFF_H
#define MEMTRACK_CLI_VIEW_DIFF_H

#include <stdbool.h>
#include <stdio.h>

struct mt_view_args {
	const char *out;	/* NULL: stdout */
	bool fp;
	const char *dir;	/* with after: BEFORE */
	const char *after;	/* NULL: one DIR */
};

/* Writes a page into f. 0 or -errno. */
typedef int (*mt_view_page_fn)(FILE *f, const void *ctx);

/* page(ctx) into out (NULL: stdout, unless a terminal), after one error line if it fails. 0 or -errno. */
int mt_view_cli__write(const char *out, mt_view_page_fn page, const void *ctx);
/* The diff page of a->dir and a->after: the exit status (diff's). */
int mt_view_diff__cmd(const struct mt_view_args *a);

#endif /* MEMTRACK_CLI_VIEW_DIFF_H */
