// SPDX-License-Identifier: GPL-2.0-only
/* test_stacks.c — stacks offline: captured stacks symbolized, reported, DWARF-unwound, checked against FP chains. */
/* The stacks are real (tests/stacks/stackprog); the address-space model and accounting also get synthetic ones. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <elf.h>

#include "cmd_capture.h"
#include "common/elf.h"
#include "model/model.h"
#include "unwind/addrspace.h"
#include "artifact/artifact.h"
#include "report/checkfp.h"
#include "cli/commands.h"
#include "report/flamegraph.h"
#include "report/leaks.h"
#include "unwind/module.h"
#include "report/report.h"
#include "common/u64map.h"
#include "stacks/cell_index.h"
#include "stacks/counts.h"
#include "stacks/stacks.h"
#include "report/sites.h"
#include "report/sizes.h"
#include "stacks/unwind_run.h"
#include "unwind/unwinder.h"

/* Entry e's counts (a copy: the stack heap keeps them compact). */
static struct mt_stack_counts counts_of(const struct mt_stacks *s, const struct mt_stack_entry *e)
{
	struct mt_stack_counts c;

	mt_stacks__counts(s, e, &c);
	return c;
}

#ifndef MT_STACKS_PROGS
#define MT_STACKS_PROGS "."
#endif
#define PROG MT_STACKS_PROGS "/stackprog"	/* f10 without a frame pointer */
#define PROG_FP MT_STACKS_PROGS "/stackprog_fp"	/* frame pointers everywhere */

static char base[64];		/* the test's scratch directory */

/* ---- helpers ---- */

static char *in_base(char *buf, const char *name)
{
	snprintf(buf, 512, "%s/%s", base, name);
	return buf;
}

/* Runs argv[0] with argv and the given environment addition (NULL for none); returns its exit status. */
static int run_env(const char *env, char *const argv[])
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		if (env)
			putenv((char *)env);
		execv(argv[0], argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* prog DIR args... → a fresh artifact in base/name; dir gets its path. */
static void record(const char *prog, const char *name, char *dir, const char *args)
{
	char cmd[1024], *argv[16], *tok, *save;
	int argc = 0;

	in_base(dir, name);
	snprintf(cmd, sizeof(cmd), "%s/" MT_ARTIFACT_FILE, dir);
	unlink(cmd);	/* the writer never overwrites an artifact */
	snprintf(cmd, sizeof(cmd), "%s %s %s", prog, dir, args);
	for (tok = strtok_r(cmd, " ", &save); tok && argc < 15; tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	assert_int_equal(run_env(NULL, argv), 0);
}

/* Frame-pointer chains only (--fp): what most tests below look at. */
static struct mt_stacks *load(const char *dir)
{
	const struct mt_stacks_opts fp = { .fp_chains = true };
	struct mt_read_status st;
	struct mt_stacks *s;

	assert_int_equal(mt_stacks__load(dir, &fp, &s, &st), 0);
	assert_non_null(s);
	return s;
}

/* As the commands load: DWARF chains from DIR/unwind.mtz, or unwound now and cached there. */
static struct mt_stacks *load_default(const char *dir)
{
	struct mt_read_status st;
	struct mt_stacks *s;

	assert_int_equal(mt_stacks__load(dir, NULL, &s, &st), 0);
	assert_non_null(s);
	return s;
}

static struct mt_stacks *load_unwound(const char *dir)
{
	struct mt_read_status st;
	struct mt_stacks *s;

	assert_int_equal(mt_unwind__load(dir, &s, &st), 0);
	assert_non_null(s);
	return s;
}

/* DWARF chains from DIR/unwind.mtz alone: the file must be there, whole and matching. */
static struct mt_stacks *load_unwound_file(const char *dir)
{
	struct mt_unwind_index *ix;
	struct mt_stacks *s;

	assert_int_equal(mt_unwind_index__read(dir, &ix), 0);
	assert_non_null(ix);
	mt_unwind_index__free(ix);
	s = load_default(dir);
	assert_true(mt_stacks__has_dwarf(s));
	return s;
}

/* The report's sites section, as text. */
static char *report_sites_text(const struct mt_sites *sites, size_t top)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(mt_report__sites_text(f, sites, top), 0);
	fclose(f);
	return buf;
}

static struct mt_sites *sites_of(struct mt_stacks *s)
{
	struct mt_sites *sites = mt_sites__build(s);

	assert_non_null(sites);
	return sites;
}

/* Asserts that a "func+0xOFF" frame name is of func. */
static void assert_func(const char *name, const char *func)
{
	size_t n = strlen(func);

	if (strncmp(name, func, n) || strncmp(name + n, "+0x", 3))
		fail_msg("frame '%s' is not in %s", name, func);
}

/* The 20 frames f20 … f1 from index at on. */
static void assert_chain(const struct mt_site *site, size_t at)
{
	char f[8];
	int i;

	assert_true(site->nframes >= at + 20);
	for (i = 20; i >= 1; i--) {
		snprintf(f, sizeof(f), "f%d", i);
		assert_func(mt_site__frame(site, at + 20 - i)->name, f);
	}
}

static void copy_file(const char *from, const char *to, mode_t mode)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, n), n);
	close(in);
	close(out);
}

static const struct mt_stack_entry *only_defined(struct mt_stacks *s)
{
	const struct mt_stack_entry *found = NULL;
	size_t i;

	for (i = 0; i < mt_stacks__count(s); i++) {
		if (!mt_stacks__entry(s, i)->defined)
			continue;
		assert_null(found);
		found = mt_stacks__entry(s, i);
	}
	assert_non_null(found);
	return found;
}

static bool chain_has(struct mt_stacks *s, uint32_t chain, size_t n, const char *func)
{
	const struct mt_frame *f;
	char name[512];
	struct mt_sym sym;
	size_t i;

	for (i = 0; i < n; i++) {
		f = mt_stacks__frame(s, chain, i);
		mt_stacks__symbolize(s, f, &sym);
		if (!strcmp(mt_frame__name(f, &sym, false, name, sizeof(name)), func))
			return true;
	}
	return false;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

typedef int (*sites_text_fn)(FILE *f, const struct mt_sites *sites, size_t top);

static char *sites_text(sites_text_fn fn, const struct mt_sites *sites, size_t top)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(fn(f, sites, top), 0);
	fclose(f);
	return buf;
}

static int sizes_text(FILE *f, const struct mt_sites *sites, size_t top)
{
	(void)top;
	return mt_sizes__text(f, sites);
}

/* The JSON a printer writes into an object of its own. */
static char *sites_json(void (*fn)(struct mt_json *j, const struct mt_sites *sites, size_t top),
			const struct mt_sites *sites, size_t top)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct mt_json j;

	assert_non_null(f);
	mt_json__init(&j, f, 0);
	mt_json__begin_object(&j);
	fn(&j, sites, top);
	mt_json__end_object(&j);
	fclose(f);
	return buf;
}

/* The site keys of sites->sites[idx]. */
static void json_site_keys_of(struct mt_json *j, const struct mt_sites *sites, size_t idx)
{
	mt_sites__json_site_keys(j, sites, &sites->sites[idx]);
}

static void sizes_json(struct mt_json *j, const struct mt_sites *sites, size_t top)
{
	(void)top;
	mt_sizes__json(j, sites);
}

static const struct mt_site *site_named(const struct mt_sites *sites, const char *func)
{
	size_t i;

	for (i = 0; i < sites->count; i++)
		if (!strncmp(mt_site__frame(&sites->sites[i], 0)->name, func, strlen(func)) &&
		    mt_site__frame(&sites->sites[i], 0)->name[strlen(func)] == '+')
			return &sites->sites[i];
	fail_msg("no site in %s", func);
	return NULL;
}

/* ---- report sites ---- */

/* Frame pointers everywhere: the FP chain alone shows f20 … f1, symbolized with lines, and the accounting. */
static void test_fp_chain_sites(void **state)
{
	struct mt_stacks *s;
	struct mt_sites *sites;
	const struct mt_site *site;
	char dir[512];

	(void)state;
	record(PROG_FP, "fp_chain", dir, "chain");
	s = load(dir);
	assert_true(mt_stacks__any(s));
	assert_false(mt_stacks__has_dwarf(s));
	sites = sites_of(s);
	assert_int_equal(sites->count, 1);
	site = &sites->sites[0];
	assert_int_equal(site->bytes, 300);
	assert_int_equal(site->count, 3);
	assert_int_equal(site->leaked_bytes, 200);	/* one of the three was freed */
	assert_chain(site, 0);
	assert_func(mt_site__frame(site, 20)->name, "run_chain");
	assert_func(mt_site__frame(site, 21)->name, "main");
	/* one stack, one line a frame: the site reads its stack's chain through the lines by frame id */
	assert_true(site->chain);
	assert_ptr_equal(site->frames, sites->by_frame);
	assert_int_equal(site->ids[21], mt_stacks__chain(s, mt_stacks__entry(s, 0)->frames)[21]);
	assert_non_null(mt_site__frame(site, 0)->srcline);
	assert_int_equal(strncmp(mt_site__frame(site, 0)->srcline, "chain.c:", 8), 0);
	assert_non_null(mt_site__frame(site, 10)->srcline);
	assert_int_equal(strncmp(mt_site__frame(site, 10)->srcline, "f10.c:", 6), 0);
	mt_sites__free(sites);
	mt_stacks__free(s);
}

/* The text report lists the frames innermost first; JSON has "sites" with the frame strings. */
static void test_report_output(void **state)
{
	char dir[512], f[32], *out, *at, *prev;
	int ret, i;

	(void)state;
	record(PROG_FP, "report_out", dir, "chain callers");
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", "--sites", "2", dir, NULL);
	assert_int_equal(ret, 0);
	at = strstr(out, "top allocation sites by bytes (2 of 65 sites, DWARF chains):\n"
			 "  #1   300 B in 3 allocations, 200 B leaked\n");
	assert_non_null(at);
	assert_non_null(strstr(out, "top allocation sites by count (2 of 65 sites):\n  #1   3 allocations, 300 B"));
	for (prev = at, i = 20; i >= 1; i--) {
		snprintf(f, sizeof(f), "\n        f%d+0x", i);
		at = strstr(prev, f);
		assert_non_null(at);
		prev = at + 1;
	}
	free(out);
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", "--json", dir, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "\"sites\": [\n    {\n      \"bytes\": 300,\n      \"count\": 3,"));
	assert_non_null(strstr(out, "\"frames\": [\n        \"f20+0x"));
	assert_non_null(strstr(out, "\"sites_total\": 65"));
	free(out);
}

/* An artifact without stacks: a session, one 10-byte malloc and the attach record of libc. */
static void write_nostacks(char *dir, const char *name)
{
	struct mt_session sess = { .hdr = { .ts_ns = 1, .pid = 7, .tid = 7, .type = MT_REC_SESSION,
					    .size = sizeof(sess) } };
	struct mt_attach at = { .hdr = { .ts_ns = 2, .pid = 7, .tid = 7, .type = MT_REC_ATTACH, .size = sizeof(at) },
				.dev = 1, .ino = 2, .resumed_ns = 3, .probes = 9, .kind = MT_ALLOCATOR_GLIBC,
				.reason = MT_ATTACH_EXEC, .path = "/usr/lib/libc.so.6" };
	struct mt_alloc a = { .hdr = { .ts_ns = 4, .pid = 7, .tid = 7, .type = MT_REC_ALLOC, .size = sizeof(a) },
			      .addr = 0x1000, .size = 10, .func = MT_FN_MALLOC };
	struct mt_writer *w;

	w = mt_writer__open(in_base(dir, name));
	assert_non_null(w);
	assert_int_equal(mt_writer__append(w, &sess, sizeof(sess)), 0);
	assert_int_equal(mt_writer__append(w, &at, sizeof(at)), 0);
	assert_int_equal(mt_writer__append(w, &a, sizeof(a)), 0);
	assert_int_equal(mt_writer__close(w), 0);
}

/* Without stack records: no section in text, "sites": [] in JSON. */
static void test_report_without_stacks(void **state)
{
	char dir[512], *out;
	int ret;

	(void)state;
	write_nostacks(dir, "nostacks");
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", dir, NULL);
	assert_int_equal(ret, 0);
	assert_null(strstr(out, "allocation sites"));
	free(out);
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", "--json", dir, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "\"sites\": []\n}\n"));
	free(out);
}

/* The first index of sites->strs holding the same text as strs[i]. */
static size_t strs_first(const struct mt_sites *sites, size_t i)
{
	size_t k;

	for (k = 0; strcmp(sites->strs[k], sites->strs[i]); k++)
		;
	return k;
}

/*
 * The loader keeps each distinct frame once (stacks.c): no two ids of the table are the same frame, and the 64
 * stacks' frames past the callers (callers_run, main, libc's start) are the same ids in every one of them.
 */
static void frames_interned(const struct mt_stacks *s)
{
	const struct mt_stack_entry *e, *first = NULL;
	size_t i, k, n = mt_stacks__nr_frames(s), used = 0;
	const struct mt_frame *a, *b;

	for (i = 0; i < n; i++)
		for (k = i + 1; k < n; k++) {
			a = mt_stacks__frame_id(s, (uint32_t)i);
			b = mt_stacks__frame_id(s, (uint32_t)k);
			assert_false(a->addr == b->addr && a->mod == b->mod && a->vaddr == b->vaddr &&
				     a->truncated == b->truncated && a->stop == b->stop);
		}
	for (i = 0; i < mt_stacks__count(s); i++) {
		e = mt_stacks__entry(s, i);
		if (!e->defined)
			continue;
		used += e->nfp + e->ndwarf + e->nk;
		if (!first)
			first = e;
		assert_int_equal(e->nframes, first->nframes);
		for (k = 1; k < e->nframes; k++)
			assert_int_equal(mt_stacks__frame_ref(s, e->frames, k), mt_stacks__frame_ref(s, first->frames, k));
	}
	assert_true(used >= 64 * 3);
	assert_true(n < used / 2);	/* chains share their frames */
}

