// SPDX-License-Identifier: GPL-2.0-only
/* test_control.c — integration: record --paused and the control FIFO's windows and marks, --strict's exit code. */
#include "kernel_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "artifact/artifact.h"
#include "model/model.h"
#include "report/timeline.h"

/* What the artifact holds, in its order, about the window the control lines made. */
struct window_log {
	uint64_t allocs_by_size[4];	/* 1111, 2222, 3333, other */
	uint64_t frees;
	uint64_t outside;		/* allocator records not between a start and a stop mark */
	uint64_t outside_allocs;	/* of them, calls other than releases (recording off keeps releases only) */
	uint64_t inside;
	uint32_t marks[4];		/* by enum mt_mark_kind */
	char label[MT_MARK_LABEL_MAX + 1];
	bool on;
};

static int window__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	const struct mt_alloc *a = (const void *)h;
	const struct mt_mark *k = (const void *)h;
	struct window_log *w = ctx;

	if (h->type == MT_REC_MARK) {
		assert_true(k->kind >= MT_MARK_START && k->kind <= MT_MARK_LABEL);
		w->marks[k->kind]++;
		if (k->kind == MT_MARK_LABEL)
			memcpy(w->label, k->label, k->len);
		else
			w->on = k->kind == MT_MARK_START;
	}
	if (h->type != MT_REC_ALLOC)
		return 0;
	w->inside += w->on;
	w->outside += !w->on;
	w->outside_allocs += !w->on && !mt_func__is_free(a->func);
	if (a->func == MT_FN_FREE)
		w->frees++;
	else
		w->allocs_by_size[a->size == 1111 ? 0 : a->size == 2222 ? 1 : a->size == 3333 ? 2 : 3]++;	/* other: 3 */
	return 0;
}

static void window__read(const char *dir, struct window_log *w)
{
	struct mt_read_status st;

	memset(w, 0, sizeof(*w));
	assert_int_equal(mt_artifact__read(dir, window__on_record, w, &st), 0);
}

/* single()'s window: exactly the 100 x 2222 and the 100 frees, between one start and one stop, one mark phase2. */
static void window__check_single(const char *dir)
{
	struct window_log w;

	window__read(dir, &w);
	assert_int_equal(w.allocs_by_size[0], 0);
	assert_int_equal(w.allocs_by_size[1], 100);
	assert_int_equal(w.allocs_by_size[2], 0);
	assert_int_equal(w.allocs_by_size[3], 0);
	assert_int_equal(w.frees, 100);
	assert_int_equal(w.outside_allocs, 0);
	assert_int_equal(w.marks[MT_MARK_START], 1);
	assert_int_equal(w.marks[MT_MARK_LABEL], 1);
	assert_int_equal(w.marks[MT_MARK_STOP], 1);
	assert_string_equal(w.label, "phase2");
}

/* memtrack record -q -o DIR OPTS... -- control_window MODE: its exit code. */
static int control_run(const char *dir, const char *opt, const char *opt2, const char *mode)
{
	char *argv[12] = { MT_BINARY, "record", "-q", "-o", (char *)dir }, out[512], err[512];
	int n = 5;

	if (opt)
		argv[n++] = (char *)opt;
	if (opt2)
		argv[n++] = (char *)opt2;
	argv[n++] = "--";
	argv[n++] = PROG("control_window");
	argv[n++] = (char *)mode;
	assert_true(snprintf(out, sizeof(out), "%s.out", dir) < (int)sizeof(out));
	assert_true(snprintf(err, sizeof(err), "%s.err", dir) < (int)sizeof(err));
	return mt_test__run(argv, out, err);
}

/* 100 x 1111, start, 100 x 2222 (and the 1111s freed), mark phase2, stop, 100 x 3333: exactly the window's. */
static void test_paused_window(void **state)
{
	char dir[512];

	(void)state;
	mt_test__path(dir, sizeof(dir), "paused");
	assert_int_equal(control_run(dir, "--paused", NULL, "single"), 0);
	window__check_single(dir);
}

