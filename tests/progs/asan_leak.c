// SPDX-License-Identifier: GPL-2.0-only
/* asan_leak.c — built with -fsanitize=address: 3 blocks of 1000 bytes lost while a second thread is alive, for
 * LeakSanitizer's report at exit (it stops the world with PTRACE_ATTACH of each thread). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
void *volatile keep;

static void *sleeper(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

int main(void)
{
	pthread_t t;
	int i;

	pthread_create(&t, NULL, sleeper, NULL);
	for (i = 0; i < 3; i++)
		keep = malloc(1000);
	keep = NULL;
	puts("asan_leak: main done");
	return 0;
}