/* 64 callers, 64 call paths, 64 sites, ranked by their distinct sizes. */
static void test_64_callers(void **state)
{
	struct mt_stacks *s;
	struct mt_sites *sites;
	char dir[512], f[32];
	size_t i;

	(void)state;
	record(PROG_FP, "callers", dir, "callers");
	s = load(dir);
	sites = sites_of(s);
	assert_int_equal(sites->count, 64);
	for (i = 0; i < 64; i++) {
		assert_int_equal(sites->sites[i].bytes, 64 - i);
		assert_int_equal(sites->sites[i].count, 1);
		snprintf(f, sizeof(f), "caller_%zu", 63 - i);
		assert_func(mt_site__frame(&sites->sites[i], 0)->name, f);
		assert_func(mt_site__frame(&sites->sites[i], 1)->name, "callers_run");
		assert_func(mt_site__frame(&sites->sites[i], 2)->name, "main");
		assert_int_equal(sites->sites[sites->by_count[i]].count, 1);
		/* one string a distinct name, however many sites print it (sites.c interns them) */
		assert_ptr_equal(mt_site__frame(&sites->sites[i], 2)->name, mt_site__frame(&sites->sites[0], 2)->name);
	}
	for (i = 0; i < sites->nstrs; i++)
		assert_ptr_equal(sites->strs[i], sites->strs[strs_first(sites, i)]);
	mt_sites__free(sites);
	frames_interned(s);
	mt_stacks__free(s);
}

/* The FP chain of the mixed program skips f9: f10 left its caller's rbp in place. */
static void test_fp_chain_misses_f9(void **state)
{
	struct mt_stacks *s;
	struct mt_sites *sites;
	char dir[512];

	(void)state;
	record(PROG, "mixed_fp", dir, "chain");
	s = load(dir);
	sites = sites_of(s);
	assert_int_equal(sites->count, 1);
	assert_func(mt_site__frame(&sites->sites[0], 10)->name, "f10");
	assert_func(mt_site__frame(&sites->sites[0], 11)->name, "f8");
	mt_sites__free(sites);
	mt_stacks__free(s);
}

/* A DIR copied elsewhere, its program deleted: DIR/modules still symbolizes everything. */
static void test_moved_dir(void **state)
{
	char dir[512], moved[512], prog[512], args[600];
	struct mt_stacks *s;
	struct mt_sites *sites;

	(void)state;
	copy_file(PROG_FP, in_base(prog, "prog_copy"), 0755);
	record(prog, "moved_a", dir, "chain");
	assert_int_equal(unlink(prog), 0);
	assert_int_equal(rename(dir, in_base(moved, "moved_b")), 0);
	s = load(moved);
	sites = sites_of(s);
	assert_chain(&sites->sites[0], 0);
	assert_non_null(mt_site__frame(&sites->sites[0], 0)->srcline);
	mt_sites__free(sites);
	mt_stacks__free(s);

	/* no copies: the original serves while its build-id matches; a different file there is not used */
	copy_file(PROG_FP, prog, 0755);
	snprintf(args, sizeof(args), "-n chain");
	record(prog, "nocopy", dir, args);
	s = load(dir);
	sites = sites_of(s);
	assert_chain(&sites->sites[0], 0);
	mt_sites__free(sites);
	mt_stacks__free(s);
	copy_file(PROG, prog, 0755);
	s = load(dir);
	sites = sites_of(s);
	assert_int_equal(strncmp(mt_site__frame(&sites->sites[0], 0)->name, "[prog_copy+0x", 13), 0);
	mt_sites__free(sites);
	mt_stacks__free(s);
	unlink(prog);
}

/* A stripped program whose separate debug file the tracer copied: symbols and lines come from the .debug. */
static void test_separate_debug_file(void **state)
{
	char dir[512], prog[512], dbg[512], root[512], cmd[2048], env[600], *argv[4];
	uint8_t id[MT_BUILD_ID_MAX];
	char hex[2 * MT_BUILD_ID_MAX + 1];
	struct mt_stacks *s;
	struct mt_sites *sites;
	int len;

	(void)state;
	if (access("/usr/bin/objcopy", X_OK) || access("/usr/bin/strip", X_OK))
		skip();
	in_base(prog, "stripped");
	in_base(dbg, "stripped.debug");
	snprintf(cmd, sizeof(cmd), "objcopy --only-keep-debug %s %s && cp %s %s && strip --strip-all %s", PROG_FP, dbg,
		 PROG_FP, prog, prog);
	assert_int_equal(system(cmd), 0);
	len = mt_elf__file_build_id(prog, id, MT_BUILD_ID_MAX);
	assert_int_equal(len, 20);	/* sha1, ld's default --build-id */
	mt_elf__build_id_hex(id, len, hex);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/debugroot/.build-id/%.2s && cp %s %s/debugroot/.build-id/%.2s/%s.debug",
		 base, hex, dbg, base, hex, hex + 2);
	assert_int_equal(system(cmd), 0);
	snprintf(env, sizeof(env), "CAPTURE_DEBUG_ROOT=%s", in_base(root, "debugroot"));
	argv[0] = prog;
	argv[1] = in_base(dir, "debugfile");
	argv[2] = "chain";
	argv[3] = NULL;
	assert_int_equal(run_env(env, argv), 0);
	snprintf(cmd, sizeof(cmd), "%s/modules/%s.debug", dir, hex);
	assert_int_equal(access(cmd, R_OK), 0);
	s = load(dir);
	sites = sites_of(s);
	assert_chain(&sites->sites[0], 0);
	assert_non_null(mt_site__frame(&sites->sites[0], 0)->srcline);
	assert_int_equal(strncmp(mt_site__frame(&sites->sites[0], 0)->srcline, "chain.c:", 8), 0);
	mt_sites__free(sites);
	mt_stacks__free(s);
}

/* ---- dump ---- */

static void test_dump_stack_lines(void **state)
{
	char dir[512], path[512], key[64], *buf = NULL, *line;
	unsigned long long hash;
	struct mt_read_status st;
	size_t len = 0;
	FILE *f;
	int ret;

	(void)state;
	record(PROG, "dump", dir, "-b 1024 chain");
	f = open_memstream(&buf, &len);
	assert_int_equal(mt_dump__write(f, dir, &st), 0);
	fclose(f);
	line = strstr(buf, "\"event\":\"stack\",\"hash\":");
	assert_non_null(line);
	assert_int_equal(sscanf(line, "\"event\":\"stack\",\"hash\":%llu,\"fp\":[", &hash), 1);
	snprintf(key, sizeof(key), ",\"stack\":%llu}", hash);
	assert_non_null(strstr(buf, key));

	/* DWARF by default: the first dump unwound the stacks, cached them, and the definition carries its chain */
	line = strstr(buf, "\"event\":\"stack\",\"hash\":");
	assert_non_null(strstr(line, "],\"bytes\":1024,\"truncated\":true,\"dwarf\":["));
	assert_int_equal(access(in_base(path, "dump/" MT_UNWIND_FILE), R_OK), 0);
	free(buf);

	/* after unwind, the same */
	free(mt_test__capture(mt_cmd_unwind, 1, &ret, "unwind", dir, NULL));
	assert_int_equal(ret, 0);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(mt_dump__write(f, dir, &st), 0);
	fclose(f);
	line = strstr(buf, "\"event\":\"stack\",\"hash\":");
	assert_non_null(line);
	assert_non_null(strstr(line, "],\"bytes\":1024,\"truncated\":true,\"dwarf\":["));
	assert_non_null(strstr(line, "],\"dwarf_stop\":\"end\"}\n"));	/* 1 KiB holds the whole chain */
	free(buf);
}

/* ---- flame graphs ---- */

static char *collapsed(struct mt_stacks *s, enum mt_fg_weight w)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_int_equal(mt_flamegraph__collapsed(f, s, w), 0);
	fclose(f);
	return buf;
}

#define F1_F20 "f1;f2;f3;f4;f5;f6;f7;f8;f9;f10;f11;f12;f13;f14;f15;f16;f17;f18;f19;f20"

static void test_collapsed_and_svg(void **state)
{
	struct mt_stacks *s;
	char dir[512], *out, *svg = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	(void)state;
	record(PROG_FP, "flame", dir, "chain");
	s = load(dir);
	out = collapsed(s, MT_FG_BYTES);
	assert_true(ends_with(out, ";main;run_chain;" F1_F20 " 300\n"));
	assert_true(strchr(out, '\n') == out + strlen(out) - 1);	/* one path */
	free(out);
	mt_stacks__free(s);

	free(mt_test__capture(mt_cmd_unwind, 1, &ret, "unwind", dir, NULL));
	assert_int_equal(ret, 0);
	s = load_unwound_file(dir);
	assert_true(mt_stacks__has_dwarf(s));
	out = collapsed(s, MT_FG_BYTES);
	assert_string_equal(out, "_start;__libc_start_main;__libc_start_call_main;main;run_chain;" F1_F20 " 300\n");
	free(out);
	out = collapsed(s, MT_FG_COUNT);
	assert_string_equal(out, "_start;__libc_start_main;__libc_start_call_main;main;run_chain;" F1_F20 " 3\n");
	free(out);
	out = collapsed(s, MT_FG_LEAKED);
	assert_string_equal(out, "_start;__libc_start_main;__libc_start_call_main;main;run_chain;" F1_F20 " 200\n");
	free(out);
	f = open_memstream(&svg, &len);
	assert_int_equal(mt_flamegraph__svg(f, s, MT_FG_BYTES, "t<&>"), 0);
	fclose(f);
	assert_int_equal(strncmp(svg, "<?xml", 5), 0);
	assert_true(ends_with(svg, "</svg>\n"));
	assert_non_null(strstr(svg, "<title>f20 (300 bytes, 100.00%)</title>"));
	assert_non_null(strstr(svg, ">t&lt;&amp;&gt;</text>"));
	free(svg);
	mt_stacks__free(s);
}

/* ---- DWARF unwinding ---- */

/* A line of `memtrack unwind`'s reason counts. */
static const char *reason_line(char *buf, const char *text, int n)
{
	snprintf(buf, 128, "\n  %-36s %8d\n", text, n);
	return buf;
}

/* unwind recovers f9, which the FP chain skipped, and the process entry frames; report then uses the DWARF chain. */
static void test_unwind_recovers_chain(void **state)
{
	char dir[512], path[600], line[128], *out;
	struct mt_stacks *s;
	struct mt_sites *sites;
	const struct mt_stack_entry *e;
	int ret;

	(void)state;
	record(PROG, "unwind", dir, "chain");
	out = mt_test__capture(mt_cmd_unwind, 1, &ret, "unwind", "--stats", dir, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, ": 1 stack unwound, 25 frames, into "));
	assert_non_null(strstr(out, reason_line(line, "reached the end (normal)", 1)));
	assert_non_null(strstr(out, " stacks/s on one core"));
	free(out);
	snprintf(path, sizeof(path), "%s/" MT_UNWIND_FILE, dir);
	assert_int_equal(access(path, R_OK), 0);
	s = load_unwound_file(dir);
	e = only_defined(s);
	assert_int_equal(e->kind, MT_CHAIN_DWARF);
	assert_int_equal(e->dwarf_stop, MT_STOP_END);
	assert_int_equal(e->ndwarf, 25);
	sites = sites_of(s);
	assert_chain(&sites->sites[0], 0);
	assert_func(mt_site__frame(&sites->sites[0], 20)->name, "run_chain");
	assert_func(mt_site__frame(&sites->sites[0], 21)->name, "main");
	assert_func(mt_site__frame(&sites->sites[0], 22)->name, "__libc_start_call_main");
	assert_func(mt_site__frame(&sites->sites[0], 23)->name, "__libc_start_main");
	assert_func(mt_site__frame(&sites->sites[0], 24)->name, "_start");
	mt_sites__free(sites);
	mt_stacks__free(s);

	/* recorded again into the same DIR: the old unwind.mtz is stale, unwound again and replaced */
	record(PROG, "unwind", dir, "chain callers");
	s = load(dir);
	assert_false(mt_stacks__has_dwarf(s));
	mt_stacks__free(s);
	s = load_default(dir);
	assert_true(mt_stacks__has_dwarf(s));
	assert_int_equal(mt_stacks__count(s), 65);
	mt_stacks__free(s);
	s = load_unwound_file(dir);
	assert_int_equal(mt_stacks__count(s), 65);
	mt_stacks__free(s);
}

/* A stack budget too small for the whole chain: unwinding says so. */
static void test_unwind_budget(void **state)
{
	struct mt_stacks *s;
	const struct mt_stack_entry *e;
	char dir[512], line[128], *out;
	int ret;

	(void)state;
	record(PROG, "budget", dir, "-b 256 chain");
	s = load_unwound(dir);
	e = only_defined(s);
	assert_int_equal(e->dwarf_stop, MT_STOP_BUDGET);
	assert_true(e->ndwarf > 11 && e->ndwarf < 20);	/* past f10, where the FP chain leaves it */
	assert_int_equal(e->kind, MT_CHAIN_DWARF);
	assert_int_equal(e->nframes, e->ndwarf + 1);	/* one [truncated] frame at the cut */
	assert_true(mt_stacks__frame(s, e->frames, e->ndwarf)->truncated);
	out = collapsed(s, MT_FG_BYTES);
	assert_int_equal(strncmp(out, "[truncated];f", 13), 0);
	assert_null(strstr(out + 1, "[truncated]"));	/* once */
	free(out);
	mt_stacks__free(s);
	out = mt_test__capture(mt_cmd_unwind, 1, &ret, "unwind", dir, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "frames, stack budget exhausted (at 0x"));
	assert_non_null(strstr(out, reason_line(line, "stack budget exhausted", 1)));
	free(out);
	/* the report's hint (issue 32 item 6): the share of allocations on such chains, and the option that helps */
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", dir, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "\nstacks cut short: 100.0% of allocations (3) are on call paths that stop early: "
				    "100.0% [truncated] (raise --stack-bytes: the DWARF unwinder ran out of captured "
				    "stack)\n"));
	free(out);
}

/* Copies an artifact's records except libc's mappings: its return addresses then lie in no known module. */
static int drop_libc(const struct mt_rec_hdr *rec, void *ctx)
{
	static uint64_t libc_ino;
	const struct mt_file *f = (const void *)rec;

	if (rec->type == MT_REC_FILE && strstr(f->path, "/libc.so"))
		libc_ino = f->ino;
	if (rec->type == MT_REC_MAPPING && ((const struct mt_mapping *)rec)->ino == libc_ino)
		return 0;
	return mt_writer__append(ctx, rec, rec->size);
}

