// SPDX-License-Identifier: GPL-2.0-only
/* record.c — one recording: load BPF, spawn the command held before exec, trace the tree, finish the artifact. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/param.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "artifact/artifact.h"
#include "bpf/memtrack.h"
#include "common/log.h"
#include "tracer/allocators.h"
#include "tracer/attach.h"
#include "tracer/bpf_session.h"
#include "tracer/closer.h"
#include "tracer/cmdlines.h"
#include "tracer/consumer.h"
#include "tracer/control.h"
#include "tracer/handoff.h"
#include "tracer/module_files.h"
#include "tracer/outdir.h"
#include "tracer/privileges.h"
#include "tracer/ptrace_loop.h"
#include "tracer/record.h"
#include "tracer/seize.h"
#include "tracer/spawn.h"
#include "tracer/thp.h"
#include "tracer/user.h"

#define MT_LOAD_HEAP (24u << 20)	/* what libbpf's load of the BPF object mallocs at most, the kernel's BTF twice */

static int session__write(struct mt_writer *w, struct mt_bpf_session *bpf, pid_t pid, char *const *argv)
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
	s->hdr.ts_ns = mt_bpf_session__now(bpf);
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

static int end__write(struct mt_writer *w, struct mt_bpf_session *bpf, const struct mt_consumer *cons,
		      const struct mt_attach_worker *attach, pid_t pid, int status)
{
	struct mt_end e = {};
	int err;

	e.hdr.ts_ns = mt_bpf_session__now(bpf);
	e.hdr.pid = e.hdr.tid = pid;
	e.hdr.type = MT_REC_END;
	e.hdr.size = sizeof(e);
	e.status = status;
	err = mt_bpf_session__drops(bpf, e.drops);
	if (err)
		pr_warn("cannot read the drop counters: %s\n", strerror(-err));
	e.drops[MT_DROP_MALFORMED] += mt_consumer__malformed_records(cons);
	e.drops[MT_DROP_HANDOFF] += mt_attach__late_binds(attach);
	if (mt_bpf_session__pressure_holds(bpf))
		pr_debug("the ring was over half full: threads waited for the reader %" PRIu64 " times\n",
			 mt_bpf_session__pressure_holds(bpf));
	return mt_writer__append(w, &e, sizeof(e));
}

struct record {
	const struct mt_options *o;
	struct mt_bpf_session *bpf;
	struct mt_spawn sp;
	struct mt_writer *w;
	struct mt_consumer *cons;
	struct mt_attach_worker *attach;
	struct mt_handoff *handoff;
	struct mt_closer_notifs *notifs;	/* held ptrace calls, shared with the closer */
	struct mt_module_files *mods;
	struct mt_cmdlines *cmdlines;
	struct mt_control *control;	/* the FIFO of MEMTRACK_CONTROL, or NULL */
	const struct mt_record_hooks *hooks;
	sigset_t orig_mask;
	int sig_fd;
	int closer;		/* the closer process's socket (closer.c), or -1 */
	pid_t closer_middle;	/* the child that forks the closer, until record__closer_started reaps it; or 0 */
	bool traced;		/* the loop ran: the command is the tracer's no more */
	char **argv;		/* the command's; with --pid, the process's command line (owned) */
	bool seized;		/* --pid: threads of the process may be memtrack's tracees */
	struct mt_user user;	/* whom the command runs as and DIR belongs to (sudo's user, --user), if set */
	struct mt_outdir out;	/* DIR, opened safely (outdir.c): all that is made in it goes by its fd, not by path */
	int events_fd;		/* DIR/events.mtz as memtrack made it: read back by the conclusion, or discarded */
	bool discard;		/* the command never ran (set-up failed, exec failed): what memtrack made in DIR goes */
	uint64_t t0;		/* CLOCK_MONOTONIC at the start, for -vv's times of the start-up and tear-down */
};

/* -vv: how long since the start each step of the start-up and tear-down took (bench/README.md, "Start-up"). */
static void record__phase(const struct record *r, const char *what)
{
	pr_debug("start-up: %s at %.1f ms\n", what, (mt_bpf_session__monotonic_ns() - r->t0) / 1e6);
}

