// SPDX-License-Identifier: GPL-2.0-only
/* handoff.c — one thread on CPU 0 mallocs 20,000 blocks of 48 bytes, another on CPU 1 frees each, passed through a pipe. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#define BLOCKS 20000
#define SIZE 48

void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;
static int pipefd[2];

/* On its own CPU when there are two: each thread's records then gather in another CPU's batch. */
static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *freer(void *arg)
{
	void *p;

	(void)arg;
	pin(1);
	while (read(pipefd[0], &p, sizeof(p)) == sizeof(p))
		v_free(p);
	return NULL;
}

int main(void)
{
	pthread_t t;
	void *p;
	int i;

	if (pipe(pipefd) || pthread_create(&t, NULL, freer, NULL))
		return 1;
	pin(0);
	for (i = 0; i < BLOCKS; i++) {
		p = v_malloc(SIZE);
		if (write(pipefd[1], &p, sizeof(p)) != sizeof(p))
			return 1;
	}
	close(pipefd[1]);
	pthread_join(t, NULL);
	return 0;
}
