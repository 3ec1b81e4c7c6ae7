// SPDX-License-Identifier: GPL-2.0-only
/* closer.c — closes probe links in the background: in threads, and in a process of memtrack's that outlives it. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/memtrack.h"
#include "common/proc.h"
#include "tracer/closer.h"
#include "tracer/control.h"
#include "tracer/seccomp.h"

#define POOL_MAX 256	/* threads closing at once; past that the caller closes itself */

struct mt_close_pool {
	pthread_mutex_t lock;
	pthread_cond_t idle;
	int running;		/* threads still closing */
	uint64_t closed;	/* closes the threads finished */
};

struct close_job {
	struct mt_close_pool *p;
	int fd;
};

struct mt_close_pool *mt_close_pool__new(void)
{
	struct mt_close_pool *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->idle, NULL);
	return p;
}

static void *close_job__run(void *arg)
{
	struct close_job *j = arg;
	struct mt_close_pool *p = j->p;

	close(j->fd);
	free(j);
	pthread_mutex_lock(&p->lock);
	p->closed++;
	if (!--p->running)
		pthread_cond_broadcast(&p->idle);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/*
 * A link's close waits for RCU grace periods: one short-lived thread per link keeps the caller
 * going and lets the waits overlap, those of one process's entry and return links as well as those of many
 * exiting processes.
 */
void mt_close_pool__close(struct mt_close_pool *p, int fd)
{
	struct close_job *j = malloc(sizeof(*j));
	pthread_attr_t attr;
	pthread_t t;
	bool started = false;

	if (j) {
		*j = (struct close_job){ .p = p, .fd = fd };
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_mutex_lock(&p->lock);
		if (p->running < POOL_MAX) {
			started = !pthread_create(&t, &attr, close_job__run, j);
			p->running += started;
		}
		pthread_mutex_unlock(&p->lock);
		pthread_attr_destroy(&attr);
	}
	if (started)
		return;
	free(j);
	close(fd);
	pthread_mutex_lock(&p->lock);
	p->closed++;
	pthread_mutex_unlock(&p->lock);
}

uint64_t mt_close_pool__closed(struct mt_close_pool *p)
{
	uint64_t n;

	pthread_mutex_lock(&p->lock);
	n = p->closed;
	pthread_mutex_unlock(&p->lock);
	return n;
}

static void close_pool__drain(struct mt_close_pool *p)
{
	pthread_mutex_lock(&p->lock);
	while (p->running)
		pthread_cond_wait(&p->idle, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

void mt_close_pool__free(struct mt_close_pool *p)
{
	if (!p)
		return;
	close_pool__drain(p);
	pthread_cond_destroy(&p->idle);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

#define CLOSER_ACK_WAIT_MS 100	/* an ack that did not get through: memtrack closed its copy long before this */
#define CLOSER_LINK 0		/* the byte that comes with a link, or alone as an ack */
#define CLOSER_LISTENER 'L'	/* the byte that comes with the hand-off's seccomp listener */
#define CLOSER_HELD 'H'		/* the byte that comes with BPF's map `held` (threads held with SIGSTOP) */
#define CLOSER_CONTROL 'C'	/* the byte that comes with the control FIFO's directory (control.c) */
#define CLOSER_WARM 'W'		/* the byte that comes with the warm start's lock (bpf_warm.c) */
#define CLOSER_RESCUE_MAX 4096	/* the map's size */

struct mt_closer_notifs *mt_closer__notifs_new(void)
{
	void *p = mmap(NULL, sizeof(struct mt_closer_notifs), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Once memtrack is gone: its exit has let go of every tracee, so the ptrace calls it held and did not answer can
 * run, and so can every later one, until the kernel says that no task uses the filter any more (POLLHUP). Without
 * this, they would fail with ENOSYS.
 */
static void listener__serve(int listener, int memtrack, const struct mt_closer_notifs *notifs)
{
	struct pollfd p = { .fd = memtrack, .events = POLLIN };
	struct mt_seccomp_req req;
	size_t i;

	while (memtrack >= 0 && poll(&p, 1, -1) < 0 && errno == EINTR)
		;
	for (i = 0; notifs && i < MT_CLOSER_NOTIFS; i++)
		if (notifs->id[i])
			mt_seccomp__continue(listener, notifs->id[i]);	/* -ENOENT when answered already */
	p = (struct pollfd){ .fd = listener, .events = POLLIN };
	for (;;) {
		if (poll(&p, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p.revents & POLLIN) {
			if (!mt_seccomp__recv(listener, &req))
				mt_seccomp__continue(listener, req.id);
		} else if (p.revents & (POLLHUP | POLLERR | POLLNVAL)) {
			break;
		}
	}
	close(listener);
}

/* /proc's starttime (clock ticks since boot) is the task's start_boottime: the same thread, not a recycled tid. */
static bool task__started_at(uint32_t tgid, uint32_t tid, uint64_t start_ns)
{
	long hz = sysconf(_SC_CLK_TCK);
	struct mt_proc_stat st;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", tgid, tid);
	if (mt_proc__stat(path, &st) || hz <= 0)
		return false;
	return st.starttime == start_ns / (1000000000ull / hz);
}

/*
 * Once memtrack is gone (its pidfd is readable after its exit has detached every tracee), a thread BPF held with
 * SIGSTOP that memtrack did not resume is, or is about to be, in a group-stop that no one would end: SIGCONT ends
 * it, or (sent before the stop) cancels it. Its process sees what a Ctrl-Z and fg would show, once.
 */
static void closer__rescue(int held_map, int memtrack)
{
	static uint32_t keys[CLOSER_RESCUE_MAX];
	struct pollfd p = { .fd = memtrack, .events = POLLIN };
	uint32_t *prev = NULL, n = 0, i;
	struct mt_held h;

	if (held_map < 0)
		return;
	while (memtrack >= 0 && poll(&p, 1, -1) < 0 && errno == EINTR)
		;
	while (n < CLOSER_RESCUE_MAX && !bpf_map_get_next_key(held_map, prev, &keys[n])) {
		prev = &keys[n];
		n++;
	}
	for (i = 0; i < n; i++) {
		if (!bpf_map_lookup_elem(held_map, &keys[i], &h) && task__started_at(h.tgid, keys[i], h.start_ns))
			kill(h.tgid, SIGCONT);
		bpf_map_delete_elem(held_map, &keys[i]);
	}
}

/* The warm start's programs to the next run, once memtrack is gone (its links closed) and the pool drained. */
static void closer__release_warm(int warm, int memtrack)
{
	struct pollfd p = { .fd = memtrack, .events = POLLIN };

	while (memtrack >= 0 && poll(&p, 1, -1) < 0 && errno == EINTR)
		;
	close(warm);
}

/* One byte from memtrack, with the fd it carries (or -1). 1, 0 at memtrack's end, -errno. */
static int closer__recv(int sock, char *byte, int *fd)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec io = { .iov_base = byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c;
	ssize_t got;

	do
		got = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	while (got < 0 && errno == EINTR);
	if (got <= 0)
		return got < 0 ? -errno : 0;
	*fd = -1;
	c = CMSG_FIRSTHDR(&m);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
		memcpy(fd, CMSG_DATA(c), sizeof(*fd));
	return 1;
}

/*
 * The closer's life: a byte with an fd is a link handed over, held until the next byte, or a while: memtrack
 * sends from one thread and closes its own copy before it sends anything else (an ack, when the socket has room),
 * so that the closer's close is the last one, the one that waits, in a thread of the pool. At memtrack's end (EOF)
 * the rest is closed, and waited for; threads memtrack left held are let go, and a listener it was given is served
 * last.
 */
static void __attribute__((noreturn)) closer__serve(int sock, int memtrack, const struct mt_closer_notifs *notifs)
{
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	struct mt_close_pool *pool = mt_close_pool__new();
	int held = -1, fd = -1, listener = -1, held_map = -1, control = -1, warm = -1;
	char byte;

	if (!pool)	/* memtrack's sends fail: it closes its links in its own threads */
		_exit(1);
	for (;;) {
		if (held >= 0 && poll(&pfd, 1, CLOSER_ACK_WAIT_MS) == 0) {
			mt_close_pool__close(pool, held);
			held = -1;
		}
		if (closer__recv(sock, &byte, &fd) <= 0)
			break;
		if (held >= 0)
			mt_close_pool__close(pool, held);
		held = -1;
		if (byte == CLOSER_LISTENER && fd >= 0 && listener < 0)
			listener = fd;
		else if (byte == CLOSER_HELD && fd >= 0 && held_map < 0)
			held_map = fd;
		else if (byte == CLOSER_CONTROL && fd >= 0 && control < 0)
			control = fd;
		else if (byte == CLOSER_WARM && fd >= 0 && warm < 0)
			warm = fd;
		else
			held = fd;
	}
	if (held >= 0)
		mt_close_pool__close(pool, held);
	if (control >= 0)	/* a memtrack killed midway left it */
		mt_control__remove(control);
	closer__rescue(held_map, memtrack);	/* as soon as memtrack is gone */
	close_pool__drain(pool);
	closer__rescue(held_map, -1);	/* the links it was handed (a normal exit's tracepoints) could hold until now */
	if (warm >= 0)	/* the last link of the run is closed: memtrack's own went with its exit */
		closer__release_warm(warm, memtrack);
	if (listener >= 0)
		listener__serve(listener, memtrack, notifs);
	_exit(0);
}

/* Soft open-file limit to the hard one: links are fds, two per allocator file and live process. */
int mt_closer__raise_fd_limit(struct rlimit *old)
{
	struct rlimit l;

	if (getrlimit(RLIMIT_NOFILE, &l))
		return -errno;
	*old = l;
	if (l.rlim_cur >= l.rlim_max)
		return -EEXIST;
	l.rlim_cur = l.rlim_max == RLIM_INFINITY ? 1 << 20 : l.rlim_max;	/* the kernel's default nr_open */
	return setrlimit(RLIMIT_NOFILE, &l) ? -errno : 0;
}

/* Every descriptor but a and b closed (a <= b). */
static void fds__keep(int a, int b)
{
	if (a > 0)
		close_range(0, a - 1, 0);
	if (b > a + 1)
		close_range(a + 1, b - 1, 0);
	close_range(b + 1, ~0u, 0);
}

/* The grandchild: nothing but its socket (or the listener alone) and memtrack's pidfd, a process group of its own,
 * deaf to what signals it can be, and room for as many links as memtrack (a descriptor beyond its limit would be
 * dropped from the message). */
static void __attribute__((noreturn)) closer__become(int sock, int memtrack, int listener,
						     const struct mt_closer_notifs *notifs)
{
	int fd = sock >= 0 ? sock : listener;
	struct rlimit old;
	sigset_t all;

	fds__keep(memtrack >= 0 && memtrack < fd ? memtrack : fd, memtrack > fd ? memtrack : fd);
	setpgid(0, 0);
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	mt_closer__raise_fd_limit(&old);
	prctl(PR_SET_NAME, "memtrack-close");
	if (sock < 0) {
		listener__serve(listener, memtrack, notifs);
		_exit(0);
	}
	closer__serve(sock, memtrack, notifs);
}

/*
 * Forked twice, so that it is no child of memtrack's (whose ptrace loop waits for every child): not where orphans
 * come back to memtrack. The middle child takes memtrack's pidfd, memtrack alive until it reaps it (closer__wait).
 * The middle child's pid, or -errno.
 */
static pid_t closer__fork(int sock, int listener, const struct mt_closer_notifs *notifs)
{
	pid_t memtrack = getpid(), pid = fork(), g;
	sigset_t all;
	int pidfd;

	if (pid == 0) {
		sigfillset(&all);	/* a Ctrl-C for memtrack's group must not end it: memtrack reaps it later */
		sigprocmask(SIG_BLOCK, &all, NULL);
		pidfd = syscall(SYS_pidfd_open, memtrack, 0);
		g = fork();
		if (g != 0)
			_exit(g < 0);
		closer__become(sock, pidfd, listener, notifs);
	}
	return pid < 0 ? -errno : pid;
}

/* The middle child reaped: 0 when it forked the closer. */
static int closer__wait(pid_t middle)
{
	int status;

	if (waitpid(middle, &status, 0) != middle || !WIFEXITED(status) || WEXITSTATUS(status))
		return -ECHILD;
	return 0;
}

/* Not when orphans would come back to memtrack (PID 1 of a namespace, a subreaper). memtrack starts it first
 * thing, before any thread, with little memory for it to keep. */
int mt_closer__start(const struct mt_closer_notifs *notifs, pid_t *middle)
{
	int sv[2], sub = 0;
	pid_t pid;

	if (getpid() == 1 || (!prctl(PR_GET_CHILD_SUBREAPER, &sub) && sub))
		return -ECHILD;
	/* A stream: a datagram socket queues only net.unix.max_dgram_qlen (10) messages, fewer than a burst of exits */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pid = closer__fork(sv[1], -1, notifs);
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return pid;
	}
	*middle = pid;
	return sv[0];
}

int mt_closer__started(int sock, pid_t middle)
{
	int err = closer__wait(middle);

	if (err)
		close(sock);
	return err;
}

int mt_closer__leave_listener(int listener, const struct mt_closer_notifs *notifs)
{
	pid_t pid = closer__fork(-1, listener, notifs);

	return pid < 0 ? pid : closer__wait(pid);
}

/* One byte, with fd or (fd < 0) without: an ack. Never blocks, never raises SIGPIPE. */
static int closer__byte(int sock, int fd, char byte)
{
	char ctl[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec io = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	if (fd < 0) {
		m.msg_control = NULL;
		m.msg_controllen = 0;
	} else {
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	}
	return sendmsg(sock, &m, MSG_DONTWAIT | MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

int mt_closer__send(int sock, int fd)
{
	return closer__byte(sock, fd, CLOSER_LINK);
}

/* An ack that does not get through delays the closer's close to the next byte, or CLOSER_ACK_WAIT_MS. */
void mt_closer__ack(int sock)
{
	closer__byte(sock, -1, CLOSER_LINK);
}

int mt_closer__keep_listener(int sock, int listener)
{
	return closer__byte(sock, listener, CLOSER_LISTENER);
}

int mt_closer__keep_control(int sock, int dir_fd)
{
	return closer__byte(sock, dir_fd, CLOSER_CONTROL);
}

int mt_closer__keep_warm(int sock, int lock_fd)
{
	return closer__byte(sock, lock_fd, CLOSER_WARM);
}

int mt_closer__keep_held(int sock, int held_map)
{
	return closer__byte(sock, held_map, CLOSER_HELD);
}

/*
 * Hands fd to the closer and closes the caller's copy, which is not the last and does not wait; then says so, and
 * the closer closes its own. -errno, fd untouched, when the closer cannot take it: the caller closes it some other
 * way.
 */
int mt_closer__give(int sock, int fd)
{
	int err = mt_closer__send(sock, fd);

	if (err)
		return err;
	close(fd);
	mt_closer__ack(sock);
	return 0;
}