/* Whom DIR and the artifact are given to: the one sudo was run by, or --user's, else memtrack's own. */
static void record__owner(const struct record *r, uid_t *uid, gid_t *gid)
{
	*uid = r->user.set ? r->user.uid : getuid();
	*gid = r->user.set ? r->user.gid : getgid();
}

/*
 * The tests' seams for a window (tests/test_boundary.c): with MEMTRACK_TEST_ATTACH_STOP set, memtrack stops itself
 * just before the seize (a process that exits during the attach), with MEMTRACK_TEST_LOAD_STOP just before the BPF
 * load (a signal during the load), until its parent continues it, which makes the window as wide as the test needs.
 * It only delays: it names no file and touches no other process, and secure_getenv ignores it in a memtrack that runs
 * setuid or with file capabilities.
 */
static void record__test_stop(const char *name)
{
	const char *v = secure_getenv(name);

	if (v && *v)
		raise(SIGSTOP);
}

/*
 * Nothing is probed yet: allocators are attached as the tree maps them. The command, forked already, sets itself up
 * meanwhile. The signals that would end memtrack still do during the load, as they did before the fork (it holds
 * nothing yet, and the held child dies with it); SIGCHLD alone stays blocked, for the signalfd.
 */
static int record__setup_bpf(struct record *r)
{
	sigset_t loading = r->orig_mask, blocked;
	uid_t uid;
	gid_t gid;
	int err;

	sigaddset(&loading, SIGCHLD);
	sigprocmask(SIG_SETMASK, &loading, &blocked);
	record__test_stop("MEMTRACK_TEST_LOAD_STOP");
	mt_thp__prefer(MT_LOAD_HEAP);
	record__owner(r, &uid, &gid);
	r->bpf = mt_bpf_session__open(r->o, uid, gid, r->closer);
	err = r->bpf ? 0 : -errno;
	sigprocmask(SIG_SETMASK, &blocked, NULL);
	record__phase(r, "BPF loaded and attached");
	/* A hold may be a SIGSTOP (when no ignored signal is free) only if the closer will SIGCONT what is left */
	if (!err && r->closer >= 0 && !mt_closer__keep_held(r->closer, mt_bpf_session__held_fd(r->bpf)))
		mt_bpf_session__allow_stop_hold(r->bpf);
	mt_thp__trim();
	return err;
}

/*
 * Blocked before fork so that no SIGCHLD is missed; the child restores the original mask before exec. Every signal
 * whose default would end memtrack and that is no fault of its own is read here too: such a death would leave the
 * artifact unfinished and the command untraced, while the loop passes them on to the command as it does SIGTERM
 * (during the BPF load they still end memtrack, which holds nothing yet: record__setup_bpf). Faults
 * (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTRAP) stay fatal.
 */
static int record__signals(struct record *r)
{
	static const int fatal[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM,
				     SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSTKFLT };
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		sigaddset(&set, fatal[i]);
	if (sigprocmask(SIG_BLOCK, &set, &r->orig_mask))
		return -errno;
	r->sig_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return r->sig_fd < 0 ? -errno : 0;
}

/*
 * record --pid: every thread seized, then its files probed, then "attached": the process's allocator calls count
 * from then on. Tracked before it is seized, a child it forks meanwhile is still recorded (untraced: handoff.c).
 */
static int record__seize(struct record *r)
{
	struct mt_seized s = { .hdr = { .pid = r->sp.pid, .tid = r->sp.pid, .type = MT_REC_SEIZED,
					.size = sizeof(s) } };
	int err;

	record__test_stop("MEMTRACK_TEST_ATTACH_STOP");
	r->seized = true;
	mt_seize__describe(r->sp.pid, &s);
	err = mt_seize__threads(r->sp.pid, &s.threads);
	s.hdr.ts_ns = mt_bpf_session__now(r->bpf);
	if (!err)
		err = mt_writer__append(r->w, &s, sizeof(s));
	if (!err)
		err = mt_attach__seized(r->attach, r->sp.pid);
	if (err)
		return err;
	/* said at the warning level, -q or not: the user (or a script) waits for it to start the work to record */
	pr_warn("attached to %d (%u %s): recording; SIGINT or SIGTERM detaches\n", r->sp.pid, s.threads,
		s.threads == 1 ? "thread" : "threads");
	return 0;
}

