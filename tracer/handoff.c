// SPDX-License-Identifier: GPL-2.0-only
/* handoff.c — lets a tracee go when a descendant asks to ptrace it, and follows what memtrack records untraced. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/array.h"
#include "common/log.h"
#include "common/proc.h"
#include "tracer/attach.h"
#include "tracer/bpf_session.h"
#include "tracer/closer.h"
#include "tracer/consumer.h"
#include "tracer/handoff.h"
#include "tracer/seccomp.h"

#define WAITERS_MAX 8	/* held calls waiting for one tracee's hand-off; more run at once (and fail as today) */

/* A tracee being handed off: interrupted, let go at its next stop, and then the calls that asked for it run. */
struct pending {
	pid_t tid;
	pid_t caller;		/* the first caller, for the log */
	uint32_t request;
	uint64_t t0;		/* CLOCK_MONOTONIC at the interrupt */
	uint64_t ids[WAITERS_MAX];
	size_t nids;
};

/* A process memtrack records but does not trace: its pidfd says when it has ended. */
struct foreign {
	pid_t pid;
	int pidfd;
};

struct mt_handoff {
	int listener;		/* -1: no hand-off (--no-handoff, or the child could not install the filter) */
	int epfd;		/* the listener and the foreign processes' pidfds */
	pid_t root;		/* memtrack's child: its end comes from waitpid, traced or not */
	ino_t pidns;		/* memtrack's PID namespace (0: unknown) */
	struct mt_attach_worker *attach;
	struct mt_closer_notifs *notifs;
	struct pending *pend;
	size_t npend, cap_pend;
	struct foreign *fo;
	size_t nfo, cap_fo;
	uint64_t handed_off, total_ns, worst_ns;
};

static void notifs__put(struct mt_closer_notifs *n, uint64_t id)
{
	size_t i;

	for (i = 0; n && i < MT_CLOSER_NOTIFS; i++) {
		if (!n->id[i]) {
			n->id[i] = id;
			return;
		}
	}
}

static void notifs__drop(struct mt_closer_notifs *n, uint64_t id)
{
	size_t i;

	for (i = 0; n && i < MT_CLOSER_NOTIFS; i++)
		if (n->id[i] == id)
			n->id[i] = 0;
}

/* The held call runs now; -ENOENT when its caller no longer waits (interrupted: it calls again, or gone). */
static void handoff__answer(struct mt_handoff *h, uint64_t id)
{
	int err = mt_seccomp__continue(h->listener, id);

	if (err && err != -ENOENT)
		pr_warn("cannot let a held ptrace call run: %s\n", strerror(-err));
	notifs__drop(h->notifs, id);
}

static ssize_t pending__find(const struct mt_handoff *h, pid_t tid)
{
	size_t i;

	for (i = 0; i < h->npend; i++)
		if (h->pend[i].tid == tid)
			return i;
	return -1;
}

/* The calls waiting for h->pend[i] run, and it is done. */
static void pending__finish(struct mt_handoff *h, size_t i)
{
	size_t k;

	for (k = 0; k < h->pend[i].nids; k++)
		handoff__answer(h, h->pend[i].ids[k]);
	h->pend[i] = h->pend[--h->npend];
}

/*
 * subject, for whom a call waits, becomes one to let go at its next stop. PTRACE_INTERRUPT asks for that stop (it
 * queues no signal), and it also tells whether subject is memtrack's tracee: it fails (ESRCH) for a task that
 * someone else, or no one, traces. A tracee stays a zombie until memtrack reaps it, so the pid names no other task.
 */
static bool handoff__claim(struct mt_handoff *h, const struct mt_seccomp_req *req, pid_t subject)
{
	ssize_t i = pending__find(h, subject);
	struct pending *p;

	if (i < 0) {
		if (mt_array__grow((void **)&h->pend, &h->cap_pend, h->npend, sizeof(*h->pend)) ||
		    ptrace(PTRACE_INTERRUPT, subject, NULL, NULL))
			return false;
		i = h->npend++;
		h->pend[i] = (struct pending){ .tid = subject, .caller = req->caller, .request = req->request,
					       .t0 = mt_bpf_session__monotonic_ns() };
	}
	p = &h->pend[i];
	if (p->nids == WAITERS_MAX)
		return false;
	p->ids[p->nids++] = req->id;
	return true;
}

