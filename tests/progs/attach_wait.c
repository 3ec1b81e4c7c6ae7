// SPDX-License-Identifier: GPL-2.0-only
/* attach_wait.c — for record --pid: malloc(1234) first, then creates argv[1] and waits for SIGUSR1; then frees that
 * block, and two threads make 500 malloc(4321)+free each; exit 7. With "fork" as argv[2], a child forked then frees
 * the block and makes 100 malloc(4321)+free instead, exit 3; then the parent exits 7. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#define PAIRS_PER_THREAD 500

static volatile sig_atomic_t got;

static void on_usr1(int sig)
{
	got = sig;
}

static void *pairs(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < PAIRS_PER_THREAD; i++)
		free(malloc(4321));
	return NULL;
}

static int forked(void *before)
{
	pid_t pid = fork();
	int i, status;

	if (pid == 0) {
		free(before);
		for (i = 0; i < 100; i++)
			free(malloc(4321));
		_exit(3);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 102;
	return WIFEXITED(status) && WEXITSTATUS(status) == 3 ? 7 : 103;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	pthread_t t[2];
	void *before;
	int i;

	if (argc < 2)
		return 100;
	before = malloc(1234);
	sigaction(SIGUSR1, &sa, NULL);
	close(open(argv[1], O_CREAT | O_WRONLY, 0644));
	alarm(60);
	while (!got)
		pause();
	if (argc > 2 && !strcmp(argv[2], "fork"))
		return forked(before);
	free(before);
	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, pairs, NULL))
			return 101;
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 7;
}
