// SPDX-License-Identifier: GPL-2.0-only
/* alloc_glibc.c — every glibc allocation entry point with exactly known counts and sizes (see test_record.c). */
#include <malloc.h>
#include <stdlib.h>
/* Through volatile pointers so that the compiler cannot pair and drop malloc/free. */
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

static int failures;

static void *check(void *p)
{
	failures += !p;
	return p;
}

static void chains(void)
{
	void *p = check(v_realloc(NULL, 100));	/* realloc(NULL, n): an allocation, once, not also as malloc */

	p = check(v_realloc(p, 200));
	p = check(v_realloc(p, 40000));
	if (v_realloc(p, 0))			/* frees p and returns NULL */
		failures++;
	for (int i = 0; i < 2; i++)
		v_free(check(v_reallocarray(NULL, 3, 333)));
}

static void aligned(void)
{
	void *p;
	int i;

	for (i = 0; i < 3; i++)
		v_free(check(v_aligned_alloc(64, 1024)));
	for (i = 0; i < 4; i++)
		v_free(check(v_memalign(128, 2048)));
	for (i = 0; i < 6; i++) {
		failures += v_posix_memalign(&p, 256, 4096) != 0;
		v_free(p);
	}
	failures += v_posix_memalign(&p, 3, 100) == 0;	/* bad alignment: EINVAL, no allocation */
	for (i = 0; i < 2; i++)
		v_free(check(v_valloc(5000)));
	for (i = 0; i < 2; i++)
		v_free(check(v_pvalloc(6000)));
}

int main(void)
{
	int i;

	for (i = 0; i < 10; i++)
		v_free(check(v_malloc(1001)));
	for (i = 0; i < 5; i++)
		v_free(check(v_calloc(10, 101)));
	for (i = 0; i < 3; i++)
		v_free(check(v_malloc(0)));		/* a block of its own: an allocation of size 0 */
	v_free(NULL);
	chains();
	aligned();
	v_malloc(1234);					/* leaked */
	return failures;
}
