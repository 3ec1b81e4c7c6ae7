// SPDX-License-Identifier: GPL-2.0-only
/* record.c — `memtrack record`: its options, the model kept while the artifact is written, the summary. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/summary.h"
#include "common/args.h"
#include "common/log.h"
#include "report/metadata.h"
#include "report/report.h"
#include "tracer/record.h"

#define MT_RING_DEFAULT (16u << 20)
#define MT_RING_DEFAULT_STACKS (32u << 20)	/* stack records are kilobytes: more room for a burst of new paths */
/* Allocation times to the µs: a probe hit costs more than that, so finer digits are noise that zstd cannot shrink.
 * Much coarser ones would blur the order against exec and fork records. */
#define MT_TS_RESOLUTION_DEFAULT 1000u
static void record__usage(FILE *f)
{
	fprintf(f, "usage: memtrack record [-o DIR] [-q] [-v] [--stacks [--stack-bytes N] [--stack-sample N]]\n"
		   "                       [--exit-with-command] [--ring-size MIB] [--drop-when-full] [--precise-time]\n"
		   "                       [--ts-resolution NS] [--syscall-tracepoints] [--no-handoff] [--user NAME]\n"
		   "                       [--paused] [--strict] [--no-rss] [--label KEY=VALUE...]\n"
		   "                       [--portable] [--fast-cxx] [--python-malloc] -- PROGRAM [ARGS...]\n"
		   "       memtrack record --pid PID [-o DIR] [-q] [-v] [--stacks ...] [the options above but --paused, --user]\n"
		   "  -o, --output DIR     write the artifact to DIR (default: memtrack.<pid>)\n"
		   "  -q, --quiet          no summary on stderr when the command ends\n"
		   "      --pid PID        attach to the running process PID (and its children from then on) instead\n"
		   "                       of running a command; SIGINT or SIGTERM detaches, and PID goes on untraced\n"
		   "  -v, --verbose        more diagnostics (twice: libbpf's too)\n"
		   "  -s, --stacks         record each allocation's call stack, raw, for offline unwinding\n"
		   "      --exit-with-command  stop when PROGRAM exits; descendants still running go on untraced\n"
		   "                       (default: trace them to their end; SIGINT/SIGTERM then stops waiting)\n"
		   "      --stack-bytes N  raw stack bytes copied per new call path (default %u, at most %u)\n"
		   "      --stack-sample N  raw stack bytes (for check-stacks) kept for the first %u new call paths,\n"
		   "                       then one in N (default %u; 1: every one); the others keep their return\n"
		   "                       addresses only, when the in-kernel walk reached the stack's end\n"
		   "      --portable       with --stacks, copy the module files into DIR/modules, so that DIR can be\n"
		   "                       read on another machine (default: kept once in the module cache,\n"
		   "                       $MEMTRACK_CACHE or ~/.cache/memtrack; `memtrack pack DIR` copies them later)\n"
		   "      --ring-size N    BPF ring buffer of N MiB, a power of two (default: %u, %u with --stacks)\n"
		   "      --drop-when-full  let the command run on when the ring is over half full, and count\n"
		   "                       what the full ring drops (default: a thread that allocates then waits\n"
		   "                       until memtrack has read the ring, so that nothing is lost)\n"
		   "      --precise-time   time events with the precise clock (costs more per event), not with the\n"
		   "                       kernel's tick (1/CONFIG_HZ: 4 ms at 250 Hz); the order is exact either way\n"
		   "      --ts-resolution NS  timestamps rounded down to NS nanoseconds (default %u: 1 us, or the tick\n"
		   "                       when that is coarser; 1: exact); coarser is smaller\n"
		   "      --syscall-tracepoints  hook only the memory syscalls and write (mounts tracefs): other\n"
		   "                       processes pay nothing at other syscalls, but six links take longer to\n"
		   "                       set up and remove\n"
		   "      --no-handoff     no seccomp filter on ptrace: a descendant that traces (gdb, strace,\n"
		   "                       sanitizers) fails as under any tracer, but it may install its own\n"
		   "                       seccomp listener (by default it gets EBUSY)\n"
		   "      --user NAME      run PROGRAM as NAME with NAME's groups, and make DIR NAME's (as root;\n"
		   "                       under sudo that is the user who ran sudo, SUDO_UID and SUDO_GID)\n"
		   "      --paused         start with allocation recording off: the command switches it by writing\n"
		   "                       lines to the FIFO named by $MEMTRACK_CONTROL: start, stop, mark LABEL\n"
		   "      --strict         exit %d, after writing the artifact, when any event was dropped or any\n"
		   "                       attach failed\n"
		   "      --no-rss         no resident memory (RSS) records: the kernel's rss_stat tracepoint is not\n"
		   "                       hooked\n"
		   "      --fast-cxx       libstdc++'s and libc++'s operator delete and new[] are not probed: a C++\n"
		   "                       new/delete pair costs what malloc/free does; each delete is recorded as\n"
		   "                       the free it calls, a plain new[] as a new (counts, sizes, peaks and leaks\n"
		   "                       stay exact)\n"
		   "      --python-malloc  PYTHONMALLOC=malloc for the command: CPython's objects come from malloc,\n"
		   "                       each one counted, instead of from pymalloc's arenas (seen only as mmap)\n"
		   "      --label KEY=VALUE  say what the recording is (commit, branch, benchmark, host): kept in\n"
		   "                       DIR and carried into report, pprof, flamegraph and view (repeats, up to\n"
		   "                       %u; KEY: letters, digits, _ . -, up to %u, not pid or exe; VALUE: up to\n"
		   "                       %u printable ASCII characters)\n",
		MT_STACK_BYTES_DEFAULT, MT_STACK_BYTES_MAX, MT_STACK_SAMPLE_FIRST, MT_STACK_SAMPLE_DEFAULT,
		MT_RING_DEFAULT >> 20, MT_RING_DEFAULT_STACKS >> 20,
		MT_TS_RESOLUTION_DEFAULT, MT_EXIT_STRICT, MT_LABELS_MAX, MT_LABEL_KEY_MAX, MT_LABEL_VALUE_MAX);
}

