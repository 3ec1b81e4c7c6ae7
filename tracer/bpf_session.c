/* bpf_session.c — the BPF programs' lifecycle: open, size the ring, load, attach, track pids, read drops, destroy. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "memtrack.skel.h"
#include "tracer.h"

#define MT_MAX_LINKS 32

struct bpf_session {
	struct memtrack_bpf *skel;
	struct bpf_link *links[MT_MAX_LINKS];
	size_t nlinks;
};

/* libbpf speaks through the same pr_* family; its debug chatter only with -v. */
static int libbpf__print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	enum mt_log_level l = level == LIBBPF_WARN ? MT_LOG_WARN : MT_LOG_DEBUG;

	if (l > mt_log_max)
		return 0;
	fputs("memtrack: libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

static int session__add_link(struct bpf_session *s, struct bpf_link *link)
{
	int err;

	if (!link) {
		err = -errno;
		return err ? err : -EINVAL;
	}
	if (s->nlinks == MT_MAX_LINKS) {
		bpf_link__destroy(link);
		return -E2BIG;
	}
	s->links[s->nlinks++] = link;
	return 0;
}

static int session__attach_tracepoints(struct bpf_session *s)
{
	struct bpf_program *progs[] = {
		s->skel->progs.sys_enter, s->skel->progs.sys_exit, s->skel->progs.process_fork,
		s->skel->progs.process_exec, s->skel->progs.process_exit,
	};
	size_t i;
	int err;

	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		err = session__add_link(s, bpf_program__attach(progs[i]));
		if (err) {
			pr_err("cannot attach %s: %s\n", bpf_program__name(progs[i]), strerror(-err));
			return err;
		}
	}
	return 0;
}

struct bpf_session *bpf_session__open(size_t ring_bytes)
{
	struct bpf_session *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	libbpf_set_print(libbpf__print);
	s->skel = memtrack_bpf__open();
	if (!s->skel) {
		err = -errno;
		pr_err("cannot open the BPF object: %s\n", strerror(-err));
		goto free_session;
	}
	bpf_map__set_max_entries(s->skel->maps.rb, ring_bytes);
	s->skel->rodata->wakeup_bytes = ring_bytes / 16;
	err = memtrack_bpf__load(s->skel);
	if (err) {
		pr_err("cannot load the BPF programs: %s (libbpf's reason is above)\n", strerror(-err));
		goto destroy_skel;
	}
	err = session__attach_tracepoints(s);
	if (err)
		goto destroy_skel;
	return s;

destroy_skel:
	bpf_session__close(s);
	errno = -err;
	return NULL;
free_session:
	free(s);
	errno = -err;
	return NULL;
}

static int uprobe__attach(struct bpf_session *s, struct bpf_program *prog, bool ret, const char *path,
			  uint64_t off)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = ret);
	int err = session__add_link(s, bpf_program__attach_uprobe_opts(prog, -1, path, off, &opts));

	if (err == -EINVAL)
		pr_err("cannot attach a uprobe to %s at 0x%lx: %s (another tool's uprobe at the same offset with a "
		       "different ref_ctr_offset does this: dmesg says \"ref_ctr_offset mismatch\")\n",
		       path, (unsigned long)off, strerror(-err));
	else if (err)
		pr_err("cannot attach a uprobe to %s at 0x%lx: %s\n", path, (unsigned long)off, strerror(-err));
	return err;
}

/* The glibc entry points, in the order that names a shared offset: glibc 2.36 aliases aligned_alloc to memalign. */
static const char *const glibc_names[] = {
	"malloc", "calloc", "realloc", "reallocarray", "memalign", "aligned_alloc",
	"posix_memalign", "valloc", "pvalloc", "free",
};
#define GLIBC_N (sizeof(glibc_names) / sizeof(glibc_names[0]))

static bool offset__seen(const uint64_t *offs, size_t i)
{
	size_t k;

	for (k = 0; k < i; k++)
		if (offs[k] == offs[i])
			return true;
	return false;
}

int bpf_session__attach_glibc(struct bpf_session *s, const char *libc_path)
{
	struct bpf_program *enter[GLIBC_N] = {
		s->skel->progs.malloc_enter, s->skel->progs.calloc_enter, s->skel->progs.realloc_enter,
		s->skel->progs.reallocarray_enter, s->skel->progs.memalign_enter,
		s->skel->progs.aligned_alloc_enter, s->skel->progs.posix_memalign_enter,
		s->skel->progs.valloc_enter, s->skel->progs.pvalloc_enter, s->skel->progs.free_enter,
	};
	uint64_t offs[GLIBC_N];
	size_t i;
	int err = elf_symbols__offsets(libc_path, glibc_names, GLIBC_N, offs);

	if (err)
		return err;
	for (i = 0; i < GLIBC_N; i++) {
		if (!offs[i] || offset__seen(offs, i))
			continue;
		err = uprobe__attach(s, enter[i], false, libc_path, offs[i]);
		if (!err && enter[i] != s->skel->progs.free_enter)
			err = uprobe__attach(s, s->skel->progs.alloc_return, true, libc_path, offs[i]);
		if (err)
			return err;
	}
	return 0;
}

int bpf_session__track(struct bpf_session *s, pid_t pid)
{
	__u32 key = pid, state = MT_PROC_PENDING_EXEC;

	if (bpf_map__update_elem(s->skel->maps.tracked, &key, sizeof(key), &state, sizeof(state), BPF_ANY))
		return -errno;
	return 0;
}

struct bpf_map *bpf_session__ring_map(const struct bpf_session *s)
{
	return s->skel->maps.rb;
}

int bpf_session__drops(const struct bpf_session *s, __u64 drops[MT_DROP__COUNT])
{
	int ncpu = libbpf_num_possible_cpus();
	__u32 key;
	int cpu;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	__u64 vals[ncpu];
	for (key = 0; key < MT_DROP__COUNT; key++) {
		drops[key] = 0;
		if (bpf_map__lookup_elem(s->skel->maps.drops, &key, sizeof(key), vals, sizeof(vals), 0))
			return -errno;
		for (cpu = 0; cpu < ncpu; cpu++)
			drops[key] += vals[cpu];
	}
	return 0;
}

void bpf_session__close(struct bpf_session *s)
{
	size_t i;

	if (!s)
		return;
	/* Each uprobe link waits for an RCU grace period under a kernel mutex (~100 ms each here, serialised). */
	for (i = 0; i < s->nlinks; i++)
		bpf_link__destroy(s->links[i]);
	memtrack_bpf__destroy(s->skel);
	free(s);
}
