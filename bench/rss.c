// SPDX-License-Identifier: GPL-2.0-only
/* rss.c — runs a command; reports its wall time, the peak RSS of that process alone and the peak over its tree. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
/*
 * Why ptrace: ru_maxrss from wait4() or RUSAGE_CHILDREN is the maximum over a process and every descendant it reaped,
 * so for `memtrack record -- cmd` it is max(memtrack, cmd). The process's own high-water mark is only readable while
 * its mm still exists, i.e. at PTRACE_EVENT_EXIT. Only the direct child is traced: memtrack may still ptrace its own.
 */

struct run {
	pid_t pid;
	int status;
	long self_kb;		/* VmHWM of the direct child at its exit */
	long long self_cpu_ms;	/* its own user + system time, all its threads, not its children's */
	long tree_kb;		/* ru_maxrss over every process of the tree, reaped here */
	long long start_ns;	/* CLOCK_MONOTONIC before the fork: comparable with memtrack's record timestamps */
	long long end_ns;	/* CLOCK_MONOTONIC after the direct child's reap */
	long long busy_ms;	/* CPU time the whole machine spent busy meanwhile (/proc/stat) */
	long long tree_cpu_ms;	/* of which the tree's own user + system time */
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static long proc__hwm_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* utime + stime of a process's threads, from /proc/PID/stat (fields 14, 15, after the parenthesised comm). */
static long long proc__cpu_ms(pid_t pid)
{
	unsigned long long utime, stime;
	long hz = sysconf(_SC_CLK_TCK);
	char path[64], buf[1024], *p;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	p = p ? strrchr(buf, ')') : NULL;
	if (!p || hz <= 0)
		return -1;
	n = sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime);
	return n == 2 ? (long long)(utime + stime) * 1000 / hz : -1;
}

/* Busy CPU time of the whole machine so far: on a shared machine, busy minus the tree's own is someone else's. */
static long long machine__busy_ms(void)
{
	unsigned long long user, nice, sys, idle, iowait, irq, softirq, steal;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "re");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &sys, &idle, &iowait, &irq,
		   &softirq, &steal);
	fclose(f);
	if (n != 8 || hz <= 0)
		return -1;
	return (long long)(user + nice + sys + irq + softirq + steal) * 1000 / hz;
}

/* The child waits on the pipe until it is seized, so that its exit cannot come first. */
static int run__spawn(struct run *r, char **argv)
{
	int p[2], err;
	char c;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	r->pid = fork();
	if (r->pid < 0) {
		err = -errno;
		close(p[0]);
		close(p[1]);
		return err;
	}
	if (!r->pid) {
		close(p[1]);
		if (read(p[0], &c, 1) < 0)
			_exit(126);
		execvp(argv[0], argv);
		fprintf(stderr, "rss: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[0]);
	if (ptrace(PTRACE_SEIZE, r->pid, NULL, (void *)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL))) {
		fprintf(stderr, "rss: cannot seize %d: %s (its peak RSS alone will be missing)\n", r->pid,
			strerror(errno));
	}
	close(p[1]);
	return 0;
}

/* Resume from a stop: the exit event is where the high-water mark is read; a signal stop passes its signal on. */
static void run__resume(struct run *r, int status)
{
	int sig = WSTOPSIG(status), event = status >> 16;

	if (event == PTRACE_EVENT_EXIT) {
		r->self_kb = proc__hwm_kb(r->pid);
		r->self_cpu_ms = proc__cpu_ms(r->pid);
	}
	if (event || sig == SIGTRAP)
		sig = 0;
	ptrace(PTRACE_CONT, r->pid, NULL, (void *)(long)sig);
}

static int run__wait(struct run *r)
{
	int status;

	for (;;) {
		if (waitpid(r->pid, &status, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (WIFSTOPPED(status)) {
			run__resume(r, status);
			continue;
		}
		r->status = status;
		return 0;
	}
}

/* Orphans of the tree were reparented here (subreaper): reaping them all puts them in RUSAGE_CHILDREN. */
static void run__reap_tree(struct run *r)
{
	struct rusage ru;

	while (wait(NULL) > 0 || errno == EINTR)
		;
	getrusage(RUSAGE_CHILDREN, &ru);
	r->tree_kb = ru.ru_maxrss;
	r->tree_cpu_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000ll +
			 (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
}

static int exit__code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static int run__report(const struct run *r, const char *out)
{
	FILE *f = out ? fopen(out, "we") : stderr;

	if (!f) {
		fprintf(stderr, "rss: cannot write %s: %s\n", out, strerror(errno));
		return -errno;
	}
	fprintf(f, "wall_ns=%lld self_kb=%ld tree_kb=%ld status=%d start_ns=%lld end_ns=%lld busy_ms=%lld "
		"tree_cpu_ms=%lld self_cpu_ms=%lld\n", r->end_ns - r->start_ns, r->self_kb, r->tree_kb,
		exit__code(r->status), r->start_ns, r->end_ns, r->busy_ms, r->tree_cpu_ms, r->self_cpu_ms);
	if (out)
		fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	struct run r = { .self_kb = -1, .self_cpu_ms = -1 };
	const char *out = NULL;
	int i = 1, err;

	if (argc > 2 && !strcmp(argv[1], "-o")) {
		out = argv[2];
		i = 3;
	}
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	if (i >= argc) {
		fprintf(stderr, "usage: rss [-o FILE] [--] COMMAND [ARGS...]\n"
				"  prints wall_ns= self_kb= tree_kb= status= start_ns= end_ns= busy_ms= tree_cpu_ms=\n"
				"  self_cpu_ms= to FILE (default: stderr)\n");
		return EXIT_FAILURE;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		fprintf(stderr, "rss: no subreaper (%s): orphans of the tree are not counted\n", strerror(errno));
	r.busy_ms = machine__busy_ms();
	r.start_ns = now_ns();
	err = run__spawn(&r, argv + i);
	if (!err)
		err = run__wait(&r);
	if (err) {
		fprintf(stderr, "rss: cannot run '%s': %s\n", argv[i], strerror(-err));
		return EXIT_FAILURE;
	}
	r.end_ns = now_ns();
	run__reap_tree(&r);
	if (r.busy_ms >= 0)
		r.busy_ms = machine__busy_ms() - r.busy_ms;
	if (run__report(&r, out))
		return EXIT_FAILURE;
	return exit__code(r.status);
}
