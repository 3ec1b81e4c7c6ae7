// SPDX-License-Identifier: GPL-2.0-only
/* spawn.c — benchmark workload: N short-lived children, one after another, each making 100 malloc/free pairs
 * (fork) or exec'ing a program (exec): what a traced process tree costs per process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#define PAIRS 100

void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

static int usage(void)
{
	fprintf(stderr, "usage: spawn N fork | spawn N exec PROGRAM [ARGS...]\n");
	return 2;
}

static void child(char **exec_argv)
{
	if (exec_argv) {
		execv(exec_argv[0], exec_argv);
		_exit(127);
	}
	for (int i = 0; i < PAIRS; i++)
		v_free(v_malloc(64 + i));
	_exit(0);
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[1]) : 0;
	char **exec_argv = NULL;
	int status;
	pid_t pid;

	if (n <= 0 || (strcmp(argv[2], "fork") && (strcmp(argv[2], "exec") || argc < 4)))
		return usage();
	if (!strcmp(argv[2], "exec"))
		exec_argv = argv + 3;
	for (long i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0)
			return 1;
		if (!pid)
			child(exec_argv);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			return 1;
	}
	return 0;
}
