// SPDX-License-Identifier: GPL-2.0-only
/* exes.c — `memtrack report`'s rows by executable: a big tree (make -j) as one row per program it ran. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/plural.h"
#include "common/text.h"
#include "report/exes.h"
#include "report/format.h"
#include "report/leaks.h"
#include "report/report.h"

/* One executable's images, summed; leaks as the suppressions leave them. */
struct exe_row {
	const struct mt_image *named;	/* its first image: the name's */
	size_t first;			/* the order first seen, for the order among equals */
	size_t last_proc;		/* the last process counted, + 1 (a process counts once per executable) */
	uint64_t processes;
	uint64_t images;		/* its own; a fork child's image before its exec folds into the exec's */
	uint64_t allocations;
	uint64_t frees;
	uint64_t allocated_bytes;
	uint64_t freed_bytes;
	uint64_t peak_live_bytes;	/* the highest of its images', a folded image's (the parent's blocks) aside */
	uint64_t peak_rss_bytes;	/* likewise */
	uint64_t leaked;
	uint64_t leaked_bytes;
	uint64_t suppressed;
	uint64_t suppressed_bytes;
	uint64_t inherited_live;
	uint64_t inherited_live_bytes;
	uint64_t still_live;
	uint64_t still_live_bytes;
};

struct exe_table {
	struct exe_row *rows;
	size_t n;
};

bool mt_exes__wanted(const struct mt_report_extra *x, size_t nrows)
{
	if (x->rows != MT_ROWS_AUTO)
		return x->rows == MT_ROWS_BY_EXE;
	return nrows > MT_EXES_AUTO_ROWS;
}

size_t mt_exes__column(unsigned int columns, size_t prefix)
{
	if (!columns)
		return MT_EXES_PIPE_COLUMN;
	return columns > prefix + MT_EXES_MIN_COLUMN ? columns - prefix : MT_EXES_MIN_COLUMN;
}

void mt_exes__put_cut(FILE *f, const char *s, size_t width)
{
	size_t chars = 0, i, keep = 0;

	for (i = 0; s[i]; i++) {
		if (((unsigned char)s[i] & 0xc0) == 0x80)	/* a UTF-8 continuation byte */
			continue;
		if (++chars == width)
			keep = i;	/* where the "…" goes when there is more */
	}
	if (!width || chars <= width) {
		fputs(s, f);
		return;
	}
	fwrite(s, 1, keep, f);
	fputs("…", f);
}

static bool same_exe(const struct mt_image *a, const struct mt_image *b)
{
	if (a->exe[0] || b->exe[0])
		return !strncmp(a->exe, b->exe, sizeof(a->exe));
	return !strncmp(a->comm, b->comm, sizeof(a->comm));
}

/* The name as the per-process rows print it: the exe, else [comm], else "-". */
static void put_name(FILE *f, const struct mt_image *img)
{
	if (img->exe[0]) {
		mt_text__put_n(f, img->exe, strnlen(img->exe, sizeof(img->exe)));
	} else if (img->comm[0]) {
		fputc('[', f);
		mt_text__put_n(f, img->comm, strnlen(img->comm, sizeof(img->comm)));
		fputc(']', f);
	} else {
		fputc('-', f);
	}
}

/*
 * A fork child's image before its exec (what it did between fork and exec: make's child before it runs sh) counts
 * under the program the exec started, the process's next row.
 */
static bool folds(const struct mt_model *m, const size_t *rows, size_t nrows, size_t i)
{
	const struct mt_image *img = mt_model__image(m, rows[i]), *next;

	if (img->from_exec || img->open_end || img->end != MT_IMAGE_EXEC || i + 1 >= nrows)
		return false;
	next = mt_model__image(m, rows[i + 1]);
	return next->proc == img->proc && next->image == img->image + 1;
}

