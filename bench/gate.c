// SPDX-License-Identifier: GPL-2.0-only
/* gate.c — runs a command stopped before its exec, for tracers that attach by pid; times it from SIGCONT to exit. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
/*
 * memleak (-p PID) and bpftrace (-p PID) attach to a process that already exists; their own start-up (compiling the
 * BPF program, seconds) is no part of the command's time. The child stops itself before its exec, so the tracer
 * attaches to the pid that will run the command, from its first instruction; the caller sends SIGCONT once the
 * tracer says it is attached, and the command's time runs from the continue to the reap.
 */

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* The pid goes to PIDFILE through a rename, so the reader sees all of it or nothing. */
static int pid__publish(const char *path, pid_t pid)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "%d\n", pid);
	if (fclose(f) || rename(tmp, path))
		return -errno;
	return 0;
}

static int wait__until(pid_t pid, int *status, int flags, int (*done)(int))
{
	for (;;) {
		if (waitpid(pid, status, flags) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (done(*status) || WIFEXITED(*status) || WIFSIGNALED(*status))
			return 0;
	}
}

static int is_stopped(int status) { return WIFSTOPPED(status); }
static int is_continued(int status) { return WIFCONTINUED(status); }
static int is_gone(int status) { return WIFEXITED(status) || WIFSIGNALED(status); }

int main(int argc, char **argv)
{
	long long t0, t1;
	int status, code;
	pid_t pid;
	FILE *f;

	if (argc < 5 || strcmp(argv[3], "--")) {
		fprintf(stderr, "usage: gate PIDFILE OUTFILE -- COMMAND [ARGS...]\n"
				"  the command stops before its exec; its pid goes to PIDFILE; after SIGCONT it runs,\n"
				"  and OUTFILE gets wall_ns= status=\n");
		return EXIT_FAILURE;
	}
	pid = fork();
	if (pid < 0)
		return EXIT_FAILURE;
	if (!pid) {
		raise(SIGSTOP);
		execvp(argv[4], argv + 4);
		fprintf(stderr, "gate: cannot run '%s': %s\n", argv[4], strerror(errno));
		_exit(127);
	}
	if (wait__until(pid, &status, WUNTRACED, is_stopped) || !WIFSTOPPED(status) || pid__publish(argv[1], pid))
		return EXIT_FAILURE;
	if (wait__until(pid, &status, WCONTINUED | WUNTRACED, is_continued))
		return EXIT_FAILURE;
	t0 = now_ns();
	if (!is_gone(status) && wait__until(pid, &status, 0, is_gone))
		return EXIT_FAILURE;
	t1 = now_ns();
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	f = fopen(argv[2], "we");
	if (!f)
		return EXIT_FAILURE;
	fprintf(f, "wall_ns=%lld status=%d\n", t1 - t0, code);
	fclose(f);
	return code;
}
