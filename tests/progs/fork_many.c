// SPDX-License-Identifier: GPL-2.0-only
/* fork_many.c — N children alive at once, a malloc of 5151 bytes each: a tree holding 2N links (test_record.c). */
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
/* Through volatile pointers so that the compiler cannot pair and drop malloc/free. */
void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

/* Each child allocates, then waits for the pipe to close: all are alive when the last one is forked. */
static void child(int rd)
{
	void *p = v_malloc(5151);
	char c;

	while (read(rd, &c, 1) > 0)
		;
	v_free(p);
	_exit(p ? 0 : 1);
}

/* argv: N, and the open-file soft limit the command must have been given (memtrack raises its own). */
int main(int argc, char **argv)
{
	int fds[2], i, n, status, failures = 0;
	struct rlimit l;

	if (argc != 3 || pipe(fds) || getrlimit(RLIMIT_NOFILE, &l))
		return 2;
	if (l.rlim_cur != strtoull(argv[2], NULL, 10))
		return 3;
	n = atoi(argv[1]);
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			close(fds[1]);
			child(fds[0]);
		}
		failures += pid < 0;
	}
	close(fds[1]);
	while (wait(&status) > 0)
		failures += !WIFEXITED(status) || WEXITSTATUS(status);
	return failures;
}
