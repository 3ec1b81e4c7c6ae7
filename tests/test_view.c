// SPDX-License-Identifier: GPL-2.0-only
/* test_view.c — `memtrack view`: the pages opened in headless Chromium agree with `report --json` and `diff --json`. */
/*
 * tests/progs/phases recorded with --stacks (1000 B x 10; 5 freed, 3000 B x 3; 2 freed; 10000 B leaked). The page
 * takes its window, instant, weight, search, zoom and inverted view from its URL's hash and writes what it shows
 * into <pre id="mt-state"> as JSON; --dump-dom reads it back. Every number is checked against `report --json` with
 * the window the page snapped to, and against the program's known sizes. A screenshot of each view is kept in
 * MT_VIEW_SHOTS for review.
 */
#include "kernel_test.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MT_VIEW_SHOTS
#define MT_VIEW_SHOTS "."
#endif

static char dir[256];		/* the recording */
static char page[300];		/* its page */
static char tree_dir[256];	/* tests/progs/alloc_tree recorded: 4 processes, 6 images, temporaries */
static char tree_page[300];
static char big_page[300];	/* tests/progs/tree_fork_100's: 101 processes of one executable */
static char from_s[32], to_s[32];	/* phase 2's start and phase 3's, "S.NNNNNNNNN" */
static char diff_dirs[2][256];	/* tests/progs/diff_sites 10 5 3, then 20 5 0 */
static char diff_page[300];	/* view BEFORE AFTER's page of them */

/* ---- helpers ---- */

/* The number after "key": (spaces allowed) in s, as JSON writes it; the test fails without one. */
static uint64_t num_after(const char *s, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(s, k);
	if (!p)
		fail_msg("no %s in %s", k, s);
	return strtoull(p + strlen(k) + strspn(p + strlen(k), " "), NULL, 10);
}

/* The string value of "key" in the page's compact state, into buf. */
static void str_after(const char *s, const char *key, char *buf, size_t len)
{
	char k[64];
	const char *p;
	size_t n;

	snprintf(k, sizeof(k), "\"%s\":\"", key);
	p = strstr(s, k);
	assert_non_null(p);
	p += strlen(k);
	n = strcspn(p, "\"");
	assert_true(n < len);
	memcpy(buf, p, n);
	buf[n] = '\0';
}

static uint64_t ns_of(const char *seconds)
{
	char *end;
	uint64_t s = strtoull(seconds, &end, 10);

	assert_int_equal(*end, '.');
	return s * 1000000000ULL + strtoull(end + 1, NULL, 10);
}

/* Chromium is needed (a failure under CI=true, else the test is skipped). */
static bool have_chromium(void)
{
	return mt_test__need("chromium", "chromium");
}

/* The page at hash, its state JSON (malloc'd); a screenshot of it as MT_VIEW_SHOTS/view-NAME.png. */
static char *open_page_of(const char *page, const char *name, const char *hash)
{
	char cmd[2048], out[512], *dom, *state, *end;
	struct stat sb;

	snprintf(out, sizeof(out), "%s/%s.dom", mt_test_root, name);
	snprintf(cmd, sizeof(cmd), "HOME='%s' timeout 120 chromium --headless --no-sandbox --disable-gpu "
		 "--disable-background-networking --disable-component-update --disable-sync --no-first-run "
		 "--user-data-dir='%s/chromium' %s 'file://%s#%s' > '%s' 2> /dev/null", mt_test_root, mt_test_root,
		 "--dump-dom", page, hash, out);
	assert_int_equal(system(cmd), 0);
	dom = mt_test__read_file(out);
	state = strstr(dom, "id=\"mt-state\" hidden=\"\">");
	if (!state)
		fail_msg("no state in the page's DOM (%s)", out);
	state = strdup(strchr(state, '>') + 1);
	end = strchr(state, '<');
	assert_non_null(end);
	*end = '\0';
	free(dom);
	snprintf(out, sizeof(out), "%s/view-%s.png", MT_VIEW_SHOTS, name);
	snprintf(cmd, sizeof(cmd), "HOME='%s' timeout 120 chromium --headless --no-sandbox --disable-gpu "
		 "--no-first-run --user-data-dir='%s/chromium' --window-size=1250,800 --screenshot='%s' "
		 "'file://%s#%s' > /dev/null 2>&1", mt_test_root, mt_test_root, out, page, hash);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(stat(out, &sb), 0);
	assert_true(sb.st_size > 1000);
	return state;
}

