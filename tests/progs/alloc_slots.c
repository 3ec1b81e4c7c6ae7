// SPDX-License-Identifier: GPL-2.0-only
/* alloc_slots.c — a thread whose tid shares memtrack's BPF call slot with its main thread's (the kernel is asked for
 * that tid through ns_last_pid), both allocating at once; then a thread that is not the leader execs. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#define SLOTS 32768		/* bpf/memtrack.bpf.c: MT_CALL_SLOTS */
#define PAIRS 2000
#define TRIES 50

void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;
static pthread_barrier_t start;
static pid_t wanted, seen;

static void alloc_n(int n, size_t size)
{
	for (int i = 0; i < n; i++)
		v_free(v_malloc(size));
}

static void *worker(void *arg)
{
	(void)arg;
	seen = syscall(SYS_gettid);
	pthread_barrier_wait(&start);
	if (seen != wanted)
		return NULL;	/* another task took that tid first: the main thread tries again */
	alloc_n(PAIRS, 3301);
	return NULL;
}

static int next_pid(pid_t pid)
{
	int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY), ok;
	char buf[32];

	if (fd < 0)
		return -1;
	snprintf(buf, sizeof(buf), "%d", pid - 1);
	ok = write(fd, buf, strlen(buf)) == (ssize_t)strlen(buf);
	close(fd);
	return ok ? 0 : -1;
}

/* A free tid a whole number of slots away from the main thread's, below pid_max; one candidate per try. */
static pid_t candidate(int try)
{
	pid_t tid = syscall(SYS_gettid), c;
	long pid_max = 0;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");

	if (!f || fscanf(f, "%ld", &pid_max) != 1)
		pid_max = 0;
	if (f)
		fclose(f);
	for (int k = 1 + try / 2; k < 1 + try / 2 + 128; k++) {
		c = try % 2 ? tid - k * SLOTS : tid + k * SLOTS;
		if (c > 300 && c < pid_max && kill(c, 0) && errno == ESRCH)
			return c;
	}
	return 0;
}

/* The colliding thread and the main thread allocate at once, in the same slot's reach. */
static int collide(void)
{
	pthread_t t;
	bool hit = false;

	for (int i = 0; i < TRIES && !hit; i++) {
		wanted = candidate(i);
		if (!wanted)
			continue;
		if (next_pid(wanted) || pthread_create(&t, NULL, worker, NULL))
			return -1;
		pthread_barrier_wait(&start);
		hit = seen == wanted;
		if (hit)
			alloc_n(PAIRS, 3302);
		pthread_join(t, NULL);
	}
	return hit ? 0 : -1;
}

static void *exec_self(void *argv0)
{
	char *argv[] = { argv0, "execed", NULL };

	execv(argv0, argv);
	_exit(127);
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1) {
		alloc_n(3, 3303);
		return 0;
	}
	pthread_barrier_init(&start, NULL, 2);
	if (collide()) {
		fprintf(stderr, "alloc_slots: no thread got a tid that shares the main thread's slot\n");
		return 2;
	}
	printf("collide %d\n", seen);
	fflush(stdout);
	if (pthread_create(&t, NULL, exec_self, argv[0]))
		return 1;
	pthread_join(t, NULL);	/* the exec ends this thread's wait */
	return 1;
}
