// SPDX-License-Identifier: GPL-2.0-only
/* rss_gap.c — known heap, program mapping and file pages, all touched, for the terms of RSS at its peak. */
/*
 * Everything is allocated before anything is touched, so that every RSS record of the rise (the peak's too) sees
 * the same books: 4 blocks of 1 MiB (glibc mmaps each, inside malloc), 8 MiB mapped anonymous and private by the
 * program, and FILE (argv[1]) mapped private and read-only. Then FILE's pages are read, then the blocks' and the
 * mapping's written; after a nap, all of it is released in the reverse order. No stdio, no threads.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BLOCKS 4
#define BLOCK (1u << 20)
#define MAPPED (8u << 20)
#define PG 4096

int main(int argc, char **argv)
{
	struct timespec nap = { 0, 50 * 1000 * 1000 };
	volatile char *block[BLOCKS], *mapped;
	volatile const char *file;
	unsigned int sum = 0;
	struct stat st;
	size_t i, k;
	int fd;

	if (argc < 2 || (fd = open(argv[1], O_RDONLY)) < 0 || fstat(fd, &st))
		return 1;
	for (k = 0; k < BLOCKS; k++)
		if (!(block[k] = malloc(BLOCK)))
			return 2;
	mapped = mmap(NULL, MAPPED, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	file = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (mapped == MAP_FAILED || file == MAP_FAILED)
		return 3;
	for (i = 0; i < (size_t)st.st_size; i += PG)
		sum += file[i];
	for (k = 0; k < BLOCKS; k++)
		for (i = 0; i < BLOCK; i += PG)
			block[k][i] = 1;
	for (i = 0; i < MAPPED; i += PG)
		mapped[i] = 1;
	nanosleep(&nap, NULL);
	munmap((void *)file, st.st_size);
	munmap((void *)mapped, MAPPED);
	for (k = 0; k < BLOCKS; k++)
		free((void *)block[k]);
	close(fd);
	return sum == 0xffffffffu;	/* the reads are used: 0 */
}
