// SPDX-License-Identifier: GPL-2.0-only
/* swap_race.c — issue 29's U4 attacker: a child exchanges LIB's name with ALT's (a symlink to a file the user may
 * not read) over and over, while the parent dlopens LIB until it gets the library, then calls mi_malloc and mi_free
 * once through it. Exit 0 when the library was loaded, 1 when it never was. */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

int main(int argc, char **argv)
{
	void *(*alloc)(size_t);
	void (*release)(void *);
	void *lib = NULL;
	int i, ready[2];
	pid_t swapper;
	char c;

	if (argc != 3) {
		fprintf(stderr, "usage: swap_race LIB ALT\n");
		return 2;
	}
	if (pipe(ready))
		return 2;
	swapper = fork();
	if (swapper == 0) {
		for (i = 0;; i++) {
			syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE);
			if (i == 100)	/* swapping at full speed: the loads start now */
				write(ready[1], "", 1);
		}
	}
	if (read(ready[0], &c, 1) != 1)
		return 2;
	for (i = 0; i < 100000 && !lib; i++)
		lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (lib) {
		alloc = (void *(*)(size_t))dlsym(lib, "mi_malloc");
		release = (void (*)(void *))dlsym(lib, "mi_free");
		if (alloc && release)
			release(alloc(4242));
	}
	kill(swapper, SIGKILL);
	waitpid(swapper, NULL, 0);
	return lib ? 0 : 1;
}
