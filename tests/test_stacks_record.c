// SPDX-License-Identifier: GPL-2.0-only
/* test_stacks_record.c — `record --stacks` on the real kernel: call paths hashed by path, symbolized offline. */
#include "kernel_test.h"

#include <fcntl.h>
#include <stdbool.h>
#include <linux/perf_event.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "artifact/artifact.h"
#include "stacks/stacks.h"

#define tmp_root mt_test_root

static int run(char *const *argv, const char *out)
{
	return mt_test__run(argv, out, NULL);
}

/* argv's output, whole, in a malloc'd string (the command must succeed); out is the file it goes through. */
static char *run_output(char *const *argv, const char *out)
{
	assert_int_equal(run(argv, out), 0);
	return mt_test__read_file(out);
}

/* `memtrack CMD --json DIR`'s output. */
static char *cmd_json(const char *cmd, const char *dir)
{
	char out[512], *argv[] = { MT_BINARY, (char *)cmd, "--json", (char *)dir, NULL };

	snprintf(out, sizeof(out), "%s/%s.json", tmp_root, cmd);
	return run_output(argv, out);
}

static char *report_json(const char *dir)
{
	return cmd_json("report", dir);
}

/* Distinct stack hashes of the allocations of one size. */
struct hashes {
	uint64_t size, v[256];
	size_t n;
};

static int hashes__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	const struct mt_alloc *a = (const void *)h;
	struct hashes *s = ctx;
	size_t i;

	if (h->type != MT_REC_ALLOC || a->size != s->size || a->func != MT_FN_MALLOC)
		return 0;
	for (i = 0; i < s->n; i++)
		if (s->v[i] == a->stack)
			return 0;
	if (s->n < 256)
		s->v[s->n++] = a->stack;
	return 0;
}

static size_t distinct_hashes(const char *dir, uint64_t size)
{
	struct hashes s = { .size = size };
	struct mt_read_status st;

	assert_int_equal(mt_artifact__read(dir, hashes__on_record, &s, &st), 0);
	return s.n;
}

/* "fN+0x" or "fN" followed by a quote: the frame names function fN exactly. */
static const char *frame_of(const char *from, const char *fn)
{
	char a[64], b[64];
	const char *p = from, *q;

	snprintf(a, sizeof(a), "\"%s+0x", fn);
	snprintf(b, sizeof(b), "\"%s\"", fn);
	q = strstr(p, a);
	p = strstr(p, b);
	return !q ? p : !p ? q : (p < q ? p : q);
}

static void test_chain_in_order(void **state)
{
	char dir[256], fn[16], *json;
	const char *site, *pos;
	int i;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/chain", tmp_root);
	mt_test__record_stacks(dir, MT_PROGS "/stack_chain", "chain");
	json = report_json(dir);
	site = frame_of(json, "f20");
	assert_non_null(site);
	for (pos = site, i = 19; i >= 1; i--) {
		snprintf(fn, sizeof(fn), "f%d", i);
		pos = frame_of(pos + 1, fn);
		assert_non_null(pos);
	}
	assert_true(strstr(site, "\"main") > pos || !strstr(site, "\"main"));
	free(json);
}

static void test_one_path_one_hash(void **state)
{
	char dir[256];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/locals", tmp_root);
	mt_test__record_stacks(dir, MT_PROGS "/stack_chain", "locals");
	assert_int_equal(distinct_hashes(dir, 6062), 1);
}

static void test_64_callers_64_hashes(void **state)
{
	char dir[256];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/callers", tmp_root);
	mt_test__record_stacks(dir, MT_PROGS "/stack_chain", "callers");
	assert_int_equal(distinct_hashes(dir, 6063), 64);
}

/* Fork and exec children symbolize against their own modules; the DIR, copied elsewhere and with the program
 * gone, still symbolizes from DIR/modules. */
