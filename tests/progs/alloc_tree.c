// SPDX-License-Identifier: GPL-2.0-only
/* alloc_tree.c — a fork child, a vfork+exec child and a posix_spawn child, each allocating a known amount; the vfork
 * child also allocates twice before its exec, in its parent's memory. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
extern char **environ;
void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

static void alloc_n(int n, size_t size)
{
	for (int i = 0; i < n; i++)
		v_free(v_malloc(size));
}

static int wait_ok(pid_t pid)
{
	int status;

	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
	char *vfork_argv[] = { argv[0], "vforked", NULL }, *spawn_argv[] = { argv[0], "spawned", NULL };
	pid_t f, v, s;
	int ok = 1;

	if (argc > 1) {
		alloc_n(strcmp(argv[1], "vforked") ? 9 : 7, strcmp(argv[1], "vforked") ? 3004 : 3003);
		return 0;
	}
	alloc_n(3, 3001);
	f = fork();
	if (f == 0) {
		alloc_n(5, 3002);
		_exit(0);
	}
	ok &= wait_ok(f);
	v = vfork();
	if (v == 0) {
		v_malloc(3005);
		v_malloc(3005);
		execv(argv[0], vfork_argv);
		_exit(127);
	}
	ok &= wait_ok(v);
	ok &= posix_spawn(&s, argv[0], NULL, NULL, spawn_argv, environ) == 0 && wait_ok(s);
	printf("fork %d\nvfork %d\nspawn %d\n", f, v, s);
	return ok ? 0 : 1;
}
