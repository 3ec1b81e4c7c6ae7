// SPDX-License-Identifier: GPL-2.0-only
/* exec_child.c — a parent that forks and execs argv[1..] and exits with its status (a static allocator's child). */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	int status;
	pid_t pid;

	if (argc < 2)
		return 100;
	pid = fork();
	if (pid == 0) {
		execv(argv[1], argv + 1);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 101;
	return WEXITSTATUS(status);
}