/* --pid: no command, and nothing that only a command memtrack starts can have. */
static int record__parse_pid(int argc, struct mt_options *o, bool python_malloc)
{
	const char *why = NULL;

	if (optind < argc)
		why = "a command";
	else if (python_malloc)
		why = "--python-malloc (a running process keeps the allocator it started with)";
	else if (o->paused)
		why = "--paused (the control FIFO is named in the environment of a command memtrack starts)";
	else if (o->user)
		why = "--user (the process runs as whom it runs)";
	if (why) {
		pr_err("record: --pid excludes %s\n", why);
		return -EINVAL;
	}
	return 0;
}

/* What record's options set; stacks: --stacks was given (the stack bytes and ring defaults follow it). */
struct record_args {
	struct mt_options *o;
	struct mt_labels *labels;	/* --label's */
	bool stacks;
	bool python_malloc;	/* --python-malloc: PYTHONMALLOC=malloc in the command's environment */
};

/* A number option's value into *out; 0 or -EINVAL after one error line. */
static int record__number(int val, const char *arg, struct mt_options *o)
{
	unsigned long long n;

	switch (val) {
	case 'i':
		if (mt_args__number("pid", arg, 1, INT32_MAX, false, &n))
			return -EINVAL;
		o->pid = n;
		return 0;
	case 'T':
		if (mt_args__number("ts-resolution", arg, 1, UINT64_MAX, false, &n))
			return -EINVAL;
		o->ts_resolution = n;
		return 0;
	case 'n':
		if (mt_args__number("stack-sample", arg, 1, UINT32_MAX, false, &n))
			return -EINVAL;
		o->stack_sample = n;
		return 0;
	case 'b':	/* whole chunks: BPF copies the stack chunk by chunk */
		if (mt_args__number("stack-bytes", arg, MT_STACK_CHUNK, MT_STACK_BYTES_MAX, false, &n))
			return -EINVAL;
		o->stack_bytes = n / MT_STACK_CHUNK * MT_STACK_CHUNK;
		return 0;
	default:	/* --ring-size, in MiB */
		if (mt_args__number("ring-size", arg, 1, 4096, true, &n))
			return -EINVAL;
		o->ring_bytes = n << 20;
		return 0;
	}
}

