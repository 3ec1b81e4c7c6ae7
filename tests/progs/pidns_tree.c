// SPDX-License-Identifier: GPL-2.0-only
/* pidns_tree.c — a process, its thread (which dlopens libmimalloc, held at the mapping), a fork child and its own
 * child, each allocating a known amount and printing the pid or tid it has in its PID namespace. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

static void alloc_n(int n, size_t size)
{
	for (int i = 0; i < n; i++)
		v_free(v_malloc(size));
}

/* 4 mi_malloc(3102) pairs, in a library mapped by this thread once the tree runs. */
static void *thread_main(void *arg)
{
	void *lib = dlopen("libmimalloc.so.2", RTLD_NOW | RTLD_LOCAL);
	void *(*mi_malloc)(size_t);
	void (*mi_free)(void *);

	(void)arg;
	dprintf(1, "thread %d\n", gettid());
	if (!lib)
		return (void *)1;
	mi_malloc = (void *(*)(size_t))dlsym(lib, "mi_malloc");
	mi_free = (void (*)(void *))dlsym(lib, "mi_free");
	if (!mi_malloc || !mi_free)
		return (void *)1;
	for (int i = 0; i < 4; i++)
		mi_free(mi_malloc(3102));
	return NULL;
}

static int wait_ok(pid_t pid)
{
	int status;

	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* 5 malloc(3103) pairs, and a child of its own with 6 malloc(3104) pairs. */
static int child_main(void)
{
	pid_t g;

	dprintf(1, "child %d\n", getpid());
	alloc_n(5, 3103);
	g = fork();
	if (g == 0) {
		dprintf(1, "grandchild %d\n", getpid());
		alloc_n(6, 3104);
		_exit(0);
	}
	dprintf(1, "forked %d\n", g);
	return wait_ok(g) ? 0 : 1;
}

int main(void)
{
	pthread_t t;
	void *ret = NULL;
	pid_t f;

	dprintf(1, "self %d\n", getpid());
	alloc_n(3, 3101);
	if (pthread_create(&t, NULL, thread_main, NULL) || pthread_join(t, &ret) || ret)
		return 1;
	f = fork();
	if (f == 0)
		_exit(child_main());
	dprintf(1, "fork %d\n", f);
	return wait_ok(f) ? 0 : 1;
}
