// SPDX-License-Identifier: GPL-2.0-only
/* rss_vfork.c — touches 32 MiB, then vforks a child that touches 4 MiB more of that memory and execs /bin/true. */
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#define HELD (32u << 20)
#define MORE (4u << 20)

int main(void)
{
	char *argv[] = { "/bin/true", NULL };
	long page = sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, HELD + MORE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int status;
	pid_t pid;

	if (p == MAP_FAILED)
		return 1;
	for (size_t i = 0; i < HELD; i += page)
		p[i] = 1;
	pid = vfork();
	if (pid == 0) {
		/* the parent's memory, faulted in by the child: the parent's RSS grows, the child's is none of its own */
		for (size_t i = HELD; i < HELD + MORE; i += page)
			p[i] = 1;
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	return 0;
}
