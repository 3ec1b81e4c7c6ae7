// SPDX-License-Identifier: GPL-2.0-only
/* leak_sites.c — leaks from two call paths: leak_keep (3 x 100 bytes) and leak_drop (2 x 200 bytes), and frees a
 * block; built with frame pointers so that each path is its own site. No stdio. */
#include <stdlib.h>
void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

__attribute__((noinline)) void *leak_keep(void)
{
	return v_malloc(100);
}

__attribute__((noinline)) void *leak_drop(void)
{
	return v_malloc(200);
}

int main(void)
{
	int i;

	for (i = 0; i < 3; i++)
		leak_keep();
	for (i = 0; i < 2; i++)
		leak_drop();
	v_free(v_malloc(50));
	return 0;
}