/* `memtrack report --json --sites 0 [--from F --to T] DIR`'s output (F NULL: no window). */
static char *open_page(const char *name, const char *hash)
{
	return open_page_of(page, name, hash);
}

/* The page's table as its state has it: which, sorted how, how many rows; then its first rows, exactly. */
static void assert_table(const char *st, const char *head, const char *first)
{
	if (!strstr(st, head))
		fail_msg("no %s in %s", head, st);
	if (!strstr(st, first))
		fail_msg("no %s in %s", first, st);
}

static char *report_json_of(char *dir, const char *name, const char *from, const char *to)
{
	char *win[] = { MT_BINARY, "report", "--json", "--sites", "0", "--from", (char *)from, "--to", (char *)to,
			dir, NULL };
	char *all[] = { MT_BINARY, "report", "--json", "--sites", "0", dir, NULL };
	char out[512];

	snprintf(out, sizeof(out), "%s/%s.json", mt_test_root, name);
	assert_int_equal(mt_test__run(from ? win : all, out, NULL), 0);
	return mt_test__read_file(out);
}

static char *report_json(const char *name, const char *from, const char *to)
{
	return report_json_of(dir, name, from, to);
}

static int setup(void **state)
{
	char *rec[] = { MT_BINARY, "record", "-q", "--stacks", "-o", dir, "--", PROG("phases"), NULL };
	char *view[] = { MT_BINARY, "view", "-o", page, dir, NULL };

	(void)state;
	snprintf(dir, sizeof(dir), "%s/phases", mt_test_root);
	snprintf(page, sizeof(page), "%s/phases.html", mt_test_root);
	if (mt_test__run(rec, "/dev/null", NULL))
		return -1;
	mt_test__phase_times(dir, from_s, to_s, sizeof(from_s));
	return mt_test__run(view, "/dev/null", NULL);
}

static int setup_tree(void **state)
{
	char *rec[] = { MT_BINARY, "record", "-q", "--stacks", "-o", tree_dir, "--", PROG("alloc_tree"), NULL };
	char *view[] = { MT_BINARY, "view", "-o", tree_page, tree_dir, NULL };

	(void)state;
	snprintf(tree_dir, sizeof(tree_dir), "%s/tree", mt_test_root);
	snprintf(tree_page, sizeof(tree_page), "%s/tree.html", mt_test_root);
	if (mt_test__run(rec, "/dev/null", NULL))
		return -1;
	return mt_test__run(view, "/dev/null", NULL);
}

/* ---- the page ---- */

/* Opened as it is: the header's numbers, the flame graph of what was live at the peak (14000 B). */
static void test_view_default_is_peak(void **state)
{
	char *st, *rep = report_json("all", NULL, NULL), *html = mt_test__read_file(page);

	(void)state;
	if (!have_chromium())
		return;
	st = open_page("peak", "");
	assert_non_null(strstr(st, "\"weight\":\"peak\""));
	assert_int_equal(num_after(st, "total"), num_after(rep, "peak_live_bytes"));
	assert_int_equal(num_after(st, "total"), 14000);
	/* report's own text, and its --json object, are in the page as they are */
	assert_non_null(strstr(html, "\"allocated_bytes\": 19000,"));
	assert_null(strstr(html, "src=\"http"));
	assert_null(strstr(html, "href=\"http"));
	free(html);
	free(rep);
	free(st);
}

