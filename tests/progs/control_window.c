// SPDX-License-Identifier: GPL-2.0-only
/* control_window.c — writes start, mark and stop lines to $MEMTRACK_CONTROL around known allocations. */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
static int ctl = -1;
static volatile int done, calls;
static void *volatile sink;

static void line(const char *s)
{
	if (write(ctl, s, strlen(s)) != (ssize_t)strlen(s))
		_exit(10);
}

static void allocs(void **keep, int n, size_t size)
{
	for (int i = 0; i < n; i++)
		keep[i] = malloc(size);
}

/* 100 x 1111 before start, 100 x 2222 between start and stop (the 1111s freed there), 100 x 3333 after. */
static int single(void)
{
	static void *a[100], *b[100], *c[100];

	allocs(a, 100, 1111);
	line("start\n");
	allocs(b, 100, 2222);
	for (int i = 0; i < 100; i++)
		free(a[i]);
	line("mark phase2\n");
	line("stop\n");
	allocs(c, 100, 3333);
	return 0;
}

/* Each line once the churning thread has made 100 more calls: a window is never empty, however busy the CPUs. */
static void wait_calls(void)
{
	calls = 0;
	while (calls < 100)
		sched_yield();
}

/* For report --between A B: 50 x 5555 before A, 20 of them freed after it, 100 x 2222 (30 freed), B, 100 x 3333. */
static int between(void)
{
	static void *a[50], *b[100], *c[100];

	allocs(a, 50, 5555);
	line("mark A\n");
	for (int i = 0; i < 20; i++)
		free(a[i]);
	allocs(b, 100, 2222);
	for (int i = 0; i < 30; i++)
		free(b[i]);
	line("mark B\n");
	allocs(c, 100, 3333);
	return 0;
}

static void *writer(void *arg)
{
	(void)arg;
	wait_calls();
	line("start\n");
	wait_calls();
	line("mark phase2\n");
	wait_calls();
	line("stop\n");
	wait_calls();
	done = 1;
	return NULL;
}

/* The main thread churns malloc(4444)/free until the second thread has written start, mark and stop. */
static int threads(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, writer, NULL))
		return 11;
	while (!done) {
		sink = malloc(4444);
		free(sink);
		calls++;
	}
	pthread_join(t, NULL);
	return 0;
}

/* A block allocated while paused, freed by a thread as its last call before it writes stop and ends. */
static void *freer(void *p)
{
	free(p);
	line("stop\n");
	return NULL;
}

static int held(void)
{
	void *p = malloc(7777);
	pthread_t t;

	line("start\n");
	if (pthread_create(&t, NULL, freer, p))
		return 11;
	pthread_join(t, NULL);
	return 0;
}

/*
 * A window whose blocks end after its stop: 2000 x 6666 allocated inside it, then, recording off, 100 x 1111
 * allocated and freed, 1000 of the window's freed and the other 1000 realloc'd to 100000 B (freed by the move, or
 * resized in place) and freed.
 */
static int freed_after(void)
{
	static void *a[2000], *b[100];

	line("start\n");
	allocs(a, 2000, 6666);
	line("stop\n");
	allocs(b, 100, 1111);
	for (int i = 0; i < 100; i++)
		free(b[i]);
	for (int i = 0; i < 1000; i++)
		free(a[i]);
	for (int i = 1000; i < 2000; i++) {
		a[i] = realloc(a[i], 100000);
		free(a[i]);
	}
	return 0;
}

/* The tracer stopped while a burst fills its ring: events are dropped. */
static int burst(void)
{
	char buf[4096], *p;
	FILE *f = fopen("/proc/self/status", "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	pid_t tracer;

	if (f)
		fclose(f);
	buf[n] = 0;
	p = strstr(buf, "TracerPid:");
	tracer = p ? atoi(p + 10) : 0;
	if (tracer <= 0 || kill(tracer, SIGSTOP))
		return 12;
	for (int i = 0; i < 200000; i++) {
		sink = malloc(16);
		free(sink);
	}
	kill(tracer, SIGCONT);
	return 0;
}

/* single()'s window through a stdio stream flushed once per two lines, and a line that is no command. */
static int lines(void)
{
	static void *a[100], *b[100], *c[100];
	FILE *f = fdopen(ctl, "w");

	if (!f)
		return 15;
	allocs(a, 100, 1111);
	fputs("start\nmark phase2\n", f);
	fflush(f);
	allocs(b, 100, 2222);
	for (int i = 0; i < 100; i++)
		free(a[i]);
	fputs("stop\nbogus\n", f);
	fflush(f);
	allocs(c, 100, 3333);
	return 0;
}

/* Who owns the FIFO and its directory, and their modes: "PATH fifo MODE UID dir MODE UID". */
static int owners(const char *path)
{
	char dir[4096];
	struct stat f, d;

	snprintf(dir, sizeof(dir), "%s", path);
	if (!strrchr(dir, '/'))
		return 13;
	*strrchr(dir, '/') = 0;
	if (stat(path, &f) || stat(dir, &d))
		return 14;
	printf("%s fifo %o %u dir %o %u\n", path, (unsigned)f.st_mode, (unsigned)f.st_uid, (unsigned)d.st_mode,
	       (unsigned)d.st_uid);
	return 0;
}

int main(int argc, char **argv)
{
	const char *path = getenv("MEMTRACK_CONTROL");

	if (argc > 1 && !strcmp(argv[1], "burst"))
		return burst();
	if (!path || (ctl = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return 9;
	if (argc > 1 && !strcmp(argv[1], "owners"))
		return owners(path);
	if (argc > 1 && !strcmp(argv[1], "held"))
		return held();
	if (argc > 1 && !strcmp(argv[1], "between"))
		return between();
	if (argc > 1 && !strcmp(argv[1], "lines"))
		return lines();
	if (argc > 1 && !strcmp(argv[1], "freed_after"))
		return freed_after();
	return argc > 1 && !strcmp(argv[1], "threads") ? threads() : single();
}