/* A caller in another PID namespace names its target by a pid that means another task here. */
static bool caller__in_our_pidns(const struct mt_handoff *h, pid_t caller)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", caller);
	return !h->pidns || (!stat(path, &st) && st.st_ino == h->pidns);
}

/* A held call: TRACEME's subject is its caller, ATTACH's and SEIZE's their target. Any other runs at once. */
static void handoff__on_request(struct mt_handoff *h)
{
	struct mt_seccomp_req req;
	pid_t subject;
	int err = mt_seccomp__recv(h->listener, &req);

	if (err) {
		if (err != -ENOENT && err != -EINTR)
			pr_debug("cannot read a held ptrace call: %s\n", strerror(-err));
		return;
	}
	notifs__put(h->notifs, req.id);
	subject = req.request == PTRACE_TRACEME ? req.caller : req.target;
	if (subject <= 0 || (req.request != PTRACE_TRACEME && (subject == req.caller ||
	    !caller__in_our_pidns(h, req.caller))) || !handoff__claim(h, &req, subject))
		handoff__answer(h, req.id);
}

/* /proc/TID/status: the thread's process, and the signals queued to the thread alone. 0 or -errno. */
static int thread__status(pid_t tid, pid_t *tgid, unsigned long long *pending)
{
	unsigned long long v;
	char path[64];
	int err;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	err = mt_proc__status_field(path, "Tgid:", 10, &v);
	if (!err)
		*tgid = (pid_t)v;
	return err ? err : mt_proc__status_field(path, "SigPnd:", 16, pending);
}

static void foreign__add(struct mt_handoff *h, pid_t pid)
{
	struct epoll_event ev = { .events = EPOLLIN };
	size_t i;
	int fd;

	for (i = 0; i < h->nfo; i++)
		if (h->fo[i].pid == pid)
			return;
	fd = syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0 && errno != ESRCH) {	/* alive but not followable (EMFILE): its links stay until the end */
		pr_warn("cannot follow the exit of %d: %s\n", pid, strerror(errno));
		return;
	}
	if (fd < 0 || mt_array__grow((void **)&h->fo, &h->cap_fo, h->nfo, sizeof(*h->fo))) {
		if (fd >= 0)
			close(fd);
		mt_attach__on_exit(h->attach, pid);	/* gone already (or no memory to follow it): its links go */
		return;
	}
	ev.data.fd = fd;
	epoll_ctl(h->epfd, EPOLL_CTL_ADD, fd, &ev);
	h->fo[h->nfo++] = (struct foreign){ .pid = pid, .pidfd = fd };
}

static void foreign__gone(struct mt_handoff *h, int fd)
{
	size_t i;

	for (i = 0; i < h->nfo; i++) {
		if (h->fo[i].pidfd != fd)
			continue;
		mt_attach__on_exit(h->attach, h->fo[i].pid);	/* its exit record is BPF's: the tracer has no status */
		close(fd);
		h->fo[i] = h->fo[--h->nfo];
		return;
	}
}

static const char *request__name(uint32_t request)
{
	return request == PTRACE_TRACEME ? "TRACEME" : request == PTRACE_ATTACH ? "ATTACH" : "SEIZE";
}

/* Detached: the calls that wait for it run now. A leader memtrack did not fork is followed by its pidfd. */
static void handoff__let_go(struct mt_handoff *h, size_t i, pid_t tgid, int sig)
{
	struct pending *p = &h->pend[i];
	uint64_t ns = mt_bpf_session__monotonic_ns() - p->t0;

	if (ptrace(PTRACE_DETACH, p->tid, NULL, (void *)(long)sig) && errno != ESRCH)
		pr_warn("cannot hand %d over to %d: %s\n", p->tid, p->caller, strerror(errno));
	h->handed_off++;
	h->total_ns += ns;
	h->worst_ns = ns > h->worst_ns ? ns : h->worst_ns;
	pr_info("handed %d over to ptrace(PTRACE_%s) by %d, %" PRIu64 " us after its interrupt\n", p->tid,
		request__name(p->request), p->caller, ns / 1000);
	if (tgid == p->tid && tgid != h->root)
		foreign__add(h, tgid);
	pending__finish(h, i);
}

