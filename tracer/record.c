/* record.c — `memtrack record`: load BPF, spawn the command held before exec, trace the tree, finish the artifact. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/param.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "log.h"
#include "report.h"
#include "tracer.h"

#define MT_RING_DEFAULT (32u << 20)
#define MT_EXIT_SETUP 2
#define MT_LOAD_HEAP (24u << 20)	/* what libbpf's load of the BPF object mallocs at most, the kernel's BTF twice */
/* Allocation times to the µs: a probe hit costs more than that, so finer digits are noise that zstd cannot shrink
 * (on churn, 1.1 of 3.3 bytes per event). Much coarser ones would blur the order against exec and fork records. */
#define MT_TS_RESOLUTION_DEFAULT 1000u

static void record__usage(FILE *f)
{
	fprintf(f, "usage: memtrack record [-o DIR] [-q] [-v] [--stacks [--stack-bytes N]] [--exit-with-command]\n"
		   "                       [--ring-size MIB] [--precise-time] [--ts-resolution NS] [--syscall-tracepoints]\n"
		   "                       -- PROGRAM [ARGS...]\n"
		   "  -o, --output DIR     write the artifact to DIR (default: memtrack.<pid>)\n"
		   "  -q, --quiet          no summary on stderr when the command ends\n"
		   "  -v, --verbose        more diagnostics (twice: libbpf's too)\n"
		   "  -s, --stacks         record each allocation's call stack, raw, for offline unwinding\n"
		   "      --exit-with-command  stop when PROGRAM exits; descendants still running go on untraced\n"
		   "                       (default: trace them to their end; SIGINT/SIGTERM then stops waiting)\n"
		   "      --stack-bytes N  raw stack bytes copied per new call path (default %u, at most %u)\n"
		   "      --ring-size N    BPF ring buffer of N MiB, a power of two (default: %u)\n"
		   "      --precise-time   time events with the precise clock (~60 ns more per event here), not with\n"
		   "                       the kernel's tick (1/CONFIG_HZ: 4 ms at 250 Hz); the order is exact either way\n"
		   "      --ts-resolution NS  timestamps rounded down to NS nanoseconds (default %u: 1 us, or the tick\n"
		   "                       when that is coarser; 1: exact); coarser is smaller\n"
		   "      --syscall-tracepoints  hook only the memory syscalls (mounts tracefs): other processes\n"
		   "                       pay nothing per syscall, but five links take longer to set up and remove\n",
		MT_STACK_BYTES_DEFAULT, MT_STACK_BYTES_MAX, MT_RING_DEFAULT >> 20, MT_TS_RESOLUTION_DEFAULT);
}

/* A decimal number from min to max (and a power of two when pow2), else the error names the option's range. */
static int number__parse(const char *opt, const char *arg, unsigned long long min, unsigned long long max,
			 bool pow2, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || *out < min || *out > max || (pow2 && (*out & (*out - 1)))) {
		pr_err("--%s takes %s from %llu to %llu, not '%s'\n", opt, pow2 ? "a power of two" : "a number", min,
		       max, arg);
		return -EINVAL;
	}
	return 0;
}

