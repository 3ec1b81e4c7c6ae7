// SPDX-License-Identifier: GPL-2.0-only
/* hold_invisible.c — while its child's libraries are attached (the child is held), the parent must see nothing:
 * waitpid(WUNTRACED) reports only the exit, and exactly one SIGCHLD arrives. */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile sig_atomic_t sigchld;

static void on_chld(int sig)
{
	(void)sig;
	sigchld++;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_chld };
	int status;
	pid_t pid;

	sigaction(SIGCHLD, &sa, NULL);
	pid = fork();
	if (pid == 0)
		_exit(dlopen("libmimalloc.so.2", RTLD_NOW) ? 0 : 2);
	while (waitpid(pid, &status, WUNTRACED) < 0)
		;
	if (WIFSTOPPED(status)) {
		fprintf(stderr, "hold_invisible: the child was seen stopped by signal %d\n", WSTOPSIG(status));
		return 1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 2;
	if (sigchld != 1) {
		fprintf(stderr, "hold_invisible: %d SIGCHLD instead of 1\n", (int)sigchld);
		return 3;
	}
	return 0;
}