static void test_children_and_copied_dir(void **state)
{
	char dir[256], copy[256], prog[256], cmd[1024], *json;

	(void)state;
	snprintf(prog, sizeof(prog), "%s/stack_chain_copy", tmp_root);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", MT_PROGS "/stack_chain", prog);
	assert_int_equal(system(cmd), 0);
	snprintf(dir, sizeof(dir), "%s/tree", tmp_root);
	mt_test__record_stacks(dir, prog, "tree");
	json = report_json(dir);
	assert_non_null(frame_of(json, "f_child"));
	assert_non_null(frame_of(json, "f_exec"));
	free(json);
	snprintf(copy, sizeof(copy), "%s/moved/tree-copy", tmp_root);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/moved' && cp -r '%s' '%s' && rm -f '%s'", tmp_root, dir, copy, prog);
	assert_int_equal(system(cmd), 0);
	json = report_json(copy);
	assert_non_null(frame_of(json, "f_child"));
	assert_non_null(frame_of(json, "f_exec"));
	free(json);
}

static int memtrack_cmd(const char *cmd, const char *opt, const char *dir)
{
	char *argv[] = { MT_BINARY, (char *)cmd, (char *)opt, (char *)dir, NULL };

	if (!opt) {
		argv[2] = (char *)dir;
		argv[3] = NULL;
	}
	return run(argv, "/dev/null");
}

static char *checkfp_json(const char *dir)
{
	return cmd_json("check-fp", dir);
}

/* The frame-pointer chains alone, as collapsed stacks. */
static char *flamegraph_fp(const char *dir)
{
	char out[512], *argv[] = { MT_BINARY, "flamegraph", "--fp", "--collapsed", (char *)dir, NULL };

	snprintf(out, sizeof(out), "%s/flamegraph.fp", tmp_root);
	return run_output(argv, out);
}

/* f1..f20 all there, in order, innermost first. */
static bool chain__complete(const char *json)
{
	const char *pos = frame_of(json, "f20");
	char fn[16];
	int i;

	for (i = 19; pos && i >= 1; i--) {
		snprintf(fn, sizeof(fn), "f%d", i);
		pos = frame_of(pos + 1, fn);
	}
	return pos != NULL;
}

/* A chain built with frame pointers except f10: the FP chain skips f9, check-fp names f10, DWARF has it all. */
static void test_unwind_through_missing_frame_pointer(void **state)
{
	char dir[256], *json;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/omit", tmp_root);
	mt_test__record_stacks(dir, MT_PROGS "/fp_chain_omit", "chain");
	json = flamegraph_fp(dir);
	assert_null(strstr(json, ";f9;"));	/* the frame-pointer chain alone misses f9 */
	free(json);
	json = report_json(dir);
	assert_true(chain__complete(json));	/* DWARF by default: no `memtrack unwind` needed */
	free(json);
	json = checkfp_json(dir);
	assert_non_null(strstr(json, "\"function\": \"f10\""));
	free(json);
	assert_int_equal(memtrack_cmd("check-fp", "--strict", dir), 1);
	assert_int_equal(memtrack_cmd("unwind", NULL, dir), 0);
	json = report_json(dir);
	assert_true(chain__complete(json));
	free(json);
}

/* All with frame pointers: 100% of its stacks complete in its own module, and --strict passes. */
static void test_all_frame_pointers_complete(void **state)
{
	char dir[256], *json, *mod;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/allfp", tmp_root);
	mt_test__record_stacks(dir, MT_PROGS "/fp_chain_fp", "chain");
	json = checkfp_json(dir);
	mod = strstr(json, "fp_chain_fp\"");
	assert_non_null(mod);
	assert_non_null(strstr(mod, "\"fp_complete_pct\": 100.0"));
	assert_non_null(strstr(json, "\"divergences\": []"));
	free(json);
	assert_int_equal(memtrack_cmd("check-fp", "--strict", dir), 0);
}

/* A comparator called from inside Debian's libc (no frame pointers): DWARF finds qsort_r and main, FP does not. */
static void test_libc_callers_recovered(void **state)
{
	char dir[256], *json;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/qsort", tmp_root);
	mt_test__record_stacks(dir, MT_PROGS "/fp_chain_fp", "qsort");
	json = flamegraph_fp(dir);
	assert_non_null(strstr(json, "by_value"));
	assert_null(strstr(json, "qsort_r"));
	free(json);
	assert_int_equal(memtrack_cmd("unwind", NULL, dir), 0);
	json = report_json(dir);
	assert_non_null(frame_of(json, "qsort_r"));
	assert_non_null(frame_of(frame_of(json, "qsort_r"), "main"));
	free(json);
	json = checkfp_json(dir);
	assert_non_null(strstr(json, "libc.so.6"));
	free(json);
}