/* qsort's comparator: DWARF goes through libc (no frame pointers there), the FP chain does not get out of it. */
static void test_qsort_through_libc(void **state)
{
	char dir[512], nolibc[512];
	struct mt_read_status st;
	struct mt_stacks *s;
	const struct mt_stack_entry *e;
	struct mt_checkfp c;
	struct mt_writer *w;

	(void)state;
	record(PROG, "qsort", dir, "qsort");
	s = load_unwound(dir);
	e = only_defined(s);
	assert_int_equal(e->dwarf_stop, MT_STOP_END);
	assert_true(chain_has(s, e->dwarf, e->ndwarf, "cmp"));
	assert_true(chain_has(s, e->dwarf, e->ndwarf, "qsort_r"));
	assert_true(chain_has(s, e->dwarf, e->ndwarf, "qsort_run"));
	assert_true(chain_has(s, e->dwarf, e->ndwarf, "main"));
	assert_true(chain_has(s, e->fp, e->nfp, "cmp"));
	assert_false(chain_has(s, e->fp, e->nfp, "qsort_run"));
	assert_false(chain_has(s, e->fp, e->nfp, "main"));
	assert_int_equal(mt_checkfp__run(s, &c), 0);
	assert_int_equal(c.ndivs, 1);
	assert_true(ends_with(c.divs[0].module, "/libc.so.6"));
	assert_int_equal(c.divs[0].bytes, 77);
	mt_checkfp__release(&c);
	mt_stacks__free(s);

	/* without libc's mappings the unwinding stops at the first return address into it */
	w = mt_writer__open(in_base(nolibc, "qsort_nolibc"));
	assert_non_null(w);
	assert_int_equal(mt_artifact__read(dir, drop_libc, w, &st), 0);
	assert_int_equal(mt_writer__close(w), 0);
	s = load_unwound(nolibc);
	e = only_defined(s);
	assert_int_equal(e->dwarf_stop, MT_STOP_NO_MODULE);
	assert_int_equal(e->ndwarf, 2);
	assert_true(chain_has(s, e->dwarf, 1, "cmp"));
	mt_stacks__free(s);
}

/* A module copy without .eh_frame_hdr: "no unwind info for module X", X being the program. */
static void test_unwind_no_info(void **state)
{
	char dir[512], cmd[2048], hex[2 * MT_BUILD_ID_MAX + 1];
	uint8_t id[MT_BUILD_ID_MAX];
	struct mt_stacks *s;
	const struct mt_stack_entry *e;
	int len;

	(void)state;
	if (access("/usr/bin/objcopy", X_OK))
		skip();
	record(PROG, "noinfo", dir, "chain");
	len = mt_elf__file_build_id(PROG, id, MT_BUILD_ID_MAX);
	assert_int_equal(len, 20);
	mt_elf__build_id_hex(id, len, hex);
	snprintf(cmd, sizeof(cmd), "objcopy --remove-section=.eh_frame_hdr %s/modules/%s", dir, hex);
	assert_int_equal(system(cmd), 0);
	s = load_unwound(dir);
	e = only_defined(s);
	assert_int_equal(e->dwarf_stop, MT_STOP_NO_INFO);
	assert_int_equal(e->ndwarf, 0);
	assert_string_equal(mt_stacks__dwarf_of(s, e)->detail, PROG);
	assert_int_equal(e->kind, MT_CHAIN_FP);	/* nothing unwound: the FP chain stays */
	assert_false(mt_stacks__has_dwarf(s));
	mt_stacks__free(s);
}

/* ---- check-fp ---- */

static void test_checkfp_names_f10(void **state)
{
	struct mt_stacks *s;
	struct mt_checkfp c;
	char dir[512], *out;
	int ret;

	(void)state;
	record(PROG, "checkfp", dir, "chain");
	s = load_unwound(dir);
	assert_int_equal(mt_checkfp__run(s, &c), 0);
	assert_int_equal(c.stacks, 1);
	assert_int_equal(c.unchecked, 0);
	assert_int_equal(c.nmodules, 1);
	assert_string_equal(c.modules[0].path, PROG);
	assert_int_equal(c.modules[0].checked, 1);
	assert_int_equal(c.modules[0].complete, 0);
	assert_int_equal(c.ndivs, 1);
	assert_string_equal(c.divs[0].function, "f10");
	assert_string_equal(c.divs[0].module, PROG);
	assert_true(c.divs[0].confirmed);
	assert_int_equal(c.divs[0].stacks, 1);
	assert_int_equal(c.divs[0].allocations, 3);
	assert_int_equal(c.divs[0].bytes, 300);
	mt_checkfp__release(&c);
	mt_stacks__free(s);

	/* no unwind.mtz yet: check-fp unwinds by itself */
	out = mt_test__capture(mt_cmd_check_fp, 1, &ret, "check-fp", "--json", "--strict", dir, NULL);
	assert_int_equal(ret, 1);
	assert_non_null(strstr(out, "\"divergences\": [\n    {\n      \"function\": \"f10\",\n"));
	assert_non_null(strstr(out, "\"fp_complete_pct\": 0.0\n"));
	free(out);
	out = mt_test__capture(mt_cmd_check_fp, 1, &ret, "check-fp", dir, NULL);
	assert_int_equal(ret, 0);
	assert_int_equal(strncmp(out, "1 stack; 1 checked against its DWARF chain\n", 43), 0);
	assert_non_null(strstr(out, "\n       1        3          300  f10 * in " PROG "\n"));
	free(out);
}

static void test_checkfp_all_fp_is_complete(void **state)
{
	struct mt_stacks *s;
	struct mt_checkfp c;
	char dir[512], *out;
	int ret;

	(void)state;
	record(PROG_FP, "checkfp_fp", dir, "chain callers");
	s = load_unwound(dir);
	assert_int_equal(mt_checkfp__run(s, &c), 0);
	assert_int_equal(c.nmodules, 1);
	assert_string_equal(c.modules[0].path, PROG_FP);
	assert_int_equal(c.modules[0].stacks, 65);
	assert_int_equal(c.modules[0].checked, 65);
	assert_int_equal(c.modules[0].complete, 65);
	assert_int_equal(c.ndivs, 0);
	mt_checkfp__release(&c);
	mt_stacks__free(s);
	out = mt_test__capture(mt_cmd_check_fp, 1, &ret, "check-fp", "--strict", dir, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "\n      65       65       100.0%  " PROG_FP "\n"));
	free(out);
}

/* ---- chains that hold up: no invented frames, a visible cut ---- */

/* The raw FP words of each stack definition, as the kernel (here: capture.c) recorded them. */
static int raw_nfp(const struct mt_rec_hdr *rec, void *ctx)
{
	unsigned int *n = ctx;

	if (rec->type == MT_REC_STACK)
		n[n[0]++ + 1] = ((const struct mt_stack *)rec)->nfp;
	return 0;
}

/*
 * broken_frame's rbp points at a word of data where the return address would be, then at real frames above: the
 * two calls are two call paths to the kernel (their words differ), but past broken_frame nothing is a frame: one
 * site of one frame. DWARF still goes through, and check-fp names broken_frame.
 */
static void test_broken_chain_no_invented_frame(void **state)
{
	unsigned int raw[4] = { 0 };
	struct mt_read_status st;
	struct mt_stacks *s;
	struct mt_sites *sites;
	struct mt_checkfp c;
	const struct mt_stack_entry *e;
	char dir[512], *out;
	size_t i;
	int ret;

	(void)state;
	record(PROG_FP, "broken", dir, "broken");
	assert_int_equal(mt_artifact__read(dir, raw_nfp, raw, &st), 0);
	assert_int_equal(raw[0], 2);
	assert_int_equal(raw[1], 3);	/* broken_frame, the data word, __libc_start_call_main */
	assert_int_equal(raw[2], 3);
	s = load(dir);
	assert_int_equal(mt_stacks__count(s), 2);
	for (i = 0; i < 2; i++) {
		e = mt_stacks__entry(s, i);
		assert_true(e->fp_broken);
		assert_int_equal(e->nfp, 1);
		assert_int_equal(e->kind, MT_CHAIN_FP);
		assert_int_equal(e->nframes, 1);
		assert_false(mt_stacks__frame(s, e->frames, 0)->truncated);
	}
	sites = sites_of(s);
	assert_int_equal(sites->count, 1);
	assert_int_equal(sites->sites[0].stacks, 2);
	assert_int_equal(sites->sites[0].bytes, 110);
	assert_int_equal(sites->sites[0].nframes, 1);
	assert_func(mt_site__frame(&sites->sites[0], 0)->name, "broken_frame");
	mt_sites__free(sites);
	out = collapsed(s, MT_FG_BYTES);
	assert_string_equal(out, "broken_frame 110\n");
	free(out);
	mt_stacks__free(s);

	s = load_unwound(dir);
	e = mt_stacks__entry(s, 0);
	assert_int_equal(e->kind, MT_CHAIN_DWARF);
	assert_true(chain_has(s, e->frames, e->nframes, "main"));
	assert_int_equal(mt_checkfp__run(s, &c), 0);
	assert_int_equal(c.ndivs, 1);
	assert_string_equal(c.divs[0].function, "broken_frame");
	assert_true(c.divs[0].confirmed);
	assert_int_equal(c.divs[0].stacks, 2);
	mt_checkfp__release(&c);
	mt_stacks__free(s);
	out = mt_test__capture(mt_cmd_check_fp, 1, &ret, "check-fp", dir, NULL);
	assert_int_equal(ret, 0);
	assert_int_equal(strncmp(out, "2 stacks; 2 checked against their DWARF chain\n", 46), 0);
	free(out);
}

/* 200 frames of deep: the walk stops at MT_FP_MAX words, and the chain ends in one [truncated] frame. */
static void test_budget_truncated_frame(void **state)
{
	char dir[512], expect[128 * 5 + 32], *out, *p;
	const struct mt_stack_entry *e;
	struct mt_stacks *s;
	struct mt_sites *sites;
	const struct mt_site *site;
	size_t i;
	int ret;

	(void)state;
	record(PROG_FP, "deep", dir, "deep");
	s = load(dir);
	e = only_defined(s);
	assert_int_equal(e->truncated & MT_STACK_TRUNC_FP, MT_STACK_TRUNC_FP);
	assert_false(e->fp_broken);
	assert_int_equal(e->nfp, MT_FP_MAX);
	assert_int_equal(e->nframes, MT_FP_MAX + 1);
	for (i = 0; i < MT_FP_MAX; i++)
		assert_false(mt_stacks__frame(s, e->frames, i)->truncated);
	assert_true(mt_stacks__frame(s, e->frames, MT_FP_MAX)->truncated);
	sites = sites_of(s);
	assert_int_equal(sites->count, 1);
	site = &sites->sites[0];
	assert_int_equal(site->nframes, MT_FP_MAX + 1);
	for (i = 0; i < MT_FP_MAX; i++)
		assert_func(mt_site__frame(site, i)->name, "deep");
	assert_string_equal(mt_site__frame(site, MT_FP_MAX)->name, "[truncated]");
	assert_null(mt_site__frame(site, MT_FP_MAX)->srcline);
	mt_sites__free(sites);
	p = expect + sprintf(expect, "[truncated]");
	for (i = 0; i < MT_FP_MAX; i++)
		p += sprintf(p, ";deep");
	sprintf(p, " 33\n");
	out = collapsed(s, MT_FG_BYTES);
	assert_string_equal(out, expect);
	free(out);
	mt_stacks__free(s);
	s = load(dir);
	sites = sites_of(s);
	out = report_sites_text(sites, 1);
	assert_non_null(strstr(out, " (chain.c:"));
	assert_non_null(strstr(out, ")\n        [truncated]\n\ntop allocation sites by count"));
	free(out);
	mt_sites__free(sites);
	mt_stacks__free(s);
	(void)ret;
}

/* ---- commands on recordings they cannot use ---- */

#define NO_STACKS_LINE(cmd, dir) \
	"memtrack: " cmd ": " dir " has no allocation stacks: record them with `memtrack record --stacks -o DIR -- " \
	"COMMAND`\n"

/* unwind and check-fp on a recording without stacks: exit 2, one line on stderr, nothing on stdout or in DIR. */
static void test_no_stacks_commands(void **state)
{
	char dir[512], line[1024], path[600], *out;
	struct stat sb;
	int ret;

	(void)state;
	write_nostacks(dir, "nostacks_cmds");
	out = mt_test__capture(mt_cmd_unwind, 2, &ret, "unwind", dir, NULL);
	assert_int_equal(ret, 2);
	snprintf(line, sizeof(line), NO_STACKS_LINE("unwind", "%s"), dir);
	assert_string_equal(out, line);
	free(out);
	out = mt_test__capture(mt_cmd_unwind, 1, &ret, "unwind", dir, NULL);
	assert_string_equal(out, "");
	free(out);
	snprintf(path, sizeof(path), "%s/" MT_UNWIND_FILE, dir);
	assert_int_equal(stat(path, &sb), -1);
	out = mt_test__capture(mt_cmd_check_fp, 2, &ret, "check-fp", "--json", dir, NULL);
	assert_int_equal(ret, 2);
	snprintf(line, sizeof(line), NO_STACKS_LINE("check-fp", "%s"), dir);
	assert_string_equal(out, line);
	free(out);
	out = mt_test__capture(mt_cmd_check_fp, 1, &ret, "check-fp", dir, NULL);
	assert_int_equal(ret, 2);
	assert_string_equal(out, "");
	free(out);
	/* the same check, for the other commands that need stacks */
	assert_int_equal(mt_stacks__require(dir, "flamegraph", NULL), -ENODATA);
}

/* unwind on a DIR that is not there names DIR, and nothing of its own. */
static void test_unwind_missing_dir(void **state)
{
	char dir[512], line[1200], *out;
	int ret;

	(void)state;
	in_base(dir, "missing");
	out = mt_test__capture(mt_cmd_unwind, 2, &ret, "unwind", dir, NULL);
	assert_int_equal(ret, 2);
	snprintf(line, sizeof(line), "memtrack: %s: cannot open %s: No such file or directory\n", dir, dir);
	assert_string_equal(out, line);
	free(out);
	assert_int_equal(access(dir, F_OK), -1);
}

