// SPDX-License-Identifier: GPL-2.0-only
/* pages.c — page faults without allocator calls: maps, touches page by page and unmaps a block, round after round. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
/* pages [ROUNDS [MIB [--cpu]]]: --cpu prints "cpu_ms N" (user + system) and "faults N" (minor faults). */
int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 50, mib = argc > 2 ? atol(argv[2]) : 64, page = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)mib << 20;
	struct rusage ru;

	for (long r = 0; r < rounds; r++) {
		volatile char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("pages: mmap");
			return 1;
		}
		madvise((void *)p, len, MADV_NOHUGEPAGE);	/* a fault per 4 KiB page, whatever THP says */
		for (size_t i = 0; i < len; i += page)
			p[i] = 1;
		munmap((void *)p, len);
	}
	if (argc > 3 && !strcmp(argv[3], "--cpu")) {
		getrusage(RUSAGE_SELF, &ru);
		printf("cpu_ms %.3f\nfaults %ld\n", (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3, ru.ru_minflt);
	}
	return 0;
}
