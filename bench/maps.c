// SPDX-License-Identifier: GPL-2.0-only
/* maps.c — mapping syscalls at a high rate: mmap, touch one page, mremap to twice the size, munmap, round after round. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

/* maps [ROUNDS [--cpu]]: --cpu prints "cpu_ms N" (user + system). No allocator call: only the mapping books move. */
int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 100000;
	size_t len = 64 << 10;
	struct rusage ru;

	for (long r = 0; r < rounds; r++) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *q;

		if (p == MAP_FAILED) {
			perror("maps: mmap");
			return 1;
		}
		p[0] = 1;
		q = mremap(p, len, 2 * len, MREMAP_MAYMOVE);
		if (q == MAP_FAILED) {
			perror("maps: mremap");
			return 1;
		}
		munmap(q, 2 * len);
	}
	if (argc > 2 && !strcmp(argv[2], "--cpu")) {
		getrusage(RUSAGE_SELF, &ru);
		printf("cpu_ms %.3f\n", (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
						(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3);
	}
	return 0;
}
