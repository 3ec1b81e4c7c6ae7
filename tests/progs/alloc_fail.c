// SPDX-License-Identifier: GPL-2.0-only
/* alloc_fail.c — allocation calls that fail, each recorded with addr 0 and the size asked (see test_record.c). */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#define HUGE (1ull << 62)

/* Through volatile pointers so that the compiler cannot know the calls fail. */
void *(*volatile v_malloc)(size_t) = malloc;
void *(*volatile v_calloc)(size_t, size_t) = calloc;
void *(*volatile v_realloc)(void *, size_t) = realloc;
void *(*volatile v_reallocarray)(void *, size_t, size_t) = reallocarray;
void *(*volatile v_aligned_alloc)(size_t, size_t) = aligned_alloc;
void *(*volatile v_memalign)(size_t, size_t) = memalign;
int (*volatile v_posix_memalign)(void **, size_t, size_t) = posix_memalign;
void *(*volatile v_valloc)(size_t) = valloc;
void *(*volatile v_pvalloc)(size_t) = pvalloc;
void (*volatile v_free)(void *) = free;

/* One failure of each other entry point: 8 calls; realloc's block stays its caller's, and is freed. */
static int others(void)
{
	void *p = v_malloc(4444), *q = NULL;
	int ok = 0;

	ok += v_realloc(NULL, HUGE) != NULL;
	ok += v_realloc(p, HUGE) != NULL;
	ok += v_reallocarray(NULL, 1ull << 32, 1ull << 33) != NULL;
	ok += v_aligned_alloc(64, HUGE) != NULL;
	ok += v_memalign(64, HUGE) != NULL;
	ok += v_valloc(HUGE) != NULL;
	ok += v_pvalloc(HUGE) != NULL;
	ok += v_posix_memalign(&q, 64, HUGE) == 0;
	v_free(p);
	return ok;
}

/* 10 malloc(2^62) and 5 callocs whose nmemb * size overflows; with "all", others() too. Exits with the calls that
 * did not fail. */
int main(int argc, char **argv)
{
	int i, ok = 0;

	for (i = 0; i < 10; i++)
		ok += v_malloc(HUGE) != NULL;
	for (i = 0; i < 5; i++)
		ok += v_calloc(1ull << 32, 1ull << 33) != NULL;
	if (argc > 1 && !strcmp(argv[1], "all"))
		ok += others();
	return ok;
}
