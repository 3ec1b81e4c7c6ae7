// SPDX-License-Identifier: GPL-2.0-only
/* test_flame.c — demangled and inlined frames, flame graphs (SVG, collapsed, speedscope, diff, filters), pprof, diff,
 * timeline's filters. */
/*
 * Offline first, on stackprog's captured stacks and on synthetic stacks over its file; then on the real kernel,
 * `record --stacks` of a C++ program (tests/progs/cxx_store.cc). Headless Chromium clicks the SVG; protoc decodes
 * the pprof profile against profile.proto's messages (both Debian packages; under CI=true their absence fails).
 * --pid, --exe, --from and --to of flamegraph and timeline on a fork tree and on a run in phases 200 ms apart.
 */
#include "kernel_test.h"

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "artifact/artifact.h"
#include "cli/commands.h"
#include "cmd_capture.h"
#include "common/elf.h"
#include "report/flamegraph.h"
#include "report/pprof.h"
#include "report/sites.h"
#include "report/speedscope.h"
#include "unwind/module.h"
#include "stacks/stacks.h"

#ifndef MT_STACKS_PROGS
#define MT_STACKS_PROGS "."
#endif
#ifndef MT_SOURCE_DIR
#define MT_SOURCE_DIR "."
#endif
#define STACKPROG MT_STACKS_PROGS "/stackprog_fp"	/* frame pointers everywhere */
#define CXX_STORE MT_PROGS "/cxx_store"
#define GOLDEN_DIR MT_SOURCE_DIR "/tests/golden"
#define NO_STACKS_MSG ": recorded without --stacks: no allocation stacks (record with `memtrack record --stacks`)\n"

static char base[] = "/tmp/memtrack-flame.XXXXXX";	/* the offline tests' scratch directory */

/* ---- helpers ---- */

static char *in_base(char *buf, const char *name)
{
	snprintf(buf, 512, "%s/%s", base, name);
	return buf;
}

/* sh -c cmd; its exit status. */
static int shell(const char *cmd)
{
	char *argv[] = { "/bin/sh", "-c", (char *)cmd, NULL };

	return mt_test__run(argv, NULL, NULL);
}