/* Phase 2 as the window: the flame graph's total is report's allocations in the window the page snapped to. */
static void test_view_window_matches_report(void **state)
{
	char hash[128], from[32], to[32], *st, *rep;

	(void)state;
	if (!have_chromium())
		return;
	snprintf(hash, sizeof(hash), "from=%" PRIu64 "&to=%" PRIu64, ns_of(from_s), ns_of(to_s));
	st = open_page("window", hash);
	str_after(st, "from", from, sizeof(from));
	str_after(st, "to", to, sizeof(to));
	assert_true(ns_of(from) <= ns_of(from_s));	/* snapped outwards, to the edges around the phase */
	assert_true(ns_of(to) >= ns_of(to_s));
	rep = report_json("window", from, to);
	assert_int_equal(num_after(st, "total"), num_after(rep, "allocated_bytes"));
	assert_int_equal(num_after(st, "allocations"), num_after(rep, "allocations"));
	assert_int_equal(num_after(st, "total"), 9000);
	assert_int_equal(num_after(st, "allocations"), 3);
	free(rep);
	free(st);
	snprintf(hash, sizeof(hash), "weight=count&from=%" PRIu64 "&to=%" PRIu64, ns_of(from_s), ns_of(to_s));
	st = open_page("window-count", hash);
	assert_int_equal(num_after(st, "total"), 3);
	free(st);
}

/* An instant in phase 2 (after its frees... of phase 1's blocks): what was live then, as report --to says. */
static void test_view_instant_matches_live(void **state)
{
	char hash[64], at[32], *st, *rep;
	uint64_t at_ns;

	(void)state;
	if (!have_chromium())
		return;
	/* 100 ms before phase 2, in phase 1's 200 ms: 10 x 1000 B live (half of phase 2's start was before phase 1
	 * when the start-up took over 200 ms, as under the sanitizers) */
	snprintf(hash, sizeof(hash), "at=%" PRIu64, ns_of(from_s) - 100000000);
	st = open_page("instant", hash);
	assert_non_null(strstr(st, "\"weight\":\"live\""));
	at_ns = num_after(st, "at_ns");
	snprintf(at, sizeof(at), "%" PRIu64 ".%09" PRIu64, at_ns / 1000000000, at_ns % 1000000000);
	rep = report_json("instant", "0", at);
	assert_int_equal(num_after(st, "total"), num_after(rep, "still_live_bytes"));
	assert_int_equal(num_after(st, "total"), 10000);
	free(rep);
	free(st);
}

/* Search, zoom, runtime frames hidden and the inverted view on the whole recording's allocations (19000 B, all under main). */
static void test_view_search_zoom_invert(void **state)
{
	char *st;

	(void)state;
	if (!have_chromium())
		return;
	st = open_page("search", "weight=bytes&search=%5Emain%24");
	assert_int_equal(num_after(st, "total"), 19000);
	assert_int_equal(num_after(st, "matched"), 19000);
	free(st);
	st = open_page("zoom", "weight=bytes&zoom=_start%3B__libc_start_main%3B__libc_start_call_main%3Bmain");
	assert_non_null(strstr(st, "\"shown_name\":\"main\""));
	assert_int_equal(num_after(st, "shown"), 19000);
	free(st);
	st = open_page("hide", "weight=bytes&hide=1");	/* _start to main hidden: main is the root's one child */
	assert_non_null(strstr(st, "\"top\":[\"main\"]"));
	assert_int_equal(num_after(st, "total"), 19000);
	free(st);
	st = open_page("invert", "weight=leaked&invert=1");
	assert_non_null(strstr(st, "\"top\":[\"main\"]"));
	assert_int_equal(num_after(st, "total"), 10000);
	free(st);
}

/* ---- the tables ---- */

#define TH(key) "click=%23sites-table%20th%5Bdata-key%3D" key "%5D"	/* a click on a column's heading */
#define ROW "click=%23sites-table%20tr.site"				/* a click on the first site row */