/* report --attach --json: the attach records as dump prints them; options about the rest of the report refused. */
static void test_attach_json_and_conflicts(void **state)
{
	char dir[512], *out;
	int ret;

	(void)state;
	write_nostacks(dir, "attach_json");
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", "--attach", "--json", dir, NULL);
	assert_int_equal(ret, 0);
	assert_string_equal(out, "{\n  \"attach\": [\n    {\n      \"ts_ns\": 2,\n      \"pid\": 7,\n      \"tid\": 7,\n"
				 "      \"event\": \"attach\",\n      \"path\": \"/usr/lib/libc.so.6\",\n      \"dev\": 1,\n"
				 "      \"ino\": 2,\n      \"reason\": \"exec\",\n      \"kind\": \"glibc\",\n"
				 "      \"probes\": 9,\n      \"resumed_ns\": 3\n    }\n  ]\n}\n");
	free(out);
	out = mt_test__capture(mt_cmd_report, 2, &ret, "report", "--json", "--attach", "--sites", "3", dir, NULL);
	assert_int_equal(ret, 2);
	assert_string_equal(out, "memtrack: report: --attach prints the attach log only: --sites does not go with it "
				 "(usage: memtrack report [--json] [--attach | --sites N] DIR)\n");
	free(out);
	out = mt_test__capture(mt_cmd_report, 2, &ret, "report", "--full-paths", "--attach", dir, NULL);
	assert_int_equal(ret, 2);
	assert_string_equal(out, "memtrack: report: --attach prints the attach log only: --full-paths does not go with "
				 "it (usage: memtrack report [--json] [--attach | --sites N] DIR)\n");
	free(out);
	/* an artifact that cannot be read gets no JSON at all */
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", "--attach", "--json", in_base(dir, "missing"), NULL);
	assert_int_equal(ret, 2);
	assert_string_equal(out, "");
	free(out);
}

/* file:line relative to the compilation directory when the file is under it; --full-paths: the whole path. */
static void test_srcline_paths(void **state)
{
	struct mt_stacks_opts full = { .full_paths = true };
	struct mt_sym in = { .file = "/src/proj/lib/a.c", .comp_dir = "/src/proj/", .line = 12 };
	struct mt_sym out = { .file = "/usr/include/stdio.h", .comp_dir = "/src/proj", .line = 3 };
	struct mt_sym nodir = { .file = "/src/proj/lib/a.c", .line = 12 }, none = { 0 };
	struct mt_read_status st;
	struct mt_stacks *s;
	char dir[512], buf[256];

	(void)state;
	write_nostacks(dir, "srcline");
	s = load(dir);
	assert_string_equal(mt_sym__srcline(s, &in, buf, sizeof(buf)), "lib/a.c:12");
	assert_string_equal(mt_sym__srcline(s, &out, buf, sizeof(buf)), "/usr/include/stdio.h:3");
	assert_string_equal(mt_sym__srcline(s, &nodir, buf, sizeof(buf)), "a.c:12");
	assert_null(mt_sym__srcline(s, &none, buf, sizeof(buf)));
	mt_stacks__free(s);
	assert_int_equal(mt_stacks__load(dir, &full, &s, &st), 0);
	assert_string_equal(mt_sym__srcline(s, &in, buf, sizeof(buf)), "/src/proj/lib/a.c:12");
	assert_string_equal(mt_sym__srcline(s, &nodir, buf, sizeof(buf)), "/src/proj/lib/a.c:12");
	mt_stacks__free(s);
}

/* What the binary prints on stdout for args (NULL-terminated, after argv[0]); *status gets its exit status. */
static char *run_binary(int *status, ...)
{
	char cmd[1024] = MT_BINARY, *buf = NULL, chunk[4096];
	size_t len = 0, n;
	const char *arg;
	va_list ap;
	FILE *p, *out = open_memstream(&buf, &len);

	va_start(ap, status);
	while ((arg = va_arg(ap, const char *)))
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), " '%s'", arg);
	va_end(ap);
	strncat(cmd, " 2>/dev/null", sizeof(cmd) - strlen(cmd) - 1);
	fflush(stdout);
	p = popen(cmd, "r");
	assert_non_null(p);
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
		fwrite(chunk, 1, n, out);
	*status = WEXITSTATUS(pclose(p));
	fclose(out);
	return buf;
}

/* `memtrack help COMMAND` is `memtrack COMMAND --help`; `memtrack help` the main usage; unknown ones exit 2. */
static void test_help_command(void **state)
{
	static const char *const cmds[] = { "record", "report", "dump", "flamegraph", "unwind", "check-fp" };
	char *a, *b;
	size_t i;
	int sa, sb;

	(void)state;
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		a = run_binary(&sa, "help", cmds[i], NULL);
		b = run_binary(&sb, cmds[i], "--help", NULL);
		assert_int_equal(sa, 0);
		assert_int_equal(sb, 0);
		assert_int_equal(strncmp(a, "usage: memtrack ", 16), 0);
		assert_string_equal(a, b);
		free(a);
		free(b);
	}
	a = run_binary(&sa, "help", NULL);
	b = run_binary(&sb, "--help", NULL);
	assert_int_equal(sa, 0);
	assert_string_equal(a, b);
	assert_non_null(strstr(a, "\n  help [COMMAND], --help, --version\n"));
	free(a);
	free(b);
	free(run_binary(&sa, "help", "bogus", NULL));
	assert_int_equal(sa, 2);
	free(run_binary(&sa, "help", "report", "dump", NULL));
	assert_int_equal(sa, 2);
}

/* ---- the address-space model and accounting, on synthetic records over a real file ---- */

struct synth {
	struct mt_writer *w;
	uint64_t ts;
};

static void synth_put_tid(struct synth *y, void *rec, uint16_t type, size_t size, uint32_t pid, uint32_t tid)
{
	struct mt_rec_hdr *h = rec;

	h->ts_ns = ++y->ts;
	h->pid = pid;
	h->tid = tid;
	h->type = type;
	h->size = size;
	assert_int_equal(mt_writer__append(y->w, rec, size), 0);
}

static void synth_put(struct synth *y, void *rec, uint16_t type, size_t size, uint32_t pid)
{
	synth_put_tid(y, rec, type, size, pid, pid);
}

static void synth_stack(struct synth *y, uint32_t pid, uint64_t hash, uint64_t ret_addr)
{
	struct { struct mt_stack s; uint64_t fp[1]; } st = { .s = { .hash = hash, .nfp = 1 }, .fp = { ret_addr } };
	struct mt_alloc a = { .addr = 0x10000 + hash * 0x100, .size = hash * 10, .stack = hash, .func = MT_FN_MALLOC };

	synth_put(y, &st, MT_REC_STACK, sizeof(st), pid);
	synth_put(y, &a, MT_REC_ALLOC, sizeof(a), pid);
}

/* Functions' addresses in the program: each symbol's start + 5, as a return address would be. */
static void funcs_text(const char *const *funcs, size_t nfuncs, uint64_t *vaddr, struct mt_segment *text,
		       __u64 *dev, __u64 *ino)
{
	struct mt_modules *ms = mt_modules__new("/nonexistent");
	struct mt_file f = { 0 };
	struct mt_module *m;
	struct stat sb;
	size_t i, k;
	int len;

	assert_int_equal(stat(PROG_FP, &sb), 0);
	f.dev = *dev = sb.st_dev;
	f.ino = *ino = sb.st_ino;
	len = mt_elf__file_build_id(PROG_FP, f.build_id, MT_BUILD_ID_MAX);
	assert_int_equal(len, 20);
	f.build_id_len = len;
	strcpy(f.path, PROG_FP);
	assert_int_equal(mt_modules__describe(ms, &f), 0);
	m = mt_modules__get(ms, f.dev, f.ino);
	assert_int_equal(mt_module__open(m), 0);
	for (k = 0; k < nfuncs; k++) {
		for (i = 0; i < m->nsyms && strcmp(m->syms[i].name, funcs[k]); i++)
			;
		assert_true(i < m->nsyms);
		vaddr[k] = m->syms[i].addr + 5;
	}
	for (i = 0; i < m->nsegs && !(m->segs[i].flags & PF_X); i++)
		;
	assert_true(i < m->nsegs);
	*text = m->segs[i];
	mt_modules__free(ms);
}

#define SYNTH_BASE 0x555500000000ull

/*
 * A synthetic artifact in base/name: the session (pid 100, at time 1), the file record of PROG_FP and its text mapped
 * in pid 100 at SYNTH_BASE; ret[k] gets funcs[k]'s address + 5 there, *map the mapping.
 */
static void synth_open(struct synth *y, const char *name, char *dir, const char *const *funcs, size_t nfuncs,
		       uint64_t *ret, struct mt_mapping *map)
{
	struct mt_session sess = { .tracer_pid = 99 };
	struct mt_segment text;
	struct mt_file file = { 0 };
	size_t k;

	funcs_text(funcs, nfuncs, ret, &text, &file.dev, &file.ino);
	file.build_id_len = mt_elf__file_build_id(PROG_FP, file.build_id, MT_BUILD_ID_MAX);
	strcpy(file.path, PROG_FP);
	memset(map, 0, sizeof(*map));
	map->start = SYNTH_BASE + (text.vaddr & ~0xfffull);
	map->end = SYNTH_BASE + ((text.vaddr + text.memsz + 0xfff) & ~0xfffull);
	map->pgoff = text.offset & ~0xfffull;
	map->dev = file.dev;
	map->ino = file.ino;
	map->prot = 5;
	for (k = 0; k < nfuncs; k++)
		ret[k] += SYNTH_BASE;
	y->w = mt_writer__open(in_base(dir, name));
	assert_non_null(y->w);
	synth_put(y, &sess, MT_REC_SESSION, sizeof(sess), 100);
	synth_put(y, &file, MT_REC_FILE, sizeof(file), 100);
	synth_put(y, map, MT_REC_MAPPING, sizeof(*map), 100);
}

static void test_aspace_fork_exec_munmap(void **state)
{
	static const char *const funcs[] = { "f20" };
	struct mt_mapping map;
	struct mt_fork fork_rec = { .child = 101 };
	struct mt_exec exec_rec = { 0 };
	struct mt_syscall unmap = { .sys = MT_SYS_MUNMAP };
	struct mt_alloc fr = { .func = MT_FN_FREE };
	struct synth y = { 0 };
	uint64_t f20;
	struct mt_stacks *s;
	char dir[512], name[512];
	struct mt_sym sym;
	size_t i;
	const struct mt_stack_entry *e;

	(void)state;
	synth_open(&y, "synth", dir, funcs, 1, &f20, &map);
	synth_put(&y, &fork_rec, MT_REC_FORK, sizeof(fork_rec), 100);
	synth_stack(&y, 101, 1, f20);		/* the child sees the parent's mapping */
	synth_stack(&y, 100, 1, 0x1234);	/* the same hash again: the first definition stands */
	synth_put(&y, &exec_rec, MT_REC_EXEC, sizeof(exec_rec), 101);
	synth_stack(&y, 101, 2, f20);		/* exec cleared the child's mappings */
	fr.addr = 0x10000 + 2 * 0x100;
	synth_put(&y, &fr, MT_REC_ALLOC, sizeof(fr), 101);
	unmap.addr = map.start;
	unmap.size = map.end - map.start;
	synth_put(&y, &unmap, MT_REC_SYSCALL, sizeof(unmap), 100);
	synth_stack(&y, 100, 3, f20);		/* munmap removed the parent's */
	assert_int_equal(mt_writer__close(y.w), 0);

	s = load(dir);
	for (i = 0; i < mt_stacks__count(s); i++) {
		e = mt_stacks__entry(s, i);
		if (e->hash == 1)
			assert_int_equal(e->nframes, 1);
		mt_stacks__symbolize(s, mt_stacks__frame(s, e->frames, 0), &sym);
		mt_frame__name(mt_stacks__frame(s, e->frames, 0), &sym, true, name, sizeof(name));
		if (e->hash == 1) {
			assert_string_equal(name, "f20+0x5");
			assert_int_equal(counts_of(s, e).allocations, 2);	/* both allocations named hash 1 */
			assert_int_equal(counts_of(s, e).bytes, 20);
			assert_int_equal(counts_of(s, e).discarded_bytes, 10);	/* pid 101's at its exec */
			assert_int_equal(counts_of(s, e).leaked_bytes, 0);
			assert_int_equal(counts_of(s, e).still_live_bytes, 10);	/* pid 100's at the end: no exit record */
		} else if (e->hash == 2) {
			assert_int_equal(e->nframes, 0);	/* in no mapping: not a return address */
			assert_true(e->fp_broken);
			assert_int_equal(counts_of(s, e).leaked_bytes, 0);	/* freed */
		} else {
			assert_int_equal(e->hash, 3);
			assert_int_equal(e->nframes, 0);
			assert_true(e->fp_broken);
			assert_int_equal(counts_of(s, e).still_live_bytes, 30);	/* no exit record */
		}
	}
	assert_int_equal(mt_stacks__count(s), 3);
	mt_stacks__free(s);
}

static void synth_def(struct synth *y, uint32_t pid, uint64_t hash, uint64_t ret)
{
	struct { struct mt_stack s; uint64_t fp[1]; } st = { .s = { .hash = hash, .nfp = 1 }, .fp = { ret } };

	synth_put(y, &st, MT_REC_STACK, sizeof(st), pid);
}

/* malloc(size) = addr with stack hash in pid's thread tid; size 0 with hash 0: free(addr). */
static void synth_call(struct synth *y, uint32_t pid, uint32_t tid, uint64_t hash, uint64_t addr, uint64_t size)
{
	struct mt_alloc a = { .addr = addr, .size = size, .stack = hash, .func = hash ? MT_FN_MALLOC : MT_FN_FREE };

	synth_put_tid(y, &a, MT_REC_ALLOC, sizeof(a), pid, tid);
}

static void synth_exec(struct synth *y, uint32_t pid, const char *path)
{
	struct mt_exec x = { .old_pid = pid };

	snprintf(x.path, sizeof(x.path), "%s", path);
	synth_put(y, &x, MT_REC_EXEC, sizeof(x), pid);
}

static void synth_fork(struct synth *y, uint32_t pid, uint32_t child, uint32_t flags)
{
	struct mt_fork f = { .child = child, .flags = flags };

	synth_put(y, &f, MT_REC_FORK, sizeof(f), pid);
}

static void synth_exit(struct synth *y, uint32_t pid)
{
	struct mt_exit x = { 0 };

	synth_put(y, &x, MT_REC_EXIT, sizeof(x), pid);
}

