// SPDX-License-Identifier: GPL-2.0-only
/* phases.c — three phases 200 ms apart, for time windows: 10 blocks; then 5 of them freed and 3 more allocated;
 * then 2 freed. The 6 left leak. No stdio. */
#include <stdlib.h>
#include <time.h>
void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };

	while (nanosleep(&ts, &ts))
		;
}

int main(void)
{
	void *p[13];
	int i;

	for (i = 0; i < 10; i++)
		p[i] = v_malloc(1000);
	pause_ms(200);
	for (i = 0; i < 5; i++)
		v_free(p[i]);
	for (i = 10; i < 13; i++)
		p[i] = v_malloc(3000);
	pause_ms(200);
	v_free(p[5]);
	v_free(p[10]);
	return 0;
}
