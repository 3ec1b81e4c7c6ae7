// SPDX-License-Identifier: GPL-2.0-only
/* dlopen_mi.c — dlopens libmimalloc and makes exactly 100 mi_malloc(4242) + 100 mi_free. */
#include <dlfcn.h>
#include <stdio.h>
int main(void)
{
	void *lib = dlopen("libmimalloc.so.2", RTLD_NOW | RTLD_LOCAL);
	void *(*mi_malloc)(size_t);
	void (*mi_free)(void *);
	void *p[100];
	int i;

	if (!lib) {
		fprintf(stderr, "dlopen_mi: %s\n", dlerror());
		return 2;
	}
	mi_malloc = (void *(*)(size_t))dlsym(lib, "mi_malloc");
	mi_free = (void (*)(void *))dlsym(lib, "mi_free");
	if (!mi_malloc || !mi_free)
		return 3;
	for (i = 0; i < 100; i++)
		p[i] = mi_malloc(4242);
	for (i = 0; i < 100; i++)
		mi_free(p[i]);
	return 0;
}
