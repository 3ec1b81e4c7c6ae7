/* closer.c — closes probe links in the background: in threads, and in a process of memtrack's that outlives it. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracer/closer.h"

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

/*
 * The closer's life: a byte with an fd is a link handed over, held until the next byte, or a while: memtrack
 * sends from one thread and closes its own copy before it sends anything else (an ack, when the socket has room),
 * so that the closer's close is the last one, the one that waits, in a thread of the pool. At memtrack's end (EOF)
 * the rest is closed, and waited for.
 */
static void __attribute__((noreturn)) closer__serve(int sock)
{
	char ctl[CMSG_SPACE(sizeof(int))], byte;
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	struct mt_close_pool *pool = mt_close_pool__new();
	struct cmsghdr *c;
	struct msghdr m;
	struct iovec io;
	int held = -1;
	ssize_t got;

	if (!pool)	/* memtrack's sends fail: it closes its links in its own threads */
		_exit(1);
	for (;;) {
		if (held >= 0 && poll(&pfd, 1, CLOSER_ACK_WAIT_MS) == 0) {
			mt_close_pool__close(pool, held);
			held = -1;
		}
		io = (struct iovec){ .iov_base = &byte, .iov_len = 1 };
		m = (struct msghdr){ .msg_iov = &io, .msg_iovlen = 1, .msg_control = ctl,
				     .msg_controllen = sizeof(ctl) };
		got = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		if (held >= 0)
			mt_close_pool__close(pool, held);
		held = -1;
		c = CMSG_FIRSTHDR(&m);
		if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(&held, CMSG_DATA(c), sizeof(held));
	}
	if (held >= 0)
		mt_close_pool__close(pool, held);
	close_pool__drain(pool);
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

/* The grandchild: nothing but its socket, a process group of its own, deaf to what signals it can be, and room
 * for as many links as memtrack (a descriptor beyond its limit would be dropped from the message). */
static void __attribute__((noreturn)) closer__become(int sock)
{
	struct rlimit old;
	sigset_t all;

	if (sock > 0)
		close_range(0, sock - 1, 0);
	close_range(sock + 1, ~0u, 0);
	setpgid(0, 0);
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	mt_closer__raise_fd_limit(&old);
	prctl(PR_SET_NAME, "memtrack-close");
	closer__serve(sock);
}

/*
 * Forked twice, so that it is no child of memtrack's (whose ptrace loop waits for every child): not where
 * orphans come back to memtrack (PID 1 of a namespace, a subreaper). memtrack starts it first thing, before any
 * thread, with little memory for it to keep.
 */
int mt_closer__start(void)
{
	int sv[2], status, sub = 0;
	pid_t pid, g;

	if (getpid() == 1 || (!prctl(PR_GET_CHILD_SUBREAPER, &sub) && sub))
		return -ECHILD;
	/* A stream: a datagram socket queues only net.unix.max_dgram_qlen (10) messages, fewer than a burst of exits */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pid = fork();
	if (pid == 0) {
		g = fork();
		if (g != 0)
			_exit(g < 0);
		closer__become(sv[1]);
	}
	status = pid < 0 ? -errno : 0;
	close(sv[1]);
	if (pid > 0 && (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)))
		status = -ECHILD;
	if (status < 0)
		close(sv[0]);
	return status < 0 ? status : sv[0];
}

/* One byte, with fd or (fd < 0) without: an ack. Never blocks, never raises SIGPIPE. */
static int closer__byte(int sock, int fd)
{
	char ctl[CMSG_SPACE(sizeof(int))] = { 0 }, byte = 0;
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
	return closer__byte(sock, fd);
}

/* An ack that does not get through delays the closer's close to the next byte, or CLOSER_ACK_WAIT_MS. */
void mt_closer__ack(int sock)
{
	closer__byte(sock, -1);
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
