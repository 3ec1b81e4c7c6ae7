/* SPDX-License-Identifier: GPL-2.0-only */
/* report.h — the printers behind `memtrack report` and `memtrack dump`, on any FILE* so tests can capture them. */
#ifndef MEMTRACK_REPORT_H
#define MEMTRACK_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "artifact/artifact.h"
#include "common/json.h"
#include "model/model.h"
#include "report/sites.h"

struct mt_leaks;
struct mt_metadata;

/* The text report's rows: one per process image, one per executable, or by the tree's size (exes.h). */
enum mt_report_rows { MT_ROWS_AUTO, MT_ROWS_BY_PID, MT_ROWS_BY_EXE };

/* What a report adds to the model; any field may be NULL (and a NULL extra is all NULL). */
struct mt_report_extra {
	const struct mt_metadata *metadata;	/* DIR/memory_metadata.json: the rows' command lines */
	const struct mt_leaks *leaks;		/* which leaks are suppressed (leaks.h) */
	const struct mt_filter *filter;		/* what the model was filtered by, said in the header */
	bool with_sites;			/* JSON: the "sites" keys */
	bool sizes;				/* JSON: the "sizes" key (report --sizes, sizes.h) */
	enum mt_report_rows rows;		/* text: --by-pid, --by-exe, or neither */
	unsigned int columns;			/* text: the terminal's width, 0 when stdout is none */
};

/*
 * The text report of a finished model: header, totals, one row per matched image (a process's together); label
 * names the artifact (usually its DIR). 0, -EIO, -ENOMEM.
 */
int mt_report__text(FILE *f, const struct mt_model *m, const char *label);
int mt_report__text_with(FILE *f, const struct mt_model *m, const char *label, const struct mt_report_extra *x);
/* The --json report: one object {"totals": {...}, "processes": [one per matched image]} and a newline. */
int mt_report__json(FILE *f, const struct mt_model *m);
/* The same with extra, and the "sites" keys of sites (top of them) when x->with_sites. */
int mt_report__json_with(FILE *f, const struct mt_model *m, const struct mt_report_extra *x,
			 const struct mt_sites *sites, size_t top);
/* `report --leaks`: the header, the leak totals, then x->leaks's listing (top sites of each kind, 0: all). */
int mt_report__leaks_text(FILE *f, const struct mt_model *m, const char *label, const struct mt_report_extra *x,
			  size_t top);
/* `report --leaks --json`: {"totals": {...}, "leaks": [...], "still_live": [...]}. */
int mt_report__leaks_json(FILE *f, const struct mt_model *m, const struct mt_report_extra *x, size_t top);
/* The attach log of DIR as a table (attach_report.c). Returns what mt_artifact__read returned. */
int mt_report__attach(FILE *f, const char *dir, struct mt_read_status *st);
/* ---- top allocation sites (struct mt_sites from stacks.h) ---- */
struct mt_sites;
/* The text section "top allocation sites by bytes/count"; nothing when no stack was recorded. 0 or -EIO. */
int mt_report__sites_text(FILE *f, const struct mt_sites *sites, size_t top);
/* The same as keys of report's JSON object: "sites", "sites_by_count", their totals and the cut allocations. */
void mt_report__sites_json(struct mt_json *j, const struct mt_sites *sites, size_t top);

/* {"ringbuf": N, "callstate": N, "read": N}, plus "drop_<i>" for unnamed causes that are not 0. */
void mt_report__json_drops(struct mt_json *j, const uint64_t drops[MT_DROP__COUNT]);
/*
 * What a read result means for the exit status of report and dump: 0 whole; 1 damaged (warns "DIR: reason; the
 * <what> covers the N records before byte B"); 2 unreadable (one error line). what is "report" or "dump".
 */
int mt_report__exit_status(const char *dir, int err, const struct mt_read_status *st, const char *what);

/*
 * Every record of the artifact at path, in time order (through the reorder window), one line each. Returns what
 * mt_artifact__read returned (on -EBADMSG the records before the damage were written), or -EIO, -ENOMEM.
 */
int mt_dump__write(FILE *f, const char *path, struct mt_read_status *st);
/*
 * The same, only the records of the processes (a fork: its parent or child) and images the filter takes, in its time
 * window (filter NULL: every record). The session and end records pass --pid and --exe.
 */
int mt_dump__write_filtered(FILE *f, const char *path, const struct mt_filter *filter, struct mt_read_status *st);
/* `report --attach --json`: {"attach": [...]}, the attach records as mt_dump__write prints them. Returns the same. */
int mt_dump__attach_json(FILE *f, const char *path, struct mt_read_status *st);

#endif /* MEMTRACK_REPORT_H */