static void row_add(struct exe_row *r, const struct mt_model *m, size_t idx, bool folded,
		    const struct mt_report_extra *x)
{
	const struct mt_image *img = mt_model__image(m, idx);
	const struct mt_heap_stats *h = &img->heap;
	uint64_t sup_n, sup_b;

	mt_leaks__suppressed(x->leaks, idx, &sup_n, &sup_b);
	if (r->last_proc != img->proc + 1)
		r->processes++;
	r->last_proc = img->proc + 1;
	r->allocations += h->allocations;
	r->frees += h->frees;
	r->allocated_bytes += h->allocated_bytes;
	r->freed_bytes += h->freed_bytes;
	r->leaked += h->leaked_allocations - sup_n;
	r->leaked_bytes += h->leaked_bytes - sup_b;
	r->suppressed += sup_n;
	r->suppressed_bytes += sup_b;
	r->inherited_live += h->inherited_live_allocations;
	r->inherited_live_bytes += h->inherited_live_bytes;
	r->still_live += h->still_live_allocations;
	r->still_live_bytes += h->still_live_bytes;
	if (folded)
		return;
	r->images++;
	if (h->peak_live_bytes > r->peak_live_bytes)
		r->peak_live_bytes = h->peak_live_bytes;
	if (img->rss.peak_rss_bytes > r->peak_rss_bytes)
		r->peak_rss_bytes = img->rss.peak_rss_bytes;
}