/* record --pid: tracked from now on; a process privileged now (a setuid program's) has its stacks withheld. Checked
 * after it is tracked: an exec from here on decides in BPF, and a stale answer here only withholds. */
static int record__track_running(struct record *r)
{
	int err = mt_bpf_session__track_running(r->bpf, r->sp.pid);
	uid_t uid;
	gid_t gid;

	record__owner(r, &uid, &gid);
	if (!err && r->o->stack_bytes && uid && mt_seize__privileged(r->sp.pid, uid, gid))
		err = mt_bpf_session__set_privileged(r->bpf, r->sp.pid);
	return err;
}

/* Everything the loop needs, set up while the command waits in its pre-exec stop (with --pid: before the seize). */
static int record__prepare(struct record *r)
{
	int err = session__write(r->w, r->bpf, r->sp.pid, r->argv);

	record__phase(r, "session record");
	if (!err)
		err = r->o->pid ? record__track_running(r) : mt_bpf_session__track(r->bpf, r->sp.pid);
	if (err)
		return err;
	mt_allocators__mark_cxx_news(r->o->stack_bytes != 0);
	mt_allocators__fast_cxx(r->o->fast_cxx);
	r->mods = mt_module_files__new(&r->out, !r->o->stack_bytes ? MT_MODULES_NONE :
					r->o->portable ? MT_MODULES_DIR : MT_MODULES_CACHE, &r->user);
	r->cmdlines = mt_cmdlines__new();
	if (!r->mods || !r->cmdlines)
		return -ENOMEM;
	r->attach = mt_attach__new(r->bpf, r->w, r->mods, r->closer);
	if (!r->attach)
		return -errno;
	r->cons = mt_consumer__new(r->bpf, r->w, r->attach);
	if (!r->cons)
		return -errno;
	mt_consumer__set_paused(r->cons, r->o->paused);
	mt_consumer__add_process(r->cons, r->sp.pid);
	r->handoff = mt_handoff__new(r->sp.listener, r->sp.pid, r->attach, r->cons, r->notifs);
	if (!r->handoff)
		return -errno;
	return r->o->pid ? record__seize(r) : mt_spawn__seize(&r->sp);
}

/*
 * Every live process of the tree holds two links (uprobe fds) of this process per allocator file it maps: a tree of
 * a few hundred processes at once outgrows the usual soft limit of 1024 open files. The command gets its own back.
 */
static void record__raise_fd_limit(struct record *r)
{
	int err = mt_closer__raise_fd_limit(&r->sp.nofile);

	r->sp.restore_nofile = !err;
	if (err && err != -EEXIST)
		pr_warn("cannot raise the open-file limit to %llu: %s\n", (unsigned long long)r->sp.nofile.rlim_max,
			strerror(-err));
}

/*
 * The ring's reader, this thread, needs close to its fair share of the CPUs when more threads churn than there are
 * CPUs, which a host's pause or a burst could cut short and fill the ring (at nice 0 some churn_mt runs lost
 * events: bench/README.md). Five steps up it is first in line among normal threads; the command runs at its own
 * nice value, which it gets back in the pre-exec child. Linux's nice is per thread: threads made later inherit it.
 * Against many runnable threads that is not enough (bench/README.md): where permitted this thread also takes the
 * lowest real-time priority. It sleeps in epoll while the ring is empty, so it takes only the CPU it needs, and
 * SCHED_RESET_ON_FORK gives the command and memtrack's other threads the normal policy back.
 */
#define RECORD_NICE_BOOST 5

static void record__raise_priority(struct record *r)
{
	struct sched_param rt = { .sched_priority = 1 };
	int old;

	errno = 0;
	old = getpriority(PRIO_PROCESS, 0);
	if (!errno && !setpriority(PRIO_PROCESS, 0, old - RECORD_NICE_BOOST)) {
		r->sp.nice = old;
		r->sp.restore_nice = true;
	}
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &rt))
		pr_debug("the reader stays at a normal priority (SCHED_FIFO: %s)\n", strerror(errno));
}

/*
 * The closer keeps a copy of the hand-off's listener, to let the tree's ptrace calls run once memtrack is gone.
 * Without one, descendants that use ptrace fail as they do under any tracer: say why, once.
 */