static int record__parse(int argc, char **argv, struct mt_options *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' }, { "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },	    { "ring-size", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },	    { "stacks", no_argument, NULL, 's' },
		{ "stack-bytes", required_argument, NULL, 'b' }, { "exit-with-command", no_argument, NULL, 'x' },
		{ "syscall-tracepoints", no_argument, NULL, 't' }, { "ts-resolution", required_argument, NULL, 'T' },
		{ "precise-time", no_argument, NULL, 'P' }, {},
	};
	unsigned long long n;
	bool stacks = false;
	int c;

	o->ring_bytes = MT_RING_DEFAULT;
	o->stack_bytes = MT_STACK_BYTES_DEFAULT;
	o->ts_resolution = MT_TS_RESOLUTION_DEFAULT;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:qvhs", longopts, NULL)) != -1) {
		switch (c) {
		case 's': stacks = true; break;
		case 'x': o->exit_with_command = true; break;
		case 't': o->syscall_tracepoints = true; break;
		case 'P': o->precise_time = true; break;
		case 'T':
			if (number__parse("ts-resolution", optarg, 1, UINT64_MAX, false, &n))
				return -EINVAL;
			o->ts_resolution = n;
			break;
		case 'b':	/* whole chunks of 512 bytes: BPF copies the stack chunk by chunk */
			if (number__parse("stack-bytes", optarg, 512, MT_STACK_BYTES_MAX, false, &n))
				return -EINVAL;
			o->stack_bytes = n / 512 * 512;
			break;
		case 'o': o->out_dir = optarg; break;
		case 'q': o->quiet = true; break;
		case 'v': mt_log_max = mt_log_max < MT_LOG_DEBUG ? mt_log_max + 1 : mt_log_max; break;
		case 'h': record__usage(stdout); exit(EXIT_SUCCESS);
		case 'r':	/* MiB */
			if (number__parse("ring-size", optarg, 1, 4096, true, &n))
				return -EINVAL;
			o->ring_bytes = n << 20;
			break;
		case ':':
			pr_err("record: option '%s' needs a value\n", argv[optind - 1]);
			record__usage(stderr);
			return -EINVAL;
		default:
			pr_err("record: unknown option '%s'\n", argv[optind - 1]);
			record__usage(stderr);
			return -EINVAL;
		}
	}
	if (!stacks)
		o->stack_bytes = 0;
	if (optind >= argc) {
		pr_err("record needs a command to run\n");
		record__usage(stderr);
		return -EINVAL;
	}
	o->argv = argv + optind;
	return 0;
}

static int session__write(struct mt_writer *w, struct bpf_session *bpf, pid_t pid, char *const *argv)
{
	size_t i, len = sizeof(struct mt_session);
	struct mt_session *s;
	struct timespec ts;
	char *p;
	int err;

	for (i = 0; argv[i]; i++)
		len += strlen(argv[i]) + 1;
	len = (len + 7) & ~(size_t)7;	/* keeps the records after it 8-byte aligned for readers */
	if (len > UINT16_MAX - 7)
		len = UINT16_MAX - 7;
	s = calloc(1, len);
	if (!s)
		return -ENOMEM;
	s->hdr.ts_ns = bpf_session__now(bpf);
	clock_gettime(CLOCK_REALTIME, &ts);
	s->realtime_ns = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	s->hdr.pid = s->hdr.tid = pid;
	s->hdr.type = MT_REC_SESSION;
	s->hdr.size = len;
	s->tracer_pid = getpid();
	p = (char *)(s + 1);
	for (i = 0; argv[i] && p + strlen(argv[i]) + 1 <= (char *)s + len; i++, s->argc++)
		p = stpcpy(p, argv[i]) + 1;
	err = mt_writer__append(w, s, len);
	free(s);
	return err;
}

static int end__write(struct mt_writer *w, struct bpf_session *bpf, const struct consumer *cons, pid_t pid,
		      int status)
{
	struct mt_end e = {};
	int err;

	e.hdr.ts_ns = bpf_session__now(bpf);
	e.hdr.pid = e.hdr.tid = pid;
	e.hdr.type = MT_REC_END;
	e.hdr.size = sizeof(e);
	e.status = status;
	err = bpf_session__drops(bpf, e.drops);
	if (err)
		pr_warn("cannot read the drop counters: %s\n", strerror(-err));
	e.drops[MT_DROP_MALFORMED] += consumer__malformed_records(cons);
	return mt_writer__append(w, &e, sizeof(e));
}

struct record {
	struct mt_options opt;
	struct bpf_session *bpf;
	struct spawn sp;
	struct mt_writer *w;
	struct consumer *cons;
	struct attach *attach;
	struct modules *mods;
	struct metadata *meta;
	struct mt_model *model;	/* of the artifact, kept as it is written */
	int model_err;		/* the first record the model could not take: the end reads the artifact back */
	sigset_t orig_mask;
	int sig_fd;
	int closer;		/* the closer process's socket (closer.c), or -1 */
	bool traced;		/* the loop ran: the command is the tracer's no more */
	char dir[PATH_MAX];
};

/* Nothing is probed yet: allocators are attached as the tree maps them. */
static int record__setup_bpf(struct record *r)
{
	int err = privileges__check();

	if (err)
		return err;
	heap__prefer_huge_pages(MT_LOAD_HEAP);
	r->bpf = bpf_session__open(&r->opt);
	err = r->bpf ? 0 : -errno;
	heap__trim();
	return err;
}

/* Blocked before fork so that no SIGCHLD is missed; the child restores the original mask before exec. */
static int record__signals(struct record *r)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, &r->orig_mask))
		return -errno;
	r->sig_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return r->sig_fd < 0 ? -errno : 0;
}