static int record__option(void *ctx, int val, const char *name, const char *arg)
{
	struct record_args *a = ctx;
	struct mt_options *o = a->o;

	(void)name;
	switch (val) {
	case 's': a->stacks = true; return 0;
	case 'x': o->exit_with_command = true; return 0;
	case 't': o->syscall_tracepoints = true; return 0;
	case 'P': o->precise_time = true; return 0;
	case 'H': o->no_handoff = true; return 0;
	case 'u': o->user = arg; return 0;
	case 'p': o->paused = true; return 0;
	case 'S': o->strict = true; return 0;
	case 'D': o->portable = true; return 0;
	case 'R': o->no_rss = true; return 0;
	case 'F': o->fast_cxx = true; return 0;
	case 'W': o->drop_when_full = true; return 0;
	case 'y': a->python_malloc = true; return 0;
	case 'L': return mt_labels__add(a->labels, "record", arg);
	case 'o': o->out_dir = arg; return 0;
	case 'q': o->quiet = true; return 0;
	case 'v': mt_log_max = mt_log_max < MT_LOG_DEBUG ? mt_log_max + 1 : mt_log_max; return 0;
	default: return record__number(val, arg, o);
	}
}

/* 0: go on; 1: --help was printed; -EINVAL: a usage error was reported. */
static int record__parse(int argc, char **argv, struct mt_options *o, struct mt_labels *labels)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' }, { "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },	    { "ring-size", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },	    { "stacks", no_argument, NULL, 's' },
		{ "stack-bytes", required_argument, NULL, 'b' }, { "exit-with-command", no_argument, NULL, 'x' },
		{ "syscall-tracepoints", no_argument, NULL, 't' }, { "ts-resolution", required_argument, NULL, 'T' },
		{ "precise-time", no_argument, NULL, 'P' }, { "no-handoff", no_argument, NULL, 'H' },
		{ "user", required_argument, NULL, 'u' },	    { "paused", no_argument, NULL, 'p' },
		{ "strict", no_argument, NULL, 'S' },	    { "portable", no_argument, NULL, 'D' },
		{ "no-rss", no_argument, NULL, 'R' },	    { "pid", required_argument, NULL, 'i' },
		{ "fast-cxx", no_argument, NULL, 'F' },	    { "stack-sample", required_argument, NULL, 'n' },
		{ "python-malloc", no_argument, NULL, 'y' }, { "label", required_argument, NULL, 'L' },
		{ "drop-when-full", no_argument, NULL, 'W' },
		{},
	};
	struct record_args a = { o, labels, false };
	int ret;

	o->stack_bytes = MT_STACK_BYTES_DEFAULT;
	o->stack_sample = MT_STACK_SAMPLE_DEFAULT;
	o->ts_resolution = MT_TS_RESOLUTION_DEFAULT;
	ret = mt_args__parse_short("record", argc, argv, longopts, "o:qvs", true, record__option, &a, record__usage);
	if (ret)
		return ret;
	if (!a.stacks)
		o->stack_bytes = 0;
	if (!o->ring_bytes)
		o->ring_bytes = a.stacks ? MT_RING_DEFAULT_STACKS : MT_RING_DEFAULT;
	if (o->pid)
		return record__parse_pid(argc, o, a.python_malloc);
	if (optind >= argc) {
		pr_err("record needs a command to run\n");
		record__usage(stderr);
		return -EINVAL;
	}
	o->argv = argv + optind;
	/* the command inherits memtrack's environment, as it does MEMTRACK_CONTROL */
	if (a.python_malloc && setenv("PYTHONMALLOC", "malloc", 1)) {
		pr_err("record: --python-malloc: %s\n", strerror(errno));
		return -EINVAL;
	}
	return 0;
}

struct record_cli {
	struct mt_model *model;	/* of the artifact, kept as it is written */
	int model_err;		/* the first record the model could not take: the end reads the artifact back */
	bool quiet;
	struct mt_labels labels;	/* --label's, for DIR/memory_metadata.json */
	bool holes;		/* the artifact says events were dropped or an attach failed, or cannot be read */
	uint64_t dropped, attach_failed;	/* its counts, for --strict's message */
};