static void record__keep_listener(struct record *r)
{
	int err = r->sp.listener_errno;

	if (r->sp.listener >= 0 && r->closer >= 0 && (err = -mt_closer__keep_listener(r->closer, r->sp.listener)))
		pr_warn("the closer cannot keep the hand-off's listener (%s): once memtrack is gone, ptrace calls of the "
			"tree fail with ENOSYS\n", strerror(err));
	if (r->sp.listener >= 0 || !r->sp.handoff)
		return;
	if (err == EACCES)
		pr_info("no ptrace hand-off without CAP_SYS_ADMIN: descendants that use ptrace (debuggers, strace, "
			"sanitizers) fail as under any tracer\n");
	else
		pr_warn("no ptrace hand-off (its seccomp filter: %s%s): descendants that use ptrace (debuggers, strace, "
			"sanitizers) fail as under any tracer; --no-handoff says it is meant\n", strerror(err),
			err == EBUSY ? ", another seccomp listener is set above memtrack" : "");
}

/* DIR is the user's (record__owner). */
static int record__open_dir(struct record *r, const char *path)
{
	uid_t uid;
	gid_t gid;

	record__owner(r, &uid, &gid);
	return mt_outdir__open(&r->out, path, uid, gid, r->user.set);
}

/*
 * The control FIFO, the user's, named in the command's environment (it inherits memtrack's). Without one the
 * command runs all the same, unless it is to start paused: then nothing could ever start the recording.
 */
static int record__open_control(struct record *r)
{
	uid_t uid;
	gid_t gid;
	int err;

	record__owner(r, &uid, &gid);
	r->control = mt_control__new(uid, gid);
	err = r->control ? mt_control__start(r->control) : -errno;
	if (!err && setenv(MT_CONTROL_ENV, mt_control__path(r->control), 1))
		err = -errno;
	if (err) {
		mt_control__free(r->control);
		r->control = NULL;
		if (r->o->paused) {
			pr_err("cannot make the control FIFO for --paused: %s\n", strerror(-err));
			return err;
		}
		pr_warn("cannot make the control FIFO: %s; " MT_CONTROL_ENV " is not set\n", strerror(-err));
		unsetenv(MT_CONTROL_ENV);
		return 0;
	}
	if (r->closer >= 0 && (err = mt_closer__keep_control(r->closer, mt_control__dir_fd(r->control))))
		pr_debug("the closer cannot keep the control directory (%s): a killed run leaves it\n", strerror(-err));
	return 0;
}

/* BPF learns the FIFO once it is loaded. */
static void record__tell_control(struct record *r)
{
	uint64_t dev, ino;

	if (!r->control)
		return;
	mt_control__file(r->control, &dev, &ino);
	mt_bpf_session__set_control(r->bpf, dev, ino, r->o->paused);
}

/* The command forked, to be held before exec, as the user, with the hand-off's filter unless told not to. */
static int record__fork(struct record *r)
{
	int err;

	r->sp.handoff = !r->o->no_handoff;
	r->sp.user = &r->user;
	err = mt_spawn__fork(&r->sp, r->o->argv, &r->orig_mask);
	if (err)
		pr_err("cannot start '%s': %s\n", r->o->argv[0], strerror(-err));
	return err;
}

/* The forked command at its stop before exec. */
static int record__spawn(struct record *r)
{
	char why[256];
	int err = mt_spawn__held(&r->sp);

	if (err == -ECANCELED) {
		mt_spawn__describe(r->sp.fail_step, r->sp.fail_errno, why, sizeof(why));
		pr_err("cannot trace '%s': %s\n", r->o->argv[0], why);
	} else if (err) {
		pr_err("cannot start '%s': %s\n", r->o->argv[0], strerror(-err));
	}
	if (!err)
		record__keep_listener(r);
	record__phase(r, "command held before its exec");
	return err;
}

/* What the messages call the command: its argv[0], or with --pid the process. */
static const char *record__name(const struct record *r)
{
	static char name[32];

	if (!r->o->pid)
		return r->o->argv[0];
	snprintf(name, sizeof(name), "process %d", r->o->pid);
	return name;
}

