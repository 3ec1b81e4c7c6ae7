// SPDX-License-Identifier: GPL-2.0-only
/* ptrace_loop.c — handles every stop of every tracee, forwards signals, keeps job control, ends with the tree. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "artifact/artifact.h"
#include "bpf/memtrack.h"
#include "common/log.h"
#include "tracer/attach.h"
#include "tracer/bpf_session.h"
#include "tracer/cmdlines.h"
#include "tracer/consumer.h"
#include "tracer/handoff.h"
#include "tracer/ptrace_loop.h"
#include "tracer/spawn.h"

#define LOOP_POLL_MS 100	/* periodic drain: BPF wakes the consumer only past a fill watermark */
#define LOOP_FLUSH_NS 1000000000ull	/* a killed run loses at most this much of its events */

struct loop_state {
	struct mt_ptrace_loop *l;
	bool root_done;
	bool stop;		/* the command is gone and memtrack was told to stop waiting for its descendants */
	bool told;		/* the user was told that descendants outlive the command */
	bool root_execd;
	bool sigcont_pending;	/* mt_spawn__seize's SIGCONT, not the program's: suppress it once */
	bool detach;		/* record --pid was told to stop: the process goes on untraced */
	uint64_t last_flush;
};

static bool sig__is_stop(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* A tracee may die between its stop and our request: ESRCH is not an error here. */
static void tracee__resume(pid_t pid, int req, int sig)
{
	if (ptrace(req, pid, NULL, (void *)(long)sig) && errno != ESRCH)
		pr_warn("ptrace(%d) on %d failed: %s\n", req, pid, strerror(errno));
}

/*
 * A new tracee's first stop comes before its first instruction: a fork child gets its parent's probes here. The
 * kernel runs a link's programs only for its own process, so a vfork child, though it shares its parent's memory,
 * needs its own too; they follow it through its exec. Threads share their process's.
 */
static void loop__on_new(struct loop_state *st, pid_t pid)
{
	uint32_t flags;
	pid_t parent;

	mt_consumer__drain(st->l->cons);
	parent = mt_consumer__parent(st->l->cons, pid, &flags);
	if (parent)
		mt_attach__on_fork(st->l->attach, parent, pid);
}

/* The new image's executable and interpreter were requested by BPF before this stop: attach, then go on. The
 * event message is the tid that called exec, which another thread than the leader's makes differ from pid. */
static void loop__on_exec(struct loop_state *st, pid_t pid)
{
	unsigned long former = pid;

	if (pid == st->l->sp->pid)
		st->root_execd = true;
	ptrace(PTRACE_GETEVENTMSG, pid, NULL, &former);	/* on failure former stays pid: the leader's exec */
	mt_consumer__drain(st->l->cons);
	mt_attach__on_exec_stop(st->l->attach, pid, (pid_t)former);
	mt_cmdlines__on_exec(st->l->cmdlines, pid);
}

/* The signals watch.bpf.h's hold__signal holds a thread with. */
static bool sig__may_hold(int sig)
{
	return sig == SIGURG || sig == SIGWINCH || sig == SIGCHLD || sig == SIGSTOP;
}

/* A return address BPF asked to put back (struct mt_ret_restore) is: false when it asked none. */
static bool hold__restore_return(struct mt_bpf_session *bpf, pid_t tid)
{
	struct mt_ret_restore r;

	if (mt_bpf_session__ret_restore_take(bpf, tid, &r))
		return false;
	if (ptrace(PTRACE_POKEDATA, tid, (void *)(uintptr_t)r.slot, (void *)(uintptr_t)r.ret))
		pr_warn("thread %d: its return address at %#llx cannot be put back (%s): an exception thrown in its "
			"operator new may end it\n", tid, (unsigned long long)r.slot, strerror(errno));
	return true;
}

/*
 * BPF holds a thread that mapped an unknown file with a signal from the kernel (SI_KERNEL) that carries
 * MT_HOLD_COOKIE, after queueing its request. The kernel's own SIGURG (a socket's urgent data) and SIGWINCH (a
 * terminal's new size) carry none and go through, as does a signal from a process (SI_USER, SI_TKILL: job control).
 * The kernel sends no SIGSTOP of its own (BPF without bpf_send_signal_task sends it without the cookie), so a hold
 * whose request was lost (or failed) is still a hold: it is let go too. A uprobe cannot send the cookie (the kfunc
 * is not for its program type): its hold is the one that left a return address to put back, or a mark in
 * pressure_held (the ring was over half full: bpf/pressure.bpf.h; the drain at the stop is its point). A kernel's
 * signal of the same number meanwhile merges with it, and is suppressed with it: an ignored signal (hold__harmless).
 */
bool mt_ptrace_loop__take_hold(struct mt_bpf_session *bpf, pid_t tid, int sig, bool *restored, bool *pressured)
{
	siginfo_t si;

	*restored = false;
	*pressured = false;
	if (!sig__may_hold(sig) || ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) || si.si_code != SI_KERNEL)
		return false;
	*pressured = mt_bpf_session__pressure_take(bpf, tid);
	*restored = hold__restore_return(bpf, tid);
	return *restored || *pressured || (uint64_t)(uintptr_t)si.si_value.sival_ptr == MT_HOLD_COOKIE ||
	       sig == SIGSTOP;
}