/* A definition whose FP chain is fp[0..1] and whose kernel CFI chain is k[0..1]. */
static void synth_kdef(struct synth *y, uint32_t pid, uint64_t hash, const uint64_t fp[2], const uint64_t k[2])
{
	struct {
		struct mt_stack s;
		uint64_t fp[2];
		struct mt_kchain k;
		uint64_t kret[2];
	} st = { .s = { .hash = hash, .nfp = 2, .flags = MT_STACK_F_KCHAIN }, .fp = { fp[0], fp[1] },
		 .k = { .n = 2, .stop = MT_KSTOP_END }, .kret = { k[0], k[1] } };

	synth_put(y, &st, MT_REC_STACK, sizeof(st), pid);
}

/*
 * What the entries keep beside themselves, exactly: a kernel chain equal to the FP chain shares its handle (one
 * copy in the pool), a different one has its own; the index by hash finds each entry (in no hash order) and nothing
 * else; a suppression's counts, the mappings (none) and the DWARF extras (none) by entry.
 */
static void test_entries_compact(void **state)
{
	static const char *const funcs[] = { "f20", "f19" };
	const struct mt_stacks_opts kernel = { 0 };	/* kernel chains read, no DWARF */
	const struct mt_stack_entry *e[3];
	struct mt_read_status st;
	struct mt_mapping map;
	struct synth y = { 0 };
	uint64_t ret[2], swapped[2], n, b;
	struct mt_stacks *s;
	char dir[512];
	size_t i;

	(void)state;
	synth_open(&y, "compact", dir, funcs, 2, ret, &map);
	swapped[0] = ret[1];
	swapped[1] = ret[0];
	synth_kdef(&y, 100, 50, ret, ret);		/* the same chain twice */
	synth_kdef(&y, 100, 30, ret, swapped);		/* another kernel chain */
	synth_def(&y, 100, 90, ret[0]);			/* FP alone */
	synth_call(&y, 100, 100, 50, 0x1000, 8);
	synth_call(&y, 100, 100, 30, 0x2000, 16);
	synth_call(&y, 100, 100, 90, 0x3000, 32);
	synth_exit(&y, 100);				/* all three leak */
	assert_int_equal(mt_writer__close(y.w), 0);

	assert_int_equal(mt_stacks__read(dir, &kernel, &s, &st), 0);
	assert_int_equal(mt_stacks__count(s), 3);
	for (i = 0; i < 3; i++)
		e[i] = mt_stacks__entry(s, i);
	assert_int_equal(e[0]->hash, 50);
	assert_int_equal(e[1]->hash, 30);
	assert_int_equal(e[2]->hash, 90);
	assert_true(e[0]->has_kchain);
	assert_int_equal(e[0]->nk, 2);
	assert_int_equal(e[0]->nfp, 2);
	assert_int_equal(e[0]->kchain, e[0]->fp);	/* shared */
	assert_int_equal(e[0]->kind, MT_CHAIN_KERNEL);
	assert_true(e[1]->has_kchain);
	assert_int_not_equal(e[1]->kchain, e[1]->fp);
	assert_int_equal(mt_stacks__frame(s, e[1]->kchain, 0)->addr, ret[1]);
	assert_int_equal(mt_stacks__frame(s, e[1]->fp, 0)->addr, ret[0]);
	/* the pool: the zero-based chains of 2 frames and a spare slot, then e[2]'s FP chain of 1 and its slot */
	assert_int_equal(e[0]->fp, 0);
	assert_int_equal(e[1]->fp, 3);
	assert_int_equal(e[1]->kchain, 6);
	assert_int_equal(e[2]->fp, 9);
	assert_int_equal(mt_stacks__frame_ref(s, e[0]->kchain, 1), mt_stacks__frame_ref(s, e[1]->fp, 1));
	assert_int_equal(mt_stacks__frame_ref(s, e[0]->kchain, 2), 0);	/* the spare slot, unused */

	assert_int_equal(mt_stacks__find(s, 50), SIZE_MAX);	/* no index yet */
	assert_int_equal(mt_stacks__index_hashes(s), 0);
	assert_int_equal(mt_stacks__index_hashes(s), 0);	/* again: the same */
	assert_int_equal(mt_stacks__find(s, 30), 1);
	assert_int_equal(mt_stacks__find(s, 50), 0);
	assert_int_equal(mt_stacks__find(s, 90), 2);
	assert_int_equal(mt_stacks__find(s, 29), SIZE_MAX);
	assert_int_equal(mt_stacks__find(s, 51), SIZE_MAX);
	assert_int_equal(mt_stacks__find(s, 91), SIZE_MAX);

	for (i = 0; i < 3; i++) {
		assert_int_equal(counts_of(s, e[i]).leaked_allocations, 1);
		mt_stacks__suppressed(s, e[i], &n, &b);
		assert_int_equal(n, 0);
		assert_int_equal(b, 0);
		assert_int_equal(mt_stacks__mapped_of(s, e[i])->bytes, 0);
		assert_int_equal(mt_stacks__mapped_of(s, e[i])->calls, 0);
		assert_null(mt_stacks__dwarf_of(s, e[i]));
	}
	mt_stacks__suppress(s, 1);
	mt_stacks__suppressed(s, e[1], &n, &b);
	assert_int_equal(n, 1);
	assert_int_equal(b, 16);
	assert_int_equal(counts_of(s, e[1]).leaked_bytes, 0);
	mt_stacks__suppressed(s, e[0], &n, &b);
	assert_int_equal(n, 0);
	assert_int_equal(b, 0);
	mt_stacks__free(s);
}

/*
 * docs/REPORT.md's worked example with stacks (hash 1 at f18, 2 at f19, 3 at f20), one record a tick from the
 * session's: sh (100) allocates A (100 B, 1), B (200 B, 2), C (300 B, 1), forks 101; 101 frees A, allocates D
 * (50 B, 3), execs cc, allocates E (1000 B, 3) and F (10 B, 2), frees E, exits; 100 frees B, vforks 102, which execs
 * true and exits; thread 200 of 100 allocates G (64 B, 1) and frees it twice (the second: libc's own); 100 exits.
 */
static void write_worked_example(char *dir, const char *name)
{
	static const char *const funcs[] = { "f18", "f19", "f20" };
	struct mt_end end = { 0 };
	struct mt_mapping map;
	struct synth y = { 0 };
	uint64_t ret[3];

	synth_open(&y, name, dir, funcs, 3, ret, &map);
	synth_def(&y, 100, 1, ret[0]);
	synth_def(&y, 100, 2, ret[1]);
	synth_def(&y, 100, 3, ret[2]);
	synth_call(&y, 100, 100, 1, 0x1000, 100);	/* t 6 */
	synth_call(&y, 100, 100, 2, 0x2000, 200);
	synth_call(&y, 100, 100, 1, 0x3000, 300);
	synth_fork(&y, 100, 101, 0);			/* t 9 */
	synth_call(&y, 101, 101, 0, 0x1000, 0);
	synth_call(&y, 101, 101, 3, 0x4000, 50);
	synth_exec(&y, 101, "/usr/bin/cc");		/* t 12 */
	synth_call(&y, 101, 101, 3, 0x5000, 1000);
	synth_call(&y, 101, 101, 2, 0x6000, 10);	/* t 14: the peak, 1610 B */
	synth_call(&y, 101, 101, 0, 0x5000, 0);
	synth_exit(&y, 101);				/* t 16 */
	synth_call(&y, 100, 100, 0, 0x2000, 0);
	synth_fork(&y, 100, 102, MT_FORK_SHARED_VM);	/* t 18 */
	synth_exec(&y, 102, "/bin/true");
	synth_exit(&y, 102);				/* t 20 */
	synth_call(&y, 100, 200, 1, 0x7000, 64);
	synth_call(&y, 100, 200, 0, 0x7000, 0);
	synth_call(&y, 100, 200, 0, 0x7000, 0);		/* t 23: libc's release, no free */
	synth_exit(&y, 100);
	synth_put(&y, &end, MT_REC_END, sizeof(end), 100);
	assert_int_equal(mt_writer__close(y.w), 0);
}

static const struct mt_stack_entry *entry_of(struct mt_stacks *s, uint64_t hash)
{
	size_t i;

	for (i = 0; i < mt_stacks__count(s); i++)
		if (mt_stacks__entry(s, i)->hash == hash)
			return mt_stacks__entry(s, i);
	fail_msg("no stack %" PRIu64, hash);
	return NULL;
}

/* One stack's counts, in blocks and bytes: allocations, inherited, frees, discarded, leaked, temporary, at the peak. */
static void assert_counts(const struct mt_stacks *s, const struct mt_stack_entry *e, const uint64_t want[14])
{
	const struct mt_stack_counts c = counts_of(s, e);
	const uint64_t got[14] = { c.allocations, c.bytes, c.inherited_allocations, c.inherited_bytes, c.frees,
				   c.freed_bytes, c.discarded_allocations, c.discarded_bytes, c.leaked_allocations,
				   c.leaked_bytes, c.temporary_allocations, c.temporary_bytes, c.peak_allocations,
				   c.peak_bytes };
	size_t i;

	for (i = 0; i < 14; i++)
		if (got[i] != want[i])
			fail_msg("stack %" PRIu64 ": count %zu is %" PRIu64 ", not %" PRIu64, e->hash, i, got[i], want[i]);
}

/* Per stack, the model's rules: fork children inherit, exec discards, libc's own release is no free. */
static void test_stacks_follow_model(void **state)
{
	static const uint64_t h1[14] = { 3, 464, 4, 800, 2, 164, 3, 700, 2, 400, 1, 64, 2, 400 };
	static const uint64_t h2[14] = { 2, 210, 1, 200, 1, 200, 1, 200, 1, 10, 0, 0, 2, 210 };
	static const uint64_t h3[14] = { 2, 1050, 0, 0, 1, 1000, 1, 50, 0, 0, 0, 0, 1, 1000 };
	const struct mt_heap_stats *tot;
	struct mt_read_status st;
	struct mt_stacks *s;
	struct mt_model *m;
	char dir[512];

	(void)state;
	write_worked_example(dir, "worked");
	s = load(dir);
	assert_counts(s, entry_of(s, 1), h1);
	assert_counts(s, entry_of(s, 2), h2);
	assert_counts(s, entry_of(s, 3), h3);
	assert_int_equal(mt_model__load(dir, &m, &st), 0);
	tot = &mt_model__totals(m)->heap;
	assert_int_equal(tot->inherited_allocations, 4 + 1 + 0);
	assert_int_equal(tot->inherited_bytes, 800 + 200);
	assert_int_equal(tot->frees, 2 + 1 + 1);
	assert_int_equal(tot->exec_discarded_bytes, 700 + 200 + 50);
	assert_int_equal(tot->leaked_bytes, 400 + 10);
	assert_int_equal(tot->internal_releases, 1);
	assert_int_equal(tot->peak_live_bytes, 400 + 210 + 1000);
	assert_int_equal(mt_stack_heap__peak_bytes(mt_stacks__heap(s)), 1610);
	assert_int_equal(mt_stack_heap__totals(mt_stacks__heap(s))->temporary_allocations, 1);
	mt_model__free(m);
	mt_stacks__free(s);
}

/*
 * 40 children inherit X (10 B, stack 1) and Y (20 B, stack 2) at once; each frees X and exits (101 after its own
 * allocation of 5 B at stack 1 when leak101); the parent frees Y.
 */
static void write_forty(struct synth *w, const char *name, char *dir, bool leak101)
{
	static const char *const funcs[] = { "f19", "f20" };
	struct mt_mapping map;
	uint64_t ret[2];
	uint32_t c;

	synth_open(w, name, dir, funcs, 2, ret, &map);
	synth_def(w, 100, 1, ret[0]);
	synth_def(w, 100, 2, ret[1]);
	synth_call(w, 100, 100, 1, 0x1000, 10);
	synth_call(w, 100, 100, 2, 0x2000, 20);
	for (c = 101; c <= 140; c++)
		synth_fork(w, 100, c, 0);
	for (c = 101; c <= 140; c++) {
		synth_call(w, c, c, 0, 0x1000, 0);
		if (leak101 && c == 101)
			synth_call(w, c, c, 1, 0x4000, 5);
		synth_exit(w, c);
	}
	synth_call(w, 100, 100, 0, 0x2000, 0);
}

/* write_forty's, and the parent exits. */
static void test_stacks_40_children(void **state)
{
	static const uint64_t x[14] = { 1, 10, 40, 400, 40, 400, 0, 0, 1, 10, 0, 0, 41, 410 };
	/* Y was the parent's last allocation when it freed it: temporary; the children held it, inherited, to their
	 * exits: not their leaks */
	static const uint64_t y[14] = { 1, 20, 40, 800, 1, 20, 0, 0, 0, 0, 1, 20, 41, 820 };
	struct synth w = { 0 };
	struct mt_stacks *s;
	char dir[512];

	(void)state;
	write_forty(&w, "forty", dir, false);
	synth_exit(&w, 100);
	assert_int_equal(mt_writer__close(w.w), 0);
	s = load(dir);
	assert_counts(s, entry_of(s, 1), x);
	assert_counts(s, entry_of(s, 2), y);
	assert_int_equal(counts_of(s, entry_of(s, 2)).inherited_live_allocations, 40);
	assert_int_equal(counts_of(s, entry_of(s, 2)).inherited_live_bytes, 800);
	assert_int_equal(counts_of(s, entry_of(s, 1)).inherited_live_allocations, 0);
	assert_int_equal(mt_stack_heap__nr_procs(mt_stacks__heap(s)), 41);
	assert_int_equal(mt_stack_heap__peak_bytes(mt_stacks__heap(s)), 41 * 30);
	mt_stacks__free(s);
}

/*
 * Records out of time order (a free stamped before its block's allocation came later, beyond what arrival order
 * gives): the replay's mirror turns into a window like the model's and stays in step with it.
 */
