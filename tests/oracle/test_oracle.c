// SPDX-License-Identifier: GPL-2.0-only
/* test_oracle.c — memtrack against liboracle.so on real Debian programs, in one run (joint mode), per process. */
/*
 * Each workload runs as `memtrack record -- CMD` with liboracle.so preloaded into the whole tree (memtrack itself
 * only forwards through it: MT_ORACLE_SKIP_EXE). Both see the same execution; the oracle's own work makes no
 * allocator call, so neither counts it. Per process, the model's inherited, allocations, frees, bytes, discarded
 * at exec, leaked and failed calls must equal the oracle's (docs/REPORT.md, "The oracle", says what differs and
 * why). The test programs with exactly known calls (failed calls, C++ new/delete, a preloaded wrapper) run in
 * natural mode too: the oracle alone in one run, memtrack alone in another, the one process compared.
 */
#include "kernel_test.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model.h"
#include "oracle.h"

#ifndef MT_PROGS
#define MT_PROGS "."
#endif
#ifndef MT_ORACLE_LIB
#define MT_ORACLE_LIB "liboracle.so"
#endif
#define IMAGES_MAX 32
#define PROCS_MAX 256

/* One process as the oracle saw it: its images in order (the vfork or spawn one first, when there is one). */
struct oproc {
	uint32_t pid;
	struct oracle_image pre;	/* PID.vfork or PID.spawn */
	bool has_pre;
	struct oracle_image img[IMAGES_MAX];	/* PID.SEQ by SEQ */
	uint32_t nimg;
};

struct oracle_run {
	struct oproc procs[PROCS_MAX];
	size_t n;
};

/* What both sides say of a process, by the model's rules. */
struct counts {
	uint64_t inherited, inherited_bytes, allocations, allocated_bytes, frees, freed_bytes;
	uint64_t discarded, discarded_bytes, leaked, leaked_bytes, peak_live_bytes, unknown_frees, failed;
};

static const char *const count_names[] = {
	"inherited", "inherited_bytes", "allocations", "allocated_bytes", "frees", "freed_bytes",
	"exec_discarded", "exec_discarded_bytes", "leaked", "leaked_bytes", "peak_live_bytes", "unknown_frees",
	"failed_allocations",
};
#define PEAK_LIVE_BYTES 10	/* its index */
#define UNKNOWN_FREES 11	/* its index */

static struct oproc *oproc_get(struct oracle_run *r, uint32_t pid)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->procs[i].pid == pid)
			return &r->procs[i];
	assert_true(r->n < PROCS_MAX);
	r->procs[r->n].pid = pid;
	return &r->procs[r->n++];
}

static void oracle_read_one(struct oracle_run *r, const char *dir, const char *name)
{
	char path[1024], *dot;
	struct oracle_image img;
	struct oproc *p;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, &img, sizeof(img)), sizeof(img));
	close(fd);
	assert_true(img.magic == ORACLE_MAGIC);
	p = oproc_get(r, img.pid);
	dot = strchr(name, '.');
	if (!strcmp(dot, ".vfork") || !strcmp(dot, ".spawn")) {
		p->pre = img;
		p->has_pre = true;
		return;
	}
	assert_true(img.seq < IMAGES_MAX);
	p->img[img.seq] = img;
	if (img.seq + 1 > p->nimg)
		p->nimg = img.seq + 1;
}

static void oracle_read(struct oracle_run *r, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			oracle_read_one(r, dir, e->d_name);
	closedir(d);
}

/* Every image but the last ended by an exec; the last one's blocks are what the process leaked. */
static struct counts oracle_counts(const struct oproc *p)
{
	const struct oracle_image *im[IMAGES_MAX + 1] = { NULL };
	struct counts c = { 0 };
	uint32_t i, n = 0;

