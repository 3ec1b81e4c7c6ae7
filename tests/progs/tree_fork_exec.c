// SPDX-License-Identifier: GPL-2.0-only
/* tree_fork_exec.c — 10 blocks, a fork: the child frees the 10 it inherited, allocates 5555 bytes and execs
 * /bin/true; the parent frees its 10. No stdio: nothing else is allocated (issue 18's program). */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

int main(void)
{
	char *argv[] = { "/bin/true", NULL };
	void *p[10];
	int i, status;
	pid_t pid;

	for (i = 0; i < 10; i++)
		p[i] = v_malloc(1000 + i);
	pid = fork();
	if (pid == 0) {
		for (i = 0; i < 10; i++)
			v_free(p[i]);
		v_malloc(5555);
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	for (i = 0; i < 10; i++)
		v_free(p[i]);
	return 0;
}
