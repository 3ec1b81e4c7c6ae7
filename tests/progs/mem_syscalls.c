// SPDX-License-Identifier: GPL-2.0-only
/* mem_syscalls.c — each recorded memory syscall once with sizes no loader uses, for exact checks of their fields. */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
int main(void)
{
	void *p = mmap(NULL, 7 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *q, *brk0;

	if (p == MAP_FAILED)
		return 1;
	q = mremap(p, 7 * 4096, 11 * 4096, MREMAP_MAYMOVE);
	if (q == MAP_FAILED || munmap(q, 11 * 4096))
		return 1;
	brk0 = sbrk(0);
	if (brk((char *)brk0 + 13 * 4096))
		return 1;
	return 0;
}