	if (p->has_pre)
		im[n++] = &p->pre;
	for (i = 0; i < p->nimg; i++)
		im[n++] = &p->img[i];
	assert_true(n > 0);
	c.inherited = im[0]->inherited_allocations;
	c.inherited_bytes = im[0]->inherited_bytes;
	for (i = 0; i < n; i++) {
		assert_int_equal(im[i]->magic, ORACLE_MAGIC);	/* no image missing in the sequence */
		assert_int_equal(im[i]->lost, 0);
		c.allocations += im[i]->allocations;
		c.allocated_bytes += im[i]->allocated_bytes;
		c.frees += im[i]->frees;
		c.freed_bytes += im[i]->freed_bytes;
		c.unknown_frees += im[i]->unknown_frees;
		c.failed += im[i]->failed;
		if (im[i]->peak_live_bytes > c.peak_live_bytes)
			c.peak_live_bytes = im[i]->peak_live_bytes;
		if (i + 1 < n) {
			c.discarded += im[i]->live_allocations;
			c.discarded_bytes += im[i]->live_bytes;
		}
	}
	c.leaked = im[n - 1]->live_allocations;
	c.leaked_bytes = im[n - 1]->live_bytes;
	return c;
}

/* The oracle's leaked is all its last image held: memtrack tells its own leaks from the inherited blocks it never
 * freed (inherited_live), so the two add up to it. */
static struct counts model_counts(const struct mt_heap_stats *h)
{
	return (struct counts){
		h->inherited_allocations, h->inherited_bytes, h->allocations, h->allocated_bytes, h->frees,
		h->freed_bytes, h->exec_discarded_allocations, h->exec_discarded_bytes,
		h->leaked_allocations + h->inherited_live_allocations, h->leaked_bytes + h->inherited_live_bytes,
		h->peak_live_bytes, h->unknown_frees, h->failed_allocations,
	};
}

/* Prints each field that differs; the number of them, unknown_frees apart (memtrack's excess in *unknown). */
static int counts_diff(const char *exe, uint32_t pid, const struct counts *o, const struct counts *m,
		       int64_t *unknown, bool concurrent)
{
	const uint64_t *a = (const uint64_t *)o, *b = (const uint64_t *)m;
	size_t i;
	int n = 0;

	for (i = 0; i < sizeof(count_names) / sizeof(count_names[0]); i++) {
		if (a[i] == b[i])
			continue;
		if (concurrent && i == PEAK_LIVE_BYTES) {
			/* threads allocating at once: see "The oracle" in docs/REPORT.md */
			print_message("  pid %" PRIu32 " %s: peak_live_bytes oracle %" PRIu64 " memtrack %" PRIu64
				      " (concurrent threads: not compared)\n", pid, exe, a[i], b[i]);
			continue;
		}
		if (i == UNKNOWN_FREES) {
			*unknown += (int64_t)(b[i] - a[i]);
			print_message("  pid %" PRIu32 " %s: unknown_frees oracle %" PRIu64 " memtrack %" PRIu64 "\n",
				      pid, exe, a[i], b[i]);
			continue;
		}
		print_message("  pid %" PRIu32 " %s: %s oracle %" PRIu64 " memtrack %" PRIu64 "\n", pid, exe,
			      count_names[i], a[i], b[i]);
		n++;
	}
	return n;
}

struct workload {
	const char *name;
	char *argv[12];
	size_t min_procs;	/* the tree it must have made */
	uint64_t threads_ending;	/* threads that end by themselves (glibc frees their tcache struct) */
	const char *preload;	/* preloaded after the oracle: a wrapper of malloc/free and new/delete of its own */
};

/* Threads that allocate at the same time: the order of their calls, and so the peak, is each tool's own. */
static bool workload__concurrent(const struct workload *w)
{
	return w->threads_ending > 0;
}

/* LD_PRELOAD for a run: the oracle (or not), then the workload's own library (or not); unset when neither. */
static void preload_set(const struct workload *w, bool oracle)
{
	char libs[1200];

	snprintf(libs, sizeof(libs), "%s%s%s", oracle ? MT_ORACLE_LIB : "", oracle && w->preload ? ":" : "",
		 w->preload ? w->preload : "");
	if (libs[0])
		setenv("LD_PRELOAD", libs, 1);
	else
		unsetenv("LD_PRELOAD");
}

/* Runs argv (to NAME.out, NAME.err) with the oracle writing to odir when there is one, and the workload's preload;
 * the exit status. */
