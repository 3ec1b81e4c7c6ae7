// SPDX-License-Identifier: GPL-2.0-only
/* alloc_ctor.c — allocations in a constructor, before main: 3 x malloc(1111) kept, then 1 x malloc(2222) freed. */
#include <stdlib.h>
static void *kept[3];
void *(*volatile mt_malloc)(size_t) = malloc;

__attribute__((constructor)) static void early(void)
{
	for (int i = 0; i < 3; i++)
		kept[i] = mt_malloc(1111);
}

int main(void)
{
	free(mt_malloc(2222));
	return kept[0] && kept[1] && kept[2] ? 0 : 1;
}