/* Most bytes allocated first; among equals, the first seen first. */
static int row_cmp(const void *pa, const void *pb)
{
	const struct exe_row *a = pa, *b = pb;

	if (a->allocated_bytes != b->allocated_bytes)
		return a->allocated_bytes > b->allocated_bytes ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

static int table_build(struct exe_table *t, const struct mt_model *m, const size_t *rows, size_t nrows,
		       const struct mt_report_extra *x)
{
	const struct mt_image *img;
	size_t i, k, target;

	t->n = 0;
	t->rows = calloc(nrows + 1, sizeof(*t->rows));
	if (!t->rows)
		return -ENOMEM;
	for (i = 0; i < nrows; i++) {
		for (target = i; folds(m, rows, nrows, target); target++)
			;
		img = mt_model__image(m, rows[target]);
		for (k = 0; k < t->n && !same_exe(t->rows[k].named, img); k++)
			;
		if (k == t->n) {
			t->rows[k].named = img;
			t->rows[k].first = k;
			t->n++;
		}
		row_add(&t->rows[k], m, rows[i], target != i, x);
	}
	qsort(t->rows, t->n, sizeof(*t->rows), row_cmp);
	return 0;
}

static bool row_empty(const struct exe_row *r)
{
	return !r->allocations && !r->frees;
}

/* The rows' last column, or the line of the executables that did nothing: through put_name, cut to width. */
static void put_names_cut(FILE *f, const struct exe_table *t, bool empty, size_t width)
{
	size_t i, len = 0, n = 0;
	char *buf = NULL;
	FILE *mem = open_memstream(&buf, &len);

	if (!mem)
		return;
	for (i = 0; i < t->n; i++) {
		if (row_empty(&t->rows[i]) != empty)
			continue;
		fputs(n++ ? ", " : "", mem);
		put_name(mem, t->rows[i].named);
	}
	if (!fclose(mem))
		mt_exes__put_cut(f, buf, width);
	free(buf);
}

static void text_row(FILE *f, const struct exe_row *r, bool rss, size_t width)
{
	char a[MT_HUMAN_MAX], b[MT_HUMAN_MAX], c[MT_HUMAN_MAX], d[MT_HUMAN_MAX];
	struct exe_table one = { (struct exe_row *)r, 1 };

	fprintf(f, "%7" PRIu64 " %9" PRIu64 " %9" PRIu64 " %10s %10s %7" PRIu64 " %10s", r->processes,
		r->allocations, r->frees, mt_format__human(a, r->allocated_bytes),
		mt_format__human(b, r->peak_live_bytes), r->leaked + r->still_live,
		mt_format__human(c, r->leaked_bytes + r->still_live_bytes));
	if (rss)
		fprintf(f, " %10s", mt_format__human(d, r->peak_rss_bytes));
	fputs("  ", f);
	put_names_cut(f, &one, false, width);
	fputc('\n', f);
}

/* The part of a line before the EXE column: the numbers, the RSS column's too, and two spaces. */
#define EXES_PREFIX 70
#define EXES_RSS_PREFIX (EXES_PREFIX + 11)

int mt_exes__text(FILE *f, const struct mt_model *m, const size_t *rows, size_t nrows,
		  const struct mt_report_extra *x)
{
	bool rss = mt_model__totals(m)->rss.records, open = false;
	size_t i, empty = 0, prefix = rss ? EXES_RSS_PREFIX : EXES_PREFIX;
	size_t width = mt_exes__column(x->columns, prefix);
	struct exe_table t;
	char lead[64];

	if (table_build(&t, m, rows, nrows, x))
		return -ENOMEM;
	fprintf(f, "\nby executable: %zu in %" PRIu64 " %s, %zu %s (`report --by-pid`: one row per process image)\n",
		t.n, mt_model__totals(m)->processes, mt_plural__of(mt_model__totals(m)->processes, "process", "processes"),
		nrows, mt_plural__of(nrows, "image", "images"));
	fprintf(f, "%7s %9s %9s %10s %10s %7s %10s%s  %s\n", "PROCS", "ALLOCS", "FREES", "ALLOCATED", "PEAK", "LEAKS",
		"LEAKED", rss ? "   PEAK RSS" : "", "EXE");
	for (i = 0; i < t.n; i++) {
		empty += row_empty(&t.rows[i]);
		open |= t.rows[i].still_live;
		if (!row_empty(&t.rows[i]))
			text_row(f, &t.rows[i], rss, width);
	}
	if (empty) {
		snprintf(lead, sizeof(lead), "(%zu %s allocated nothing: ", empty,
			 mt_plural__of(empty, "executable", "executables"));
		fputs(lead, f);
		put_names_cut(f, &t, true, prefix + width - strlen(lead) - 1);
		fputs(")\n", f);
	}
	fputs("(PEAK: the highest of one process image; LEAKS: blocks it allocated and held at exit, the suppressed "
	      "ones and those inherited at fork apart)\n", f);
	if (open)
		fputs("(LEAKS and LEAKED count blocks still live at the end too: not all are leaks)\n", f);
	free(t.rows);
	return ferror(f) ? -EIO : 0;
}

static void json_row(struct mt_json *j, const struct exe_row *r, bool rss)
{
	mt_json__begin_object(j);
	mt_json__kv_string_n(j, "exe", r->named->exe, sizeof(r->named->exe));
	mt_json__kv_string_n(j, "comm", r->named->comm, sizeof(r->named->comm));
	mt_json__kv_u64(j, "processes", r->processes);
	mt_json__kv_u64(j, "images", r->images);
	mt_json__kv_u64(j, "allocations", r->allocations);
	mt_json__kv_u64(j, "frees", r->frees);
	mt_json__kv_u64(j, "allocated_bytes", r->allocated_bytes);
	mt_json__kv_u64(j, "freed_bytes", r->freed_bytes);
	mt_json__kv_u64(j, "peak_live_bytes", r->peak_live_bytes);
	mt_json__kv_u64(j, "leaked_allocations", r->leaked);
	mt_json__kv_u64(j, "leaked_bytes", r->leaked_bytes);
	mt_json__kv_u64(j, "suppressed_allocations", r->suppressed);
	mt_json__kv_u64(j, "suppressed_bytes", r->suppressed_bytes);
	mt_json__kv_u64(j, "inherited_live_allocations", r->inherited_live);
	mt_json__kv_u64(j, "inherited_live_bytes", r->inherited_live_bytes);
	mt_json__kv_u64(j, "still_live_allocations", r->still_live);
	mt_json__kv_u64(j, "still_live_bytes", r->still_live_bytes);
	if (rss)
		mt_json__kv_u64(j, "peak_rss_bytes", r->peak_rss_bytes);
	mt_json__end_object(j);
}

int mt_exes__json(struct mt_json *j, const struct mt_model *m, const size_t *rows, size_t nrows,
		  const struct mt_report_extra *x)
{
	bool rss = mt_model__totals(m)->rss.records;
	struct exe_table t;
	size_t i;

	if (table_build(&t, m, rows, nrows, x))
		return -ENOMEM;
	mt_json__key(j, "executables");
	mt_json__begin_array(j);
	for (i = 0; i < t.n; i++)
		json_row(j, &t.rows[i], rss);
	mt_json__end_array(j);
	free(t.rows);
	return 0;
}
