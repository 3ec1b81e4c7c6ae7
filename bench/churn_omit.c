// SPDX-License-Identifier: GPL-2.0-only
/* churn_omit.c — churn (N malloc/free pairs of random sizes, fixed seed) built -fomit-frame-pointer, each pair through
 * two frames of libchurn_lib.so (also without frame pointers): what the in-kernel unwinder costs where FP cannot. */
#include <stdint.h>
#include <stdlib.h>
#define POOL 1024

void *churn_lib_step(void *old, size_t n);

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5000000;
	uint64_t x = 88172645463325252ull;
	void *pool[POOL] = { 0 };

	for (long i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		pool[x % POOL] = churn_lib_step(pool[x % POOL], 16 + (x >> 32) % 4096);
	}
	for (int i = 0; i < POOL; i++)
		free(pool[i]);
	return 0;
}
