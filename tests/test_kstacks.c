// SPDX-License-Identifier: GPL-2.0-only
/* test_kstacks.c — the in-kernel unwinder on the real kernel: call paths without frame pointers, at full depth. */
#include "kernel_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/checkstacks.h"
#include "report/sites.h"
#include "stacks/stacks.h"
#include "unwind/module.h"

#define tmp_root mt_test_root

/* Entry e's counts (a copy: the stack heap keeps them compact). */
static struct mt_stack_counts counts_of(const struct mt_stacks *s, const struct mt_stack_entry *e)
{
	struct mt_stack_counts c;

	mt_stacks__counts(s, e, &c);
	return c;
}

/* A recording of prog in mode under the scratch dir, its stacks loaded (chains as the reports choose them). */
static struct mt_stacks *recorded(const char *name, const char *prog, const char *mode)
{
	struct mt_read_status st;
	struct mt_stacks *s;
	char dir[256];

	snprintf(dir, sizeof(dir), "%s/%s", tmp_root, name);
	mt_test__record_stacks(dir, prog, mode);
	assert_int_equal(mt_stacks__load(dir, NULL, &s, &st), 0);
	assert_string_equal(mt_stacks__chains(s), "in-kernel CFI");
	return s;
}

/* The frame names fn: "fn+0x..." or "fn" exactly. */
static bool frame_is(const struct mt_site_frame *f, const char *fn)
{
	size_t n = strlen(fn);

	return !strncmp(f->name, fn, n) && (!f->name[n] || !strncmp(f->name + n, "+0x", 3));
}

static size_t frames_named(const struct mt_site *site, const char *fn)
{
	size_t i, n = 0;

	for (i = 0; i < site->nframes; i++)
		n += frame_is(mt_site__frame(site, i), fn);
	return n;
}

/* The one site with a frame of fn (the test fails when there is none, or several). */
static const struct mt_site *site_of(const struct mt_sites *sites, const char *fn)
{
	const struct mt_site *found = NULL;
	size_t i;

	for (i = 0; i < sites->count; i++) {
		if (!frames_named(&sites->sites[i], fn))
			continue;
		assert_null(found);
		found = &sites->sites[i];
	}
	assert_non_null(found);
	return found;
}

/* The site's frames start with path (NULL-terminated), then reach _start through libc's entry code. */
static void assert_path(const struct mt_site *site, const char *const *path)
{
	const char *tail[] = { "__libc_start_call_main", "__libc_start_main", "_start" };
	size_t i, n;

	for (n = 0; path[n]; n++)
		assert_true(frame_is(mt_site__frame(site, n), path[n]));
	assert_int_equal(site->nframes, n + 3);
	for (i = 0; i < 3; i++)
		assert_true(frame_is(mt_site__frame(site, n + i), tail[i]));
}

/* Stacks whose kernel chain differs from DWARF's (libunwind on the raw bytes), by check-stacks' rule; and
 * `check-stacks --strict` on the recording agrees (exit 0). */
static size_t kernel_disagreements(const struct mt_stacks *s, const char *name)
{
	char dir[256], *argv[] = { MT_BINARY, "check-stacks", "--strict", dir, NULL };
	const struct mt_stack_entry *e;
	size_t i, at, bad = 0;

	for (i = 0; i < mt_stacks__count(s); i++) {
		e = mt_stacks__entry(s, i);
		if (!e->defined)
			continue;
		assert_true(e->has_kchain);
		assert_true(e->has_dwarf);
		if (mt_checkstacks__verdict(s, e, &at) != MT_KCHECK_AGREE) {
			print_message("stack %#llx: kernel %u frames, DWARF %u, first difference at %zu\n",
				      (unsigned long long)e->hash, e->nk, e->ndwarf, at);
			bad++;
		}
	}
	snprintf(dir, sizeof(dir), "%s/%s", tmp_root, name);
	assert_int_equal(mt_test__run(argv, "/dev/null", NULL), bad ? 1 : 0);
	return bad;
}

/* Eight callers into one leaf of libkst.so with a 384-byte frame, nothing built with frame pointers: one site per
 * caller, its own count and bytes, its own callers up to main. */