/* The same window written as two lines per write(), through stdio, then a line that is no command: the first three
 * act, the last is said on stderr. */
static void test_lines_per_write(void **state)
{
	char dir[512], err[600], *text;

	(void)state;
	mt_test__path(dir, sizeof(dir), "lines");
	assert_int_equal(control_run(dir, "--paused", NULL, "lines"), 0);
	window__check_single(dir);
	snprintf(err, sizeof(err), "%s.err", dir);
	text = mt_test__read_file(err);
	assert_non_null(strstr(text, "1 line written to $MEMTRACK_CONTROL was not acted on"));
	free(text);
}

/* Not paused: the same lines are marks in a recording of everything. */
static void test_unpaused_marks(void **state)
{
	struct window_log w;
	char dir[512];

	(void)state;
	mt_test__path(dir, sizeof(dir), "unpaused");
	assert_int_equal(control_run(dir, NULL, NULL, "single"), 0);
	window__read(dir, &w);
	assert_int_equal(w.allocs_by_size[0], 100);
	assert_int_equal(w.allocs_by_size[1], 100);
	assert_int_equal(w.allocs_by_size[2], 0);
	assert_int_equal(w.marks[MT_MARK_STOP], 1);
}

/* A second thread writes start, mark, stop while the first churns: no allocation outside the window, in the kernel's
 * order (the artifact's); after the stop, releases only. */
static void test_window_other_thread(void **state)
{
	struct window_log w;
	char dir[512];
	int i;

	(void)state;
	for (i = 0; i < 5; i++) {
		snprintf(dir, sizeof(dir), "%s/threads.%d", mt_test_root, i);
		assert_int_equal(control_run(dir, "--paused", NULL, "threads"), 0);
		window__read(dir, &w);
		assert_int_equal(w.outside_allocs, 0);
		assert_true(w.inside > 0);
		assert_int_equal(w.allocs_by_size[0] + w.allocs_by_size[1] + w.allocs_by_size[2], 0);
		assert_int_equal(w.marks[MT_MARK_START], 1);
		assert_int_equal(w.marks[MT_MARK_LABEL], 1);
		assert_int_equal(w.marks[MT_MARK_STOP], 1);
	}
}

/* A 1 MiB ring, and the program stops memtrack while it makes 400,000 calls: with --drop-when-full (else the
 * program would wait for the memtrack it stopped) drops, and --strict exits 3. */
static void test_strict_drop(void **state)
{
	char dir[512], *strict[] = { MT_BINARY, "record", "-q", "--strict", "--drop-when-full", "--ring-size=1", "-o",
				     dir, "--", PROG("control_window"), "burst", NULL };

	(void)state;
	mt_test__path(dir, sizeof(dir), "strict");
	assert_int_equal(control_run(dir, "--drop-when-full", "--ring-size=1", "burst"), 0);
	mt_test__path(dir, sizeof(dir), "strict2");
	assert_int_equal(mt_test__run(strict, NULL, NULL), 3);
	mt_test__path(dir, sizeof(dir), "strict3");
	assert_int_equal(control_run(dir, "--strict", NULL, "single"), 0);
}

/* timeline --between A B: a point per change in the span (20 + 100 + 30 calls), the span's own peak, the marks. */
static void timeline__check(const char *dir)
{
	struct mt_timeline_opts o = { .between = { "A", "B" } };
	struct mt_timeline *t;
	char *json = NULL;
	size_t len = 0;
	FILE *f;

	assert_int_equal(mt_timeline__build(dir, &o, &t, NULL), 0);
	f = open_memstream(&json, &len);
	assert_non_null(f);
	assert_int_equal(mt_timeline__json(f, t), 0);
	fclose(f);
	mt_timeline__free(t);
	/* after the 20 frees of 5555s and the 100 2222s, before the 30 frees */
	assert_non_null(strstr(json, "\"bytes\":388850}"));
	assert_int_equal(strncmp(json, "{\"t_ns\":[", 9), 0);
	assert_non_null(strstr(json, "\"total\":[272195,"));
	assert_non_null(strstr(json, ",322190],"));
	/* the span's marks are events of their own (its bounds included), whoever wrote them */
	assert_non_null(strstr(json, "\"event\":\"mark\",\"label\":\"A\"}"));
	assert_non_null(strstr(json, "\"event\":\"mark\",\"label\":\"B\"}"));
	free(json);
}