static bool loop__is_hold(struct loop_state *st, pid_t tid, int sig)
{
	bool restored, pressured;

	if (!mt_ptrace_loop__take_hold(st->l->bpf, tid, sig, &restored, &pressured))
		return false;
	mt_consumer__drain(st->l->cons);
	if (!mt_attach__on_hold_stop(st->l->attach, tid) && !restored && !pressured)
		pr_warn("thread %d was held without a request on record: let go\n", tid);
	return true;
}

/* Resumed with req and sig, or, when a descendant asked to trace it, let go there (handoff.c). */
static void loop__resume(struct loop_state *st, pid_t pid, int status, int req, int sig)
{
	if (!mt_handoff__at_stop(st->l->handoff, pid, status, sig))
		tracee__resume(pid, req, sig);
}

static void loop__on_stop(struct loop_state *st, pid_t pid, int status)
{
	int sig = WSTOPSIG(status), event = (unsigned)status >> 16;
	pid_t root = st->l->sp->pid;

	if (event == PTRACE_EVENT_STOP) {
		/* A group-stop stays a stop (its parent sees it) until SIGCONT; other event-stops just go on. */
		if (!sig__is_stop(sig))
			loop__on_new(st, pid);
		loop__resume(st, pid, status, sig__is_stop(sig) ? PTRACE_LISTEN : PTRACE_CONT, 0);
		return;
	}
	if (event) {
		if (event == PTRACE_EVENT_EXEC)
			loop__on_exec(st, pid);
		loop__resume(st, pid, status, PTRACE_CONT, 0);
		return;
	}
	if (loop__is_hold(st, pid, sig)) {
		loop__resume(st, pid, status, PTRACE_CONT, 0);
		if (sig == SIGSTOP)	/* after the resume: a death between costs a spurious SIGCONT, not a stop */
			mt_bpf_session__unhold(st->l->bpf, pid);
		return;
	}
	if (sig == SIGCONT && pid == root && st->sigcont_pending && !st->root_execd) {
		st->sigcont_pending = false;
		loop__resume(st, pid, status, PTRACE_CONT, 0);
		return;
	}
	loop__resume(st, pid, status, PTRACE_CONT, sig);
}

static void loop__on_exit(struct loop_state *st, pid_t pid, int status)
{
	struct mt_ptrace_loop *l = st->l;
	struct mt_exit e = {};

	if (pid == l->sp->pid) {
		st->root_done = true;
		l->root_status = status;
	}
	/* Everything the process did is numbered by now (its fork record is in the ring): its exit, numbered next,
	 * is written after all of it, whichever CPU's batch holds its last calls. */
	mt_consumer__drain_past(l->cons);
	mt_attach__on_exit(l->attach, pid);
	mt_handoff__on_exit(l->handoff, pid);
	mt_bpf_session__unhold(l->bpf, pid);	/* it died held */
	if (!mt_consumer__is_process(l->cons, pid))
		return;
	e.hdr.ts_ns = mt_bpf_session__now(l->bpf);
	e.hdr.pid = pid;
	e.hdr.tid = pid;
	e.hdr.type = MT_REC_EXIT;
	e.hdr.size = sizeof(e);
	e.status = status;
	mt_consumer__append(l->cons, &e.hdr);
}

/* Returns 1 when no tracee is left, 0 otherwise. */
static int loop__reap(struct loop_state *st)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, __WALL | WNOHANG)) > 0) {
		if (WIFSTOPPED(status))
			loop__on_stop(st, pid, status);
		else if (WIFEXITED(status) || WIFSIGNALED(status))
			loop__on_exit(st, pid, status);
	}
	if (pid < 0 && errno == ECHILD)
		return 1;
	return 0;
}

