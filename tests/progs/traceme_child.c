// SPDX-License-Identifier: GPL-2.0-only
/* traceme_child.c — a child that calls PTRACE_TRACEME and stops; its parent traces it (waits for the stop,
 * PTRACE_CONT) as gdb does. The child then mallocs 5 x 3333 (frees 2) and exits 7; exit 0 when all of it went as
 * it does without memtrack. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>
void *(*volatile v_malloc)(size_t) = malloc;

static void __attribute__((noreturn)) child(void)
{
	void *p[5];
	int i;

	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL)) {
		printf("traceme_child: PTRACE_TRACEME failed: %s\n", strerror(errno));
		fflush(stdout);
		_exit(3);
	}
	raise(SIGSTOP);
	for (i = 0; i < 5; i++)
		p[i] = v_malloc(3333);
	free(p[0]);
	free(p[1]);
	_exit(7);
}

int main(void)
{
	int st;
	pid_t pid = fork();

	if (pid == 0)
		child();
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGSTOP) {
		printf("traceme_child: the child did not stop (status %#x)\n", st);
		return 1;
	}
	if (ptrace(PTRACE_CONT, pid, NULL, NULL)) {
		printf("traceme_child: PTRACE_CONT failed: %s\n", strerror(errno));
		return 1;
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) {
		printf("traceme_child: the child did not exit (status %#x)\n", st);
		return 1;
	}
	printf("traceme_child: the child exited with %d\n", WEXITSTATUS(st));
	return WEXITSTATUS(st) == 7 ? 0 : 1;
}
