// SPDX-License-Identifier: GPL-2.0-only
/* leader_exit.c — the main thread calls pthread_exit; the other one makes 50 malloc(4343) + free, then dlopens
 * libmimalloc, which the kernel can no longer probe for this process, and makes 100 mi_malloc(4242) + mi_free; a
 * child it forks then makes 7 mi_malloc(4141) + mi_free. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;
static pthread_t main_thread;

/* The join returns before the leader has dropped its memory: wait until /proc/self/stat (the leader's) says Z. */
static int leader_gone(void)
{
	char buf[1024], *p;

	for (int i = 0; i < 5000; i++) {
		FILE *f = fopen("/proc/self/stat", "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

		if (f)
			fclose(f);
		buf[n] = 0;
		p = strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2] == 'Z')
			return 1;
		usleep(1000);
	}
	return 0;
}

static void *run(void *arg)
{
	void *lib, *(*mi_malloc)(size_t);
	void (*mi_free)(void *);
	int status;
	pid_t child;

	(void)arg;
	pthread_join(main_thread, NULL);	/* returns once the main thread is on its way out */
	if (!leader_gone())
		exit(4);
	for (int i = 0; i < 50; i++)
		v_free(v_malloc(4343));
	lib = dlopen("libmimalloc.so.2", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "leader_exit: %s\n", dlerror());
		exit(2);
	}
	mi_malloc = (void *(*)(size_t))dlsym(lib, "mi_malloc");
	mi_free = (void (*)(void *))dlsym(lib, "mi_free");
	if (!mi_malloc || !mi_free)
		exit(3);
	for (int i = 0; i < 100; i++)
		mi_free(mi_malloc(4242));
	child = fork();
	if (child == 0) {	/* a process of its own, with a leader: it can be probed */
		for (int i = 0; i < 7; i++)
			mi_free(mi_malloc(4141));
		_exit(0);
	}
	printf("child %d\n", child);
	exit(child > 0 && waitpid(child, &status, 0) == child && status == 0 ? 0 : 5);
}

int main(void)
{
	pthread_t t;

	main_thread = pthread_self();
	if (pthread_create(&t, NULL, run, NULL))
		return 1;
	pthread_exit(NULL);
}