/* text with every occurrence of from replaced by to, malloc'd. */
static char *replace_all(const char *text, const char *from, const char *to)
{
	size_t n = 0, fl = strlen(from), tl = strlen(to);
	const char *p;
	char *out, *o;

	for (p = text; (p = strstr(p, from)); p += fl)
		n++;
	out = o = malloc(strlen(text) + n * (tl > fl ? tl - fl : 0) + 1);
	assert_non_null(out);
	for (p = text; *p;) {
		if (!strncmp(p, from, fl)) {
			memcpy(o, to, tl);
			o += tl;
			p += fl;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	return out;
}

/* stackprog_fp DIR MODE [MODE2]: stacks captured in-process, as `record --stacks` writes them. */
static void stackprog(char *dir, const char *name, const char *mode, const char *mode2)
{
	char *argv[] = { STACKPROG, in_base(dir, name), (char *)mode, (char *)mode2, NULL };

	assert_int_equal(mt_test__run(argv, "/dev/null", NULL), 0);
}

/* Frame-pointer chains only, whatever DIR/unwind.mtz may say: what the goldens were made from. */
static struct mt_stacks *load_fp(const char *dir)
{
	const struct mt_stacks_opts opts = { .fp_chains = true };
	struct mt_read_status st;
	struct mt_stacks *s;

	assert_int_equal(mt_stacks__load(dir, &opts, &s, &st), 0);
	assert_non_null(s);
	return s;
}

/* ---- synthetic stacks over stackprog_fp's file: a frame is a function's start + 5, as a return address ---- */

#define SYN_BASE 0x555500000000ull

struct synth {
	struct mt_writer *w;
	uint64_t ts;
	struct mt_modules *ms;
	struct mt_module *mod;
};

struct synth_site {
	const char *leaf;	/* called from main */
	uint64_t size;
	uint32_t count;
};

static void synth_put(struct synth *y, void *rec, uint16_t type, size_t size)
{
	struct mt_rec_hdr *h = rec;

	h->ts_ns = ++y->ts;
	h->pid = h->tid = 100;
	h->type = type;
	h->size = size;
	assert_int_equal(mt_writer__append(y->w, rec, size), 0);
}

static uint64_t synth_addr(const struct synth *y, const char *fn)
{
	size_t i;

	for (i = 0; i < y->mod->nsyms; i++)
		if (!strcmp(y->mod->syms[i].name, fn))
			return SYN_BASE + y->mod->syms[i].addr + 5;
	fail_msg("no symbol %s in %s", fn, STACKPROG);
	return 0;
}

/* The file's record and a mapping of its text segment at SYN_BASE. */
static void synth_begin(struct synth *y, const char *dir)
{
	struct mt_session sess = { 0 };
	struct mt_file file = { 0 };
	struct mt_mapping map = { 0 };
	const struct mt_segment *text = NULL;
	struct stat sb;
	size_t i;

	assert_int_equal(stat(STACKPROG, &sb), 0);
	file.dev = sb.st_dev;
	file.ino = sb.st_ino;
	file.build_id_len = mt_elf__file_build_id(STACKPROG, file.build_id, sizeof(file.build_id));
	strcpy(file.path, STACKPROG);
	y->ms = mt_modules__new("/nonexistent");
	assert_int_equal(mt_modules__describe(y->ms, &file), 0);
	y->mod = mt_modules__get(y->ms, file.dev, file.ino);
	assert_int_equal(mt_module__open(y->mod), 0);
	for (i = 0; i < y->mod->nsegs && !text; i++)
		if (y->mod->segs[i].flags & PF_X)
			text = &y->mod->segs[i];
	assert_non_null(text);
	map = (struct mt_mapping){ .start = SYN_BASE + (text->vaddr & ~0xfffull), .pgoff = text->offset & ~0xfffull,
				   .end = SYN_BASE + ((text->vaddr + text->memsz + 0xfff) & ~0xfffull),
				   .dev = file.dev, .ino = file.ino, .prot = 5 };
	y->w = mt_writer__open(dir);
	assert_non_null(y->w);
	synth_put(y, &sess, MT_REC_SESSION, sizeof(sess));
	synth_put(y, &file, MT_REC_FILE, sizeof(file));
	synth_put(y, &map, MT_REC_MAPPING, sizeof(map));
}

/* Site i: stack hash i + 1, [leaf, main], count blocks of size bytes, all leaked at the process's exit. */
static void synth_dir(char *dir, const char *name, const struct synth_site *sites, size_t n)
{
	struct { struct mt_stack s; uint64_t fp[2]; } st = { 0 };
	struct mt_alloc a = { .func = MT_FN_MALLOC };
	struct synth y = { 0 };
	size_t i, k;

	synth_begin(&y, in_base(dir, name));
	for (i = 0; i < n; i++) {
		st.s = (struct mt_stack){ .hash = i + 1, .nfp = 2 };
		st.fp[0] = synth_addr(&y, sites[i].leaf);
		st.fp[1] = synth_addr(&y, "main");
		synth_put(&y, &st, MT_REC_STACK, sizeof(st));
		for (k = 0; k < sites[i].count; k++) {
			a.addr = 0x10000000 + (i << 20) + k * 0x100;
			a.size = sites[i].size;
			a.stack = i + 1;
			synth_put(&y, &a, MT_REC_ALLOC, sizeof(a));
		}
	}
	synth_put(&y, &(struct mt_exit){ 0 }, MT_REC_EXIT, sizeof(struct mt_exit));
	assert_int_equal(mt_writer__close(y.w), 0);
	mt_modules__free(y.ms);
}

/* ---- names ---- */

/* libiberty's demangler: C++, Rust's legacy and v0 manglings; other names are no mangling at all. */
static void test_demangle(void **state)
{
	static const char *const cases[][2] = {
		{ "_ZN3app5Store3addERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEi", "app::Store::add" },
		{ "_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back" },
		{ "_ZN7mycrate5store3add17h0123456789abcdefE", "mycrate::store::add" },
		{ "_RNvNtCs1234_7mycrate5store3add", "mycrate::store::add" },
		{ "_RINvNtCs9ltgdHTiPiY_4core3ptr13drop_in_placeNtCs1234_7mycrate3FooEB8_",
		  "core::ptr::drop_in_place::<mycrate::Foo>" },
	};
	char *d;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		d = mt_symbol__demangle(cases[i][0]);
		assert_non_null(d);
		assert_string_equal(d, cases[i][1]);
		free(d);
	}
	assert_null(mt_symbol__demangle("main"));
	assert_null(mt_symbol__demangle("f20"));
}

/* ---- goldens: collapsed and speedscope of stackprog's chain (3 x 100 bytes through f1 ... f20, one freed) ---- */

/*
 * The source tree's path becomes "SRC"; the C library's frame "LIBC", since its name comes from libc6-dbg when
 * that is installed ("[libc.so.6]" without it).
 */
static char *normalize_collapsed(const char *text)
{
	char *a = replace_all(text, MT_SOURCE_DIR, "SRC"), *b = replace_all(a, "__libc_start_call_main", "LIBC");
	char *c = replace_all(b, "[libc.so.6]", "LIBC");

	free(a);
	free(b);
	return c;
}

/* Each {"name":"<name>"...} object of text becomes to (text is changed in place; to must be no longer). */
static void replace_objects(char *text, const char *name, const char *to)
{
	char *p, *end;

	while ((p = strstr(text, name))) {
		end = strchr(p, '}');
		assert_non_null(end);
		memcpy(p, to, strlen(to));
		memmove(p + strlen(to), end + 1, strlen(end + 1) + 1);
	}
}

static char *normalize_speedscope(const char *text)
{
	char *out = replace_all(text, MT_SOURCE_DIR, "SRC");

	replace_objects(out, "{\"name\":\"__libc_start_call_main\"", "{\"name\":\"LIBC\"}");
	replace_objects(out, "{\"name\":\"[libc.so.6]\"", "{\"name\":\"LIBC\"}");
	return out;
}

static char *stacks_text(struct mt_stacks *s, int which)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	if (which == 0)
		assert_int_equal(mt_flamegraph__collapsed(f, s, MT_FG_BYTES), 0);
	else
		assert_int_equal(mt_speedscope__write(f, s, "chain"), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_golden_collapsed_speedscope(void **state)
{
	struct mt_stacks *s;
	char dir[512], *out, *norm;

	(void)state;
	stackprog(dir, "golden", "chain", NULL);
	s = load_fp(dir);
	out = stacks_text(s, 0);
	norm = normalize_collapsed(out);
	mt_test__check_golden(GOLDEN_DIR, "flame_chain.collapsed", norm, strlen(norm));
	free(norm);
	free(out);
	out = stacks_text(s, 1);
	norm = normalize_speedscope(out);
	mt_test__check_golden(GOLDEN_DIR, "flame_chain.speedscope.json", norm, strlen(norm));
	free(norm);
	free(out);
	mt_stacks__free(s);
}

/* The keys speedscope's file-format-schema.json requires, and the profiles' exact weights. */
static void test_speedscope_schema(void **state)
{
	char dir[512], path[600], cmd[800], *out;
	struct mt_stacks *s;

	(void)state;
	stackprog(dir, "speedscope", "chain", NULL);
	s = load_fp(dir);
	out = stacks_text(s, 1);
	mt_stacks__free(s);
	assert_int_equal(strncmp(out, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\"", 63), 0);
	assert_non_null(strstr(out, ",\"shared\":{\"frames\":[\n{\"name\":"));
	assert_non_null(strstr(out, ",\"activeProfileIndex\":0,"));
	assert_non_null(strstr(out, ",\"exporter\":\"memtrack\","));
	assert_int_equal(mt_test__count(out, "{\"type\":\"sampled\",\"name\":"), 3);
	assert_int_equal(mt_test__count(out, ",\"samples\":[\n["), 3);
	assert_int_equal(mt_test__count(out, ",\"weights\":["), 3);
	assert_non_null(strstr(out, "\"name\":\"bytes\",\"unit\":\"bytes\",\"startValue\":0,\"endValue\":300,"));
	assert_non_null(strstr(out, "\"name\":\"allocations\",\"unit\":\"none\",\"startValue\":0,\"endValue\":3,"));
	assert_non_null(strstr(out, "\"name\":\"leaked bytes\",\"unit\":\"bytes\",\"startValue\":0,\"endValue\":200,"));
	assert_non_null(strstr(out, ",\"weights\":[300]}"));
	if (mt_test__have("python3")) {	/* well-formed JSON too, by a parser of its own */
		mt_test__write_text(in_base(path, "speedscope.json"), out);
		snprintf(cmd, sizeof(cmd), "python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); "
			 "assert len(d[\"profiles\"]) == 3 and len(d[\"shared\"][\"frames\"]) == 23' '%s'", path);
		assert_int_equal(shell(cmd), 0);
	}
	free(out);
}

/* ---- pprof, decoded by protoc against profile.proto's messages ---- */

static const char profile_proto[] =
	"syntax = \"proto3\";\npackage perftools.profiles;\n"
	"message Profile { repeated ValueType sample_type = 1; repeated Sample sample = 2;\n"
	"  repeated Mapping mapping = 3; repeated Location location = 4; repeated Function function = 5;\n"
	"  repeated string string_table = 6; int64 drop_frames = 7; int64 keep_frames = 8; int64 time_nanos = 9;\n"
	"  int64 duration_nanos = 10; ValueType period_type = 11; int64 period = 12; repeated int64 comment = 13;\n"
	"  int64 default_sample_type = 14; }\n"
	"message ValueType { int64 type = 1; int64 unit = 2; }\n"
	"message Sample { repeated uint64 location_id = 1; repeated int64 value = 2; repeated Label label = 3; }\n"
	"message Label { int64 key = 1; int64 str = 2; int64 num = 3; int64 num_unit = 4; }\n"
	"message Mapping { uint64 id = 1; uint64 memory_start = 2; uint64 memory_limit = 3; uint64 file_offset = 4;\n"
	"  int64 filename = 5; int64 build_id = 6; bool has_functions = 7; bool has_filenames = 8;\n"
	"  bool has_line_numbers = 9; bool has_inline_frames = 10; }\n"
	"message Location { uint64 id = 1; uint64 mapping_id = 2; uint64 address = 3; repeated Line line = 4;\n"
	"  bool is_folded = 5; }\n"
	"message Line { uint64 function_id = 1; int64 line = 2; int64 column = 3; }\n"
	"message Function { uint64 id = 1; int64 name = 2; int64 system_name = 3; int64 filename = 4;\n"
	"  int64 start_line = 5; }\n";

/* `protoc --decode` of a gzipped profile, as text. */
static char *pprof_decode(const char *gz)
{
	char proto[512], txt[700], cmd[2200];

	in_base(proto, "profile.proto");
	mt_test__write_text(proto, profile_proto);
	snprintf(txt, sizeof(txt), "%s.txt", gz);
	snprintf(cmd, sizeof(cmd), "gzip -dc '%s' | protoc --proto_path='%s' --decode=perftools.profiles.Profile "
		 "profile.proto > '%s'", gz, base, txt);
	assert_int_equal(shell(cmd), 0);
	return mt_test__read_file(txt);
}

/* The string table entry idx (a pointer into text, up to its closing quote). */
static const char *pb_string(const char *text, long idx, int *len)
{
	const char *p = text;
	long i;

	for (i = 0; (p = strstr(p, "\nstring_table: \"")); i++, p++) {
		if (i == idx) {
			p += strlen("\nstring_table: \"");
			*len = (int)(strchr(p, '"') - p);
			return p;
		}
	}
	fail_msg("no string %ld", idx);
	return NULL;
}

/* "sample_type { type: T unit: U }" number k, by name. */
static void assert_sample_type(const char *text, int k, const char *type, const char *unit)
{
	const char *p = text, *s;
	long t, u;
	int i, len = 0;

	for (i = 0; i <= k; i++) {
		p = strstr(p, "sample_type {\n");
		assert_non_null(p);
		p++;
	}
	assert_int_equal(sscanf(p, "ample_type {\n  type: %ld\n  unit: %ld\n", &t, &u), 2);
	s = pb_string(text, t, &len);
	assert_true(len == (int)strlen(type) && !strncmp(s, type, len));
	s = pb_string(text, u, &len);
	assert_true(len == (int)strlen(unit) && !strncmp(s, unit, len));
}

static void test_pprof_decoded(void **state)
{
	char dir[512], gz[600], *text;
	const char *sample;
	struct mt_stacks *s;
	FILE *f;

	(void)state;
	if (!mt_test__need("protoc", "protobuf-compiler"))
		return;
	stackprog(dir, "pprof", "chain", NULL);
	s = load_fp(dir);
	snprintf(gz, sizeof(gz), "%s/chain.pb.gz", base);
	f = fopen(gz, "wb");
	assert_non_null(f);
	assert_int_equal(mt_pprof__write(f, s, NULL), 0);
	assert_int_equal(fclose(f), 0);
	mt_stacks__free(s);
	text = pprof_decode(gz);
	assert_sample_type(text, 0, "alloc_objects", "count");
	assert_sample_type(text, 1, "alloc_space", "bytes");
	assert_sample_type(text, 2, "inuse_objects", "count");
	assert_sample_type(text, 3, "inuse_space", "bytes");
	assert_int_equal(mt_test__count(text, "\nsample {\n"), 1);
	sample = strstr(text, "\nsample {\n");
	assert_non_null(strstr(sample, "  value: 3\n  value: 300\n  value: 2\n  value: 200\n  label {\n"));
	assert_int_equal(mt_test__count(sample, "  label {\n"), 2);	/* pid and exe */
	assert_int_equal(mt_test__count(sample, "    num: "), 1);
	assert_int_equal(mt_test__count(sample, "  location_id: "), 23);	/* LIBC main run_chain f1 ... f20 */
	assert_int_equal(mt_test__count(text, "\nlocation {\n"), 23);
	assert_int_equal(mt_test__count(text, "\nfunction {\n"), 23);
	assert_non_null(strstr(text, "\nstring_table: \"f20\"\n"));
	assert_non_null(strstr(text, "\nstring_table: \"run_chain\"\n"));
	assert_non_null(strstr(text, "\nstring_table: \"" MT_SOURCE_DIR "/tests/stacks/chain.c\"\n"));
	assert_non_null(strstr(text, "\ndefault_sample_type: 3\n"));	/* alloc_space, the string after "" */
	free(text);
}

/* ---- commands on a recording without stacks: exit 2, one line ---- */

static void assert_no_stacks(const char *dir, int (*cmd)(int, char **), const char *a0, const char *a1,
			     const char *a2, const char *a3)
{
	char expected[700], *err;
	int ret;

	snprintf(expected, sizeof(expected), "memtrack: %s" NO_STACKS_MSG, dir);
	err = mt_test__capture(cmd, 2, &ret, a0, a1, a2, a3, NULL);
	assert_int_equal(ret, 2);
	assert_string_equal(err, expected);
	free(err);
}

static void test_no_stacks_exit_2(void **state)
{
	struct mt_alloc a = { .addr = 0x1000, .size = 10, .func = MT_FN_MALLOC };
	struct mt_session sess = { 0 };
	struct synth y = { 0 };
	char dir[512], *out;
	int ret;

	(void)state;
	y.w = mt_writer__open(in_base(dir, "nostacks"));
	assert_non_null(y.w);
	synth_put(&y, &sess, MT_REC_SESSION, sizeof(sess));
	synth_put(&y, &a, MT_REC_ALLOC, sizeof(a));
	assert_int_equal(mt_writer__close(y.w), 0);
	assert_no_stacks(dir, mt_cmd_flamegraph, "flamegraph", dir, NULL, NULL);
	assert_no_stacks(dir, mt_cmd_flamegraph, "flamegraph", "--collapsed", dir, NULL);
	assert_no_stacks(dir, mt_cmd_flamegraph, "flamegraph", "--format", "speedscope", dir);
	assert_no_stacks(dir, mt_cmd_pprof, "pprof", dir, NULL, NULL);
	assert_no_stacks(dir, mt_cmd_diff, "diff", dir, dir, NULL);
	out = mt_test__capture(mt_cmd_flamegraph, 1, &ret, "flamegraph", dir, NULL);
	assert_string_equal(out, "");	/* no SVG */
	free(out);
}

/* ---- the SVG ---- */

/* One wide site and two below 0.1 px: the two become one "..." frame of main's, at the end of its row. */
static void test_svg_narrow_frames_merged(void **state)
{
	const struct synth_site sites[] = { { "caller_0", 1000000, 1 }, { "caller_1", 10, 1 }, { "caller_2", 20, 1 } };
	char dir[512], *svg;
	int ret;

	(void)state;
	synth_dir(dir, "narrow", sites, 3);
	svg = mt_test__capture(mt_cmd_flamegraph, 1, &ret, "flamegraph", dir, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(svg, "<g class=\"f\" data-x=\"0\" data-w=\"1000030\" data-l=\"1\"><title>main ("));
	assert_non_null(strstr(svg, "<g class=\"f\" data-x=\"0\" data-w=\"1000000\" data-l=\"2\"><title>caller_0 ("));
	assert_non_null(strstr(svg, "<g class=\"f\" data-x=\"1000000\" data-w=\"30\" data-l=\"2\">"
			       "<title>... (2 frames narrower than 0.1 px, 30 bytes, 0.00%)</title>"));
	assert_null(strstr(svg, "<title>caller_1"));
	assert_null(strstr(svg, "<title>caller_2"));
	/* the script and its controls */
	assert_non_null(strstr(svg, "function zoom(z) {"));
	assert_non_null(strstr(svg, "function unzoom() {"));
	assert_non_null(strstr(svg, "function search(term) {"));
	assert_non_null(strstr(svg, "function reset_search() {"));
	assert_non_null(strstr(svg, "<text id=\"unzoom\" class=\"btn hide\""));
	assert_non_null(strstr(svg, "<text id=\"search\" class=\"btn\""));
	assert_non_null(strstr(svg, "<text id=\"matched\""));
	assert_non_null(strstr(svg, ">memtrack: bytes by allocation stack (frame-pointer chains)</text>"));
	free(svg);
}

/* after grew caller_0 by 200 bytes, shrank caller_1 by 50, added caller_2: red, blue, light red, on after's widths. */
static void test_diff_flamegraph(void **state)
{
	const struct synth_site before[] = { { "caller_0", 100, 1 }, { "caller_1", 100, 1 } };
	const struct synth_site after[] = { { "caller_0", 150, 2 }, { "caller_1", 50, 1 }, { "caller_2", 25, 1 } };
	char b[512], a[512], *out;
	int ret;

	(void)state;
	synth_dir(b, "diff_before", before, 2);
	synth_dir(a, "diff_after", after, 3);
	out = mt_test__capture(mt_cmd_flamegraph, 1, &ret, "flamegraph", "--diff", "--collapsed", b, a, NULL);
	assert_int_equal(ret, 0);
	assert_string_equal(out, "main;caller_0 100 300\nmain;caller_1 100 50\nmain;caller_2 0 25\n");
	free(out);
	out = mt_test__capture(mt_cmd_flamegraph, 1, &ret, "flamegraph", "--diff", b, a, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "<title>caller_0 (300 bytes, +200 since before, 80.00%)</title><rect x=\"10.0\" "
				    "y=\"48.0\" width=\"944.0\" height=\"15\" fill=\"rgb(255,0,0)\""));
	assert_non_null(strstr(out, "<title>caller_1 (50 bytes, -50 since before, 13.33%)</title>"));
	assert_non_null(strstr(out, "fill=\"rgb(158,158,255)\""));
	assert_non_null(strstr(out, "<title>caller_2 (25 bytes, +25 since before, 6.67%)</title>"));
	assert_non_null(strstr(out, "fill=\"rgb(255,184,184)\""));
	free(out);
	/* memtrack diff: the same sites, ranked by the change in bytes */
	out = mt_test__capture(mt_cmd_diff, 1, &ret, "diff", "--json", b, a, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "\"bytes_delta\": 175,"));
	assert_non_null(strstr(out, "\"count_delta\": 2,"));
	assert_non_null(strstr(strstr(out, "\"caller_0\""), "\"bytes_delta\": 200,\n      \"count_delta\": 1,\n"
							  "      \"leaked_bytes_delta\": 200,"));
	assert_true(strstr(out, "\"caller_0\"") < strstr(out, "\"caller_1\""));
	assert_true(strstr(out, "\"caller_1\"") < strstr(out, "\"caller_2\""));
	assert_non_null(strstr(strstr(out, "\"caller_2\""), "\"bytes_delta\": 25,"));
	assert_non_null(strstr(strstr(out, "\"caller_2\""), "\"before\": null,"));
	free(out);
}

