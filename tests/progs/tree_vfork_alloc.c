// SPDX-License-Identifier: GPL-2.0-only
/* tree_vfork_alloc.c — a vfork child that allocates in its parent's memory before _exit: 5 pairs and 1 leak. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

int main(void)
{
	void *p = v_malloc(3200);
	int i, status;
	pid_t pid;

	pid = vfork();
	if (pid == 0) {
		for (i = 0; i < 5; i++)
			v_free(v_malloc(3333));
		v_malloc(4444);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	v_free(p);
	v_free(v_malloc(5555));
	return 0;
}
