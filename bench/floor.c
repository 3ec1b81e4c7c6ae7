/* floor.c — the cost floor: empty BPF programs at memtrack's glibc probe sites, system-wide, around one command. */
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "floor.skel.h"
#include "tracer.h"

#define FLOOR_LINKS_MAX 32

/* memtrack's list and order (tracer/bpf_session.c): the order decides which name owns an offset shared by aliases. */
static const char *const glibc_names[] = {
	"malloc", "calloc", "realloc", "reallocarray", "memalign", "aligned_alloc",
	"posix_memalign", "valloc", "pvalloc", "free",
};
#define GLIBC_N (sizeof(glibc_names) / sizeof(glibc_names[0]))

struct site {
	const char *name;
	uint64_t off;		/* file offset in libc */
	bool ret;		/* a uretprobe too */
};

struct floor {
	struct floor_bpf *skel;
	struct bpf_link *links[FLOOR_LINKS_MAX];
	size_t nlinks;
	char libc[PATH_MAX];
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

/* As memtrack does: the glibc this program runs on is the one the system's programs use. */
static int libc__find(char path[PATH_MAX])
{
	path[0] = 0;
	dl_iterate_phdr(libc__find_cb, path);
	return path[0] ? 0 : -ENOENT;
}

static bool offset__seen(const struct site *sites, size_t n, uint64_t off)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (sites[k].off == off)
			return true;
	return false;
}

/*
 * Where memtrack probes glibc, which is what the floor must copy: today offset 0 of each defined function symbol, one
 * probe per distinct offset, a uretprobe on all but free. When memtrack moves a site (e.g. onto an instruction the
 * kernel emulates rather than free's first one), change this function alone, or make it call memtrack's.
 */
static int floor__sites(const char *libc, struct site sites[GLIBC_N], size_t *n)
{
	uint64_t offs[GLIBC_N];
	size_t i;
	int err = elf_symbols__offsets(libc, glibc_names, GLIBC_N, offs);

	if (err)
		return err;
	*n = 0;
	for (i = 0; i < GLIBC_N; i++) {
		if (!offs[i] || offset__seen(sites, *n, offs[i]))
			continue;
		sites[*n].name = glibc_names[i];
		sites[*n].off = offs[i];
		sites[*n].ret = strcmp(glibc_names[i], "free") != 0;
		(*n)++;
	}
	return *n ? 0 : -ENOENT;
}

static int floor__attach_one(struct floor *f, struct bpf_program *prog, const struct site *s, bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = ret);
	struct bpf_link *link;
	int err;

	if (f->nlinks == FLOOR_LINKS_MAX)
		return -E2BIG;
	/* pid -1: system-wide, as memtrack attaches. */
	link = bpf_program__attach_uprobe_opts(prog, -1, f->libc, s->off, &opts);
	if (!link) {
		err = -errno;
		fprintf(stderr, "floor: cannot attach to %s (%s at 0x%lx): %s\n", f->libc, s->name,
			(unsigned long)s->off, strerror(-err));
		return err;
	}
	f->links[f->nlinks++] = link;
	return 0;
}

static int floor__attach(struct floor *f)
{
	struct site sites[GLIBC_N];
	size_t i, n;
	int err = libc__find(f->libc);

	if (err) {
		fprintf(stderr, "floor: cannot find the C library it runs on\n");
		return err;
	}
	err = floor__sites(f->libc, sites, &n);
	if (err) {
		fprintf(stderr, "floor: no allocator symbols in %s: %s\n", f->libc, strerror(-err));
		return err;
	}
	for (i = 0; i < n && !err; i++) {
		err = floor__attach_one(f, f->skel->progs.floor_enter, &sites[i], false);
		if (!err && sites[i].ret)
			err = floor__attach_one(f, f->skel->progs.floor_return, &sites[i], true);
	}
	return err;
}

static void floor__close(struct floor *f)
{
	size_t i;

	for (i = 0; i < f->nlinks; i++)
		bpf_link__destroy(f->links[i]);
	f->nlinks = 0;
	floor_bpf__destroy(f->skel);
	f->skel = NULL;
}

/* The command's wait status, or -errno. */
static int floor__run(char **argv)
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

static int exit__code(int status)
{
	if (status < 0)
		return EXIT_FAILURE;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

enum phase { PH_LOAD, PH_ATTACH, PH_RUN, PH_DETACH, PH__COUNT };

/* Load, attach, run the command, detach; the command's wait status or -errno, and each phase's duration. */
static int floor__trace(struct floor *f, char **argv, double ms[PH__COUNT], size_t *nprobes)
{
	struct timespec t;
	int status;

	clock_gettime(CLOCK_MONOTONIC, &t);
	f->skel = floor_bpf__open_and_load();
	if (!f->skel) {
		status = -errno;
		fprintf(stderr, "floor: cannot load the BPF programs: %s\n", strerror(-status));
		return status;
	}
	ms[PH_LOAD] = ms_lap(&t);
	status = floor__attach(f);
	ms[PH_ATTACH] = ms_lap(&t);
	if (!status) {
		status = floor__run(argv);
		if (status < 0)
			fprintf(stderr, "floor: cannot run '%s': %s\n", argv[0], strerror(-status));
	}
	ms[PH_RUN] = ms_lap(&t);
	*nprobes = f->nlinks;
	floor__close(f);
	ms[PH_DETACH] = ms_lap(&t);
	return status;
}

static int usage(void)
{
	fprintf(stderr, "usage: floor [-t] -- COMMAND [ARGS...]\n"
			"  runs COMMAND with empty BPF programs at memtrack's glibc probe sites, system-wide\n"
			"  -t  print the time of each phase (load, attach, command, detach) on stderr\n");
	return EXIT_FAILURE;
}

int main(int argc, char **argv)
{
	double ms[PH__COUNT] = { 0 };
	struct floor f = {};
	bool timing = false;
	size_t nprobes = 0;
	int i = 1, status;

	if (i < argc && !strcmp(argv[i], "-t"))
		timing = true, i++;
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	if (i >= argc)
		return usage();
	status = floor__trace(&f, argv + i, ms, &nprobes);
	if (timing)
		fprintf(stderr, "floor: load %.1f ms, attach %.1f ms (%zu probes), command %.1f ms, detach %.1f ms\n",
			ms[PH_LOAD], ms[PH_ATTACH], nprobes, ms[PH_RUN], ms[PH_DETACH]);
	return exit__code(status);
}