/* A memory_metadata.json in dir with one label, commit=VALUE. */
static void label_dir(const char *dir, const char *commit)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/memory_metadata.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "{\n  \"root_pid\": 100,\n  \"realtime_ns\": 1,\n  \"labels\": {\"commit\": \"%s\", \"bench\": \"a b\"},\n"
		"  \"processes\": []\n}\n", commit);
	assert_int_equal(fclose(f), 0);
}

/* Issue 36 item 3: diff carries both runs' record --label labels, in its text and its JSON; none without them. */
static void test_diff_labels(void **state)
{
	const struct synth_site sites[] = { { "caller_0", 100, 1 } };
	char b[512], a[512], *out;
	int ret;

	(void)state;
	synth_dir(b, "labels_before", sites, 1);
	synth_dir(a, "labels_after", sites, 1);
	out = mt_test__capture(mt_cmd_diff, 1, &ret, "diff", "--sites", "0", b, a, NULL);
	assert_int_equal(ret, 0);
	assert_true(strstr(out, "before: ") == out && !strchr(out, '['));
	free(out);
	label_dir(b, "0123abc");
	label_dir(a, "4567def");
	out = mt_test__capture(mt_cmd_diff, 1, &ret, "diff", "--sites", "0", b, a, NULL);
	assert_int_equal(ret, 0);
	assert_true(!strncmp(out, "before: ", 8));
	assert_non_null(strstr(out, "/labels_before [commit=0123abc bench=a b]\nafter:  "));
	assert_non_null(strstr(out, "/labels_after [commit=4567def bench=a b]\n\n"));
	free(out);
	out = mt_test__capture(mt_cmd_diff, 1, &ret, "diff", "--json", "--sites", "0", b, a, NULL);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(out, "      \"suppressed_bytes\": 0,\n      \"labels\": {\n        \"commit\": \"0123abc\",\n"
				    "        \"bench\": \"a b\"\n      }\n    },\n    \"after\": {\n"));
	assert_non_null(strstr(out, "      \"suppressed_bytes\": 0,\n      \"labels\": {\n        \"commit\": \"4567def\",\n"
				    "        \"bench\": \"a b\"\n      }\n    },\n    \"count_delta\": 0,\n"));
	free(out);
}