static int workload_run(const struct workload *w, const char *name, char **argv, const char *odir)
{
	char out[600], err[600], self[4096];
	int rc;

	snprintf(out, sizeof(out), "%s/%s.out", mt_test_root, name);
	snprintf(err, sizeof(err), "%s/%s.err", mt_test_root, name);
	assert_non_null(realpath(MT_BINARY, self));
	if (odir) {
		assert_int_equal(mkdir(odir, 0755), 0);
		setenv("MT_ORACLE_DIR", odir, 1);
		setenv("MT_ORACLE_SKIP_EXE", self, 1);
	}
	preload_set(w, odir != NULL);
	setenv("PYTHONHASHSEED", "0", 1);
	rc = mt_test__run(argv, out, err);
	unsetenv("LD_PRELOAD");
	unsetenv("MT_ORACLE_DIR");
	unsetenv("MT_ORACLE_SKIP_EXE");
	return rc;
}

/* The workload under memtrack (with the oracle preloaded in joint mode): its model. */
static struct mt_model *memtrack_run(const struct workload *w, const char *name, const char *odir)
{
	char dir[512], *argv[20] = { MT_BINARY, "record", "-q", "-o", dir, "--" };
	struct mt_read_status st;
	struct mt_model *m = NULL;
	int i;

	snprintf(dir, sizeof(dir), "%s/%s", mt_test_root, name);
	for (i = 0; w->argv[i]; i++)
		argv[6 + i] = w->argv[i];
	assert_int_equal(workload_run(w, name, argv, odir), 0);
	assert_int_equal(mt_model__load(dir, &m, &st), 0);
	return m;
}

/* Runs the workload under memtrack with the oracle preloaded; the model, and the oracle's files read into *r. */
static struct mt_model *joint_run(const struct workload *w, struct oracle_run *r)
{
	char odir[512];
	struct mt_model *m;

	snprintf(odir, sizeof(odir), "%s/%s.oracle", mt_test_root, w->name);
	m = memtrack_run(w, w->name, odir);
	oracle_read(r, odir);
	return m;
}

/* Every process on both sides, the same counts. */
static void joint_compare(const struct workload *w)
{
	struct oracle_run *r = calloc(1, sizeof(*r));
	struct mt_model *m = joint_run(w, r);
	const struct mt_totals *t = mt_model__totals(m);
	size_t i, n = mt_model__nr_procs(m);
	struct counts o, c;
	int64_t unknown = 0;
	int diffs = 0;

	assert_true(t->complete);
	assert_int_equal(t->dropped_events, 0);
	assert_true(n >= w->min_procs);
	assert_int_equal(r->n, n);
	for (i = 0; i < n; i++) {
		const struct mt_proc *p = mt_model__proc(m, i);
		struct oproc *op = oproc_get(r, p->pid);

		assert_true(op->nimg > 0 || op->has_pre);
		o = oracle_counts(op);
		c = model_counts(&p->heap);
		diffs += counts_diff(p->exe, p->pid, &o, &c, &unknown, workload__concurrent(w));
	}
	print_message("%s: %zu processes, %" PRIu64 " allocations, %" PRIu64 " frees, %" PRIu64 " inherited, %" PRIu64
		      " discarded at exec, %" PRIu64 " leaked, %" PRIu64 " unknown frees, %" PRIu64
		      " internal releases; %d fields differ\n", w->name, n, t->heap.allocations, t->heap.frees,
		      t->heap.inherited_allocations, t->heap.exec_discarded_allocations, t->heap.leaked_allocations,
		      t->heap.unknown_frees, t->heap.internal_releases, diffs);
	assert_int_equal(diffs, 0);
	mt_model__free(m);
	free(r);
	assert_int_equal(unknown, 0);
}

/*
 * Natural mode: the oracle alone in one run, memtrack alone (the workload's own preload only) in another. The
 * workload is one process whose calls do not depend on the run: its counts must be the same.
 */
