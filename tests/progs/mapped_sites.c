// SPDX-License-Identifier: GPL-2.0-only
/* mapped_sites.c — program mappings from two call sites and two allocation sites, for exact sites: test_mapped_sites. */
/*
 * In pages: arena() maps 11, of which main unmaps 3 (the arena's site keeps 8); table() maps 13, which main grows
 * to 29 with mremap (the table's site, not main's mremap, holds 29). Both are held at the exit. Beside them
 * small() allocates 100 bytes twice and big() 200 once; the blocks are freed. Nothing else maps: no stdio, no
 * threads.
 */
#include <stdlib.h>
#include <sys/mman.h>

#define PG 4096

__attribute__((noinline)) static char *map(size_t pages)
{
	char *p = mmap(NULL, pages * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		exit(10);
	return p;
}

__attribute__((noinline)) static char *arena(void)
{
	return map(11);
}

__attribute__((noinline)) static char *table(void)
{
	return map(13);
}

__attribute__((noinline)) static void *small(void)
{
	return malloc(100);
}

__attribute__((noinline)) static void *big(void)
{
	return malloc(200);
}

int main(void)
{
	char *a = arena(), *t = table();
	void *b[3];

	if (munmap(a + 4 * PG, 3 * PG))
		return 1;
	t = mremap(t, 13 * PG, 29 * PG, MREMAP_MAYMOVE);
	if (t == MAP_FAILED)
		return 2;
	b[0] = small();
	b[1] = small();
	b[2] = big();
	free(b[0]);
	free(b[1]);
	free(b[2]);
	return 0;
}