/* ---- headless Chromium: the SVG opened, a frame clicked, the zoom read back from the DOM ---- */

/* After load: a click on run_chain's rectangle, then a search; the result goes into the root's data-test. */
static const char click_script[] =
	"<script><![CDATA[\n"
	"window.addEventListener('load', function () {\n"
	"  var gs = document.getElementsByClassName('f'), i, z = null, r = [];\n"
	"  for (i = 0; i < gs.length; i++) if (gs[i].fname == 'run_chain') z = gs[i];\n"
	"  z.getElementsByTagName('rect')[0].dispatchEvent(new MouseEvent('click', { bubbles: true }));\n"
	"  for (i = 0; i < gs.length; i++)\n"
	"    if (['main', 'run_chain', 'f20', 'callers_run'].indexOf(gs[i].fname) >= 0)\n"
	"      r.push(gs[i].fname + ':' + gs[i].getElementsByTagName('rect')[0].getAttribute('x') + ':' +\n"
	"             gs[i].getElementsByTagName('rect')[0].getAttribute('width') + ':' + gs[i].getAttribute('class'));\n"
	"  r.push('unzoom:' + document.getElementById('unzoom').getAttribute('class'));\n"
	"  search('^caller_');\n"
	"  r.push(document.getElementById('matched').textContent);\n"
	"  document.documentElement.setAttribute('data-test', r.join(' '));\n"
	"});\n"
	"]]></script>\n</svg>\n";

