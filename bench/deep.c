// SPDX-License-Identifier: GPL-2.0-only
/* deep.c — benchmark workload: a call tree 66 frames deep at each malloc, its leaves doing churn.c's pairs. */
#include <stdint.h>
#include <stdlib.h>
#define POOL 1024
#define DEPTH 64
#define BRANCH 3	/* the lowest BRANCH levels call twice: 2^BRANCH leaves per descent */

void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

static uint64_t x = 88172645463325252ull;
static void *pool[POOL];

static long leaf(void)
{
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	v_free(pool[x % POOL]);
	pool[x % POOL] = v_malloc(16 + (x >> 32) % 4096);
	return 1;
}

long tree(int depth);
/* Through a volatile pointer, and with work after the call, so that no level is inlined or turned into a jump. */
long (*volatile v_tree)(int) = tree;

long tree(int depth)
{
	long n;

	if (!depth)
		return leaf();
	n = v_tree(depth - 1);
	if (depth <= BRANCH)
		n += v_tree(depth - 1);
	return n;
}

/* argv: malloc/free pairs N, rounded down to a multiple of 2^BRANCH. */
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	long done = 0;

	while (done + (1 << BRANCH) <= n)
		done += v_tree(DEPTH);
	for (int i = 0; i < POOL; i++)
		v_free(pool[i]);
	return done == n - n % (1 << BRANCH) ? 0 : 1;
}
