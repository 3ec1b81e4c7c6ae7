// SPDX-License-Identifier: GPL-2.0-only
/* alloc_threads.c — 8 threads allocating at once: 10,000 x malloc(64 + thread index) + free each. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#define THREADS 8
#define PER_THREAD 10000

void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;
static pthread_barrier_t start;

static void *worker(void *arg)
{
	size_t size = 64 + (uintptr_t)arg;

	pthread_barrier_wait(&start);
	for (int i = 0; i < PER_THREAD; i++)
		v_free(v_malloc(size));
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	uintptr_t i;

	pthread_barrier_init(&start, NULL, THREADS);
	for (i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}