/* The sites at the peak (the default), the leaks by site sorted by a clicked column, then reversed, the process row. */
static void test_view_tables(void **state)
{
	char *st, *rep = report_json("tables", NULL, NULL);

	(void)state;
	if (!have_chromium())
		return;
	st = open_page("sites", "");	/* report's sites_at_peak: 9000 B then 5000 B */
	assert_table(st, "\"table\":\"sites\",\"sort\":\"peak\",\"desc\":true,\"rows\":2,",
		     "\"first\":[[\"main\",\"phases.c:28\",\"phases\",3,9000,0,0,6000],"
		     "[\"main\",\"phases.c:23\",\"phases\",10,5000,0,0,4000]]");
	assert_int_equal(num_after(rep, "peak_live_bytes"), 9000 + 5000);	/* the rows add up to report's peak */
	free(st);
	st = open_page("leaks", "table=leaks&" TH("leaked_allocations"));
	assert_table(st, "\"table\":\"leaks\",\"sort\":\"leaked_allocations\",\"desc\":true,\"rows\":2,",
		     "\"first\":[[\"main\",\"phases.c:23\",\"phases\",4000,4,10],"
		     "[\"main\",\"phases.c:28\",\"phases\",6000,2,3]]");
	free(st);
	st = open_page("leaks-asc", "table=leaks&" TH("leaked"));	/* the sorted column: reversed */
	assert_table(st, "\"sort\":\"leaked\",\"desc\":false,", "\"first\":[[\"main\",\"phases.c:23\"");
	free(st);
	st = open_page("procs", "table=procs");
	assert_table(st, "\"table\":\"procs\",\"sort\":\"allocations\",\"desc\":true,\"rows\":1,",
		     ",0,\"" PROG("phases") "\",\"exit\",13,19000,7,14000,10000]]");
	assert_int_equal(num_after(rep, "leaked_bytes"), 10000);
	free(st);
	free(rep);
}

/* A leak row clicked: the flame graph of the leaks, zoomed to the row's frames, its site outlined. */
static void test_view_table_row_zooms(void **state)
{
	char *st;

	(void)state;
	if (!have_chromium())
		return;
	st = open_page("row", "table=leaks&" ROW);
	assert_non_null(strstr(st, "\"weight\":\"leaked\""));
	assert_non_null(strstr(st, "\"zoom\":[\"_start\",\"__libc_start_main\",\"__libc_start_call_main\",\"main\"]"));
	assert_non_null(strstr(st, "\"focus\":true"));
	assert_int_equal(num_after(st, "total"), 10000);
	assert_int_equal(num_after(st, "shown"), 10000);
	free(st);
	/* with runtime frames hidden, the row's path as the graph draws it: main alone */
	st = open_page("row-hidden", "hide=1&table=leaks&" ROW);
	assert_non_null(strstr(st, "\"zoom\":[\"main\"]"));
	assert_int_equal(num_after(st, "shown"), 10000);
	free(st);
}

/* A tree of 4 processes: temporaries by site, the row by executable and the 6 image rows, as report --json has them. */
static void test_view_tables_tree(void **state)
{
	char *st;

	(void)state;
	if (!have_chromium())
		return;
	/* alloc_n frees each block before the next: all temporary; 7 x 3003 B + 9 x 3004 B from one line */
	st = open_page_of(tree_page, "temporary", "weight=bytes&sort=temporary");
	assert_table(st, "\"table\":\"sites\",\"sort\":\"temporary\",\"desc\":true,\"rows\":6,",
		     "\"first\":[[\"alloc_n\",\"alloc_tree.c:17\",\"alloc_tree\",48057,16,0,16,48057,0],"
		     "[\"alloc_n\",\"alloc_tree.c:17\",\"alloc_tree\",15010,5,0,5,15010,0],"
		     "[\"alloc_n\",\"alloc_tree.c:17\",\"alloc_tree\",9003,3,0,3,9003,0],");
	free(st);
	st = open_page_of(tree_page, "exes", "table=exes");
	assert_table(st, "\"table\":\"exes\",\"sort\":\"allocated_bytes\",\"desc\":true,\"rows\":1,",
		     "[[\"" PROG("alloc_tree") "\",4,");
	assert_non_null(strstr(st, ",27,82176,24,"));
	free(st);
	st = open_page_of(tree_page, "procs-tree", "table=procs&" TH("allocated_bytes"));
	assert_table(st, "\"table\":\"procs\",\"sort\":\"allocated_bytes\",\"desc\":true,\"rows\":6,",
		     ",1,\"" PROG("alloc_tree") "\",\"exit\",9,27036,9,3004,0],");
	free(st);
}