static void test_stacks_out_of_order(void **state)
{
	static const char *const funcs[] = { "f20" };
	struct mt_mapping map;
	struct synth w = { 0 };
	struct mt_read_status st;
	const struct mt_totals *t;
	const struct mt_stack_entry *e;
	struct mt_stacks *s;
	struct mt_model *m;
	uint64_t ret, i;
	char dir[512];

	(void)state;
	synth_open(&w, "late", dir, funcs, 1, &ret, &map);
	synth_def(&w, 100, 1, ret);
	w.ts = 1000;
	for (i = 0; i < 5000; i++)
		synth_call(&w, 100, 100, 1, 0x10000 + 16 * i, 8);
	w.ts = 500;	/* 5000 frees stamped before the allocations: those within the window come out first */
	for (i = 0; i < 5000; i++)
		synth_call(&w, 100, 100, 0, 0x10000 + 16 * i, 0);
	assert_int_equal(mt_writer__close(w.w), 0);
	s = load(dir);
	e = entry_of(s, 1);
	assert_int_equal(mt_model__load(dir, &m, &st), 0);
	t = mt_model__totals(m);
	/* 904 allocations left the 4096-record window before the first free came: the 1,403 frees stamped before the
	 * last of them are late; of the others, a window's worth comes out before its allocations */
	assert_int_equal(t->late_records, 1403);
	assert_int_equal(t->heap.unknown_frees, 4096);
	assert_int_equal(counts_of(s, e).allocations, 5000);
	assert_int_equal(counts_of(s, e).frees, t->heap.frees);
	/* no exit record: the model calls the blocks left still live, and so does the stack */
	assert_int_equal(counts_of(s, e).leaked_allocations, t->heap.leaked_allocations);
	assert_int_equal(counts_of(s, e).still_live_allocations, t->heap.still_live_allocations);
	assert_int_equal(counts_of(s, e).frees + counts_of(s, e).still_live_allocations, 5000);
	mt_model__free(m);
	mt_stacks__free(s);
}

/* Each site, what each process held of it at that process's own peak: 100 at 600 B, 101 at 1010 B, 102 at 400 B. */
static void test_sites_process_peaks(void **state)
{
	struct mt_stacks *s;
	struct mt_sites *sites;
	const struct mt_site *f18, *f19, *f20;
	char dir[512], *out;

	(void)state;
	write_worked_example(dir, "worked_sites");
	s = load(dir);
	sites = sites_of(s);
	assert_int_equal(sites->count, 3);
	assert_int_equal(sites->nprocs, 3);
	assert_int_equal(sites->procs[0].pid, 100);
	assert_int_equal(sites->procs[0].peak_bytes, 600);
	assert_int_equal(sites->procs[1].pid, 101);
	assert_int_equal(sites->procs[1].peak_bytes, 1010);
	assert_string_equal(sites->procs[1].exe, "/usr/bin/cc");
	assert_int_equal(sites->procs[2].pid, 102);
	assert_int_equal(sites->procs[2].peak_bytes, 400);
	f18 = site_named(sites, "f18");
	f19 = site_named(sites, "f19");
	f20 = site_named(sites, "f20");
	out = sites_json(json_site_keys_of, sites, (size_t)(f18 - sites->sites));
	assert_string_equal(out, "{\"peak_bytes\":400,\"peak_allocations\":2,\"temporary_allocations\":1,"
			    "\"temporary_bytes\":64,\"process_peaks\":[{\"pid\":100,\"peak_bytes\":400,"
			    "\"peak_allocations\":2},{\"pid\":102,\"peak_bytes\":400,\"peak_allocations\":2}],"
			    "\"processes\":[{\"pid\":100,\"exe\":\"\",\"allocations\":3,\"bytes\":464}]}");
	free(out);
	out = sites_json(json_site_keys_of, sites, (size_t)(f19 - sites->sites));
	assert_string_equal(out, "{\"peak_bytes\":210,\"peak_allocations\":2,\"temporary_allocations\":0,"
			    "\"temporary_bytes\":0,\"process_peaks\":[{\"pid\":100,\"peak_bytes\":200,"
			    "\"peak_allocations\":1},{\"pid\":101,\"peak_bytes\":10,\"peak_allocations\":1}],"
			    "\"processes\":[{\"pid\":100,\"exe\":\"\",\"allocations\":1,\"bytes\":200},"
			    "{\"pid\":101,\"exe\":\"/usr/bin/cc\",\"allocations\":1,\"bytes\":10}]}");
	free(out);
	out = sites_json(json_site_keys_of, sites, (size_t)(f20 - sites->sites));
	assert_string_equal(out, "{\"peak_bytes\":1000,\"peak_allocations\":1,\"temporary_allocations\":0,"
			    "\"temporary_bytes\":0,\"process_peaks\":[{\"pid\":101,\"peak_bytes\":1000,"
			    "\"peak_allocations\":1}],"
			    "\"processes\":[{\"pid\":101,\"exe\":\"\",\"allocations\":2,\"bytes\":1050}]}");
	free(out);
	/* 101's D (image 0, sh's) and E (image 1, cc) share f20's stack: the process's first allocation there names
	 * the exe; F at f19 is cc's own */
	out = sites_text(mt_sites__by_exe_text, sites, 2);
	assert_string_equal(out, "\ntop allocation sites by executable (2 executables, largest first; the top 2 sites "
			    "of each):\n"
			    "  ?: 2 processes, 1.7 KiB (1714 B) in 6 allocations at 3 sites\n"
			    "  #1   1.0 KiB in 2 allocations\n        f20+0x5 (chain.c:29)\n"
			    "  #2   464 B in 3 allocations\n        f18+0x5 (chain.c:25)\n"
			    "  /usr/bin/cc: 1 process, 10 B in 1 allocation at 1 site\n"
			    "  #1   10 B in 1 allocation\n        f19+0x5 (chain.c:26)\n");
	free(out);
	out = sites_text(mt_sites__peak_text, sites, 10);
	assert_non_null(strstr(out, "\ntop sites at peak (3 of 3 sites; 1.6 KiB (1610 B) live at 0.000000 s):\n"
				    "  #1   1000 B in 1 block (62.1%)\n"
				    "      pid 101 at its peak: 1000 B in 1 block (/usr/bin/cc)\n"
				    "        f20+0x5 (chain.c:"));
	assert_non_null(strstr(out, "  #2   400 B in 2 blocks (24.8%)\n"
				    "      pid 100 at its peak: 400 B in 2 blocks (?)\n"
				    "      pid 102 at its peak: 400 B in 2 blocks (/bin/true)\n"
				    "        f18+0x5 (chain.c:"));
	free(out);
	mt_sites__free(sites);
	mt_stacks__free(s);
}

/* munmap of the middle of a mapping splits it; pgoff follows the upper part's start. */
static void test_aspace_partial_munmap(void **state)
{
	struct mt_modules *ms = mt_modules__new("/nonexistent");
	struct mt_mapping map = { .hdr = { .pid = 5, .type = MT_REC_MAPPING, .size = sizeof(map) },
				  .start = 0x10000, .end = 0x15000, .pgoff = 0x1000, .dev = 1, .ino = 2, .prot = 5 };
	struct mt_syscall un = { .hdr = { .pid = 5, .type = MT_REC_SYSCALL, .size = sizeof(un) },
				 .addr = 0x12000, .size = 0x1000, .sys = MT_SYS_MUNMAP };
	struct mt_aspaces as;
	struct mt_aspace *sp;

	(void)state;
	mt_aspaces__init(&as, ms);
	assert_int_equal(mt_aspaces__apply(&as, &map.hdr), 0);
	assert_int_equal(mt_aspaces__apply(&as, &un.hdr), 0);
	sp = mt_aspaces__get(&as, 5);
	assert_non_null(sp);
	assert_int_equal(sp->count, 2);
	assert_int_equal(sp->maps[0].start, 0x10000);
	assert_int_equal(sp->maps[0].end, 0x12000);
	assert_int_equal(sp->maps[0].pgoff, 0x1000);
	assert_int_equal(sp->maps[1].start, 0x13000);
	assert_int_equal(sp->maps[1].end, 0x15000);
	assert_int_equal(sp->maps[1].pgoff, 0x4000);
	assert_null(mt_aspace__find(sp, 0x12800));
	assert_non_null(mt_aspace__find(sp, 0x13000));
	/* a new mapping over part of an old one replaces that part */
	map.start = 0x14000;
	map.end = 0x16000;
	assert_int_equal(mt_aspaces__apply(&as, &map.hdr), 0);
	assert_int_equal(sp->count, 3);
	assert_int_equal(sp->maps[1].end, 0x14000);
	assert_int_equal(sp->maps[2].start, 0x14000);
	mt_aspaces__release(&as);
	mt_modules__free(ms);
}

/* ---- peaks, temporaries, sizes ---- */

/* ---- timeline ---- */

#define WORKED_EVENTS "\"peak\":{\"t_ns\":14,\"bytes\":1610},\"leaked_allocations\":3,\"leaked_bytes\":410," \
	"\"suppressed_allocations\":0,\"suppressed_bytes\":0,\"events\":[" \
	"{\"t_ns\":9,\"pid\":100,\"event\":\"fork\",\"child\":101}," \
	"{\"t_ns\":12,\"pid\":101,\"event\":\"exec\",\"path\":\"/usr/bin/cc\"}," \
	"{\"t_ns\":16,\"pid\":101,\"event\":\"exit\"}," \
	"{\"t_ns\":18,\"pid\":100,\"event\":\"fork\",\"child\":102}," \
	"{\"t_ns\":19,\"pid\":102,\"event\":\"exec\",\"path\":\"/bin/true\"}," \
	"{\"t_ns\":20,\"pid\":102,\"event\":\"exit\"},{\"t_ns\":24,\"pid\":100,\"event\":\"exit\"}]}\n"

/* The worked example's live bytes after each record that changed them, by the model's rules; the two top processes. */
static void test_timeline_json(void **state)
{
	char dir[512], *out;
	int ret;

	(void)state;
	write_worked_example(dir, "timeline");
	out = mt_test__capture(mt_cmd_timeline, 1, &ret, "timeline", "--json", "--top", "2", dir, NULL);
	assert_int_equal(ret, 0);
	assert_string_equal(out, "{\"t_ns\":[6,7,8,9,10,11,12,13,14,15,16,17,18,19,21,22,24],"
			    "\"total\":[100,300,600,1200,1100,1150,600,1600,1610,610,600,400,800,400,464,400,0],"
			    "\"processes\":[{\"pid\":101,\"exe\":\"/usr/bin/cc\",\"peak_bytes\":1010,"
			    "\"live_bytes\":[0,0,0,600,500,550,0,1000,1010,10,0,0,0,0,0,0,0]},"
			    "{\"pid\":100,\"exe\":\"\",\"peak_bytes\":600,"
			    "\"live_bytes\":[100,300,600,600,600,600,600,600,600,600,600,400,400,400,464,400,0]}],"
			    "\"others\":[0,0,0,0,0,0,0,0,0,0,0,0,400,0,0,0,0]," WORKED_EVENTS);
	free(out);
	/* four points: each of four time buckets keeps its largest values, at its first sample's time */
	out = mt_test__capture(mt_cmd_timeline, 1, &ret, "timeline", "--json", "--top", "2", "--points", "4", dir, NULL);
	assert_int_equal(ret, 0);
	assert_string_equal(out, "{\"t_ns\":[6,11,16,21],\"total\":[1200,1610,800,464],"
			    "\"processes\":[{\"pid\":101,\"exe\":\"/usr/bin/cc\",\"peak_bytes\":1010,"
			    "\"live_bytes\":[600,1010,0,0]},{\"pid\":100,\"exe\":\"\",\"peak_bytes\":600,"
			    "\"live_bytes\":[600,600,600,464]}],\"others\":[0,0,400,0]," WORKED_EVENTS);
	free(out);
}

/* The SVG parses as XML (xmllint when installed, else every tag closes), with the peak and the marks. */
static void test_timeline_svg(void **state)
{
	char dir[512], path[600], cmd[700], *out, *p;
	int ret, depth = 0;
	FILE *f;

	(void)state;
	write_worked_example(dir, "timeline_svg");
	out = mt_test__capture(mt_cmd_timeline, 1, &ret, "timeline", dir, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "<title>peak: 1.6 KiB at 0.000000 s</title>"));
	assert_non_null(strstr(out, "<title>fork: pid 100 → 101 at 0.000000 s</title>"));
	assert_non_null(strstr(out, "<title>exec: pid 102 /bin/true at 0.000000 s</title>"));
	assert_non_null(strstr(out, ">pid 101 cc (peak 1010 B)<title>/usr/bin/cc</title></text>"));
	/* pid 101's colour from its pid alone (101 * 137 % 360), as memtrack view's page draws it */
	assert_non_null(strstr(out, "stroke=\"hsl(157,65%,42%)\" stroke-width=\"2.5\"/>"));
	snprintf(path, sizeof(path), "%s/timeline.svg", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(out, f);
	fclose(f);
	if (!access("/usr/bin/xmllint", X_OK)) {
		snprintf(cmd, sizeof(cmd), "xmllint --noout '%s'", path);
		assert_int_equal(system(cmd), 0);
	}
	for (p = strchr(out, '<'); p; p = strchr(p + 1, '<')) {
		if (p[1] == '?')
			continue;
		depth += p[1] == '/' ? -1 : strchr(p, '>')[-1] == '/' ? 0 : 1;
		assert_true(depth >= 0);
	}
	assert_int_equal(depth, 0);
	free(out);
}