/* timeline's SVG: a shaded span per stretch the recording was off (before the first start under --paused too). */
static void paused_spans__check(const char *dir, size_t spans)
{
	struct mt_timeline_opts o = { 0 };
	struct mt_timeline *t;
	char *svg = NULL, *p;
	size_t len = 0, n = 0;
	FILE *f;

	assert_int_equal(mt_timeline__build(dir, &o, &t, NULL), 0);
	f = open_memstream(&svg, &len);
	assert_non_null(f);
	assert_int_equal(mt_timeline__svg(f, t, "held"), 0);
	fclose(f);
	mt_timeline__free(t);
	for (p = svg; (p = strstr(p, "class=\"paused\"")); p++)
		n++;
	assert_int_equal(n, spans);
	free(svg);
}

/* report --between A B: what happened between the marks, frees of older blocks apart. */
static void test_between_marks(void **state)
{
	struct mt_filter f = { .to_ns = MT_FILTER_END };
	struct mt_model_opts mo = { &f, false };
	const struct mt_heap_stats *h;
	struct mt_read_status st;
	struct mt_model *m;
	char dir[512], out[600];
	char *argv[] = { MT_BINARY, "report", "--between", "A", "C", dir, NULL };

	(void)state;
	mt_test__path(dir, sizeof(dir), "between");
	assert_int_equal(control_run(dir, NULL, NULL, "between"), 0);
	assert_int_equal(mt_filter__between(&f, "test", "A", "B"), 0);
	assert_int_equal(mt_model__load_with(dir, &mo, &m, &st), 0);
	h = &mt_model__totals(m)->heap;
	assert_true(mt_model__totals(m)->between_closed);
	assert_int_equal(mt_model__totals(m)->marks, 2);
	assert_int_equal(h->allocations, 100);
	assert_int_equal(h->allocated_bytes, 100 * 2222);
	assert_int_equal(h->frees, 50);
	assert_int_equal(h->early_frees, 20);
	assert_int_equal(h->early_freed_bytes, 20 * 5555);
	assert_int_equal(h->start_live_allocations - h->early_frees, 30);	/* the 5555s still held at B */
	assert_int_equal(h->still_live_allocations, 30 + 70);
	assert_int_equal(h->unknown_frees, 0);
	mt_model__free(m);
	timeline__check(dir);
	snprintf(out, sizeof(out), "%s.report", dir);
	assert_int_equal(mt_test__run(argv, out, NULL), 2);	/* no mark C */
	argv[1] = "timeline";
	assert_int_equal(mt_test__run(argv, out, NULL), 2);	/* nor a span to draw */
}

/* A thread's last recorded call frees a block allocated while paused, then it writes stop and ends: that release is
 * an unknown free after a start, not libc's own at the thread's end (the thread went on, unrecorded). */
static void test_held_free_at_stop(void **state)
{
	const struct mt_totals *t;
	struct mt_read_status st;
	struct mt_model *m;
	char dir[512];

	(void)state;
	mt_test__path(dir, sizeof(dir), "held");
	assert_int_equal(control_run(dir, "--paused", NULL, "held"), 0);
	assert_int_equal(mt_model__load(dir, &m, &st), 0);
	t = mt_model__totals(m);
	assert_int_equal(t->marks, 2);
	assert_int_equal(t->heap.frees, 0);
	assert_int_equal(t->heap.unknown_frees, 1);
	assert_int_equal(t->heap.paused_frees, 1);
	assert_int_equal(t->heap.internal_releases, 0);
	mt_model__free(m);
	paused_spans__check(dir, 2);
}

