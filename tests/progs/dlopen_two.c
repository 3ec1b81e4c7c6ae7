// SPDX-License-Identifier: GPL-2.0-only
/* dlopen_two.c — two threads dlopen two allocator libraries at the same moment, then allocate through them:
 * thread 0: libfake_mi.so, 300 x mi_malloc(3131) + mi_free; thread 1: libfake_tc.so, 300 x tc_malloc(3232) + tc_free. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
static pthread_barrier_t start;
static const char *dir;

struct job {
	const char *lib, *alloc, *release;
	size_t size;
	int ok;
};

static void *worker(void *arg)
{
	struct job *j = arg;
	char path[4096];
	void *(*alloc)(size_t);
	void (*release)(void *);
	void *lib;

	snprintf(path, sizeof(path), "%s/%s", dir, j->lib);
	pthread_barrier_wait(&start);
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return NULL;
	alloc = (void *(*)(size_t))dlsym(lib, j->alloc);
	release = (void (*)(void *))dlsym(lib, j->release);
	for (int i = 0; alloc && release && i < 300; i++)
		release(alloc(j->size));
	j->ok = alloc && release;
	return NULL;
}

int main(int argc, char **argv)
{
	struct job jobs[2] = { { "libfake_mi.so", "mi_malloc", "mi_free", 3131, 0 },
			       { "libfake_tc.so", "tc_malloc", "tc_free", 3232, 0 } };
	pthread_t t[2];
	char *slash;

	dir = argc > 1 ? argv[1] : ".";
	(void)slash;
	pthread_barrier_init(&start, NULL, 2);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, &jobs[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return jobs[0].ok && jobs[1].ok ? 0 : 1;
}
