// SPDX-License-Identifier: GPL-2.0-only
/* churn.c — benchmark workload: N malloc/free pairs of random sizes (xorshift, fixed seed), keeping a small pool. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#define POOL 1024

void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5000000;
	uint64_t x = 88172645463325252ull;
	void *pool[POOL] = { 0 };

	for (long i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v_free(pool[x % POOL]);
		pool[x % POOL] = v_malloc(16 + (x >> 32) % 4096);
	}
	for (int i = 0; i < POOL; i++)
		v_free(pool[i]);
	/* Its own CPU time, for bench/split.sh: a wrapper like perf stat would be one more traced process. */
	if (argc > 2 && !strcmp(argv[2], "--cpu")) {
		struct rusage ru;

		getrusage(RUSAGE_SELF, &ru);
		printf("cpu_ms %.3f\n", (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
						 (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3);
	}
	return 0;
}