/* --pid, before the BPF load: a process that is not there, or not one, is said at once. */
static int record__check_pid(const struct record *r)
{
	int err = mt_seize__check(r->o->pid);

	if (err == -ESRCH)
		pr_err("cannot attach to %d: no such process\n", r->o->pid);
	else if (err == -EINVAL)
		pr_err("cannot attach to %d: a thread, not a process (its process id is the one to give)\n",
		       r->o->pid);
	else if (err == -ENOEXEC)
		pr_err("cannot attach to %d: a kernel thread, which has no allocator to probe\n", r->o->pid);
	else if (err == -EBUSY)
		pr_err("cannot attach to %d: another tracer has it (a debugger, strace, another memtrack)\n", r->o->pid);
	else if (err == -EOWNERDEAD)
		pr_err("cannot attach to %d: process %d is a zombie (it exited; its parent has not reaped it)\n",
		       r->o->pid, r->o->pid);
	else if (err)
		pr_err("cannot attach to %d: %s\n", r->o->pid, strerror(-err));
	return err;
}

/* --pid: nothing to spawn; the session names the process's command line. Its environment is its own: no FIFO. */
static int record__target(struct record *r)
{
	r->sp.pid = r->o->pid;
	r->argv = mt_seize__cmdline(r->o->pid);
	return r->argv ? 0 : -errno;
}

/* The artifact, made in DIR by its descriptor, the user's; a second descriptor reads it back at the end. */
static int record__open_writer(struct record *r)
{
	/* stack bytes may hold what the program read: the artifact is then the user's alone */
	int fd = mt_outdir__create(&r->out, r->out.fd, MT_ARTIFACT_FILE, r->o->stack_bytes ? 0600 : 0644), err;

	if (fd >= 0) {
		r->events_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		r->w = r->events_fd >= 0 ? mt_writer__open_fd(fd) : NULL;
	}
	if (!r->w) {
		err = fd < 0 ? fd : -errno;
		if (fd >= 0) {
			mt_outdir__unlink_own(r->out.fd, MT_ARTIFACT_FILE, fd, false);
			close(fd);
		}
		pr_err("cannot create the artifact in %s: %s\n", r->out.path, strerror(-err));
		return err;
	}
	/* The tick's times are whole ticks: stored by the tick, they cost nothing to keep exact. */
	err = mt_writer__set_ts_resolution(r->w, MAX(r->o->ts_resolution, mt_bpf_session__tick_ns(r->bpf)));
	if (err) {
		pr_err("cannot set the timestamp resolution: %s\n", strerror(-err));
		return err;
	}
	if (r->hooks->tap)
		mt_writer__set_tap(r->w, r->hooks->tap, r->hooks->ctx);
	return 0;
}

/*
 * Before the BPF load: what the command inherits, then its fork, so that it sets itself up (its filter, its user)
 * during the load. Each failure says what failed, in one line. -o DIR comes first: a DIR that cannot be used stops
 * the run before the command can do anything.
 */
static int record__start_early(struct record *r)
{
	int err = mt_privileges__check();

	if (!err)
		err = record__signals(r);
	if (err)
		return err;
	record__raise_fd_limit(r);
	if (r->o->out_dir)
		err = record__open_dir(r, r->o->out_dir);
	if (!err && !r->o->pid)
		err = record__open_control(r);
	if (!err && !r->o->pid)
		err = record__fork(r);
	return err;
}

/* After the BPF load: the command at its stop before exec; the default DIR is named by its pid. The tracer's priority
 * is raised after the fork: the command has its own. */