/* The flame graph with a root per process, then per executable: each process's allocations as report has them. */
static void test_view_roots(void **state)
{
	char at[32], *st, *rep;
	uint64_t at_ns;

	(void)state;
	if (!have_chromium())
		return;
	st = open_page_of(tree_page, "roots-proc", "weight=bytes&roots=proc");
	assert_int_equal(num_after(st, "total"), 82176);
	/* the parent (3 x 3001 B and stdout's 4096 B), the fork child, the vfork child (2 x 3005 B, then 7 x 3003 B
	 * after its exec), the spawned one: by pid, so in this order */
	assert_non_null(strstr(st, " alloc_tree\",13099,4],[\""));
	assert_non_null(strstr(st, " alloc_tree\",15010,5],[\""));
	assert_non_null(strstr(st, " alloc_tree\",27031,9],[\""));
	assert_non_null(strstr(st, " alloc_tree\",27036,9]]"));
	free(st);
	st = open_page_of(tree_page, "roots-exe", "weight=bytes&roots=exe&invert=1");
	assert_non_null(strstr(st, "\"root_weights\":[[\"alloc_tree\",82176,27]]"));
	free(st);
	/* the peak (6010 B) is the vfork child's two blocks, which its exec discards */
	st = open_page_of(tree_page, "roots-peak", "roots=proc");
	assert_int_equal(num_after(st, "total"), 6010);
	assert_non_null(strstr(st, " alloc_tree\",6010,9],[\""));
	free(st);
	/* one root: the processes' parts added up by stack, what was live at an instant as report --to has it */
	st = open_page_of(tree_page, "tree-instant", "at=90000000");
	at_ns = num_after(st, "at_ns");
	snprintf(at, sizeof(at), "%" PRIu64 ".%09" PRIu64, at_ns / 1000000000, at_ns % 1000000000);
	rep = report_json_of(tree_dir, "tree-instant", "0", at);
	assert_int_equal(num_after(st, "total"), num_after(rep, "still_live_bytes"));
	free(rep);
	free(st);
	/* a process's row clicked: its root, zoomed */
	st = open_page_of(tree_page, "roots-row", "weight=bytes&table=procs&" TH("allocated_bytes") "&" ROW);
	assert_non_null(strstr(st, "\"roots\":\"proc\""));
	assert_non_null(strstr(st, "\"focus\":true"));
	assert_int_equal(num_after(st, "shown"), 27036);
	free(st);
}

/*
 * A tree of 101 processes: the timeline draws one line for their executable, at the timeline's points as the
 * total's (not sampled at the page's edges): its peak is report's; its root has their allocations.
 */
