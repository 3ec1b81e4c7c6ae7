/* test_closer.c — the closer process: each fd memtrack hands it is closed, those in flight at memtrack's end too. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "tracer/closer.h"

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

/* Sent one by one while the closer runs: each is closed, 300 at once too (the closer closes them side by side). */
static void test_closes_what_it_gets(void **state)
{
	int sock = mt_closer__start(), rd[PIPES], i;

	(void)state;
	assert_true(sock >= 0);
	assert_int_equal(send_pipes(sock, rd, 1), 1);
	assert_closed_soon(rd[0]);
	assert_int_not_equal(send_pipes(sock, rd, PIPES), 0);
	for (i = 0; i < PIPES; i++)
		assert_closed_soon(rd[i]);
	close(sock);
}

/* memtrack exits right after its last send: what is still in the socket is closed all the same. */
static void test_closes_after_the_end(void **state)
{
	int sock = mt_closer__start(), rd[8], i;

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_closes_what_it_gets),
		cmocka_unit_test(test_closes_after_the_end),
		cmocka_unit_test(test_send_without_closer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
