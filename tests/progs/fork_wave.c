// SPDX-License-Identifier: GPL-2.0-only
/* fork_wave.c — waves of children alive at once, each with its own malloc size: a tree that crosses memtrack's
 * shared-link threshold up and down while its children allocate (test_record.c). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
/* Through volatile pointers so that the compiler cannot pair and drop malloc/free. */
void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

static void pairs(size_t size, int n)
{
	for (int i = 0; i < n; i++)
		v_free(v_malloc(size));
}

/* n pairs before the pipe closes (while its siblings are forked) and n after (while they exit). */
static void child(int rd, size_t size, int n)
{
	char c;

	pairs(size, n);
	while (read(rd, &c, 1) > 0)
		;
	pairs(size, n);
	_exit(0);
}

/* A wave of n children, child k allocating base + k bytes; prints "child PID SIZE" for each. Its failures. */
static int wave(int n, size_t base, int npairs)
{
	int fds[2], k, status, failures = 0;

	if (pipe(fds))
		return n;
	for (k = 0; k < n; k++) {
		pid_t pid = fork();

		if (pid == 0) {
			close(fds[1]);
			child(fds[0], base + k, npairs);
		}
		if (pid < 0)
			failures++;
		else
			printf("child %d %zu\n", pid, base + k);
	}
	close(fds[0]);
	close(fds[1]);
	while (wait(&status) > 0)
		failures += !WIFEXITED(status) || WEXITSTATUS(status);
	return failures;
}

/* argv: WIDE NARROW PAIRS: a wave of WIDE children, one of NARROW, one of WIDE again. */
int main(int argc, char **argv)
{
	int wide, narrow, n, failures;

	if (argc != 4)
		return 2;
	wide = atoi(argv[1]);
	narrow = atoi(argv[2]);
	n = atoi(argv[3]);
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	failures = wave(wide, 10000, n);
	failures += wave(narrow, 20000, n);
	failures += wave(wide, 30000, n);
	return failures != 0;
}