static char *chromium(const char *args, const char *svg)
{
	char cmd[2048], out[600];

	snprintf(out, sizeof(out), "%s/chromium.out", base);
	assert_true(snprintf(cmd, sizeof(cmd), "HOME='%s' timeout 120 chromium --headless --no-sandbox --disable-gpu "
			     "--user-data-dir='%s/chromium' %s 'file://%s' > '%s' 2> /dev/null", base, base, args, svg,
			     out) < (int)sizeof(cmd));
	assert_int_equal(shell(cmd), 0);
	return mt_test__read_file(out);
}

static void test_chromium_click_zooms(void **state)
{
	char dir[512], svg[600], clicked[600], png[600], shot[700], *text, *wrapped, *dom;
	struct stat sb;
	int ret;

	(void)state;
	if (!mt_test__need("chromium", "chromium"))
		return;
	stackprog(dir, "browser", "chain", "callers");
	text = mt_test__capture(mt_cmd_flamegraph, 1, &ret, "flamegraph", dir, NULL);
	assert_int_equal(ret, 0);
	snprintf(svg, sizeof(svg), "%s/flame.svg", base);
	mt_test__write_text(svg, text);
	snprintf(clicked, sizeof(clicked), "%s/clicked.svg", base);
	wrapped = replace_all(text, "</svg>\n", click_script);
	mt_test__write_text(clicked, wrapped);
	dom = chromium("--dump-dom", clicked);
	/* run_chain fills the width, main below it is faded, callers_run beside it hidden, f20 above it full too */
	assert_non_null(strstr(dom, "data-test=\"main:10.0:1180.0:f parent callers_run:10.0:"));
	assert_non_null(strstr(dom, ":f hide run_chain:10.0:1180.0:f f20:10.0:1180.0:f unzoom:btn "
				    "Matched: 87.39%\""));	/* callers: 2080 of 2380 bytes */
	free(dom);
	snprintf(png, sizeof(png), "%s/flame.png", base);
	snprintf(shot, sizeof(shot), "--window-size=1200,500 --screenshot='%s'", png);
	free(chromium(shot, svg));
	assert_int_equal(stat(png, &sb), 0);
	assert_true(sb.st_size > 1000);
	free(wrapped);
	free(text);
}