static void natural_compare(const struct workload *w)
{
	struct oracle_run *r = calloc(1, sizeof(*r));
	char name[256], odir[512];
	struct mt_model *m;
	struct counts o, c;
	int64_t unknown = 0;
	int diffs;

	snprintf(name, sizeof(name), "%s.natural", w->name);
	snprintf(odir, sizeof(odir), "%s/%s.oracle", mt_test_root, name);
	assert_int_equal(workload_run(w, name, (char **)w->argv, odir), 0);
	oracle_read(r, odir);
	assert_int_equal(r->n, 1);
	m = memtrack_run(w, name, NULL);
	assert_int_equal(mt_model__nr_procs(m), 1);
	assert_int_equal(mt_model__totals(m)->dropped_events, 0);
	o = oracle_counts(&r->procs[0]);
	c = model_counts(&mt_model__proc(m, 0)->heap);
	diffs = counts_diff(mt_model__proc(m, 0)->exe, mt_model__proc(m, 0)->pid, &o, &c, &unknown, false);
	print_message("%s: %" PRIu64 " allocations, %" PRIu64 " frees, %" PRIu64 " failed; %d fields differ\n", name,
		      c.allocations, c.frees, c.failed, diffs);
	assert_int_equal(diffs, 0);
	assert_int_equal(unknown, 0);
	mt_model__free(m);
	free(r);
}

/* ---- the workloads ---- */

static char input_path[512], src_path[512], make_dir[512];

/* A text to sort and compress, a C file to compile, a directory of four for make (once, in the scratch dir). */
static int inputs_setup(void **state)
{
	char path[600], text[128];
	static bool done;
	FILE *f;
	int i;

	(void)state;
	if (done)
		return 0;
	done = true;
	snprintf(input_path, sizeof(input_path), "%s/words.txt", mt_test_root);
	f = fopen(input_path, "w");
	if (!f)
		return -1;
	for (i = 0; i < 20000; i++)
		fprintf(f, "line %d %x %s\n", (i * 7919) % 20000, i * 2654435761u, i % 3 ? "alpha" : "omega");
	fclose(f);
	snprintf(src_path, sizeof(src_path), "%s/small.c", mt_test_root);
	mt_test__write_text(src_path, "#include <stdio.h>\nint f(int x) { return x * 2; }\n"
			    "int main(void) { printf(\"%d\\n\", f(21)); return 0; }\n");
	snprintf(make_dir, sizeof(make_dir), "%s/make-src", mt_test_root);	/* not the run's DIR */
	if (mkdir(make_dir, 0755))
		return -1;
	for (i = 1; i <= 4; i++) {
		snprintf(path, sizeof(path), "%s/f%d.c", make_dir, i);
		snprintf(text, sizeof(text), "int f%d(int x) { return x + %d; }\n", i, i);
		mt_test__write_text(path, text);
	}
	snprintf(path, sizeof(path), "%s/Makefile", make_dir);
	mt_test__write_text(path, "all: f1.o f2.o f3.o f4.o\n%.o: %.c\n\tgcc -c $< -o $@\n");
	return 0;
}

static void test_python(void **state)
{
	struct workload w = { "python", { "/usr/bin/python3", "-c",
		"import json\nd = {str(i): list(range(i % 50)) for i in range(20000)}\n"
		"print(len(json.loads(json.dumps(d))))", NULL }, 1 };

	(void)state;
	joint_compare(&w);
}

static void test_perl(void **state)
{
	struct workload w = { "perl", { "/usr/bin/perl", "-e",
		"my %h; $h{$_} = 'x' x ($_ % 100) for 1..20000; my @k = sort keys %h; print scalar(@k), \"\\n\";",
		NULL }, 1 };

	(void)state;
	joint_compare(&w);
}

static void test_sort(void **state)
{
	struct workload w = { "sort", { "/usr/bin/sort", input_path, NULL }, 1 };

	(void)state;
	joint_compare(&w);
}

static void test_gzip(void **state)
{
	struct workload w = { "gzip", { "/usr/bin/gzip", "-c", input_path, NULL }, 1 };

	(void)state;
	joint_compare(&w);
}

/* gcc, cc1 and as: vfork children that exec. */
static void test_gcc(void **state)
{
	char obj[600];
	struct workload w = { "gcc", { "/usr/bin/gcc", "-c", src_path, "-o", obj, NULL }, 3 };

	(void)state;
	snprintf(obj, sizeof(obj), "%s/small.o", mt_test_root);
	joint_compare(&w);
}