/* The example's stdout buffer is malloc'd six frames deep in libc (printf down to _IO_file_doallocate): `report
 * --sizes` shows it with its innermost frames and then, after "... (N more)", main, the program's own call. */
static void test_sizes_first_user_frame(void **state)
{
	char dir[256], out[300], *argv[] = { MT_BINARY, "report", "--sizes", dir, NULL };
	const char *big, *next, *inner, *user;
	char *text;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/sizes_user", tmp_root);
	snprintf(out, sizeof(out), "%s/sizes_user.txt", tmp_root);
	mt_test__record_stacks(dir, MT_PROGS "/example", NULL);
	text = run_output(argv, out);
	big = strstr(text, " 4.0 KiB (4096 B), pid ");
	assert_non_null(big);
	next = strstr(big, "\n  #");
	inner = strstr(big, "\n        _IO_file_doallocate");
	user = strstr(big, " more)\n        main+0x");
	assert_non_null(inner);
	assert_non_null(user);
	assert_true(inner < user && (!next || user < next));
	/* the program's own call, to its line: `printf(...)` in example.c's main (main+0xN: the compiler's) */
	user = strchr(user + strlen(" more)\n        main+0x"), ' ');
	assert_non_null(user);
	assert_true(!strncmp(user, " (example.c:38)\n", strlen(" (example.c:38)\n")));
	free(text);
}

/* File offset of a function of an ELF file, through nm (the symbol's address; the test program is not PIE-odd). */
static unsigned long symbol_offset(const char *file, const char *fn)
{
	char cmd[600], line[256];
	unsigned long addr = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm '%s' | awk '$3 == \"%s\" { print $1 }'", file, fn);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (fgets(line, sizeof(line), p))
		addr = strtoul(line, NULL, 16);
	pclose(p);
	assert_true(addr != 0);
	return addr;
}

/* A uretprobe of another tool, pending on f10 while f20 allocates: one perf uprobe event per CPU. */
static int other_uretprobe(const char *file, unsigned long off, int fds[], int max)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .type = 8, .config = 1 };	/* uprobe PMU, retprobe */
	int cpu, n = 0, ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char type[16] = "";
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");

	if (f) {
		if (!fgets(type, sizeof(type), f))
			type[0] = 0;
		fclose(f);
	}
	attr.type = atoi(type);
	attr.config1 = (unsigned long)file;
	attr.config2 = off;
	for (cpu = 0; cpu < ncpu && n < max; cpu++) {
		fds[n] = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fds[n] >= 0)
			n++;
	}
	return n;
}

/* A stack taken while a uretprobe is pending lower down must show the real caller, not the trampoline. */
static void test_pending_uretprobe_repaired(void **state)
{
	char dir[256], fn[16], *json;
	int fds[64], n, i;
	const char *pos;

	(void)state;
	n = other_uretprobe(MT_PROGS "/stack_chain", symbol_offset(MT_PROGS "/stack_chain", "f10"), fds, 64);
	assert_true(n > 0);
	snprintf(dir, sizeof(dir), "%s/pending", tmp_root);
	mt_test__record_stacks(dir, MT_PROGS "/stack_chain", "chain");
	for (i = 0; i < n; i++)
		close(fds[i]);
	json = report_json(dir);
	assert_null(strstr(json, "[uprobes]"));
	for (pos = frame_of(json, "f20"), i = 19; pos && i >= 1; i--) {
		snprintf(fn, sizeof(fn), "f%d", i);
		pos = frame_of(pos + 1, fn);
	}
	assert_non_null(pos);
	free(json);
}

/*
 * tree_fork_exec: 10 blocks from one site, a fork; the child frees the 10 it inherited, allocates 5555 bytes and execs
 * /bin/true; the parent frees its 10. Per stack as in the model: the site's blocks are inherited once, freed twice
 * (each holder's free matched to it), and the child's 5555 bytes are discarded at its exec, not leaked.
 */