/* ---- on the real kernel: a C++ program ---- */

static void record_cxx(char *dir, const char *name, const char *n)
{
	char *argv[] = { MT_BINARY, "record", "-q", "--stacks", "-o", dir, "--", CXX_STORE, (char *)n, NULL };

	snprintf(dir, 256, "%s/%s", mt_test_root, name);
	assert_int_equal(mt_test__run(argv, "/dev/null", NULL), 0);
}

/* `memtrack CMD ARGS... > file`, its output (the command must succeed). */
static char *memtrack_out(const char *name, char *const *argv)
{
	char out[512];

	snprintf(out, sizeof(out), "%s/%s.out", mt_test_root, name);
	assert_int_equal(mt_test__run(argv, out, NULL), 0);
	return mt_test__read_file(out);
}

/* Every site's frames: demangled (no _Z), std:: among them, and app::Store::add inlined (into main). */
static void assert_cxx_sites(const struct mt_sites *sites)
{
	bool store_add = false, std = false;
	size_t i, k;

	for (i = 0; i < sites->count; i++) {
		for (k = 0; k < sites->sites[i].nframes; k++) {
			const struct mt_site_frame *fr = mt_site__frame(&sites->sites[i], k);

			if (!strncmp(fr->name, "_Z", 2))
				fail_msg("frame %s is not demangled", fr->name);
			std |= !strncmp(fr->name, "std::", 5);
			if (strcmp(fr->name, "app::Store::add"))
				continue;
			assert_true(fr->inlined);
			assert_non_null(fr->srcline);
			assert_int_equal(strncmp(fr->srcline, "cxx_store.cc:", 13), 0);
			assert_true(k + 1 < sites->sites[i].nframes);
			assert_int_equal(strncmp(mt_site__frame(&sites->sites[i], k + 1)->name, "main+0x", 7), 0);
			store_add = true;
		}
	}
	assert_true(store_add);
	assert_true(std);
}