static void test_view_big_tree_groups(void **state)
{
	char big[256];
	char *rec[] = { MT_BINARY, "record", "-q", "--stacks", "--no-rss", "-o", big, "--", PROG("tree_fork_100"),
			NULL };
	char *view[] = { MT_BINARY, "view", "-o", big_page, big, NULL };
	char groups[64], *st, *rep;

	(void)state;
	if (!have_chromium())
		return;
	snprintf(big, sizeof(big), "%s/big", mt_test_root);
	snprintf(big_page, sizeof(big_page), "%s/big.html", mt_test_root);
	assert_int_equal(mt_test__run(rec, "/dev/null", NULL), 0);
	assert_int_equal(mt_test__run(view, "/dev/null", NULL), 0);
	st = open_page_of(big_page, "big-tree", "weight=bytes&roots=exe");
	rep = report_json_of(big, "big", NULL, NULL);
	snprintf(groups, sizeof(groups), "\"timeline_groups\":[[\"tree_fork_100\",101,%" PRIu64 ",%" PRIu64 "]]",
		 num_after(rep, "peak_live_bytes"), num_after(st, "timeline_points"));
	assert_true(num_after(st, "timeline_points") > 300);	/* a sample per fork, block and exit: no fewer */
	if (!strstr(st, groups))
		fail_msg("no %s in %s", groups, st);
	free(rep);
	/* the executable's line, the total, and the total mapped (the loader's and glibc's mappings; no RSS) */
	assert_int_equal(num_after(st, "timeline_series"), 3);
	/* 100 blocks of 2000 + i bytes, all the parent's */
	assert_non_null(strstr(st, "\"root_weights\":[[\"tree_fork_100\",204950,100]]"));
	free(st);
}

/* ---- bad input ---- */

