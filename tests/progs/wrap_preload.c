// SPDX-License-Identifier: GPL-2.0-only
/* wrap_preload.c — an LD_PRELOAD wrapper as leak checkers are: malloc/free and operator new/delete, forwarding to
 * glibc. Each operator goes through the one below it (sized delete[] -> delete[] -> delete -> free -> glibc's). */
#include <stddef.h>
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t nmemb, size_t size);
void *__libc_realloc(void *ptr, size_t size);
void __libc_free(void *ptr);

void *malloc(size_t size)
{
	return __libc_malloc(size);
}

void *calloc(size_t nmemb, size_t size)
{
	return __libc_calloc(nmemb, size);
}

void *realloc(void *ptr, size_t size)
{
	return __libc_realloc(ptr, size);
}

void free(void *ptr)
{
	__libc_free(ptr);
}

/* operator new(size_t), new[](size_t), delete(void *), delete[](void *) and the sized deletes, by mangled name */
void *_Znwm(size_t size)
{
	return malloc(size);
}

void *_Znam(size_t size)
{
	return _Znwm(size);
}

void _ZdlPv(void *ptr)
{
	free(ptr);
}

void _ZdaPv(void *ptr)
{
	_ZdlPv(ptr);
}

void _ZdlPvm(void *ptr, size_t size)
{
	(void)size;
	_ZdlPv(ptr);
}

void _ZdaPvm(void *ptr, size_t size)
{
	(void)size;
	_ZdaPv(ptr);
}