static void test_omit_chains_one_site_each(void **state)
{
	struct mt_stacks *s = recorded("chains", PROG("kst_omit"), "chains");
	struct mt_sites *sites = mt_sites__build(s);
	const struct mt_site *site;
	char chain[16];
	int k;

	(void)state;
	assert_non_null(sites);
	for (k = 0; k < 8; k++) {
		snprintf(chain, sizeof(chain), "chain%d", k);
		site = site_of(sites, chain);
		assert_int_equal(site->count, 100 + 10 * k);
		assert_int_equal(site->bytes, (uint64_t)(100 + 10 * k) * (24 + 8 * k));
		assert_int_equal(site->stacks, 1);
		assert_path(site, (const char *const[]){ "kst_leaf", "kst_lib_inner", "kst_lib_alloc", "chain_run",
							 chain, "main", NULL });
	}
	assert_int_equal(kernel_disagreements(s, "chains"), 0);
	mt_sites__free(sites);
	mt_stacks__free(s);
}

/* A 200-frame recursion: its one site holds every frame, down to main. */
static void test_deep_recursion_reaches_main(void **state)
{
	struct mt_stacks *s = recorded("deep", PROG("kst_omit"), "deep");
	struct mt_sites *sites = mt_sites__build(s);
	const struct mt_site *site;

	(void)state;
	assert_non_null(sites);
	site = site_of(sites, "recurse");
	assert_int_equal(site->count, 1);
	assert_int_equal(site->bytes, 4242);
	assert_int_equal(frames_named(site, "recurse"), 200);
	assert_int_equal(site->nframes, 204);
	assert_true(frame_is(mt_site__frame(site, 199), "recurse"));
	assert_true(frame_is(mt_site__frame(site, 200), "main"));
	assert_true(frame_is(mt_site__frame(site, 203), "_start"));
	assert_int_equal(kernel_disagreements(s, "deep"), 0);
	mt_sites__free(sites);
	mt_stacks__free(s);
}

/* One path taken 100,000 times, its locals different each time: one stack, one site. */
static void test_changing_locals_one_site(void **state)
{
	struct mt_stacks *s = recorded("locals", PROG("kst_omit"), "locals");
	struct mt_sites *sites = mt_sites__build(s);
	const struct mt_site *site;

	(void)state;
	assert_non_null(sites);
	site = site_of(sites, "locals_once");
	assert_int_equal(site->count, 100000);
	assert_int_equal(site->bytes, 100000ull * 3131);
	assert_int_equal(site->stacks, 1);
	assert_path(site, (const char *const[]){ "locals_once", "main", NULL });
	assert_int_equal(kernel_disagreements(s, "locals"), 0);
	mt_sites__free(sites);
	mt_stacks__free(s);
}

/* The program with frame pointers (its library without): the same sites, and the FP chain where it is whole. */
static void test_fp_program_same_sites(void **state)
{
	struct mt_stacks *s = recorded("fp", PROG("kst_fp"), "chains");
	struct mt_sites *sites = mt_sites__build(s);
	const struct mt_site *site;
	char chain[16];
	int k;

	(void)state;
	assert_non_null(sites);
	for (k = 0; k < 8; k++) {
		snprintf(chain, sizeof(chain), "chain%d", k);
		site = site_of(sites, chain);
		assert_int_equal(site->count, 100 + 10 * k);
		assert_int_equal(site->bytes, (uint64_t)(100 + 10 * k) * (24 + 8 * k));
		assert_path(site, (const char *const[]){ "kst_leaf", "kst_lib_inner", "kst_lib_alloc", "chain_run",
							 chain, "main", NULL });
	}
	assert_int_equal(kernel_disagreements(s, "fp"), 0);
	mt_sites__free(sites);
	mt_stacks__free(s);
}

/* C++ through libstdc++ (Debian's keeps no frame pointers): std::ostream::write calls our xsputn, which news. */
static void test_cxx_through_libstdcxx(void **state)
{
	struct mt_stacks *s = recorded("cxx", PROG("kst_cxx"), NULL);
	char dir[256], writer[16], *out, *argv[] = { MT_BINARY, "check-fp", dir, NULL };
	struct mt_sites *sites;
	const struct mt_site *site;
	int k;

	(void)state;
	mt_modules__set_full_names(mt_stacks__modules(s), true);	/* writer<0> .. writer<3>, not four writer<…> */
	sites = mt_sites__build(s);
	assert_non_null(sites);
	for (k = 0; k < 4; k++) {
		snprintf(writer, sizeof(writer), "writer<%d>", k);
		site = site_of(sites, writer);
		assert_int_equal(site->count, 10 + k);
		assert_int_equal(site->bytes, (uint64_t)(10 + k) * (16 + k));
		assert_path(site, (const char *const[]){ "alloc_buf::xsputn", "std::ostream::write", writer, "main",
							 NULL });
	}
	assert_int_equal(kernel_disagreements(s, "cxx"), 0);
	mt_sites__free(sites);
	mt_stacks__free(s);
	/* check-fp names the function to blame as the other commands do (issue 32 item 4): demangled */
	snprintf(dir, sizeof(dir), "%s/cxx", tmp_root);
	assert_int_equal(mt_test__run_named("cxx_checkfp", argv), 0);
	out = mt_test__read_output("cxx_checkfp", "out");
	assert_non_null(strstr(out, "\n       4       46          810  alloc_buf::xsputn * in " PROG("kst_cxx") "\n"));
	assert_null(strstr(out, "_Z"));
	free(out);
}

