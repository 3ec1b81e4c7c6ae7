// SPDX-License-Identifier: GPL-2.0-only
/* dlopen_both.c — dlopens libfake_both.so (two allocators in one file): 10 x mi_malloc(3333), 10 x tc_malloc(3434). */
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	char path[4096];
	void *lib, *(*mi)(size_t), *(*tc)(size_t);
	void (*mi_free)(void *), (*tc_free)(void *);

	snprintf(path, sizeof(path), "%s/libfake_both.so", argc > 1 ? argv[1] : ".");
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return 2;
	mi = (void *(*)(size_t))dlsym(lib, "mi_malloc");
	tc = (void *(*)(size_t))dlsym(lib, "tc_malloc");
	mi_free = (void (*)(void *))dlsym(lib, "mi_free");
	tc_free = (void (*)(void *))dlsym(lib, "tc_free");
	if (!mi || !tc || !mi_free || !tc_free)
		return 3;
	for (int i = 0; i < 10; i++) {
		mi_free(mi(3333));
		tc_free(tc(3434));
	}
	return 0;
}