static void test_cxx_demangled_and_inlined(void **state)
{
	char dir[256], *fg[] = { MT_BINARY, "flamegraph", "--collapsed", dir, NULL }, *out;
	char *raw[] = { MT_BINARY, "flamegraph", "--collapsed", "--no-demangle", dir, NULL };
	char *full[] = { MT_BINARY, "flamegraph", "--collapsed", "--full-names", dir, NULL };
	struct mt_read_status st;
	struct mt_sites *sites;
	struct mt_stacks *s;

	(void)state;
	record_cxx(dir, "cxx", "100");
	assert_int_equal(mt_stacks__load(dir, NULL, &s, &st), 0);
	sites = mt_sites__build(s);
	assert_non_null(sites);
	assert_cxx_sites(sites);
	mt_sites__free(sites);
	mt_stacks__free(s);
	out = memtrack_out("cxx_fg", fg);
	assert_non_null(strstr(out, ";main;app::Store::add;std::map<\u2026>::operator[];"));	/* issue 32 item 4 */
	assert_non_null(strstr(out, ";main;app::Store::add;std::vector<\u2026>::push_back;"));
	assert_null(strstr(out, "std::allocator<int>"));
	assert_null(strstr(out, ";_Z"));
	free(out);
	out = memtrack_out("cxx_fg_full", full);
	assert_non_null(strstr(out, ";main;app::Store::add;std::vector<int, std::allocator<int> >::push_back;"));
	free(out);
	out = memtrack_out("cxx_fg_raw", raw);
	assert_non_null(strstr(out, ";main;_ZN3app5Store3addERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEi;"));
	free(out);
}

/* The same program at 100 and 300 keys: 200 more map nodes of 88 bytes, 200 more 4-byte vector buffers. */
static void test_cxx_diff_two_sizes(void **state)
{
	char before[256], after[256], *argv[] = { MT_BINARY, "diff", "--json", before, after, NULL }, *out;
	const char *site;

	(void)state;
	record_cxx(before, "cxx100", "100");
	record_cxx(after, "cxx300", "300");
	out = memtrack_out("cxx_diff", argv);
	assert_non_null(strstr(out, "\"count_delta\": 400,\n    \"bytes_delta\": 18400,\n"));
	site = strstr(out, "\"sites\": [");
	assert_non_null(site);
	site = strstr(site, "\"name\": \"app::Store::add\",\n          \"srcline\": \"cxx_store.cc:");
	assert_non_null(site);
	assert_non_null(strstr(site, "\"inlined\": true"));
	assert_non_null(strstr(site, "\"bytes_delta\": 17600,\n      \"count_delta\": 200,\n"
				     "      \"leaked_bytes_delta\": 17600,"));
	free(out);
}

/* ---- filters: flamegraph and timeline ---- */

/* alloc_tree recorded with stacks, and the pids of its fork, vfork and posix_spawn children (it prints them). */
static void record_tree(char *dir, const char *name, uint32_t pids[3])
{
	char out[512], *argv[] = { MT_BINARY, "record", "-q", "--stacks", "-o", dir, "--", PROG("alloc_tree"), NULL };
	char *text;

	snprintf(dir, 256, "%s/%s", mt_test_root, name);
	snprintf(out, sizeof(out), "%s/%s.stdout", mt_test_root, name);
	assert_int_equal(mt_test__run(argv, out, NULL), 0);
	text = mt_test__read_file(out);
	assert_non_null(text);
	assert_int_equal(sscanf(text, "fork %u\nvfork %u\nspawn %u\n", &pids[0], &pids[1], &pids[2]), 3);
	free(text);
}

/* The collapsed lines hold one line, ending in tail. */
static void assert_one_line(const char *out, const char *tail)
{
	size_t n = strlen(out), k = strlen(tail);

	assert_non_null(strchr(out, '\n'));
	assert_ptr_equal(strchr(out, '\n'), out + n - 1);
	if (n < k || strcmp(out + n - k, tail))
		fail_msg("expected one line ending in '%s', got '%s'", tail, out);
}

/* The fork child's 5 x 3002 B, the vfork child's 2 x 3005 B before its exec and 7 x 3003 B after, nothing else. */
static void test_flame_filter_pid(void **state)
{
	char dir[256], pid[16], *out;
	char *bytes[] = { MT_BINARY, "flamegraph", "--collapsed", "--pid", pid, dir, NULL };
	char *count[] = { MT_BINARY, "flamegraph", "--collapsed", "--weight", "count", "--pid", pid, dir, NULL };
	char *none[] = { MT_BINARY, "flamegraph", "--collapsed", "--exe", "nonexistent", dir, NULL };
	uint32_t pids[3];

	(void)state;
	record_tree(dir, "tree_flame", pids);
	snprintf(pid, sizeof(pid), "%u", pids[0]);
	out = memtrack_out("tree_fork", bytes);
	assert_one_line(out, ";main;alloc_n 15010\n");
	free(out);
	snprintf(pid, sizeof(pid), "%u", pids[1]);
	out = memtrack_out("tree_vfork", count);
	assert_non_null(strstr(out, ";main 2\n"));
	assert_non_null(strstr(out, ";main;alloc_n 7\n"));
	assert_int_equal(strchr(strchr(out, '\n') + 1, '\n')[1], '\0');	/* those two lines only */
	free(out);
	out = memtrack_out("tree_none", none);
	assert_string_equal(out, "");
	free(out);
}

/* phases recorded with stacks, and its phases' start times (mt_test__phase_times). */
static void record_phases(char *dir, const char *name, char *from, char *to)
{
	char *argv[] = { MT_BINARY, "record", "-q", "--stacks", "-o", dir, "--", PROG("phases"), NULL };

	snprintf(dir, 256, "%s/%s", mt_test_root, name);
	assert_int_equal(mt_test__run(argv, "/dev/null", NULL), 0);
	mt_test__phase_times(dir, from, to, 32);
}

