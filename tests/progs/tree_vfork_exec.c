// SPDX-License-Identifier: GPL-2.0-only
/* tree_vfork_exec.c — 7 blocks, a vfork whose child execs /bin/true at once; the parent then frees its 7. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

int main(void)
{
	char *argv[] = { "/bin/true", NULL };
	void *p[7];
	int i, status;
	pid_t pid;

	for (i = 0; i < 7; i++)
		p[i] = v_malloc(3100);
	pid = vfork();
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	for (i = 0; i < 7; i++)
		v_free(p[i]);
	return 0;
}