/* Who held what at the peak: 3 x 1000 bytes of peak_a's and 2 x 500 of peak_b's, none of peak_c's. */
static void test_peak_sites(void **state)
{
	const struct mt_site *a, *b, *c;
	struct mt_stacks *s;
	struct mt_sites *sites;
	char dir[512], *out;
	int ret;

	(void)state;
	record(PROG, "peak", dir, "peak");
	s = load_default(dir);
	sites = sites_of(s);
	a = site_named(sites, "peak_a");
	b = site_named(sites, "peak_b");
	c = site_named(sites, "peak_c");
	assert_int_equal(a->peak_bytes, 3000);
	assert_int_equal(a->peak_allocations, 3);
	assert_int_equal(a->leaked_bytes, 1000);
	assert_int_equal(b->peak_bytes, 1000);
	assert_int_equal(b->peak_allocations, 2);
	assert_int_equal(b->leaked_bytes, 500);
	assert_int_equal(c->bytes, 1500);
	assert_int_equal(c->peak_bytes, 0);
	assert_int_equal(c->peak_allocations, 0);
	assert_int_equal(sites->totals.peak_bytes, 4000);
	assert_int_equal(sites->npeak, 2);	/* c has nothing at the peak: in no ranking shown */
	assert_ptr_equal(&sites->sites[sites->by_peak[0]], a);
	assert_ptr_equal(&sites->sites[sites->by_peak[1]], b);
	out = sites_text(mt_sites__peak_text, sites, 10);
	assert_non_null(strstr(out, "\ntop sites at peak (2 of 3 sites; 3.9 KiB (4000 B) live at "));
	assert_non_null(strstr(out, " s):\n  #1   2.9 KiB (3000 B) in 3 blocks (75.0%)\n        peak_a+0x"));
	assert_non_null(strstr(out, "\n  #2   1000 B in 2 blocks (25.0%)\n        peak_b+0x"));
	assert_null(strstr(out, "peak_c"));
	free(out);
	out = sites_json(mt_sites__json_sections, sites, 10);
	assert_int_equal(strncmp(out, "{\"peak_live_bytes\":4000,\"peak_ts_ns\":", 37), 0);
	assert_non_null(strstr(out, ",\"sites_at_peak\":[{\"bytes\":3000,\"count\":3,\"leaked_bytes\":1000,"
				    "\"suppressed_bytes\":0,\"stacks\":1,\"peak_bytes\":3000,\"peak_allocations\":3,"));
	free(out);
	mt_sites__free(sites);
	out = collapsed(s, MT_FG_PEAK);
	assert_string_equal(out, "_start;__libc_start_main;__libc_start_call_main;main;peak_run;peak_a 3000\n"
				 "_start;__libc_start_main;__libc_start_call_main;main;peak_run;peak_b 1000\n");
	free(out);
	mt_stacks__free(s);
	out = run_binary(&ret, "flamegraph", "--weight", "peak", dir, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "memtrack: bytes live at the peak by allocation stack (DWARF chains)"));
	free(out);
}

/* 100 blocks freed by their thread before its next allocation, among 101 kept and one freed after another. */
static void test_temporaries(void **state)
{
	struct mt_stacks *s;
	struct mt_sites *sites;
	const struct mt_site *one, *keep, *not;
	char dir[512], *out;

	(void)state;
	record(PROG, "temps", dir, "temps");
	s = load_default(dir);
	sites = sites_of(s);
	one = site_named(sites, "temp_one");
	keep = site_named(sites, "temp_keep");
	not = site_named(sites, "temp_not");
	assert_int_equal(one->count, 100);
	assert_int_equal(one->temporary_allocations, 100);
	assert_int_equal(one->temporary_bytes, 3200);
	assert_int_equal(keep->count, 100);	/* the loop's; one more from its own call after temp_not */
	assert_int_equal(keep->temporary_allocations, 0);
	assert_int_equal(not->count, 1);
	assert_int_equal(not->temporary_allocations, 0);
	assert_int_equal(sites->totals.allocations, 202);
	assert_int_equal(sites->totals.temporary_allocations, 100);
	assert_int_equal(sites->ntemporary, 1);	/* the sites without any are in no ranking shown */
	assert_ptr_equal(&sites->sites[sites->by_temporary[0]], one);
	out = sites_text(mt_sites__temporary_text, sites, 10);
	assert_non_null(strstr(out, "\ntemporary allocations: 100 of 202 allocations (49.5%), 3.1 KiB (3200 B)\n"
				    "top temporary sites (1 of 1 site with temporary allocations):\n"
				    "  #1   100 temporary of 100 allocations, 3.1 KiB (3200 B)\n        temp_one+0x"));
	free(out);
	out = sites_json(mt_sites__json_sections, sites, 10);
	assert_non_null(strstr(out, ",\"temporary_allocations\":100,\"temporary_bytes\":3200,\"sites_by_temporary\":"
				    "[{\"bytes\":3200,\"count\":100,\"leaked_bytes\":0,\"suppressed_bytes\":0,\"stacks\":1,"
				    "\"peak_bytes\":"));
	free(out);
	out = sites_json(json_site_keys_of, sites, (size_t)(one - sites->sites));
	assert_non_null(strstr(out, ",\"temporary_allocations\":100,\"temporary_bytes\":3200,"));
	free(out);
	mt_sites__free(sites);
	mt_stacks__free(s);
}

/* Known sizes: their power-of-two classes, and the largest allocations in size order with their site. */
static void test_sizes(void **state)
{
	struct mt_stacks *s;
	struct mt_sites *sites;
	char dir[512], *out;
	const char *expect;
	static const uint64_t order[] = { 1048576, 65536, 4096, 1000, 100, 8, 7, 4, 3, 2, 1, 0 };
	size_t i;

	(void)state;
	record(PROG, "sizes", dir, "sizes");
	s = load_default(dir);
	sites = sites_of(s);
	out = sites_json(sizes_json, sites, 0);
	expect = "{\"size_classes\":[{\"min\":0,\"max\":0,\"allocations\":1,\"bytes\":0},"
		 "{\"min\":1,\"max\":1,\"allocations\":1,\"bytes\":1},"
		 "{\"min\":2,\"max\":3,\"allocations\":2,\"bytes\":5},"
		 "{\"min\":4,\"max\":7,\"allocations\":2,\"bytes\":11},"
		 "{\"min\":8,\"max\":15,\"allocations\":1,\"bytes\":8},"
		 "{\"min\":64,\"max\":127,\"allocations\":1,\"bytes\":100},"
		 "{\"min\":512,\"max\":1023,\"allocations\":1,\"bytes\":1000},"
		 "{\"min\":4096,\"max\":8191,\"allocations\":1,\"bytes\":4096},"
		 "{\"min\":65536,\"max\":131071,\"allocations\":1,\"bytes\":65536},"
		 "{\"min\":1048576,\"max\":2097151,\"allocations\":1,\"bytes\":1048576}],"
		 "\"largest_allocations\":[{\"size\":1048576,\"pid\":";
	assert_int_equal(strncmp(out, expect, strlen(expect)), 0);
	free(out);
	assert_int_equal(sites->nlargest, 12);
	for (i = 0; i < 12; i++) {
		assert_int_equal(sites->largest[i].size, order[i]);
		assert_non_null(sites->largest[i].site);
		assert_func(mt_site__frame(sites->largest[i].site, 0)->name, "size_one");
	}
	out = sites_text(sizes_text, sites, 0);
	assert_non_null(strstr(out, "\nallocation sizes (12 allocations, by power-of-two class; the upper bound "
				    "excluded):\n  SIZE                    ALLOCATIONS        BYTES\n"
				    "  0 B                               1          0 B  ####################\n"
				    "  1 B                               1          1 B  ####################\n"
				    "  2 B - 4 B                         2          5 B  "
				    "########################################\n"));
	assert_non_null(strstr(out, "\n  16 B - 32 B                       0          0 B  \n"));
	assert_non_null(strstr(out, "\n  1.0 MiB - 2.0 MiB                 1      1.0 MiB  ####################\n\n"
				    "largest allocations (12 of 12):\n  #1   1.0 MiB (1048576 B), pid "));
	assert_non_null(strstr(out, "\n        size_one+0x"));
	assert_non_null(strstr(out, "  #12  0 B, pid "));
	free(out);
	mt_sites__free(sites);
	mt_stacks__free(s);
}

