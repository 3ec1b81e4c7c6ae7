// SPDX-License-Identifier: GPL-2.0-only
/* spawn_wide.c — benchmark workload: N children alive at once, each making 100 malloc/free pairs, then all reaped;
 * with "hold", the children stay until the parent gets SIGUSR1 (bench/scale.sh times a neighbour meanwhile). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#define PAIRS 100

void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

/* Each child makes its pairs, then waits for the pipe to close: all N are alive when the last one is forked. */
static void child(int rd)
{
	char c;

	for (int i = 0; i < PAIRS; i++)
		v_free(v_malloc(64 + i));
	while (read(rd, &c, 1) > 0)
		;
	_exit(0);
}

static void on_usr1(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0;
	int fds[2], status, failures = 0, hold = argc > 2 && !strcmp(argv[2], "hold");
	sigset_t usr1, old;
	pid_t pid;

	if (n <= 0 || pipe(fds)) {
		fprintf(stderr, "usage: spawn_wide N [hold]   (N children at once, %d malloc/free pairs each; hold: "
			"until SIGUSR1)\n", PAIRS);
		return 2;
	}
	/* Blocked before the children exist, so that a SIGUSR1 sent once they all do is not lost. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	signal(SIGUSR1, on_usr1);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	for (long i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0) {
			perror("spawn_wide: fork");
			return 1;
		}
		if (!pid) {
			close(fds[1]);
			child(fds[0]);
		}
	}
	if (hold)
		sigsuspend(&old);
	close(fds[1]);
	while (wait(&status) > 0)
		failures += !WIFEXITED(status) || WEXITSTATUS(status);
	return failures ? 1 : 0;
}
