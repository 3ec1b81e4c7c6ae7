// SPDX-License-Identifier: GPL-2.0-only
/* alloc_sizes.c — malloc, calloc, realloc, posix_memalign and free with exactly known counts and sizes, for whichever allocator is preloaded. */
#include <stdlib.h>
/* Through volatile pointers so that the compiler cannot pair and drop malloc/free. */
void *(*volatile v_malloc)(size_t) = malloc;
void *(*volatile v_calloc)(size_t, size_t) = calloc;
void *(*volatile v_realloc)(void *, size_t) = realloc;
int (*volatile v_posix_memalign)(void **, size_t, size_t) = posix_memalign;
void (*volatile v_free)(void *) = free;

int main(void)
{
	void *p[40];
	int i, failures = 0;

	for (i = 0; i < 40; i++)
		failures += !(p[i] = v_malloc(i < 30 ? 3131 : 70000));	/* 30 small, 10 large */
	for (i = 0; i < 20; i++)
		failures += !(p[i] = v_realloc(p[i], 4141));
	for (i = 0; i < 40; i++)
		v_free(p[i]);
	for (i = 0; i < 15; i++)
		failures += !(p[i] = v_calloc(7, 737));
	for (i = 15; i < 20; i++)
		failures += v_posix_memalign(&p[i], 256, 2525) != 0;
	for (i = 0; i < 20; i++)
		v_free(p[i]);
	v_free(NULL);
	return failures;
}
