// SPDX-License-Identifier: GPL-2.0-only
/* fp_chain.c — f1 -> ... -> f20 -> malloc(7171) x 5, built with frame pointers except fp_f10.c (see there);
 * `qsort` allocates from a comparator called inside Debian's libc, which is built without frame pointers. */
#include <stdlib.h>
#include <string.h>
#include "fp_chain.h"

void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;
volatile int sink;

NOIPA int f20(int n)
{
	for (int i = 0; i < 5; i++)
		v_free(v_malloc(7171));
	return n;
}
#define LINK(a, b) NOIPA int a(int n) { return b(n + 1) + 1; }
LINK(f19, f20) LINK(f18, f19) LINK(f17, f18) LINK(f16, f17) LINK(f15, f16) LINK(f14, f15) LINK(f13, f14)
LINK(f12, f13) LINK(f11, f12) LINK(f9, f10) LINK(f8, f9) LINK(f7, f8) LINK(f6, f7) LINK(f5, f6) LINK(f4, f5)
LINK(f3, f4) LINK(f2, f3) LINK(f1, f2)

NOIPA static int by_value(const void *a, const void *b)
{
	v_free(v_malloc(7272));
	return *(const int *)a - *(const int *)b;
}

int main(int argc, char **argv)
{
	int v[4] = { 3, 1, 2, 0 };

	if (argc > 1 && !strcmp(argv[1], "qsort"))
		qsort(v, 4, sizeof(v[0]), by_value);
	else
		sink = f1(0);
	return 0;
}