/* A library without CFI but with frame pointers: its frames walked by frame pointer, the rest by CFI, to main;
 * the report says so. */
static void test_no_cfi_module_by_frame_pointer(void **state)
{
	struct mt_stacks *s = recorded("nocfi", PROG("kst_omit"), "nocfi");
	struct mt_sites *sites = mt_sites__build(s);
	const struct mt_site *site;

	(void)state;
	assert_non_null(sites);
	site = site_of(sites, "nocfi_caller");
	assert_int_equal(site->count, 7);
	assert_int_equal(site->bytes, 7 * 5151);
	assert_path(site, (const char *const[]){ "kst_nocfi_inner", "kst_nocfi_alloc", "nocfi_caller", "main", NULL });
	assert_int_equal(sites->fp_walk_allocations, 7);
	assert_string_equal(sites->fp_module, "libkst_nocfi.so");
	mt_sites__free(sites);
	mt_stacks__free(s);
}

/* Lines of the file at path that hold needle. */
static size_t lines_with(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, n = 0;

	assert_non_null(f);
	while (getline(&line, &cap, f) > 0)
		n += strstr(line, needle) != NULL;
	free(line);
	fclose(f);
	return n;
}

/* 10^5 distinct call paths, each taken twice, in a quick configuration (brief definitions but the first 1000 and
 * one in 1000) through a 1 MiB ring, many times smaller than its definitions: the command waits for the reader
 * whenever the ring is over half full (bpf/pressure.bpf.h), so --strict says no event was dropped, every path is
 * defined once and counts its two allocations; its chain is descend, five (level, descend) pairs, paths_round, main
 * and libc's three. */
static void test_many_paths_each_defined_once(void **state)
{
	char dir[256], out[300], *rec[] = { MT_BINARY, "record", "-q", "--stacks", "--strict", "--stack-sample",
					    "1000", "--ring-size", "1", "-o", dir, "--", PROG("kst_omit"), "paths",
					    NULL };
	char *dump[] = { MT_BINARY, "dump", dir, NULL };
	const struct mt_stack_entry *e;
	struct mt_read_status st;
	struct mt_stacks *s;
	size_t i, paths = 0;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/paths", tmp_root);
	snprintf(out, sizeof(out), "%s/paths.dump", tmp_root);
	assert_int_equal(mt_test__run(rec, NULL, NULL), 0);
	assert_int_equal(mt_test__run(dump, out, NULL), 0);
	assert_int_equal(mt_stacks__load(dir, NULL, &s, &st), 0);
	for (i = 0; i < mt_stacks__count(s); i++) {
		e = mt_stacks__entry(s, i);
		assert_true(e->defined);
		paths += counts_of(s, e).allocations == 2 && counts_of(s, e).bytes == 128 && e->nk == 1 + 2 * 5 + 2 + 3;
	}
	assert_int_equal(paths, 100000);
	assert_int_equal(lines_with(out, "\"event\":\"stack\""), mt_stacks__count(s));
	assert_int_equal(lines_with(out, "\"bytes\":0,"), 100000 - 1000 - 99);
	mt_stacks__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_omit_chains_one_site_each),
		cmocka_unit_test(test_deep_recursion_reaches_main),
		cmocka_unit_test(test_changing_locals_one_site),
		cmocka_unit_test(test_fp_program_same_sites),
		cmocka_unit_test(test_cxx_through_libstdcxx),
		cmocka_unit_test(test_no_cfi_module_by_frame_pointer),
		cmocka_unit_test(test_many_paths_each_defined_once),
	};

	return mt_test__main("test_kstacks", tests, sizeof(tests) / sizeof(tests[0]));
}