/*
 * Issue 32 item 2: 2000 blocks allocated inside a window and freed after its stop (1000 by free, 1000 by realloc)
 * leak nothing: while recording is off the releases are still recorded, those of blocks allocated while off count
 * nowhere, and a realloc is kept as the free of its old block.
 */
static void test_window_freed_after_stop(void **state)
{
	const struct mt_heap_stats *h;
	struct mt_read_status st;
	struct window_log w;
	struct mt_model *m;
	char dir[512], out[600], *text;
	char *argv[] = { MT_BINARY, "report", dir, NULL };

	(void)state;
	mt_test__path(dir, sizeof(dir), "freed_after");
	assert_int_equal(control_run(dir, "--paused", NULL, "freed_after"), 0);
	window__read(dir, &w);
	assert_int_equal(w.inside, 2000);
	assert_int_equal(w.allocs_by_size[3], 2000);	/* 6666 B: no allocation of recording off was written */
	assert_int_equal(w.allocs_by_size[0], 0);
	assert_int_equal(w.frees, w.outside);		/* off: releases only */
	assert_true(w.outside >= 2000);
	assert_int_equal(mt_model__load(dir, &m, &st), 0);
	h = &mt_model__totals(m)->heap;
	assert_int_equal(h->allocations, 2000);
	assert_int_equal(h->allocated_bytes, 2000 * 6666);
	assert_int_equal(h->frees, 2000);
	assert_int_equal(h->freed_bytes, 2000 * 6666);
	assert_int_equal(h->leaked_allocations, 0);
	assert_int_equal(h->leaked_bytes, 0);
	assert_int_equal(h->still_live_allocations, 0);
	assert_int_equal(h->unknown_frees, 0);
	assert_int_equal(h->paused_frees, 0);
	mt_model__free(m);
	snprintf(out, sizeof(out), "%s.report", dir);
	assert_int_equal(mt_test__run(argv, out, NULL), 0);
	text = mt_test__read_file(out);
	assert_non_null(strstr(text, "\n  leaked at exit:     0 blocks, 0 B\n"));
	free(text);
}

/* The FIFO is the command's user's (--user nobody here), 0600 in a 0700 directory, and both go at the end. */
static void test_fifo_owner(void **state)
{
	char dir[512], out[600], line[600], path[512];
	char *argv[] = { MT_BINARY, "record", "-q", "--user", "nobody", "-o", dir, "--", PROG("control_window"),
			 "owners", NULL };
	struct passwd *pw = getpwnam("nobody");
	unsigned int fmode, fuid, dmode, duid;
	FILE *f;

	(void)state;
	if (!pw)
		skip();
	mt_test__path(dir, sizeof(dir), "owner");
	snprintf(out, sizeof(out), "%s.out", dir);
	assert_int_equal(mt_test__run(argv, out, NULL), 0);
	f = fopen(out, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_int_equal(sscanf(line, "%511s fifo %o %u dir %o %u", path, &fmode, &fuid, &dmode, &duid), 5);
	assert_int_equal(fmode, S_IFIFO | 0600);
	assert_int_equal(dmode, S_IFDIR | 0700);
	assert_int_equal(fuid, pw->pw_uid);
	assert_int_equal(duid, pw->pw_uid);
	assert_int_equal(access(path, F_OK), -1);
	*strrchr(path, '/') = 0;
	assert_int_equal(access(path, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paused_window),
		cmocka_unit_test(test_unpaused_marks),
		cmocka_unit_test(test_lines_per_write),
		cmocka_unit_test(test_window_other_thread),
		cmocka_unit_test(test_strict_drop),
		cmocka_unit_test(test_between_marks),
		cmocka_unit_test(test_fifo_owner),
		cmocka_unit_test(test_held_free_at_stop),
		cmocka_unit_test(test_window_freed_after_stop),
	};

	return mt_test__main("test_control", tests, sizeof(tests) / sizeof(tests[0]));
}