static int record__start(struct record *r)
{
	char name[32];
	int err;

	record__raise_priority(r);
	if (!r->o->pid)
		record__tell_control(r);
	err = r->o->pid ? record__target(r) : record__spawn(r);
	if (!err && !r->o->out_dir) {
		snprintf(name, sizeof(name), "memtrack.%d", r->sp.pid);
		err = record__open_dir(r, name);
	}
	if (!err)
		err = record__open_writer(r);
	if (err)
		return err;
	err = record__prepare(r);
	if (err && r->o->pid && (mt_seize__check(r->o->pid) == -ESRCH || mt_seize__check(r->o->pid) == -EOWNERDEAD))
		pr_err("cannot attach to %d: process %d exited\n", r->o->pid, r->o->pid);	/* during the attach */
	else if (err)
		pr_err("cannot set up the tracing of '%s': %s\n", record__name(r), strerror(-err));
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

/* Lines the command wrote to the control FIFO that switched nothing would otherwise leave no trace. */
static void record__say_control_ignored(const struct record *r)
{
	uint64_t n = r->control ? mt_bpf_session__control_ignored(r->bpf) : 0;

	if (n)
		pr_warn("%" PRIu64 " line%s written to $%s %s not acted on: not `start`, `stop` or `mark LABEL`, in a "
			"write over %d bytes, or past the first %d lines of one write\n", n, n == 1 ? "" : "s", MT_CONTROL_ENV, n == 1 ? "was" : "were", MT_CONTROL_WRITE_MAX,
			MT_CONTROL_LINES);
}

static int record__finish(struct record *r, int status)
{
	int err, close_err;

	/* The last drain first: the attach requests it reads are logged by the flush, which gives up the links. They go
	 * to the closer now; without one, their grace periods pass while the artifact is finished and summed up, and
	 * record__cleanup waits. */
	mt_consumer__finish(r->cons);
	mt_attach__flush(r->attach);
	record__say_control_ignored(r);
	err = end__write(r->w, r->bpf, r->cons, r->attach, r->sp.pid, status);
	record__phase(r, "end record");
	close_err = mt_writer__close(r->w);
	r->w = NULL;
	err = err ? err : close_err;
	close_err = mt_module_files__finish(r->mods);
	r->mods = NULL;
	err = err ? err : close_err;
	record__phase(r, "artifact closed");
	if (err)
		pr_err("cannot finish the artifact in %s: %s\n", r->out.path, strerror(-err));
	return err;
}

/* Without a closer, a process of its own lets the tree's ptrace calls run once memtrack is gone. */
static void record__leave_listener(struct record *r)
{
	int err;

	if (r->sp.listener < 0)
		return;
	if (r->closer < 0 && r->traced && (err = mt_closer__leave_listener(r->sp.listener, r->notifs)))
		pr_warn("nothing keeps the hand-off's listener (%s): once memtrack is gone, ptrace calls of the tree "
			"fail with ENOSYS\n", strerror(-err));
	close(r->sp.listener);
	r->sp.listener = -1;
}

/*
 * Last: the writer, the metadata and the module copies are done, each given to the user as it was made. When the
 * command never ran, the artifact memtrack made goes, and DIR too if memtrack made it and nothing else is in it:
 * the retry is not blocked. Nothing memtrack did not make is touched.
 */
static void record__close_dir(struct record *r)
{
	if (r->discard && r->events_fd >= 0)
		mt_outdir__unlink_own(r->out.fd, MT_ARTIFACT_FILE, r->events_fd, false);
	if (r->discard && r->out.made)
		mt_outdir__remove(&r->out);
	if (r->events_fd >= 0)
		close(r->events_fd);
	r->events_fd = -1;
	mt_outdir__close(&r->out);
}

/* The run goes on without a closer (err: why): said with -vv. */
static void record__no_closer(struct record *r, int err)
{
	r->closer = -1;
	pr_debug("no closer process (%s): links close in threads, and memtrack's exit waits for them\n",
		 strerror(-err));
}

/* First thing, while memtrack is small: the closer keeps what memtrack had when it was forked. An inherited
 * SIG_IGN for SIGCHLD would have the kernel reap memtrack's children behind the ptrace loop's back. */
static void record__start_closer(struct record *r)
{
	signal(SIGCHLD, SIG_DFL);
	r->notifs = mt_closer__notifs_new();
	r->closer = mt_closer__start(r->notifs, &r->closer_middle);
	if (r->closer < 0)
		record__no_closer(r, r->closer);
}

/* The closer's middle child reaped, after the early set-up ran beside it and before the BPF load (which gives the
 * closer the warm start's lock) and any wait for any child. Without a closer after all, the run goes on as one
 * that never had it: the control directory it was sent is removed by memtrack's own end. */
static void record__closer_started(struct record *r)
{
	int err;

	if (r->closer_middle <= 0)
		return;
	err = mt_closer__started(r->closer, r->closer_middle);
	r->closer_middle = 0;
	if (err)
		record__no_closer(r, err);
}

static void record__cleanup(struct record *r)
{
	record__closer_started(r);
	r->discard = r->discard || !r->traced;
	if (r->sp.pid > 0 && !r->traced && !r->o->pid) {	/* set-up failed: the command must not run untraced */
		kill(r->sp.pid, SIGKILL);
		waitpid(r->sp.pid, NULL, __WALL);
	}
	if (r->seized && !r->traced)	/* --pid: the process goes on as it was */
		mt_seize__detach_all(r->bpf);
	mt_consumer__free(r->cons);
	mt_handoff__free(r->handoff);
	record__leave_listener(r);
	if (r->attach)
		mt_attach__flush(r->attach);
	mt_writer__close(r->w);
	mt_module_files__finish(r->mods);
	mt_cmdlines__free(r->cmdlines);
	mt_control__free(r->control);
	/* Its tracepoint links go to the closer like the uprobe links; flushed, attach needs no session. */
	mt_bpf_session__close(r->bpf, r->closer);
	mt_attach__free(r->attach);
	if (r->closer >= 0)
		close(r->closer);	/* the closer closes what it was handed, then exits */
	if (r->sig_fd >= 0)
		close(r->sig_fd);
	record__close_dir(r);
	mt_user__release(&r->user);
	if (r->argv != r->o->argv)
		free(r->argv);
	record__phase(r, "cleaned up");
}

/* --pid: whatever is left of the tree goes on untraced, none of it stopped by memtrack. */
static void record__let_go(struct record *r, const struct mt_ptrace_loop *l)
{
	size_t n;

	mt_bpf_session__set_paused(r->bpf, true);	/* the probes stay until the session closes: record no more */
	n = mt_seize__detach_all(r->bpf);

	if (l->detached)	/* -q or not, like "attached" */
		pr_warn("detached from %d (%zu %s): it goes on untraced\n", r->sp.pid, n, n == 1 ? "thread" : "threads");
}

static int record__trace(struct record *r)
{
	struct mt_ptrace_loop l = { .sp = &r->sp, .bpf = r->bpf, .cons = r->cons, .attach = r->attach,
				    .cmdlines = r->cmdlines, .handoff = r->handoff, .w = r->w, .sig_fd = r->sig_fd,
				    .exit_with_command = r->o->exit_with_command, .quiet = r->o->quiet,
				    .attached = r->o->pid != 0 };
	int err = mt_ptrace_loop__run(&l);
	struct sched_param normal = { 0 };

	record__phase(r, "tracing done");
	r->traced = true;
	sched_setscheduler(0, SCHED_OTHER, &normal);	/* what is left is memtrack's own work: no real-time CPU for it */
	if (r->o->pid)
		record__let_go(r, &l);
	if (err) {
		pr_err("tracing ended early: %s\n", strerror(-err));
		return MT_EXIT_SETUP;
	}
	if (record__finish(r, l.root_status))
		return MT_EXIT_SETUP;
	if (l.exec_errno) {
		r->discard = true;
		pr_err("cannot run '%s': %s\n", r->o->argv[0], strerror(l.exec_errno));
		return l.exec_errno == EACCES || l.exec_errno == ENOEXEC ? 126 : 127;
	}
	if (r->hooks->conclude)
		r->hooks->conclude(r->hooks->ctx, &r->out, r->events_fd, r->cmdlines);
	return exit__code(l.root_status);
}

int mt_record__run(const struct mt_options *o, const struct mt_record_hooks *hooks)
{
	struct record r = { .o = o, .hooks = hooks, .sp = { .listener = -1, .err_fd = -1 }, .sig_fd = -1,
			    .closer = -1, .out = { .fd = -1 }, .events_fd = -1, .argv = (char **)o->argv };
	int ret = MT_EXIT_SETUP;

	r.t0 = mt_bpf_session__monotonic_ns();
	if (o->pid && record__check_pid(&r))
		return MT_EXIT_SETUP;
	record__start_closer(&r);
	if (mt_user__resolve(o->user, &r.user) || record__start_early(&r))
		goto cleanup;
	record__closer_started(&r);
	if (record__setup_bpf(&r))
		goto cleanup;
	if (record__start(&r))
		goto cleanup;
	ret = record__trace(&r);
cleanup:
	record__cleanup(&r);
	return ret;
}