bool mt_handoff__at_stop(struct mt_handoff *h, pid_t tid, int status, int sig)
{
	int event = (unsigned)status >> 16, stopsig = WSTOPSIG(status);
	bool group_stop = event == PTRACE_EVENT_STOP && (stopsig == SIGSTOP || stopsig == SIGTSTP ||
							 stopsig == SIGTTIN || stopsig == SIGTTOU);
	ssize_t i = pending__find(h, tid);
	unsigned long long queued = 0;
	pid_t tgid = 0;

	if (i < 0)
		return false;
	/*
	 * The kernel reports the interrupt before it dequeues signals: a SIGSTOP still queued to the thread (BPF's
	 * hold, sent before the interrupt) would stop its whole process once let go, with no one to end that stop.
	 * Its delivery stop comes next, where the loop tells a hold from the program's own. The thread is stopped,
	 * so its BPF queues no other.
	 */
	thread__status(tid, &tgid, &queued);
	if (!group_stop && !(!event && stopsig == SIGSTOP) && (queued & (1ull << (SIGSTOP - 1)))) {
		if (ptrace(PTRACE_CONT, tid, NULL, (void *)(long)sig) && errno != ESRCH)
			pr_warn("ptrace(PTRACE_CONT) on %d failed: %s\n", tid, strerror(errno));
		return true;
	}
	handoff__let_go(h, i, tgid, sig);	/* a group-stop stays: the new tracer's attach sees it */
	return true;
}

void mt_handoff__on_exit(struct mt_handoff *h, pid_t tid)
{
	ssize_t i = pending__find(h, tid);

	if (i >= 0)
		pending__finish(h, i);	/* the calls run, and fail with ESRCH as they would have */
}

void mt_handoff__on_ready(struct mt_handoff *h)
{
	struct epoll_event evs[16];
	int n = epoll_wait(h->epfd, evs, 16, 0), i;

	for (i = 0; i < n; i++) {
		if (evs[i].data.fd != h->listener)
			foreign__gone(h, evs[i].data.fd);
		else if (evs[i].events & EPOLLIN)
			handoff__on_request(h);
		else	/* POLLHUP: no task uses the filter any more */
			epoll_ctl(h->epfd, EPOLL_CTL_DEL, h->listener, NULL);
	}
}

/* The child of a process memtrack does not trace: bound as its fork record comes, and followed by its pidfd. */
static void handoff__on_untraced_fork(void *ctx, pid_t parent, pid_t child)
{
	struct mt_handoff *h = ctx;

	mt_attach__on_untraced_fork(h->attach, parent, child);
	foreign__add(h, child);
}

struct mt_handoff *mt_handoff__new(int listener, pid_t root, struct mt_attach_worker *a, struct mt_consumer *c,
				   struct mt_closer_notifs *notifs)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = listener };
	struct mt_handoff *h = calloc(1, sizeof(*h));
	struct stat st;
	int err;

	if (!h)
		return NULL;
	*h = (struct mt_handoff){ .listener = listener, .root = root, .attach = a, .notifs = notifs };
	h->pidns = stat("/proc/self/ns/pid", &st) ? 0 : st.st_ino;
	h->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (h->epfd < 0 || (listener >= 0 && epoll_ctl(h->epfd, EPOLL_CTL_ADD, listener, &ev))) {
		err = errno;
		if (h->epfd >= 0)
			close(h->epfd);
		free(h);
		errno = err;
		return NULL;
	}
	mt_consumer__set_untraced_fork(c, handoff__on_untraced_fork, h);
	return h;
}

int mt_handoff__fd(const struct mt_handoff *h)
{
	return h->epfd;
}

size_t mt_handoff__live(const struct mt_handoff *h)
{
	return h ? h->nfo : 0;
}

void mt_handoff__free(struct mt_handoff *h)
{
	size_t i;

	if (!h)
		return;
	if (h->handed_off)
		pr_info("%" PRIu64 " threads handed over to other tracers, %" PRIu64 " us on average, %" PRIu64
			" us at most\n", h->handed_off, h->total_ns / h->handed_off / 1000, h->worst_ns / 1000);
	for (i = 0; i < h->nfo; i++)
		close(h->fo[i].pidfd);
	close(h->epfd);
	free(h->pend);
	free(h->fo);
	free(h);
}