/* -o onto a symlink replaces the link, never writes through it; a missing DIR is one error line and exit 2. */
static void test_view_bad_input(void **state)
{
	char link[300], target[300], err[512];
	char *view[] = { MT_BINARY, "view", "-o", link, dir, NULL };
	char *missing[] = { MT_BINARY, "view", "-o", link, "/nonexistent-memtrack-dir", NULL };
	struct stat sb;
	FILE *f;

	(void)state;
	snprintf(link, sizeof(link), "%s/link.html", mt_test_root);
	snprintf(target, sizeof(target), "%s/target", mt_test_root);
	f = fopen(target, "w");
	assert_non_null(f);
	fputs("keep", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(mt_test__run(view, "/dev/null", NULL), 0);
	assert_int_equal(lstat(link, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_int_equal(stat(target, &sb), 0);
	assert_int_equal(sb.st_size, 4);
	assert_int_equal(mt_test__run_named("missing", missing), 2);
	mt_test__read_named("missing", "err", err, sizeof(err));
	assert_non_null(strstr(err, "memtrack: "));
	assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);
}


/* ---- view BEFORE AFTER ---- */

/*
 * diff_sites N M K: N x 1000 B from site_a, M x 300 B from site_b (leaked), K x 50 B from site_c. Before 10 5 3,
 * after 20 5 0: site_a grew by 10 blocks, site_b is the same, site_c is only in before.
 */
static int setup_diff(void **state)
{
	char *rec[2][12] = {
		{ MT_BINARY, "record", "-q", "--stacks", "-o", diff_dirs[0], "--", PROG("diff_sites"), "10", "5", "3" },
		{ MT_BINARY, "record", "-q", "--stacks", "-o", diff_dirs[1], "--", PROG("diff_sites"), "20", "5", "0" },
	};
	char *view[] = { MT_BINARY, "view", "-o", diff_page, diff_dirs[0], diff_dirs[1], NULL };
	int i;

	(void)state;
	snprintf(diff_page, sizeof(diff_page), "%s/diff.html", mt_test_root);
	for (i = 0; i < 2; i++) {
		snprintf(diff_dirs[i], sizeof(diff_dirs[i]), "%s/diff_%s", mt_test_root, i ? "after" : "before");
		if (mt_test__run(rec[i], "/dev/null", NULL))
			return -1;
	}
	return mt_test__run(view, "/dev/null", NULL);
}

/* `memtrack diff --json BEFORE AFTER`'s output. */
static char *diff_json(void)
{
	char *argv[] = { MT_BINARY, "diff", "--json", "--sites", "100", diff_dirs[0], diff_dirs[1], NULL };
	char out[512];

	snprintf(out, sizeof(out), "%s/diff.json", mt_test_root);
	assert_int_equal(mt_test__run(argv, out, NULL), 0);
	return mt_test__read_file(out);
}

/* The header: both commands, diff's totals before, after and the change; both timelines drawn; nothing fetched. */
static void test_view_diff_header(void **state)
{
	char *st, *dj = diff_json(), *html = mt_test__read_file(diff_page);

	(void)state;
	if (!have_chromium())
		return;
	st = open_page_of(diff_page, "diff", "");
	assert_non_null(strstr(st, "\"commands\":[[\"" PROG("diff_sites") "\",\"10\",\"5\",\"3\"],[\""
			       PROG("diff_sites") "\",\"20\",\"5\",\"0\"]]"));
	/* 10 + 5 + 3 blocks, 10000 + 1500 + 150 B, all live at once; then 20 + 5 blocks, 20000 + 1500 B */
	assert_non_null(strstr(st, "\"header\":[[\"allocations:\",18,25,7],[\"allocated:\",11650,21500,9850],"
			       "[\"peak live:\",11650,21500,9850],[\"peak RSS:\","));
	assert_non_null(strstr(st, "[\"leaked blocks:\",5,5,0],[\"leaked:\",1500,1500,0],"
			       "[\"dropped events:\",0,0,0]]"));
	/* as diff --json says them */
	assert_int_equal(num_after(dj, "count_delta"), 7);
	assert_int_equal(num_after(dj, "bytes_delta"), 9850);
	assert_int_equal(num_after(dj, "peak_bytes_delta"), 9850);
	assert_non_null(strstr(st, "\"timelines\":[1,1]"));	/* a live heap line each */
	assert_null(strstr(html, "src=\"http"));
	assert_null(strstr(html, "href=\"http"));
	free(html);
	free(dj);
	free(st);
}

#define MAIN_PATH "_start%3B__libc_start_main%3B__libc_start_call_main%3Bmain"

/* The flame graph sized by after: site_a +10 blocks, +10000 B; site_b unchanged; site_c only when sized by before. */
static void test_view_diff_flame(void **state)
{
	char *st;

	(void)state;
	if (!have_chromium())
		return;
	st = open_page_of(diff_page, "diff-site-a", "weight=bytes&zoom=" MAIN_PATH "%3Bsite_a");
	assert_non_null(strstr(st, "\"shown\":{\"name\":\"site_a\",\"before\":[10000,10,0],"
			       "\"after\":[20000,20,0],\"delta\":10000,\"width\":20000,"));
	assert_non_null(strstr(st, "bytes allocated: +10000 B (+9.8 KiB), +100.0%\\nbefore: 10000 B (9.8 KiB)\\n"
			       "after: 20000 B (19.5 KiB)\\nallocations: +10 (10 before, 20 after)\\n"
			       "source: diff_sites.c:12"));
	assert_int_equal(num_after(st, "only_before"), 1);
	free(st);
	st = open_page_of(diff_page, "diff-count-a", "weight=count&zoom=" MAIN_PATH "%3Bsite_a");
	assert_non_null(strstr(st, "\"after\":[20000,20,0],\"delta\":10,\"width\":20,"));
	free(st);
	st = open_page_of(diff_page, "diff-site-b", "weight=leaked&zoom=" MAIN_PATH "%3Bsite_b");
	assert_non_null(strstr(st, "\"shown\":{\"name\":\"site_b\",\"before\":[1500,5,1500],"
			       "\"after\":[1500,5,1500],\"delta\":0,\"width\":1500,"));
	free(st);
	/* main: all three sites; sized by the larger of both, site_c's 150 B are in its width */
	st = open_page_of(diff_page, "diff-max", "weight=bytes&size=max&zoom=" MAIN_PATH);
	assert_non_null(strstr(st, "\"shown\":{\"name\":\"main\",\"before\":[11650,18,1500],"
			       "\"after\":[21500,25,1500],\"delta\":9850,\"width\":21650,"));
	free(st);
	st = open_page_of(diff_page, "diff-site-c", "weight=bytes&size=before&zoom=" MAIN_PATH "%3Bsite_c");
	assert_non_null(strstr(st, "\"shown\":{\"name\":\"site_c\",\"before\":[150,3,0],"
			       "\"after\":[0,0,0],\"delta\":-150,\"width\":150,"));
	free(st);
}

/* The sites by change as diff ranks them: site_a's growth first, site_c gone; a row clicked zooms to its frames. */
static void test_view_diff_sites(void **state)
{
	char *st, *dj = diff_json();
	const char *first;

	(void)state;
	if (!have_chromium())
		return;
	st = open_page_of(diff_page, "diff-table", "");
	assert_non_null(strstr(st, "\"table\":[[\"site_a\",10000,10,0,\"\"],[\"site_c\",-150,-3,0,\"gone\"],"
			       "[\"site_b\",0,0,0,\"\"]]"));
	assert_int_equal(num_after(st, "sites_total"), 3);
	/* diff --json's top growth is the page's first row */
	first = strstr(dj, "\"sites\": [");
	assert_non_null(first);
	assert_int_equal(num_after(first, "bytes_delta"), 10000);
	assert_int_equal(num_after(first, "count_delta"), 10);
	assert_non_null(strstr(first, "\"name\": \"site_a\""));
	free(st);
	/* the second row (site_c, gone): sized by the larger of both so that its frames show, zoomed, outlined */
	st = open_page_of(diff_page, "diff-row", "click=%23sites-table%20tr.site.gone");
	assert_non_null(strstr(st, "\"size\":\"max\""));
	assert_non_null(strstr(st, "\"focus\":true"));
	assert_non_null(strstr(st, "\"shown\":{\"name\":\"site_c\",\"before\":[150,3,0],"));
	free(st);
	free(dj);
}

/* A DIR missing, or not a recording: one error line, exit 2; a third DIR is a usage error. */
static void test_view_diff_bad_input(void **state)
{
	char out[300], empty[300], err[512];
	char *missing[] = { MT_BINARY, "view", "-o", out, diff_dirs[0], "/nonexistent-memtrack-dir", NULL };
	char *not_rec[] = { MT_BINARY, "view", "-o", out, empty, diff_dirs[1], NULL };
	char *three[] = { MT_BINARY, "view", "-o", out, diff_dirs[0], diff_dirs[1], diff_dirs[1], NULL };
	char **bad[] = { missing, not_rec, three };
	const char *names[] = { "diff-missing", "diff-not-rec", "diff-three" };
	struct stat sb;
	size_t i;

	(void)state;
	snprintf(out, sizeof(out), "%s/diff-bad.html", mt_test_root);
	snprintf(empty, sizeof(empty), "%s/not-a-recording", mt_test_root);
	assert_int_equal(mkdir(empty, 0755), 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(mt_test__run_named(names[i], bad[i]), 2);
		mt_test__read_named(names[i], "err", err, sizeof(err));
		if (strncmp(err, "memtrack: ", 10) || strchr(err, '\n') != err + strlen(err) - 1)
			fail_msg("%s: not one error line: %s", names[i], err);
	}
	assert_int_not_equal(stat(out, &sb), 0);	/* no page */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_view_default_is_peak, setup),
		cmocka_unit_test(test_view_window_matches_report),
		cmocka_unit_test(test_view_instant_matches_live),
		cmocka_unit_test(test_view_search_zoom_invert),
		cmocka_unit_test(test_view_tables),
		cmocka_unit_test(test_view_table_row_zooms),
		cmocka_unit_test_setup(test_view_tables_tree, setup_tree),
		cmocka_unit_test(test_view_roots),
		cmocka_unit_test(test_view_big_tree_groups),
		cmocka_unit_test(test_view_bad_input),
		cmocka_unit_test_setup(test_view_diff_header, setup_diff),
		cmocka_unit_test(test_view_diff_flame),
		cmocka_unit_test(test_view_diff_sites),
		cmocka_unit_test(test_view_diff_bad_input),
	};

	return mt_test__main("test_view", tests, sizeof(tests) / sizeof(tests[0]));
}
