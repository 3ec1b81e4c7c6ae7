/* SPDX-License-Identifier: GPL-2.0-only */
/* exes.h — the report's rows by executable, for big process trees, and the width of its last column. */
#ifndef MEMTRACK_EXES_H
#define MEMTRACK_EXES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/json.h"
#include "model/model.h"

struct mt_report_extra;

/* Above this many process images, `report` prints the rows by executable unless --by-pid. */
#define MT_EXES_AUTO_ROWS 12
/* The last column's width (display characters) when stdout is no terminal; on a terminal, what the line leaves. */
#define MT_EXES_PIPE_COLUMN 100
/* The last column never gets fewer characters than this, however narrow the terminal. */
#define MT_EXES_MIN_COLUMN 24

/* Whether the text report shows rows by executable: x's choice, else more than MT_EXES_AUTO_ROWS rows. */
bool mt_exes__wanted(const struct mt_report_extra *x, size_t nrows);
/*
 * The table by executable of the matched images rows[0..nrows) (a process's together, as the report orders them):
 * a fork child's image before its exec counts under the program it exec'd, executables that allocated and freed
 * nothing are named on one line. 0 or -EIO.
 */
int mt_exes__text(FILE *f, const struct mt_model *m, const size_t *rows, size_t nrows,
		  const struct mt_report_extra *x);
/* "executables": [...], the same rows (all of them) with their whole names. 0 or -ENOMEM. */
int mt_exes__json(struct mt_json *j, const struct mt_model *m, const size_t *rows, size_t nrows,
		  const struct mt_report_extra *x);
/*
 * s (text as mt_text__put wrote it: valid UTF-8) cut to width display characters, its last one "…" when cut; the
 * whole of it when width is 0.
 */
void mt_exes__put_cut(FILE *f, const char *s, size_t width);
/* The last column's width on a line that has prefix characters before it, for terminal width columns (0: none). */
size_t mt_exes__column(unsigned int columns, size_t prefix);

#endif /* MEMTRACK_EXES_H */
