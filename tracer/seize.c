// SPDX-License-Identifier: GPL-2.0-only
/* seize.c — record --pid: seizes a running process thread by thread, and lets every tracee go cleanly at the end. */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf/memtrack.h"
#include "common/array.h"
#include "common/log.h"
#include "common/proc.h"
#include "tracer/bpf_session.h"
#include "tracer/ptrace_loop.h"
#include "tracer/seize.h"
#include "tracer/spawn.h"

#define SEIZE_CMDLINE_MAX 65536	/* what the session record can hold of it, and more */
#define DETACH_PASSES_MAX 64	/* each pass lets go of every tracee it finds: more means one keeps coming back */

/* The text of a field of /proc/TID/status ("State:", "Tgid:") into line, past the name. 0 or -errno. */
static int status__line(pid_t tid, const char *name, char *line, size_t size, const char **text)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	return mt_proc__status_text(path, name, line, size, text);
}

/* A numeric field of /proc/TID/status ("Tgid:", "TracerPid:"), in base 10, or "SigPnd:" in hex. 0 or -errno. */
static int status__field(pid_t tid, const char *name, int base, unsigned long long *v)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	return mt_proc__status_field(path, name, base, v);
}

/* It has exited and its parent has not reaped it yet: nothing is left to seize. */
static bool task__zombie(pid_t tid)
{
	const char *text;
	char line[256];

	return !status__line(tid, "State:", line, sizeof(line), &text) && strchr(text, 'Z') &&
	       strchr(text, 'Z') < strchr(text, '(');
}

/* A "Uid:" or "Gid:" line's four ids (real, effective, saved, file system) all v; a "Cap...:" line's set empty. */
static bool status__ids_are(const char *line, unsigned long v)
{
	unsigned long ids[4];
	unsigned long long caps;

	if (!strncmp(line, "Cap", 3))
		return sscanf(strchr(line, ':') + 1, "%llx", &caps) == 1 && !caps;
	return sscanf(strchr(line, ':') + 1, "%lu %lu %lu %lu", &ids[0], &ids[1], &ids[2], &ids[3]) == 4 &&
	       ids[0] == v && ids[1] == v && ids[2] == v && ids[3] == v;
}

bool mt_seize__privileged(pid_t pid, uid_t uid, gid_t gid)
{
	static const char *const keys[] = { "Uid:", "Gid:", "CapPrm:", "CapEff:", "CapAmb:" };
	char path[64], line[256];
	unsigned int i, seen = 0;
	bool foreign = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	while (!foreign && fgets(line, sizeof(line), f))
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (!strncmp(line, keys[i], strlen(keys[i]))) {
				foreign = !status__ids_are(line, i == 1 ? gid : uid);
				seen |= 1u << i;
			}
	fclose(f);
	return foreign || seen != (1u << 5) - 1;
}

static pid_t task__tracer(pid_t tid)
{
	unsigned long long v = 0;

	return status__field(tid, "TracerPid:", 10, &v) ? 0 : (pid_t)v;
}

int mt_seize__check(pid_t pid)
{
	unsigned long long tgid = 0, kthread = 0;
	int err = status__field(pid, "Tgid:", 10, &tgid);

	if (err)
		return err;
	if (tgid != (unsigned long long)pid)
		return -EINVAL;
	if (!status__field(pid, "Kthread:", 10, &kthread) && kthread)
		return -ENOEXEC;
	if (task__zombie(pid))
		return -EOWNERDEAD;
	if (pid == getpid() || pid == getppid())
		return -EPERM;
	return task__tracer(pid) ? -EBUSY : 0;	/* a debugger's, strace's, another memtrack's */
}

struct tids {
	pid_t *v;
	size_t n, cap;
};

static bool tids__has(const struct tids *t, pid_t tid)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->v[i] == tid)
			return true;
	return false;
}

/* Seized now, or already memtrack's: born to a thread seized before (PTRACE_O_TRACECLONE). */
static int task__seize(pid_t tid)
{
	if (!ptrace(PTRACE_SEIZE, tid, NULL, (void *)(long)MT_PTRACE_OPTIONS))
		return 0;
	if (errno == EPERM && task__tracer(tid) == getpid())
		return 0;
	return -errno;
}

/* fn(tid, ctx) for each thread in /proc/PID/task, until one returns non-zero: that value, or -errno when the
 * directory cannot be read. */
static int tasks__each(pid_t pid, int (*fn)(pid_t tid, void *ctx), void *ctx)
{
	char path[64];
	struct dirent *d;
	int err = 0;
	pid_t tid;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while (!err && (d = readdir(dir))) {
		tid = atoi(d->d_name);
		if (tid > 0)
			err = fn(tid, ctx);
	}
	closedir(dir);
	return err;
}

/* A thread not seized yet is; one that exits meanwhile is no error. */
static int seize__new_thread(pid_t tid, void *ctx)
{
	struct tids *seen = ctx;
	int err;

	if (tids__has(seen, tid))
		return 0;
	err = task__seize(tid);
	if (err)
		return err == -ESRCH ? 0 : err;
	if (mt_array__grow((void **)&seen->v, &seen->cap, seen->n, sizeof(*seen->v)))
		return -ENOMEM;
	seen->v[seen->n++] = tid;
	return 0;
}