/* Everything the loop needs, set up while the command waits in its pre-exec stop. */
static int record__prepare(struct record *r)
{
	int err = session__write(r->w, r->bpf, r->sp.pid, r->opt.argv);

	if (!err)
		err = bpf_session__track(r->bpf, r->sp.pid);
	if (err)
		return err;
	r->mods = modules__new(r->dir, r->opt.stack_bytes != 0);
	r->meta = metadata__new();
	if (!r->mods || !r->meta)
		return -ENOMEM;
	r->attach = attach__new(r->bpf, r->w, r->mods, r->closer);
	if (!r->attach)
		return -errno;
	r->cons = consumer__new(r->bpf, r->w, r->attach);
	if (!r->cons)
		return -errno;
	consumer__add_process(r->cons, r->sp.pid);
	return spawn__seize(&r->sp);
}

/* The model follows the writer, so the end needs no read-back of an artifact that may hold billions of events. */
static int record__tap(const struct mt_rec_hdr *rec, void *ctx)
{
	struct record *r = ctx;

	if (!r->model_err)
		r->model_err = mt_model__add(r->model, rec);
	return 0;
}

/*
 * Every live process of the tree holds two links (uprobe fds) of this process per allocator file it maps: a tree of
 * a few hundred processes at once outgrows the usual soft limit of 1024 open files. The command gets its own back.
 */
static void record__raise_fd_limit(struct record *r)
{
	int err = fd_limit__raise(&r->sp.nofile);

	r->sp.restore_nofile = !err;
	if (err && err != -EEXIST)
		pr_warn("cannot raise the open-file limit to %llu: %s\n", (unsigned long long)r->sp.nofile.rlim_max,
			strerror(-err));
}

/*
 * The ring's reader, this thread, needs ~0.4 of a CPU when four threads churn on two: a fair share of that box,
 * which a host's pause or a burst could cut short and fill the ring (one churn_mt run in ten lost ~50,000 events
 * at nice 0). Five steps up it is first in line; the command runs at its own nice value, which it gets back in the
 * pre-exec child. Linux's nice is per thread: threads made later inherit it.
 */
#define RECORD_NICE_BOOST 5

static void record__raise_priority(struct record *r)
{
	int old;

	errno = 0;
	old = getpriority(PRIO_PROCESS, 0);
	if (errno || setpriority(PRIO_PROCESS, 0, old - RECORD_NICE_BOOST))
		return;
	r->sp.nice = old;
	r->sp.restore_nice = true;
}

/* Each failure says what failed, in one line. */
static int record__start(struct record *r)
{
	int err;

	record__raise_fd_limit(r);
	record__raise_priority(r);
	err = spawn__start(&r->sp, r->opt.argv, &r->orig_mask);
	if (err) {
		pr_err("cannot start '%s': %s\n", r->opt.argv[0], strerror(-err));
		return err;
	}
	if (r->opt.out_dir)
		snprintf(r->dir, sizeof(r->dir), "%s", r->opt.out_dir);
	else
		snprintf(r->dir, sizeof(r->dir), "memtrack.%d", r->sp.pid);
	r->w = mt_writer__open(r->dir);
	if (!r->w) {
		err = -errno;
		pr_err("cannot create the artifact in %s: %s\n", r->dir, strerror(-err));
		return err;
	}
	/* The tick's times are whole ticks: stored by the tick, they cost nothing to keep exact. */
	err = mt_writer__set_ts_resolution(r->w, MAX(r->opt.ts_resolution, bpf_session__tick_ns(r->bpf)));
	if (err) {
		pr_err("cannot set the timestamp resolution: %s\n", strerror(-err));
		return err;
	}
	r->model = mt_model__new();
	if (!r->model) {
		err = -errno;
		pr_err("cannot set up the tracing of '%s': %s\n", r->opt.argv[0], strerror(-err));
		return err;
	}
	mt_writer__set_tap(r->w, record__tap, r);
	err = record__prepare(r);
	if (err)
		pr_err("cannot set up the tracing of '%s': %s\n", r->opt.argv[0], strerror(-err));
	return err;
}

static int exit__code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_FAILURE;
}