static void test_fork_children_by_stack(void **state)
{
	struct mt_stack_counts c, ten = { 0 }, big = { 0 };
	struct mt_read_status st;
	struct mt_stacks *s;
	char dir[256];
	size_t i;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/tree_by_stack", tmp_root);
	mt_test__record_stacks(dir, MT_PROGS "/tree_fork_exec", NULL);
	assert_int_equal(mt_stacks__load(dir, NULL, &s, &st), 0);
	for (i = 0; i < mt_stacks__count(s); i++) {
		mt_stacks__counts(s, mt_stacks__entry(s, i), &c);
		if (c.bytes == 10045)
			ten = c;
		else if (c.bytes == 5555)
			big = c;
	}
	assert_int_equal(ten.bytes, 10045);
	assert_int_equal(big.bytes, 5555);
	assert_int_equal(ten.allocations, 10);
	assert_int_equal(ten.inherited_allocations, 10);
	assert_int_equal(ten.inherited_bytes, 10045);
	assert_int_equal(ten.frees, 20);
	assert_int_equal(ten.freed_bytes, 2 * 10045);
	assert_int_equal(ten.leaked_allocations, 0);
	assert_int_equal(ten.discarded_allocations, 0);
	assert_int_equal(ten.peak_bytes, 2 * 10045);	/* the peak: right after the fork, both holding them */
	assert_int_equal(big.discarded_allocations, 1);
	assert_int_equal(big.discarded_bytes, 5555);
	assert_int_equal(big.leaked_allocations, 0);
	assert_int_equal(mt_stack_heap__peak_bytes(mt_stacks__heap(s)), 2 * 10045);
	mt_stacks__free(s);
}

/* The functions of an entry's chain, innermost first, joined by ';' up to main (all of it without main). */
static void chain_names(struct mt_stacks *s, const struct mt_stack_entry *e, char *buf, size_t len)
{
	struct mt_sym sym;
	size_t i, at = 0;

	buf[0] = '\0';
	for (i = 0; i < e->nframes && at < len; i++) {
		mt_stacks__symbolize(s, mt_stacks__frame(s, e->frames, i), &sym);
		at += snprintf(buf + at, len - at, "%s%s", i ? ";" : "", sym.func ? sym.func : "?");
		if (sym.func && !strcmp(sym.func, "main"))
			break;
	}
}

/*
 * Issue 34: mapped_sites's two mapping sites, each its own call path up to main, with exact bytes: arena's 11 pages
 * of which 3 are unmapped by main (credited to arena), table's 13 grown to 29 by main's mremap (table's too); both
 * held at the exit. The allocation sites are the ones they are without mapping stacks: no stack counts for both.
 */
static void test_mapped_sites(void **state)
{
	const struct mt_stack_entry *e, *arena = NULL, *table = NULL;
	struct mt_stack_counts c;
	uint64_t allocs = 0, alloc_bytes = 0, allocs_named = 0;
	struct mt_read_status st;
	struct mt_stacks *s;
	char dir[256], path[512];
	size_t i;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/mapped_sites", tmp_root);
	mt_test__record_stacks(dir, MT_PROGS "/mapped_sites", NULL);
	assert_int_equal(mt_stacks__load(dir, NULL, &s, &st), 0);
	for (i = 0; i < mt_stacks__count(s); i++) {
		e = mt_stacks__entry(s, i);
		mt_stacks__counts(s, e, &c);
		if (e->named & MT_STACK_NAMED_ALLOC) {
			assert_int_equal(mt_stacks__mapped_of(s, e)->bytes, 0);
			allocs_named++;
		}
		if (!(e->named & MT_STACK_NAMED_MAP)) {
			allocs += c.allocations;
			alloc_bytes += c.bytes;
			continue;
		}
		assert_int_equal(c.allocations, 0);	/* a mapping's stack adds no allocation */
		chain_names(s, e, path, sizeof(path));
		if (!strcmp(path, "map;arena;main"))
			arena = e;
		else if (!strcmp(path, "map;table;main"))
			table = e;
		else
			assert_null(strstr(path, ";main"));	/* the loader's, before main */
	}
	assert_non_null(arena);
	assert_non_null(table);
	assert_int_equal(mt_stacks__mapped_of(s, arena)->calls, 1);
	assert_int_equal(mt_stacks__mapped_of(s, arena)->bytes, 11 * 4096);
	assert_int_equal(mt_stacks__mapped_of(s, arena)->unmapped_bytes, 3 * 4096);
	assert_int_equal(mt_stacks__mapped_of(s, arena)->exited_bytes, 8 * 4096);
	assert_int_equal(mt_stacks__mapped_of(s, arena)->live_bytes, 0);
	assert_int_equal(mt_stacks__mapped_of(s, table)->calls, 1);
	assert_int_equal(mt_stacks__mapped_of(s, table)->bytes, 29 * 4096);
	assert_int_equal(mt_stacks__mapped_of(s, table)->unmapped_bytes, 0);
	assert_int_equal(mt_stacks__mapped_of(s, table)->exited_bytes, 29 * 4096);
	assert_int_equal(mt_stacks__mapped_of(s, table)->peak_bytes, 29 * 4096);
	assert_int_equal(mt_stacks__mapped_of(s, arena)->peak_bytes, 8 * 4096);
	assert_int_equal(mt_stack_heap__totals(mt_stacks__heap(s))->allocations, allocs);
	assert_int_equal(mt_stack_heap__totals(mt_stacks__heap(s))->bytes, alloc_bytes);
	assert_true(allocs_named >= 3);
	mt_stacks__free(s);
}

