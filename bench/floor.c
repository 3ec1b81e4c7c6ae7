// SPDX-License-Identifier: GPL-2.0-only
/* floor.c — the cost floor: empty BPF programs at memtrack's allocator probe sites, system-wide, around a command. */
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/libbpf.h>

#include "floor.skel.h"
#include "tracer/allocators.h"
#include "tracer/bpf_session.h"

#define FLOOR_FILES_MAX 16

struct floor {
	struct floor_bpf *skel;
	int fds[2 * FLOOR_FILES_MAX];	/* uprobe_multi links: entries and returns of each file */
	size_t nfds;
	size_t nprobes;			/* sites, counting an entry and its return as one */
	struct bpf_link *sys_exit;	/* -s: the empty memory-syscall hook */
};

/* Milliseconds since *t, which then moves to now: one call per phase boundary. */
static double ms_lap(struct timespec *t)
{
	struct timespec now;
	double ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (now.tv_sec - t->tv_sec) * 1e3 + (now.tv_nsec - t->tv_nsec) / 1e6;
	*t = now;
	return ms;
}

static int libc__find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (strstr(info->dlpi_name, "/libc.so.")) {
		snprintf(data, PATH_MAX, "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

/* Without -f: the glibc this program runs on, which is the one the system's programs use. */
static int libc__find(char path[PATH_MAX])
{
	path[0] = 0;
	dl_iterate_phdr(libc__find_cb, path);
	return path[0] ? 0 : -ENOENT;
}

/*
 * Where memtrack probes a file, which is what the floor must copy: memtrack's own plan (tracer/allocators.c), so that
 * when memtrack moves a site (e.g. onto an instruction the kernel emulates instead of a function's first one) the
 * floor follows. If memtrack ever adjusts sites after planning, this is the one function to change.
 */
static int floor__sites(const char *path, struct mt_probe_plan *plan)
{
	return mt_allocators__plan(path, path, plan);
}

/* -k: what links a file gets. */
enum floor_kind { FK_PAIR, FK_ENTRY, FK_SESSION, FK_SESSION_RET };

/* The pair: one link per file and direction, returns first, as memtrack does. FK_ENTRY: the entry link alone (what
 * a return costs, by difference); the sessions: one link, whose entry run declines or accepts the return. */
static int floor__attach_file(struct floor *f, const char *path, const struct mt_probe_plan *plan,
			      enum floor_kind kind)
{
	unsigned long offs[MT_PROBE_PLAN_MAX], roffs[MT_PROBE_PLAN_MAX];
	struct floor_bpf *k = f->skel;
	size_t i, n = 0, rn = 0;
	int fd = 0;

	for (i = 0; i < plan->n; i++) {
		offs[n++] = plan->sites[i].offset;
		if (plan->sites[i].ret)
			roffs[rn++] = plan->sites[i].offset;
	}
	if (rn && kind == FK_PAIR) {
		fd = mt_bpf_session__uprobe_multi(bpf_program__fd(k->progs.floor_return), path, roffs, NULL, rn,
						  MT_UPROBE_RETURN, 0);
		if (fd >= 0)
			f->fds[f->nfds++] = fd;
	}
	if (fd >= 0 && kind <= FK_ENTRY)
		fd = mt_bpf_session__uprobe_multi(bpf_program__fd(k->progs.floor_enter), path, offs, NULL, n, MT_UPROBE_ENTRY, 0);
	else if (fd >= 0)
		fd = mt_bpf_session__uprobe_multi(bpf_program__fd(kind == FK_SESSION ? k->progs.floor_session :
								  k->progs.floor_session_ret), path, offs, NULL, n,
						  MT_UPROBE_SESSION, 0);
	if (fd < 0) {
		fprintf(stderr, "floor: cannot attach uprobes to %s: %s\n", path, strerror(-fd));
		return fd;
	}
	f->fds[f->nfds++] = fd;
	f->nprobes += n;
	return 0;
}

/* Files without an allocator are skipped, as memtrack skips them. */
static int floor__attach(struct floor *f, char *const *files, size_t nfiles, enum floor_kind kind)
{
	struct mt_probe_plan *plan = malloc(sizeof(*plan));
	size_t i;
	int err = plan ? 0 : -ENOMEM;

	for (i = 0; i < nfiles && !err; i++) {
		err = floor__sites(files[i], plan);
		if (err)
			fprintf(stderr, "floor: cannot read the symbols of %s: %s\n", files[i], strerror(-err));
		else if (plan->kind && plan->n)
			err = floor__attach_file(f, files[i], plan, kind);
	}
	free(plan);
	return err;
}

static int floor__load(struct floor *f, bool sys_exit, enum floor_kind kind)
{
	int err;

	f->skel = floor_bpf__open();
	if (!f->skel)
		return -errno;
	bpf_program__set_autoload(f->skel->progs.floor_sys_exit, sys_exit);
	bpf_program__set_autoload(f->skel->progs.floor_session, kind == FK_SESSION);
	bpf_program__set_autoload(f->skel->progs.floor_session_ret, kind == FK_SESSION_RET);
	bpf_program__set_expected_attach_type(f->skel->progs.floor_session, MT_BPF_TRACE_UPROBE_SESSION);
	bpf_program__set_expected_attach_type(f->skel->progs.floor_session_ret, MT_BPF_TRACE_UPROBE_SESSION);
	bpf_program__set_expected_attach_type(f->skel->progs.floor_enter, MT_BPF_TRACE_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(f->skel->progs.floor_return, MT_BPF_TRACE_UPROBE_MULTI);
	err = floor_bpf__load(f->skel);
	if (err)
		fprintf(stderr, "floor: cannot load the BPF programs: %s\n", strerror(-err));
	return err;
}

static void floor__close(struct floor *f)
{
	size_t i;

	for (i = 0; i < f->nfds; i++)
		close(f->fds[i]);
	f->nfds = 0;
	bpf_link__destroy(f->sys_exit);
	f->sys_exit = NULL;
	floor_bpf__destroy(f->skel);
	f->skel = NULL;
}

/* The command's wait status, or -errno. */
static int floor__run(char *const *argv)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		execvp(argv[0], argv);
		fprintf(stderr, "floor: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return status;
}

enum phase { PH_LOAD, PH_ATTACH, PH_RUN, PH_DETACH, PH__COUNT };

struct floor_args {
	char *files[FLOOR_FILES_MAX];
	size_t nfiles;
	char *const *argv;
	bool timing;
	bool sys_exit;		/* -s */
	enum floor_kind kind;	/* -k */
};

/* memtrack's default memory-syscall hook, a raw tracepoint at every syscall's exit: empty here too. */
static int floor__attach_sys_exit(struct floor *f)
{
	int err;

	f->sys_exit = bpf_program__attach(f->skel->progs.floor_sys_exit);
	if (f->sys_exit)
		return 0;
	err = errno;
	fprintf(stderr, "floor: cannot attach to sys_exit: %s\n", strerror(err));
	return -err;
}

/* Load, attach, run the command, detach: the command's wait status or -errno, and each phase's duration. */
static int floor__trace(struct floor *f, const struct floor_args *a, double ms[PH__COUNT])
{
	struct timespec t;
	int status;

	clock_gettime(CLOCK_MONOTONIC, &t);
	status = floor__load(f, a->sys_exit, a->kind);
	ms[PH_LOAD] = ms_lap(&t);
	if (!status && a->sys_exit)
		status = floor__attach_sys_exit(f);
	if (!status)
		status = floor__attach(f, a->files, a->nfiles, a->kind);
	ms[PH_ATTACH] = ms_lap(&t);
	if (!status) {
		status = floor__run(a->argv);
		if (status < 0)
			fprintf(stderr, "floor: cannot run '%s': %s\n", a->argv[0], strerror(-status));
	}
	ms[PH_RUN] = ms_lap(&t);
	floor__close(f);
	ms[PH_DETACH] = ms_lap(&t);
	return status;
}

static int usage(void)
{
	fprintf(stderr, "usage: floor [-t] [-s] [-k KIND] [-f FILE]... -- COMMAND [ARGS...]\n"
			"  runs COMMAND with empty BPF programs at memtrack's allocator probe sites, system-wide\n"
			"  -f FILE  probe FILE as memtrack would, if it holds an allocator (default: the C library)\n"
			"  -k KIND  the links: pair (default: an entry and a return link, as memtrack), entry (no return\n"
			"           link), session (one session link declining each return), session-ret (accepting it)\n"
			"  -s       also hook every syscall's exit (tp_btf/sys_exit), as memtrack does for memory syscalls\n"
			"  -t       print the time of each phase (load, attach, command, detach) on stderr\n");
	return EXIT_FAILURE;
}

static enum floor_kind kind__parse(const char *s)
{
	static const char *const names[] = { "pair", "entry", "session", "session-ret" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

static int args__parse(int argc, char **argv, struct floor_args *a, char libc[PATH_MAX])
{
	int i = 1;

	for (; i < argc && argv[i][0] == '-' && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "-t"))
			a->timing = true;
		else if (!strcmp(argv[i], "-s"))
			a->sys_exit = true;
		else if (!strcmp(argv[i], "-k") && i + 1 < argc)
			a->kind = kind__parse(argv[++i]);
		else if (!strcmp(argv[i], "-f") && i + 1 < argc && a->nfiles < FLOOR_FILES_MAX)
			a->files[a->nfiles++] = argv[++i];
		else
			return -EINVAL;
	}
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	if (i >= argc || (int)a->kind < 0)
		return -EINVAL;
	a->argv = argv + i;
	if (!a->nfiles) {
		if (libc__find(libc)) {
			fprintf(stderr, "floor: cannot find the C library it runs on\n");
			return -ENOENT;
		}
		a->files[a->nfiles++] = libc;
	}
	return 0;
}

static int exit__code(int status)
{
	if (status < 0)
		return EXIT_FAILURE;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int main(int argc, char **argv)
{
	double ms[PH__COUNT] = { 0 };
	struct floor_args a = {};
	struct floor f = {};
	char libc[PATH_MAX];
	int status = args__parse(argc, argv, &a, libc);

	if (status)
		return status == -EINVAL ? usage() : EXIT_FAILURE;
	status = floor__trace(&f, &a, ms);
	if (a.timing)
		fprintf(stderr, "floor: load %.1f ms, attach %.1f ms (%zu probes), command %.1f ms, detach %.1f ms\n",
			ms[PH_LOAD], ms[PH_ATTACH], f.nprobes, ms[PH_RUN], ms[PH_DETACH]);
	return exit__code(status);
}
