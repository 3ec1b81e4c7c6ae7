// SPDX-License-Identifier: GPL-2.0-only
/* sigwait.c — waits for SIGTERM (handled: malloc(7777), exit 3) after creating the file named by argv[1]. */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
static volatile sig_atomic_t got;

static void on_term(int sig)
{
	got = sig;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_term };

	if (argc != 2)
		return 100;
	sigaction(SIGTERM, &sa, NULL);
	close(open(argv[1], O_CREAT | O_WRONLY, 0644));
	alarm(20);
	while (!got)
		pause();
	malloc(7777);
	return 3;
}