/* The model follows the writer, so the end needs no read-back of an artifact that may hold billions of events. */
static int record__tap(const struct mt_rec_hdr *rec, void *ctx)
{
	struct record_cli *rc = ctx;

	if (!rc->model_err)
		rc->model_err = mt_model__add(rc->model, rec);
	return 0;
}

/* The model of what was written: the one kept while writing, or, if it could not keep up, the file read back. */
static struct mt_model *record__model(struct record_cli *rc, const char *events, const char *dir)
{
	struct mt_model *m = rc->model;
	struct mt_read_status st;
	int err;

	rc->model = NULL;
	if (!rc->model_err && !mt_model__finish(m))
		return m;
	mt_model__free(m);
	m = NULL;
	err = mt_model__load(events, &m, &st);
	if (err)
		pr_warn("%s: %s\n", dir, st.reason);
	return m;
}

static const char *record__cmdline(void *ctx, uint32_t pid, size_t *len)
{
	return mt_cmdlines__get(ctx, pid, len);
}

static const char *record__exec_cmdline(void *ctx, uint32_t pid, size_t k, size_t *len)
{
	return mt_cmdlines__get_exec(ctx, pid, k, len);
}

/* DIR/memory_metadata.json, made through DIR's descriptor (never through what the command put at its name) and the
 * user's. */
static void record__write_metadata(const struct mt_outdir *dir, const struct mt_model *m, const struct mt_cmdlines *md,
				   const struct mt_labels *labels)
{
	struct mt_metadata_src src = { .cmdline = record__cmdline, .ctx = (void *)md,
				       .exec_cmdline = record__exec_cmdline, .labels = labels };
	int fd = mt_outdir__create(dir, dir->fd, MT_METADATA_FILE, 0644);
	int err = fd < 0 ? fd : mt_metadata__write(fd, m, &src);

	if (err == -EEXIST)
		pr_warn("cannot write %s/" MT_METADATA_FILE ": the command put something at that name\n", dir->path);
	else if (err)
		pr_warn("cannot write %s/" MT_METADATA_FILE ": %s\n", dir->path, strerror(-err));
}

/* The summary says exactly what report will, and the metadata agrees. The artifact is read back, when it must be,
 * through the descriptor memtrack made it with. */
static void record__conclude(void *ctx, const struct mt_outdir *dir, int events_fd, const struct mt_cmdlines *md)
{
	struct record_cli *rc = ctx;
	struct mt_model *m;
	char events[64];

	mt_outdir__path(events_fd, events, sizeof(events));
	m = record__model(rc, events, dir->path);

	if (!m) {
		rc->holes = true;
		return;
	}
	rc->dropped = mt_model__totals(m)->dropped_events;
	rc->attach_failed = mt_model__totals(m)->attach_failed;
	rc->holes = rc->dropped || rc->attach_failed;
	record__write_metadata(dir, m, md, &rc->labels);
	if (!rc->quiet)
		mt_summary__write(stderr, m, dir->path);
	mt_model__free(m);
}

int mt_cmd_record(int argc, char **argv)
{
	struct mt_options o = { 0 };
	struct record_cli rc = { 0 };
	struct mt_record_hooks hooks = { .tap = record__tap, .conclude = record__conclude, .ctx = &rc };
	int ret;

	ret = record__parse(argc, argv, &o, &rc.labels);
	rc.quiet = o.quiet;
	rc.model = ret ? NULL : mt_model__new();
	if (ret || !rc.model) {
		if (!ret)
			pr_err("cannot set up the tracing: %s\n", strerror(errno));
		mt_labels__release(&rc.labels);
		return ret > 0 ? EXIT_SUCCESS : MT_EXIT_SETUP;
	}
	ret = mt_record__run(&o, &hooks);
	mt_model__free(rc.model);
	mt_labels__release(&rc.labels);
	if (o.strict && rc.holes && ret != MT_EXIT_SETUP) {
		if (rc.dropped || rc.attach_failed)
			pr_err("--strict: %" PRIu64 " events dropped, %" PRIu64 " attaches failed: exit %d\n",
			       rc.dropped, rc.attach_failed, MT_EXIT_STRICT);
		else
			pr_err("--strict: the artifact cannot be read back to check it: exit %d\n", MT_EXIT_STRICT);
		return MT_EXIT_STRICT;
	}
	return ret;
}
