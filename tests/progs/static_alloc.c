// SPDX-License-Identifier: GPL-2.0-only
/* static_alloc.c — linked with a static allocator (libjemalloc.a or libtcmalloc_minimal.a): 50 x malloc(SIZE) + free,
 * and with jemalloc 20 x mallocx(SIZE + 1) + dallocx. SIZE comes from the build (5151 jemalloc, 5252 tcmalloc). */
#include <stdlib.h>
void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

#ifdef WITH_MALLOCX
void *mallocx(size_t size, int flags);
void dallocx(void *ptr, int flags);
#endif

int main(void)
{
	for (int i = 0; i < 50; i++)
		v_free(v_malloc(SIZE));
#ifdef WITH_MALLOCX
	for (int i = 0; i < 20; i++)
		dallocx(mallocx(SIZE + 1, 0), 0);
#endif
	return 0;
}
