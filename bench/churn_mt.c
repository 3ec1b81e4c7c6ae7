// SPDX-License-Identifier: GPL-2.0-only
/* churn_mt.c — benchmark workload: churn.c's malloc/free pairs over T threads, each with its own pool and seed. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#define POOL 1024
#define THREADS_MAX 64

void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

struct worker {
	pthread_t thread;
	long n;
	uint64_t seed;
};

static void *worker__run(void *arg)
{
	struct worker *w = arg;
	uint64_t x = w->seed;
	void *pool[POOL] = { 0 };

	for (long i = 0; i < w->n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v_free(pool[x % POOL]);
		pool[x % POOL] = v_malloc(16 + (x >> 32) % 4096);
	}
	for (int i = 0; i < POOL; i++)
		v_free(pool[i]);
	return NULL;
}

/* argv: total pairs N (each thread does N / T), threads T. */
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	int t = argc > 2 ? atoi(argv[2]) : 4;
	struct worker w[THREADS_MAX];
	int i, err;

	if (t < 1 || t > THREADS_MAX) {
		fprintf(stderr, "churn_mt: threads must be 1..%d\n", THREADS_MAX);
		return EXIT_FAILURE;
	}
	for (i = 0; i < t; i++) {
		w[i].n = n / t;
		w[i].seed = 88172645463325252ull + 0x9e3779b97f4a7c15ull * i;
		err = pthread_create(&w[i].thread, NULL, worker__run, &w[i]);
		if (err) {
			fprintf(stderr, "churn_mt: pthread_create: error %d\n", err);
			return EXIT_FAILURE;
		}
	}
	for (i = 0; i < t; i++)
		pthread_join(w[i].thread, NULL);
	return EXIT_SUCCESS;
}
