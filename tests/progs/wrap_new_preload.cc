// SPDX-License-Identifier: GPL-2.0-only
// wrap_new_preload.cc — an LD_PRELOAD wrapper as leak checkers are, whose operator new forwards to the next one
// (dlsym(RTLD_NEXT)): libstdc++'s std::bad_alloc comes out through the wrapper's frame.
#include <cstddef>
#include <dlfcn.h>
#include <new>
extern "C" void *__libc_malloc(std::size_t size);
extern "C" void __libc_free(void *ptr);

extern "C" void *malloc(std::size_t size)
{
	return __libc_malloc(size);
}

extern "C" void free(void *ptr)
{
	__libc_free(ptr);
}

void *operator new(std::size_t size)
{
	static void *(*next)(std::size_t) = reinterpret_cast<void *(*)(std::size_t)>(dlsym(RTLD_NEXT, "_Znwm"));

	return next(size);
}