/*
 * Phase 2 alone (10 x 1000 B live at its start; 5 freed, 3 x 3000 B allocated): 9000 B in 3 allocations, nothing
 * leaked (no exit in it), 14000 B held at its end and at its peak. Phase 3 on (2 freed): nothing allocated, 10000 B
 * leaked at the exit, the peak its start's.
 */
static void test_flame_filter_window(void **state)
{
	char dir[256], from[32], to[32], weight[16], *out;
	char *two[] = { MT_BINARY, "flamegraph", "--collapsed", "--weight", weight, "--from", from, "--to", to, dir, NULL };
	char *three[] = { MT_BINARY, "flamegraph", "--collapsed", "--weight", weight, "--from", to, dir, NULL };

	(void)state;
	record_phases(dir, "phases_flame", from, to);
	strcpy(weight, "bytes");
	out = memtrack_out("phase2_bytes", two);
	assert_one_line(out, ";main 9000\n");
	free(out);
	strcpy(weight, "count");
	out = memtrack_out("phase2_count", two);
	assert_one_line(out, ";main 3\n");
	free(out);
	strcpy(weight, "leaked");
	out = memtrack_out("phase2_leaked", two);
	assert_string_equal(out, "");
	free(out);
	strcpy(weight, "live");
	out = memtrack_out("phase2_live", two);
	assert_one_line(out, ";main 14000\n");
	free(out);
	strcpy(weight, "peak");
	out = memtrack_out("phase2_peak", two);
	assert_one_line(out, ";main 14000\n");
	free(out);
	strcpy(weight, "bytes");
	out = memtrack_out("phase3_bytes", three);
	assert_string_equal(out, "");
	free(out);
	strcpy(weight, "leaked");
	out = memtrack_out("phase3_leaked", three);
	assert_one_line(out, ";main 10000\n");
	free(out);
	strcpy(weight, "peak");
	out = memtrack_out("phase3_peak", three);
	assert_one_line(out, ";main 14000\n");
	free(out);
}

/* timeline --pid: the fork child's series alone, 3002 B up and down 5 times, the total the same. */
static void test_timeline_filter_pid(void **state)
{
	char dir[256], pid[16], want[64], *out, *rss;
	char *argv[] = { MT_BINARY, "timeline", "--json", "--pid", pid, dir, NULL };
	uint32_t pids[3];

	(void)state;
	record_tree(dir, "tree_timeline", pids);
	snprintf(pid, sizeof(pid), "%u", pids[0]);
	out = memtrack_out("tree_timeline", argv);
	snprintf(want, sizeof(want), "\"processes\":[{\"pid\":%u,", pids[0]);
	assert_non_null(strstr(out, want));
	rss = strstr(out, "\"rss\":");	/* its own series, of the same process */
	assert_non_null(rss);
	assert_non_null(strstr(rss, want + strlen("\"processes\":[{")));
	*rss = 0;
	assert_null(strstr(strstr(out, want) + strlen(want), "{\"pid\":"));	/* one series */
	assert_null(strstr(out, "\"others\""));
	assert_non_null(strstr(out, "\"total\":[3002,0,3002,0,3002,0,3002,0,3002,0]"));
	assert_non_null(strstr(out, "\"live_bytes\":[3002,0,3002,0,3002,0,3002,0,3002,0]"));
	assert_non_null(strstr(out, "\"bytes\":3002}"));
	free(out);
}

/* timeline --from --to: phase 2's samples only (5 frees, 3 allocations), its peak 14000 B at its end. */
static void test_timeline_filter_window(void **state)
{
	char dir[256], from[32], to[32], *out;
	char *argv[] = { MT_BINARY, "timeline", "--json", "--from", from, "--to", to, dir, NULL };

	(void)state;
	record_phases(dir, "phases_timeline", from, to);
	out = memtrack_out("phases_timeline", argv);
	assert_non_null(strstr(out, "\"total\":[9000,8000,7000,6000,5000,8000,11000,14000]"));
	assert_non_null(strstr(out, "\"bytes\":14000}"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest offline[] = {
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_golden_collapsed_speedscope),
		cmocka_unit_test(test_speedscope_schema),
		cmocka_unit_test(test_pprof_decoded),
		cmocka_unit_test(test_no_stacks_exit_2),
		cmocka_unit_test(test_svg_narrow_frames_merged),
		cmocka_unit_test(test_diff_flamegraph),
		cmocka_unit_test(test_diff_labels),
		cmocka_unit_test(test_chromium_click_zooms),
	};
	const struct CMUnitTest kernel[] = {
		cmocka_unit_test(test_cxx_demangled_and_inlined),
		cmocka_unit_test(test_cxx_diff_two_sizes),
		cmocka_unit_test(test_flame_filter_pid),
		cmocka_unit_test(test_flame_filter_window),
		cmocka_unit_test(test_timeline_filter_pid),
		cmocka_unit_test(test_timeline_filter_window),
	};
	char cmd[128];
	int failed, ret;

	if (!mkdtemp(base))
		return 1;
	failed = cmocka_run_group_tests_name("test_flame offline", offline, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (!getenv("MEMTRACK_KEEP_TEST_DIR") && system(cmd))
		fprintf(stderr, "test_flame: could not remove %s\n", base);
	ret = mt_test__main("test_flame", kernel, sizeof(kernel) / sizeof(kernel[0]));
	return failed ? 1 : ret;
}
