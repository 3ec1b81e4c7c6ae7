// SPDX-License-Identifier: GPL-2.0-only
/* rss_touch.c — touches a 64 MiB block page by page, sleeps 150 ms holding it, then frees it. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#define BLOCK (64u << 20)

int main(void)
{
	struct timespec nap = { 0, 150 * 1000 * 1000 };
	volatile char *p = malloc(BLOCK);
	long page = sysconf(_SC_PAGESIZE);

	if (!p)
		return 1;
	for (size_t i = 0; i < BLOCK; i += page)
		p[i] = 1;
	nanosleep(&nap, NULL);
	free((void *)p);
	return 0;
}