/* `flamegraph --collapsed --kind K DIR`'s lines that pass through main, in their order (sorted by path). */
static char *flame_main_lines(const char *dir, const char *kind)
{
	char out[512], *argv[] = { MT_BINARY, "flamegraph", "--collapsed", "--kind", (char *)kind, (char *)dir, NULL };
	char *text, *line, *save = NULL, *keep;
	size_t at = 0;

	snprintf(out, sizeof(out), "%s/flamegraph.%s", tmp_root, kind);
	text = run_output(argv, out);
	keep = calloc(1, strlen(text) + 1);
	assert_non_null(keep);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strstr(line, ";main;"))
			at += sprintf(keep + at, "%s\n", strstr(line, ";main;") + 1);
	free(text);
	return keep;
}

/* flamegraph --kind: mapped has exactly the two mapping sites' bytes, heap the allocations alone, all both; report
 * ranks the sites by mapped bytes. */
static void test_mapped_flamegraph(void **state)
{
	char dir[256], *lines, *json, *ranked, *table, *arena;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/mapped_flame", tmp_root);
	mt_test__record_stacks(dir, MT_PROGS "/mapped_sites", NULL);
	lines = flame_main_lines(dir, "mapped");
	assert_string_equal(lines, "main;arena;map 45056\nmain;table;map 118784\n");
	free(lines);
	lines = flame_main_lines(dir, "heap");
	assert_string_equal(lines, "main;big 200\nmain;small 200\n");
	free(lines);
	lines = flame_main_lines(dir, "all");
	assert_string_equal(lines, "main;arena;map 45056\nmain;big 200\nmain;small 200\nmain;table;map 118784\n");
	free(lines);
	json = report_json(dir);
	ranked = strstr(json, "\"sites_by_mapped\"");
	assert_non_null(ranked);
	table = strstr(ranked, "\"mapped_bytes\": 118784,");
	arena = strstr(ranked, "\"mapped_bytes\": 45056,");
	assert_non_null(table);
	assert_non_null(arena);
	assert_true(table < arena);	/* the table's site first: the most mapped */
	assert_true(strstr(table, "\"table+") < strstr(table, "\"main+"));
	assert_true(strstr(arena, "\"unmapped_bytes\": 12288,") < strstr(arena, "\"frames\""));
	assert_true(strstr(arena, "\"arena+") < strstr(arena, "\"main+"));
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_in_order),
		cmocka_unit_test(test_one_path_one_hash),
		cmocka_unit_test(test_64_callers_64_hashes),
		cmocka_unit_test(test_children_and_copied_dir),
		cmocka_unit_test(test_pending_uretprobe_repaired),
		cmocka_unit_test(test_unwind_through_missing_frame_pointer),
		cmocka_unit_test(test_all_frame_pointers_complete),
		cmocka_unit_test(test_libc_callers_recovered),
		cmocka_unit_test(test_fork_children_by_stack),
		cmocka_unit_test(test_sizes_first_user_frame),
		cmocka_unit_test(test_mapped_sites),
		cmocka_unit_test(test_mapped_flamegraph),
	};

	return mt_test__main("test_stacks_record", tests, sizeof(tests) / sizeof(tests[0]));
}