static int record__finish(struct record *r, int status)
{
	int err, close_err;

	/* The links go to the closer now; without one, their grace periods pass while the artifact is finished and
	 * summed up, and record__cleanup waits. */
	attach__flush(r->attach);
	consumer__finish(r->cons);
	err = end__write(r->w, r->bpf, r->cons, r->sp.pid, status);
	close_err = mt_writer__close(r->w);
	r->w = NULL;
	err = err ? err : close_err;
	close_err = modules__finish(r->mods);
	r->mods = NULL;
	err = err ? err : close_err;
	if (err)
		pr_err("cannot finish the artifact in %s: %s\n", r->dir, strerror(-err));
	return err;
}

static void record__cleanup(struct record *r)
{
	if (r->sp.pid > 0 && !r->traced) {	/* set-up failed: the command must not run untraced */
		kill(r->sp.pid, SIGKILL);
		waitpid(r->sp.pid, NULL, __WALL);
	}
	consumer__free(r->cons);
	if (r->attach)
		attach__flush(r->attach);
	mt_writer__close(r->w);
	modules__finish(r->mods);
	metadata__free(r->meta);
	mt_model__free(r->model);
	/* Its tracepoint links go to the closer like the uprobe links; flushed, attach needs no session. */
	bpf_session__close(r->bpf, r->closer);
	attach__free(r->attach);
	if (r->closer >= 0)
		close(r->closer);	/* the closer closes what it was handed, then exits */
	if (r->sig_fd >= 0)
		close(r->sig_fd);
}

/* First thing, while memtrack is small: the closer keeps what memtrack had when it was forked. An inherited
 * SIG_IGN for SIGCHLD would have the kernel reap memtrack's children behind the ptrace loop's back. */
static void record__start_closer(struct record *r)
{
	signal(SIGCHLD, SIG_DFL);
	r->closer = closer__start();
	if (r->closer < 0)
		pr_debug("no closer process (%s): links close in threads, and memtrack's exit waits for them\n",
			 strerror(-r->closer));
}

/* The model of what was written: the one kept while writing, or, if it could not keep up, the file read back. */
static struct mt_model *record__model(struct record *r)
{
	struct mt_model *m = r->model;
	struct mt_read_status st;
	int err;

	r->model = NULL;
	if (!r->model_err && !mt_model__finish(m))
		return m;
	mt_model__free(m);
	m = NULL;
	err = mt_model__load(r->dir, &m, &st);
	if (err)
		pr_warn("%s: %s\n", r->dir, st.reason);
	return m;
}

/* The summary says exactly what report will, and the metadata agrees. */
static void record__conclude(struct record *r)
{
	struct mt_model *m = record__model(r);
	int err;

	if (!m)
		return;
	err = metadata__write(r->meta, m, r->dir);
	if (err)
		pr_warn("cannot write %s/memory_metadata.json: %s\n", r->dir, strerror(-err));
	if (!r->opt.quiet)
		mt_report__summary(stderr, m, r->dir);
	mt_model__free(m);
}

static int record__trace(struct record *r)
{
	struct trace_loop l = { .sp = &r->sp, .bpf = r->bpf, .cons = r->cons, .attach = r->attach, .meta = r->meta,
				.w = r->w, .sig_fd = r->sig_fd, .exit_with_command = r->opt.exit_with_command,
				.quiet = r->opt.quiet };
	int err = trace_loop__run(&l);

	r->traced = true;
	if (err) {
		pr_err("tracing ended early: %s\n", strerror(-err));
		return MT_EXIT_SETUP;
	}
	if (record__finish(r, l.root_status))
		return MT_EXIT_SETUP;
	if (l.exec_errno) {
		pr_err("cannot run '%s': %s\n", r->opt.argv[0], strerror(l.exec_errno));
		return l.exec_errno == EACCES || l.exec_errno == ENOEXEC ? 126 : 127;
	}
	record__conclude(r);
	return exit__code(l.root_status);
}

int mt_cmd_record(int argc, char **argv)
{
	struct record r = { .sig_fd = -1, .closer = -1 };
	int ret = MT_EXIT_SETUP;

	if (record__parse(argc, argv, &r.opt))
		return MT_EXIT_SETUP;
	record__start_closer(&r);
	if (record__setup_bpf(&r) || record__signals(&r))
		goto cleanup;
	if (record__start(&r))
		goto cleanup;
	ret = record__trace(&r);
cleanup:
	record__cleanup(&r);
	return ret;
}
