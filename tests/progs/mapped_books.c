// SPDX-License-Identifier: GPL-2.0-only
/* mapped_books.c — anonymous private mappings in a known sequence, for exact books: see test_mapped_books. */
/*
 * In pages of the program's own, above what the loader mapped before main:
 *   mmap 11, 13, 17                       11, 24, 41
 *   munmap 3 from the middle of the 11    38
 *   mmap 29 and munmap it (a free place)  67 (the peak), 38
 *   mremap the 13 to 29 there (moved)     54
 *   malloc(1 MiB): glibc mmaps it         54 (allocator-held, not the program's)
 *   fork: the child munmaps the 17        child 37, then it exits
 *   fork: the child execs this program with "idle": that image maps only what the loader maps
 * Nothing else maps: no stdio, no threads. Argument "idle": main returns at once.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096

static char *map(size_t pages)
{
	char *p = mmap(NULL, pages * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(10);
	return p;
}

static void wait_ok(pid_t pid)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		_exit(11);
}

int main(int argc, char **argv)
{
	char *r1, *r2, *r3, *to, *moved, *big;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "idle"))
		return 0;
	r1 = map(11);
	r2 = map(13);
	r3 = map(17);
	if (munmap(r1 + 4 * PG, 3 * PG))
		return 1;
	to = map(29);
	if (munmap(to, 29 * PG))
		return 2;
	moved = mremap(r2, 13 * PG, 29 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, to);
	if (moved != to)
		return 3;
	big = malloc(1 << 20);
	if (!big)
		return 4;
	big[0] = 1;
	pid = fork();
	if (!pid)
		_exit(munmap(r3, 17 * PG) ? 5 : 0);
	wait_ok(pid);
	pid = fork();
	if (!pid) {
		execl(argv[0], argv[0], "idle", (char *)NULL);
		_exit(6);
	}
	wait_ok(pid);
	return 0;
}