/* Signals sent to memtrack go to the command; a terminal's (SI_KERNEL) already reached its process group. */
static void loop__on_signal(struct loop_state *st)
{
	struct signalfd_siginfo si;

	while (read(st->l->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD || si.ssi_pid == (uint32_t)getpid())	/* its own: a write's SIGPIPE */
			continue;
		if (st->l->attached) {	/* not memtrack's child: the signal is memtrack's, to let it go */
			st->detach = true;
			continue;
		}
		if (st->root_done) {	/* only descendants are left: stop waiting for them */
			st->stop = true;
			continue;
		}
		if (si.ssi_code == SI_KERNEL)
			continue;
		pr_info("passing signal %u to %d\n", si.ssi_signo, st->l->sp->pid);
		kill(st->l->sp->pid, si.ssi_signo);
	}
}

/* After the seize, the child's one message can only be its exec's failure. */
static void loop__on_errpipe(struct loop_state *st, int ep)
{
	int step, err, n = mt_spawn__read(st->l->sp->err_fd, &step, &err);

	if (n == 1 && step == MT_SPAWN_EXEC)
		st->l->exec_errno = err;
	if (n != -EAGAIN) {
		epoll_ctl(ep, EPOLL_CTL_DEL, st->l->sp->err_fd, NULL);
		close(st->l->sp->err_fd);
		st->l->sp->err_fd = -1;
	}
}

static int loop__epoll(struct mt_ptrace_loop *l)
{
	int fds[] = { l->sig_fd, mt_consumer__fd(l->cons), l->sp->err_fd, mt_handoff__fd(l->handoff) };
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(EPOLL_CLOEXEC), err;
	size_t i;

	if (ep < 0)
		return -errno;
	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (fds[i] < 0)	/* record --pid: no child, no messages from it */
			continue;
		ev.data.fd = fds[i];
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev)) {
			err = -errno;
			close(ep);
			return err;
		}
	}
	return ep;
}

static void loop__tick(struct loop_state *st, struct epoll_event *evs, int n, int ep)
{
	int i;

	for (i = 0; i < n; i++) {
		if (evs[i].data.fd == st->l->sig_fd)
			loop__on_signal(st);
		else if (evs[i].data.fd == st->l->sp->err_fd)
			loop__on_errpipe(st, ep);
		else if (evs[i].data.fd == mt_handoff__fd(st->l->handoff))
			mt_handoff__on_ready(st->l->handoff);
	}
	mt_consumer__drain(st->l->cons);
	if (mt_bpf_session__monotonic_ns() - st->last_flush >= LOOP_FLUSH_NS) {
		mt_consumer__drain_batches(st->l->cons);
		mt_writer__flush(st->l->w);
		st->last_flush = mt_bpf_session__monotonic_ns();
	}
}

/* Descendants that outlive the command are traced to their end, like strace -f; say so, once. */
static void loop__tell_outliving(struct loop_state *st)
{
	if (!st->root_done || st->told || st->l->quiet)
		return;
	st->told = true;
	pr_warn("the command exited; still tracing the descendants that outlive it (SIGINT or SIGTERM to memtrack "
		"stops; --exit-with-command does not wait for them)\n");
}

/* When it stops early, the descendants still running are detached (memtrack's exit does it) and go on untraced. */
int mt_ptrace_loop__run(struct mt_ptrace_loop *l)
{
	struct loop_state st = { .l = l, .sigcont_pending = !l->attached,
				 .last_flush = mt_bpf_session__monotonic_ns() };
	struct epoll_event evs[4];
	int ep = loop__epoll(l), n;

	if (ep < 0)
		return ep;
	for (;;) {
		n = epoll_wait(ep, evs, 4, LOOP_POLL_MS);
		if (n < 0 && errno != EINTR)
			break;
		loop__tick(&st, evs, n < 0 ? 0 : n, ep);
		/* The tree is done when no tracee is left and the processes let go to other tracers are gone too. */
		if (loop__reap(&st) && st.root_done && !mt_handoff__live(l->handoff))
			break;
		if (st.detach || (st.root_done && (st.stop || l->exit_with_command)))
			break;
		loop__tell_outliving(&st);
	}
	if (l->sp->err_fd >= 0)
		loop__on_errpipe(&st, ep);
	close(ep);
	mt_consumer__drain_past(l->cons);
	l->detached = st.detach && !st.root_done;
	return st.root_done || st.detach ? 0 : -ECHILD;
}
