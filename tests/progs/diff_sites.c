// SPDX-License-Identifier: GPL-2.0-only
/* diff_sites.c — `diff_sites N M K` for view BEFORE AFTER: N x 1000 B from site_a, M x 300 B from site_b (leaked),
 * K x 50 B from site_c; site_a's and site_c's freed at the end. No stdio. */
#include <stdlib.h>
void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

static void *blocks[1000];

__attribute__((noinline)) void *site_a(void)
{
	return v_malloc(1000);
}

__attribute__((noinline)) void *site_b(void)
{
	return v_malloc(300);
}

__attribute__((noinline)) void *site_c(void)
{
	return v_malloc(50);
}

int main(int argc, char **argv)
{
	int n = argc > 3 ? atoi(argv[1]) : 0, m = argc > 3 ? atoi(argv[2]) : 0, k = argc > 3 ? atoi(argv[3]) : 0;
	int i, held = 0;

	if (n < 0 || m < 0 || k < 0 || n + k > 1000)
		return 2;
	for (i = 0; i < n; i++)
		blocks[held++] = site_a();
	for (i = 0; i < m; i++)
		site_b();
	for (i = 0; i < k; i++)
		blocks[held++] = site_c();
	while (held > 0)
		v_free(blocks[--held]);
	return 0;
}