int mt_seize__threads(pid_t pid, unsigned int *threads)
{
	struct tids seen = {};
	size_t before;
	int err;

	do {
		before = seen.n;
		err = tasks__each(pid, seize__new_thread, &seen);
	} while (!err && seen.n != before);
	*threads = seen.n;
	if (!err && !seen.n)
		err = -ESRCH;
	free(seen.v);
	return err;
}

void mt_seize__describe(pid_t pid, struct mt_seized *s)
{
	unsigned long long ppid = 0;
	char path[64], comm[MT_COMM_MAX + 2] = "";
	ssize_t n;
	FILE *f;

	if (!status__field(pid, "PPid:", 10, &ppid))
		s->ppid = ppid;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (f && fgets(comm, sizeof(comm), f))
		comm[strcspn(comm, "\n")] = 0;
	if (f)
		fclose(f);
	memcpy(s->comm, comm, sizeof(s->comm));	/* NUL-padded: comm is 16 bytes at most, NUL included */
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, s->path, sizeof(s->path) - 1);
	s->path[n > 0 ? n : 0] = 0;
}

char **mt_seize__cmdline(pid_t pid)
{
	char path[64], *buf = malloc(SEIZE_CMDLINE_MAX), **argv, *p;
	size_t n = 0, i, argc = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	f = buf ? fopen(path, "re") : NULL;
	if (f) {
		n = fread(buf, 1, SEIZE_CMDLINE_MAX - 1, f);
		fclose(f);
	}
	if (!buf)
		return NULL;
	if (n && buf[n - 1])
		buf[n++] = 0;	/* cut short, or rewritten by the process */
	for (i = 0; i < n; i++)
		argc += !buf[i];
	argv = malloc((argc + 1) * sizeof(*argv) + n);
	if (argv) {
		p = memcpy(argv + argc + 1, buf, n);
		for (i = 0; i < argc; i++, p += strlen(p) + 1)
			argv[i] = p;
		argv[argc] = NULL;
	}
	free(buf);
	return argv;
}

static bool sig__is_stop(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/*
 * The signal to let tid go with, at the stop status: -1 when it was resumed instead, to reach the delivery stop of
 * a SIGSTOP still queued to it (the kernel reports an interrupt before it dequeues signals: BPF's hold, let go
 * there, would stop the process with no one to end it). A hold is suppressed; the program's own signal goes on.
 */
static int detach__signal(struct mt_bpf_session *bpf, pid_t tid, int status)
{
	int event = (unsigned)status >> 16, sig = WSTOPSIG(status);
	unsigned long long pending = 0;
	bool restored, pressured;

	if (event == PTRACE_EVENT_STOP && !sig__is_stop(sig) && !status__field(tid, "SigPnd:", 16, &pending) &&
	    (pending & (1ull << (SIGSTOP - 1)))) {
		if (!ptrace(PTRACE_CONT, tid, NULL, NULL))
			return -1;
		return 0;
	}
	if (event)
		return 0;
	if (!mt_ptrace_loop__take_hold(bpf, tid, sig, &restored, &pressured))
		return sig;
	if (sig == SIGSTOP)
		mt_bpf_session__unhold(bpf, tid);
	return 0;
}

/* true when tid is let go (or gone). Signals are blocked (record.c reads them by signalfd): no EINTR here. */
static bool detach__one(struct mt_bpf_session *bpf, pid_t tid)
{
	int status, sig;

	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL))
		return waitpid(tid, &status, __WALL | WNOHANG) > 0;	/* a zombie of ours: reaped */
	do {
		if (waitpid(tid, &status, __WALL) < 0)
			return false;
		if (!WIFSTOPPED(status))
			return true;
		sig = detach__signal(bpf, tid, status);
	} while (sig < 0);
	if (ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig) && errno != ESRCH) {
		pr_warn("cannot detach from %d: %s\n", tid, strerror(errno));
		return false;
	}
	return true;
}

struct detach {
	struct mt_bpf_session *bpf;
	pid_t me;
	size_t n;		/* threads let go */
};

static int detach__if_ours(pid_t tid, void *ctx)
{
	struct detach *x = ctx;

	if (task__tracer(tid) == x->me)
		x->n += detach__one(x->bpf, tid);
	return 0;
}

/* The threads of one process that memtrack traces, let go; how many. */
static size_t detach__process(struct mt_bpf_session *bpf, pid_t pid, pid_t me)
{
	struct detach x = { bpf, me, 0 };

	tasks__each(pid, detach__if_ours, &x);
	return x.n;
}

/* The tree may be anywhere in /proc (children reparented, processes of other sessions): all of it is read. */
static size_t detach__pass(struct mt_bpf_session *bpf)
{
	DIR *dir = opendir("/proc");
	struct dirent *d;
	pid_t me = getpid();
	size_t n = 0;

	while (dir && (d = readdir(dir)))
		if (atoi(d->d_name) > 0)
			n += detach__process(bpf, atoi(d->d_name), me);
	if (dir)
		closedir(dir);
	return n;
}

size_t mt_seize__detach_all(struct mt_bpf_session *bpf)
{
	size_t total = 0, n, pass = 0;

	do {
		n = detach__pass(bpf);
		total += n;
	} while (n && ++pass < DETACH_PASSES_MAX);
	return total;
}