/* f10 keeps no frame pointer: `report` shows f9 from DWARF, unwinding on first use and caching DIR/unwind.mtz. */
static void test_report_dwarf_by_default(void **state)
{
	char dir[512], path[600], *out, *at;
	struct stat a, b;
	int ret;

	(void)state;
	record(PROG, "dwarf_default", dir, "chain");
	snprintf(path, sizeof(path), "%s/" MT_UNWIND_FILE, dir);
	assert_int_not_equal(access(path, F_OK), 0);
	out = mt_test__capture(mt_cmd_report, 1, &ret, "report", "--sites", "1", dir, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, " DWARF chains):\n"));
	at = strstr(out, "\n        f10+0x");
	assert_non_null(at);
	at = strchr(at + 1, '\n');
	assert_int_equal(strncmp(at, "\n        f9+0x", 14), 0);
	at = strchr(at + 1, '\n');
	assert_int_equal(strncmp(at, "\n        f8+0x", 14), 0);
	free(out);
	assert_int_equal(stat(path, &a), 0);
	/* the next reader takes the cache as it is */
	free(mt_test__capture(mt_cmd_report, 1, &ret, "report", dir, NULL));
	assert_int_equal(ret, 0);
	assert_int_equal(stat(path, &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	assert_int_equal(a.st_mtim.tv_nsec, b.st_mtim.tv_nsec);
}

/* A DIR the reader cannot write: DWARF chains all the same, unwound in memory, nothing left in DIR. */
static void test_dwarf_read_only_dir(void **state)
{
	char dir[512], path[600], *out;
	int status, ret;
	pid_t pid;

	(void)state;
	if (geteuid())
		skip();		/* as root, only another user finds DIR unwritable */
	record(PROG, "dwarf_ro", dir, "chain");
	assert_int_equal(chmod(base, 0755), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		if (setgid(65534) || setuid(65534))
			_exit(3);
		out = mt_test__capture(mt_cmd_report, 1, &ret, "report", dir, NULL);
		_exit(ret ? 4 : !strstr(out, "\n        f9+0x") || !strstr(out, " DWARF chains):\n") ? 5 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(chmod(base, 0700), 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	snprintf(path, sizeof(path), "%s/" MT_UNWIND_FILE, dir);
	assert_int_not_equal(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/.unwind.%d", dir, (int)pid);
	assert_int_not_equal(access(path, F_OK), 0);
}

/* ---- setup ---- */

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(path);
}

static int group_setup(void **state)
{
	(void)state;
	snprintf(base, sizeof(base), "/tmp/mt-stacks-XXXXXX");
	return mkdtemp(base) ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	if (!getenv("MT_KEEP_TEST_DIRS"))
		nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

/* The compact counts: three pairs in each slot, the other seven in a side record made on the first non-zero change. */
static void test_compact_counts(void **state)
{
	struct mt_counts t = { 0 };
	struct mt_stack_counts c;

	(void)state;
	assert_int_equal(mt_counts__reserve(&t, 3), 0);
	assert_int_equal(mt_counts__add(&t, 1, MT_CP_ALLOCATED, 2, 48), 0);
	assert_int_equal(mt_counts__add(&t, 1, MT_CP_FREED, 1, 16), 0);
	assert_int_equal(mt_counts__add(&t, 1, MT_CP_TEMPORARY, 1, 16), 0);
	assert_int_equal(mt_counts__add(&t, 1, MT_CP_LEAKED, 0, 0), 0);	/* a zero change makes no record */
	assert_int_equal(mt_counts__nr_rare(&t), 0);
	assert_int_equal(mt_counts__add(&t, 2, MT_CP_PEAK, 1, 32), 0);
	assert_int_equal(mt_counts__add(&t, 2, MT_CP_LEAKED, 1, 32), 0);
	assert_int_equal(mt_counts__add(&t, 2, MT_CP_STILL_LIVE, 3, 96), 0);
	assert_int_equal(mt_counts__add(&t, 2, MT_CP_STILL_LIVE, -1, -32), 0);	/* two's complement for less */
	assert_int_equal(mt_counts__nr_rare(&t), 1);
	mt_counts__get(&t, 1, &c);
	assert_int_equal(c.allocations, 2);
	assert_int_equal(c.bytes, 48);
	assert_int_equal(c.frees, 1);
	assert_int_equal(c.freed_bytes, 16);
	assert_int_equal(c.temporary_allocations, 1);
	assert_int_equal(c.temporary_bytes, 16);
	assert_int_equal(c.leaked_allocations + c.peak_bytes + c.inherited_bytes + c.still_live_bytes, 0);
	mt_counts__get(&t, 2, &c);
	assert_int_equal(c.allocations, 0);
	assert_int_equal(c.peak_allocations, 1);
	assert_int_equal(c.peak_bytes, 32);
	assert_int_equal(c.leaked_allocations, 1);
	assert_int_equal(c.leaked_bytes, 32);
	assert_int_equal(c.still_live_allocations, 2);
	assert_int_equal(c.still_live_bytes, 64);
	assert_int_equal(c.discarded_bytes + c.replaced_bytes + c.inherited_live_bytes, 0);
	assert_int_equal(mt_counts__reserve(&t, 1000), 0);	/* grows: the old slots kept, the new ones zero */
	mt_counts__get(&t, 2, &c);
	assert_int_equal(c.still_live_bytes, 64);
	mt_counts__get(&t, 999, &c);
	assert_int_equal(c.allocations + c.peak_bytes, 0);
	mt_counts__get(&t, 1000, &c);	/* past the reserved: zeros */
	assert_int_equal(c.allocations, 0);
	mt_counts__shrink(&t, 3);	/* stacks 3 .. 999 go: their slots were zero */
	assert_int_equal(t.n, 3);
	assert_int_equal(t.cap, 3);
	mt_counts__get(&t, 2, &c);
	assert_int_equal(c.still_live_bytes, 64);
	assert_int_equal(c.leaked_bytes, 32);
	mt_counts__get(&t, 999, &c);
	assert_int_equal(c.allocations + c.peak_bytes, 0);
	mt_counts__shrink(&t, 5);	/* more than there are: nothing changes */
	assert_int_equal(t.cap, 3);
	mt_counts__release(&t);
	assert_int_equal(t.n, 0);
}

/*
 * 200 stacks, each allocated twice: the read finds an entry by its hash through a table of entry indexes that grows
 * as the entries come (hashes 64 apart share their first slot while it is small), and frees it at the end.
 */
static void test_entries_many(void **state)
{
	static const char *const funcs[] = { "f20" };
	struct mt_mapping map;
	struct synth y = { 0 };
	struct mt_stacks *s;
	uint64_t ret, k;
	char dir[512];
	int pass;

	(void)state;
	synth_open(&y, "many", dir, funcs, 1, &ret, &map);
	for (k = 1; k <= 200; k++)
		synth_def(&y, 100, 64 * k, ret);
	for (pass = 0; pass < 2; pass++)
		for (k = 1; k <= 200; k++) {
			synth_call(&y, 100, 100, 64 * k, 0x1000, k);
			synth_call(&y, 100, 100, 0, 0x1000, 0);
		}
	synth_exit(&y, 100);
	assert_int_equal(mt_writer__close(y.w), 0);
	s = load(dir);
	assert_int_equal(mt_stacks__count(s), 200);
	for (k = 1; k <= 200; k++) {
		assert_int_equal(mt_stacks__entry(s, k - 1)->hash, 64 * k);
		assert_int_equal(counts_of(s, mt_stacks__entry(s, k - 1)).allocations, 2);
		assert_int_equal(counts_of(s, mt_stacks__entry(s, k - 1)).bytes, 2 * k);
	}
	assert_int_equal(mt_stacks__find(s, 64), SIZE_MAX);	/* the read's table is gone */
	assert_int_equal(mt_stacks__index_hashes(s), 0);
	for (k = 1; k <= 200; k++)
		assert_int_equal(mt_stacks__find(s, 64 * k), k - 1);
	assert_int_equal(mt_stacks__find(s, 64 * 201), SIZE_MAX);
	mt_stacks__free(s);
}

struct visits {
	uint32_t *order;
	uint32_t *n;
};

static void cell_index_visit(uint32_t idx, void *ctx)
{
	struct visits *v = ctx;

	v->order[(*v->n)++] = idx;
}

static void u64map_visit(uint64_t key, uint64_t val, void *ctx)
{
	(void)key;
	cell_index_visit((uint32_t)val, ctx);
}

/* The same order as the first walk's, which it follows. */
static void cell_index_check(uint32_t idx, void *ctx)
{
	struct visits *v = ctx;

	assert_int_equal(v->order[*v->n - 40], idx);
	(*v->n)++;
}

/* The cells' index: 32-bit indexes that find their records by the keys in them, visited as mt_u64map visits. */
static void test_cell_index(void **state)
{
	struct rec {
		uint64_t other;
		uint32_t key;
	} recs[40];
	struct mt_cell_keys k = { &recs[0].key, sizeof(recs[0]) };
	struct mt_cell_index x = { 0 };
	struct mt_u64map m = { 0 };
	uint32_t order[40], n = 0, i;

	(void)state;
	for (i = 0; i < 40; i++) {
		recs[i] = (struct rec){ 7 * i, i == 20 ? 0 : 1000003u * i + 1 };	/* record 20: key 0 */
		if (i == 11)
			assert_int_equal(x.mask, 15);	/* 11 entries in 16 slots, at most 70% full */
		assert_int_equal(mt_cell_index__find(&x, recs[i].key, k), 0);
		assert_int_equal(mt_cell_index__add(&x, recs[i].key, i, k), 0);
		assert_int_equal(mt_u64map__put(&m, recs[i].key, i, NULL), 0);
	}
	assert_int_equal(x.mask, 63);
	assert_int_equal(x.count, 40);
	assert_int_equal(x.zero, 21);
	for (i = 0; i < 40; i++)
		assert_int_equal(mt_cell_index__find(&x, recs[i].key, k), i + 1);
	assert_int_equal(mt_cell_index__find(&x, 2, k), 0);
	assert_int_equal(mt_cell_index__add(&x, 5, UINT32_MAX, k), -ENOMEM);	/* an index + 1 must fit */
	mt_cell_index__for_each(&x, cell_index_visit, &(struct visits){ order, &n });
	assert_int_equal(n, 40);
	assert_int_equal(order[0], 20);		/* key 0 first */
	n = 0;
	mt_u64map__for_each(&m, u64map_visit, &(struct visits){ order, &n });
	assert_int_equal(n, 40);
	mt_cell_index__for_each(&x, cell_index_check, &(struct visits){ order, &n });
	assert_int_equal(n, 80);
	mt_cell_index__release(&x);
	assert_null(x.slots);
	assert_int_equal(x.count + x.zero, 0);
	mt_u64map__release(&m);
}

/* The cell of (pid, stack index + 1) after the load, in out; false when there is none. */
static bool cell_of(const struct mt_stack_heap *h, uint32_t pid, uint32_t stack, struct mt_heap_cell *out)
{
	size_t i;

	for (i = 0; i < mt_stack_heap__nr_cells(h); i++) {
		mt_stack_heap__cell(h, i, out);
		if (out->stack == stack && mt_stack_heap__proc(h, out->proc)->pid == pid)
			return true;
	}
	return false;
}

/*
 * The stack heap's cells keep their inherited, leaked and still live counts aside, in a record a cell gets on their
 * first change: here each of the 40 children's two cells (inherited), and the parent's two (still live at the end).
 */
static void test_cells_rare(void **state)
{
	const struct mt_stacks_opts opts = { .fp_chains = true, .heap_counts = true };
	const struct mt_stack_heap *h;
	struct mt_read_status st;
	struct mt_heap_cell cell;
	struct synth w = { 0 };
	struct mt_stacks *s;
	char dir[512];

	(void)state;
	write_forty(&w, "rare", dir, true);
	synth_call(&w, 100, 100, 2, 0x3000, 30);	/* live at the end: there is no exit of 100 */
	assert_int_equal(mt_writer__close(w.w), 0);
	assert_int_equal(mt_stacks__load(dir, &opts, &s, &st), 0);
	h = mt_stacks__heap(s);
	assert_int_equal(mt_stack_heap__nr_cells(h), 82);
	assert_int_equal(mt_stack_heap__nr_rare_cells(h), 82);
	assert_true(cell_of(h, 100, 1, &cell));	/* X: never freed, still live at the end */
	assert_int_equal(cell.live_bytes, 10);
	assert_int_equal(cell.leaked_bytes, 0);
	assert_true(cell_of(h, 100, 2, &cell));	/* Y freed, then Z at the same stack, still live */
	assert_int_equal(cell.made_allocations, 2);
	assert_int_equal(cell.made_bytes, 50);
	assert_int_equal(cell.live_bytes, 30);
	assert_true(cell_of(h, 101, 1, &cell));	/* X inherited and freed; its own 5 B leaked */
	assert_int_equal(cell.made_allocations, 1);
	assert_int_equal(cell.leaked_bytes, 5);
	assert_int_equal(cell.live_bytes, 0);
	assert_true(cell_of(h, 140, 2, &cell));	/* Y inherited, held to its exit: not its leak */
	assert_int_equal(cell.made_allocations, 0);
	assert_int_equal(cell.leaked_bytes, 0);
	assert_int_equal(cell.live_bytes, 0);
	assert_int_equal(counts_of(s, entry_of(s, 1)).leaked_bytes, 5);
	assert_int_equal(counts_of(s, entry_of(s, 2)).inherited_live_bytes, 800);
	assert_int_equal(counts_of(s, entry_of(s, 2)).still_live_bytes, 30);
	assert_int_equal(counts_of(s, entry_of(s, 1)).still_live_bytes, 10);
	mt_stacks__free(s);
}

/* report --leaks' text of the stacks s (m's leaks), in a string to free. */
static char *leaks_text(const struct mt_model *m, struct mt_stacks *s)
{
	struct mt_leaks *l = mt_leaks__build(m, s, NULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	assert_non_null(l);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(mt_leaks__text(f, l, 10), 0);
	fclose(f);
	mt_leaks__free(l);
	return buf;
}

/* The leaks by site with stacks: a leaked stack's entry found by its hash, the leaked hashes in a map (no index of
 * every stack: mt_stacks__index_hashes is for thousands of leaked stacks, most of the stacks). */
static void test_leaks_by_stack(void **state)
{
	const struct mt_model_opts o = { NULL, true };
	struct mt_read_status st;
	struct mt_stacks *s;
	struct mt_model *m;
	char dir[512], *mapped;

	(void)state;
	record(PROG_FP, "fp_chain", dir, "chain");
	s = load(dir);
	assert_int_equal(mt_model__load_with(dir, &o, &m, &st), 0);
	mapped = leaks_text(m, s);
	assert_int_equal(mt_stacks__find(s, mt_stacks__entry(s, 0)->hash), SIZE_MAX);	/* no index made */
	assert_non_null(strstr(mapped, "\nleaked at exit, by allocation site (1 site, frame-pointer chains, largest "
				       "first):\n  #1   200 B in 2 blocks; pid "));
	assert_non_null(strstr(mapped, "\n        f20+0x"));
	assert_non_null(strstr(mapped, "\n        f1+0xc (chain.c:9)\n        run_chain+0x"));
	free(mapped);
	mt_model__free(m);
	mt_stacks__free(s);
}

/*
 * The leaks of a process that keeps every block of its 5,000 stacks: more leaked hashes than LEAKS_MAP_MIN and most
 * of the stacks, so the leaks index every stack by hash (src/report/leaks.c) instead of mapping the leaked ones; one
 * site (every stack's frame is f20), each block counted once.
 */
static void test_leaks_many_stacks(void **state)
{
	static const char *const funcs[] = { "f20" };
	const struct mt_model_opts o = { NULL, true };
	struct mt_read_status st;
	struct mt_mapping map;
	struct synth y = { 0 };
	struct mt_stacks *s;
	struct mt_model *m;
	uint64_t ret, k;
	char dir[512], *text;

	(void)state;
	synth_open(&y, "leak_many", dir, funcs, 1, &ret, &map);
	for (k = 1; k <= 5000; k++) {
		synth_def(&y, 100, 64 * k, ret);
		synth_call(&y, 100, 100, 64 * k, 0x100000 + 0x1000 * k, k);
	}
	synth_exit(&y, 100);
	assert_int_equal(mt_writer__close(y.w), 0);
	s = load(dir);
	assert_int_equal(mt_model__load_with(dir, &o, &m, &st), 0);
	assert_int_equal(mt_stacks__count(s), 5000);
	text = leaks_text(m, s);
	assert_int_equal(mt_stacks__find(s, 64 * 4999), 4998);	/* the index of every stack, made by the leaks */
	assert_non_null(strstr(text, "leaked at exit, by allocation site (1 site, "));
	/* 1 + 2 + ... + 5000 bytes, each block once */
	assert_non_null(strstr(text, "\n  #1   11.9 MiB (12502500 B) in 5000 blocks; pid 100\n        f20+0x5 (chain.c:"));
	free(text);
	mt_model__free(m);
	mt_stacks__free(s);
}

/* mt_sites__sort: the heap's sites by bytes, count, then order; the mappings' last; moved along cycles in place. */
static void test_sites_sort(void **state)
{
	/* bytes, count, heap; order is the index */
	static const struct { uint64_t bytes, count; bool heap; } in[] = {
		{ 10, 1, true }, { 30, 1, true }, { 0, 0, false }, { 20, 5, true }, { 20, 7, true },
		{ 30, 1, true }, { 5, 9, true }, { 0, 0, false }, { 40, 1, true },
	};
	static const uint32_t want[] = { 8, 1, 5, 4, 3, 0, 6, 2, 7 };
	struct mt_site v[sizeof(in) / sizeof(in[0])], *w;
	size_t i, n = sizeof(in) / sizeof(in[0]);

	(void)state;
	memset(v, 0, sizeof(v));
	for (i = 0; i < n; i++) {
		v[i].bytes = in[i].bytes;
		v[i].count = in[i].count;
		v[i].heap = in[i].heap;
		v[i].order = (uint32_t)i;
		v[i].nframes = (uint32_t)(100 + i);	/* the whole site moves, not its keys alone */
	}
	assert_int_equal(mt_sites__sort(v, n), 0);
	for (i = 0; i < n; i++) {
		assert_int_equal(v[i].order, want[i]);
		assert_int_equal(v[i].nframes, 100 + want[i]);
	}
	assert_int_equal(mt_sites__sort(v, 0), 0);
	assert_int_equal(sizeof(struct mt_site), 128);	/* a million of them at 10^6 call paths (bench/README.md) */
	w = calloc(1000, sizeof(*w));	/* past the insertion sort's runs: bytes 0..999 in a scrambled order */
	assert_non_null(w);
	for (i = 0; i < 1000; i++)
		w[i] = (struct mt_site){ .bytes = i * 7919 % 1000, .heap = true, .order = (uint32_t)i };
	assert_int_equal(mt_sites__sort(w, 1000), 0);
	for (i = 0; i < 1000; i++) {
		assert_int_equal(w[i].bytes, 999 - i);
		assert_int_equal(w[i].order * 7919 % 1000, 999 - i);
	}
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compact_counts),
		cmocka_unit_test(test_cell_index),
		cmocka_unit_test(test_cells_rare),
		cmocka_unit_test(test_entries_many),
		cmocka_unit_test(test_fp_chain_sites),
		cmocka_unit_test(test_report_output),
		cmocka_unit_test(test_report_without_stacks),
		cmocka_unit_test(test_64_callers),
		cmocka_unit_test(test_fp_chain_misses_f9),
		cmocka_unit_test(test_moved_dir),
		cmocka_unit_test(test_separate_debug_file),
		cmocka_unit_test(test_dump_stack_lines),
		cmocka_unit_test(test_collapsed_and_svg),
		cmocka_unit_test(test_unwind_recovers_chain),
		cmocka_unit_test(test_unwind_budget),
		cmocka_unit_test(test_qsort_through_libc),
		cmocka_unit_test(test_unwind_no_info),
		cmocka_unit_test(test_checkfp_names_f10),
		cmocka_unit_test(test_checkfp_all_fp_is_complete),
		cmocka_unit_test(test_broken_chain_no_invented_frame),
		cmocka_unit_test(test_budget_truncated_frame),
		cmocka_unit_test(test_no_stacks_commands),
		cmocka_unit_test(test_unwind_missing_dir),
		cmocka_unit_test(test_attach_json_and_conflicts),
		cmocka_unit_test(test_srcline_paths),
		cmocka_unit_test(test_help_command),
		cmocka_unit_test(test_aspace_fork_exec_munmap),
		cmocka_unit_test(test_entries_compact),
		cmocka_unit_test(test_aspace_partial_munmap),
		cmocka_unit_test(test_stacks_follow_model),
		cmocka_unit_test(test_stacks_40_children),
		cmocka_unit_test(test_stacks_out_of_order),
		cmocka_unit_test(test_timeline_json),
		cmocka_unit_test(test_timeline_svg),
		cmocka_unit_test(test_peak_sites),
		cmocka_unit_test(test_temporaries),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_report_dwarf_by_default),
		cmocka_unit_test(test_dwarf_read_only_dir),
		cmocka_unit_test(test_sites_process_peaks),
		cmocka_unit_test(test_sites_sort),
		cmocka_unit_test(test_leaks_by_stack),
		cmocka_unit_test(test_leaks_many_stacks),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
