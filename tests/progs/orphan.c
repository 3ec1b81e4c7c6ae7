// SPDX-License-Identifier: GPL-2.0-only
/* orphan.c — leaves a child behind: it makes one malloc(4545), writes its pid to argv[1] and waits forever. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
void *(*volatile v_malloc)(size_t) = malloc;

int main(int argc, char **argv)
{
	FILE *f;

	if (argc != 2)
		return 100;
	if (fork() == 0) {
		v_malloc(4545);
		f = fopen(argv[1], "w");
		if (f) {
			fprintf(f, "%d\n", getpid());
			fclose(f);
		}
		for (;;)
			pause();
	}
	return 0;
}
