// SPDX-License-Identifier: GPL-2.0-only
/* test_closer.c — the closer process: each fd memtrack hands it is closed, those in flight at memtrack's end too. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tracer/closer.h"
#include "tracer/seccomp.h"

#define PIPES 300

/* The read end sees EOF once the last copy of the write end is closed: in the closer, after a while. */
static void assert_closed_soon(int rd)
{
	struct pollfd p = { .fd = rd, .events = POLLIN };
	char c;

	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_int_equal(read(rd, &c, 1), 0);
	close(rd);
}

/* Hands over the write ends of n pipes, its own copies closed as links.c has them; returns the read ends and
 * how many the closer took (a full socket refuses at once, and links.c then closes in its own threads). */
static int send_pipes(int sock, int *rd, int n)
{
	int fds[2], i, taken = 0, err;

	for (i = 0; i < n; i++) {
		assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
		err = mt_closer__give(sock, fds[1]);
		assert_true(err == 0 || err == -EAGAIN);
		taken += !err;
		if (err)
			close(fds[1]);
		rd[i] = fds[0];
	}
	return taken;
}

/* The closer started and its middle child reaped at once: its socket, or -1. */
static int closer__start(const struct mt_closer_notifs *notifs)
{
	pid_t middle = 0;
	int sock = mt_closer__start(notifs, &middle);

	return sock >= 0 && mt_closer__started(sock, middle) ? -1 : sock;
}

/* Sent one by one while the closer runs, the first before its middle child is reaped (as memtrack's early steps
 * send theirs): each is closed, 300 at once too (the closer closes them side by side). */
static void test_closes_what_it_gets(void **state)
{
	pid_t middle = 0;
	int sock = mt_closer__start(NULL, &middle), rd[PIPES], i;

	(void)state;
	assert_true(sock >= 0);
	assert_true(middle > 0);
	assert_int_equal(send_pipes(sock, rd, 1), 1);
	assert_int_equal(mt_closer__started(sock, middle), 0);
	assert_int_equal(waitpid(middle, NULL, WNOHANG), -1);	/* reaped: no child of the caller's is left */
	assert_closed_soon(rd[0]);
	assert_int_not_equal(send_pipes(sock, rd, PIPES), 0);
	for (i = 0; i < PIPES; i++)
		assert_closed_soon(rd[i]);
	close(sock);
}

/* A middle child that could not fork the closer (it exits 1): no closer, and the socket is closed for the caller. */
static void test_started_without_closer(void **state)
{
	int sv[2];
	pid_t middle;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	middle = fork();
	if (middle == 0)
		_exit(1);
	assert_true(middle > 0);
	assert_int_equal(mt_closer__started(sv[0], middle), -ECHILD);
	assert_int_equal(fcntl(sv[0], F_GETFD), -1);	/* closed */
	assert_int_equal(errno, EBADF);
	assert_int_equal(waitpid(middle, NULL, WNOHANG), -1);	/* reaped */
	close(sv[1]);
}

/* memtrack exits right after its last send: what is still in the socket is closed all the same. */
static void test_closes_after_the_end(void **state)
{
	int sock = closer__start(NULL), rd[8], i;

	(void)state;
	assert_true(sock >= 0);
	assert_int_equal(send_pipes(sock, rd, 8), 8);
	close(sock);
	for (i = 0; i < 8; i++)
		assert_closed_soon(rd[i]);
}

/* With the closer gone, a send fails at once (no SIGPIPE, no block): links.c then closes in its own threads. */
static void test_send_without_closer(void **state)
{
	int sv[2], fds[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	close(sv[1]);
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	assert_int_equal(mt_closer__give(sv[0], fds[1]), -EPIPE);
	close(fds[0]);
	close(fds[1]);
	close(sv[0]);
}

/* The filtered child: its listener to the "memtrack" above it, then two held calls, whose errnos go to res. */
static void __attribute__((noreturn)) filtered__run(int sock, int res)
{
	int fd, errs[2];

	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);	/* the filter without CAP_SYS_ADMIN */
	fd = mt_seccomp__install();
	if (fd < 0 || mt_closer__send(sock, fd))
		_exit(1);
	close(fd);
	errs[0] = ptrace(PTRACE_ATTACH, getpid(), NULL, NULL) ? errno : 0;	/* read, never answered by memtrack */
	errs[1] = ptrace(PTRACE_SEIZE, getpid(), NULL, NULL) ? errno : 0;	/* after memtrack */
	_exit(write(res, errs, sizeof(errs)) != sizeof(errs));
}

static int fd__recv(int sock)
{
	char byte, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec io = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	int fd = -1;

	if (recvmsg(sock, &m, 0) == 1 && CMSG_FIRSTHDR(&m))
		memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(fd));
	return fd;
}

/* "memtrack": the closer, the listener handed to it, one held call read and left in the table; then gone. */
static void __attribute__((noreturn)) memtrack__run(int res)
{
	struct mt_closer_notifs *n = mt_closer__notifs_new();
	int closer = closer__start(n), sv[2], listener;
	struct mt_seccomp_req req;

	if (!n || closer < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		_exit(1);
	if (fork() == 0) {
		close(closer);	/* as memtrack's command, which holds it until its exec (close-on-exec) */
		filtered__run(sv[1], res);
	}
	listener = fd__recv(sv[0]);
	if (listener < 0 || mt_closer__keep_listener(closer, listener) || mt_seccomp__recv(listener, &req))
		_exit(1);
	n->id[0] = req.id;
	_exit(0);
}

/* Held ptrace calls run once memtrack is gone, the one it had read too: EPERM (no attaching oneself), not the
 * ENOSYS of a filter that no one listens to. */
static void test_listener_after_memtrack(void **state)
{
	struct pollfd p = { .events = POLLIN };
	int res[2], errs[2] = { 0, 0 }, status;
	pid_t m;

	(void)state;
	assert_int_equal(pipe2(res, O_CLOEXEC), 0);
	m = fork();
	if (m == 0)
		memtrack__run(res[1]);
	close(res[1]);
	assert_int_equal(waitpid(m, &status, 0), m);
	assert_int_equal(status, 0);
	p.fd = res[0];
	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_int_equal(read(res[0], errs, sizeof(errs)), sizeof(errs));
	assert_int_equal(errs[0], EPERM);
	assert_int_equal(errs[1], EPERM);
	close(res[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_closes_what_it_gets),
		cmocka_unit_test(test_started_without_closer),
		cmocka_unit_test(test_closes_after_the_end),
		cmocka_unit_test(test_send_without_closer),
		cmocka_unit_test(test_listener_after_memtrack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