/* Subshells (fork without exec), a pipeline (fork and exec), a command substitution. */
static void test_bash_pipeline(void **state)
{
	char script[1200];
	struct workload w = { "bash", { "/bin/bash", "-c", script, NULL }, 6 };

	(void)state;
	snprintf(script, sizeof(script), "(echo b; echo a) | sort | (read x; echo \"$x\"; cat); "
		 "n=$(grep -c alpha '%s'); echo \"$n\"; for i in 1 2 3; do (x=$((i * i)); echo $x) ; done | tac",
		 input_path);
	joint_compare(&w);
}

/* make -j2 on four files: posix_spawn children (a shell each, or gcc at once), and gcc's trees under them. */
static void test_make(void **state)
{
	struct workload w = { "make", { "/usr/bin/make", "-s", "-j2", "-C", make_dir, NULL }, 13 };

	(void)state;
	joint_compare(&w);
}

/* 8 threads x 10,000 malloc/free: each thread's tcache flush at its end is libc's, seen by memtrack only. */
static void test_threads(void **state)
{
	struct workload w = { "threads", { MT_PROGS "/alloc_threads", NULL }, 1, 8 };

	(void)state;
	joint_compare(&w);
}

/* Failed calls: 10 malloc(2^62), 5 overflowing callocs, one failure of each other C entry point (23). */
static const struct workload failed_calls = { "failed", { MT_PROGS "/alloc_fail", "all", NULL }, 1 };

/* C++: 1,000 new[]/delete[] and 500 new/delete; failed news, nothrow and caught (aligned ones among them: a
 * successful aligned new's size differs, docs/REPORT.md says why). */
static const struct workload cxx_pairs = { "cxx_pairs", { MT_PROGS "/cxx_pairs", NULL }, 1 };
static const struct workload cxx_failed = { "cxx_fail", { MT_PROGS "/cxx_fail", NULL }, 1 };
static const struct workload cxx_bad_alloc = { "cxx_bad_alloc", { MT_PROGS "/cxx_bad_alloc", NULL }, 1 };

/* cxx_pairs under an LD_PRELOAD wrapper of malloc/free and new/delete: its new calls malloc, the oracle's. */
static const struct workload wrapped = { "wrapped", { MT_PROGS "/cxx_pairs", NULL }, 1, 0,
					 MT_PROGS "/libwrap_preload_O2.so" };

static void test_failed_joint(void **state)
{
	(void)state;
	joint_compare(&failed_calls);
}

static void test_failed_natural(void **state)
{
	(void)state;
	natural_compare(&failed_calls);
}

static void test_cxx_joint(void **state)
{
	(void)state;
	joint_compare(&cxx_pairs);
	joint_compare(&cxx_failed);
	joint_compare(&cxx_bad_alloc);
}

static void test_cxx_natural(void **state)
{
	(void)state;
	natural_compare(&cxx_pairs);
	natural_compare(&cxx_failed);
	natural_compare(&cxx_bad_alloc);
}

static void test_wrapper_joint(void **state)
{
	(void)state;
	joint_compare(&wrapped);
}

static void test_wrapper_natural(void **state)
{
	(void)state;
	natural_compare(&wrapped);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_python, inputs_setup), cmocka_unit_test_setup(test_perl, inputs_setup),
		cmocka_unit_test_setup(test_sort, inputs_setup), cmocka_unit_test_setup(test_gzip, inputs_setup),
		cmocka_unit_test_setup(test_gcc, inputs_setup), cmocka_unit_test_setup(test_bash_pipeline, inputs_setup),
		cmocka_unit_test_setup(test_make, inputs_setup), cmocka_unit_test(test_threads),
		cmocka_unit_test(test_failed_joint), cmocka_unit_test(test_failed_natural),
		cmocka_unit_test(test_cxx_joint), cmocka_unit_test(test_cxx_natural),
		cmocka_unit_test(test_wrapper_joint), cmocka_unit_test(test_wrapper_natural),
	};

	return mt_test__main("test_oracle", tests, sizeof(tests) / sizeof(tests[0]));
}
