// SPDX-License-Identifier: GPL-2.0-only
/* tree_fork_100.c — 100 blocks, then 100 children one after another, child i freeing inherited block i. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#define CHILDREN 100

void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

int main(void)
{
	void *p[CHILDREN];
	int i, status, failures = 0;
	pid_t pid;

	for (i = 0; i < CHILDREN; i++)
		p[i] = v_malloc(2000 + i);
	for (i = 0; i < CHILDREN; i++) {
		pid = fork();
		if (pid == 0) {
			v_free(p[i]);
			_exit(0);
		}
		failures += pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status);
	}
	for (i = 0; i < CHILDREN; i++)
		v_free(p[i]);
	return failures;
}
