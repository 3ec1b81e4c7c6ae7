// SPDX-License-Identifier: GPL-2.0-only
/* links.c — each tracked process's probe links, per allocator file; handed to the closer when it exits. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/array.h"
#include "common/log.h"
#include "common/proc.h"
#include "tracer/allocators.h"
#include "tracer/bpf_session.h"
#include "tracer/callers.h"
#include "tracer/closer.h"
#include "tracer/links.h"

/* Past this many live processes with an allocator file bound, the file gets one shared link instead of theirs
 * (each link's making visits every process that maps the file: a wide tree's cost grows as its square); at or below
 * LINKS_UNSHARE_AT it goes back to links of each process's own, so that the untracked neighbours stop trapping
 * (docs/DESIGN.md, "Shared links"). MEMTRACK_SHARED_LINKS=N moves the first to N (0: never shared), the other to N/4. */
#define LINKS_SHARE_AT 64
#define LINKS_UNSHARE_AT (LINKS_SHARE_AT / 4)

/* An allocator file: how many live processes have it bound, and its shared link while it has one. */
struct file_links {
	size_t index;		/* the attach worker's index of the file */
	uint64_t dev, ino;
	char path[32];		/* the worker's /proc/self/fd/N of the file (its array of files may move) */
	const struct mt_probe_plan *plan;
	uint32_t slot;		/* its MT_COOKIE_SLOT, in each of its links; 0: past MT_SHARED_SLOTS, never shared */
	size_t live;		/* processes that have it bound with probes (their own links, or the shared one) */
	bool shared;		/* fds are its shared link (pid 0), and its processes have none of their own */
	bool share_failed;	/* the shared link could not be made: each process keeps its own from now on */
	int fds[MT_LINK_FDS_MAX];
	int nfds;
};

struct bound {
	pid_t pid;
	size_t file;		/* the attach worker's index of the file */
	size_t fl;		/* its struct file_links, in mt_links.files */
	uint64_t dev, ino;
	bool live;		/* counted in its file_links' live: the file is probed for it */
	int *fds;		/* its own links: two uprobe_multi ones, or one per site (mt_bpf_session__per_probe) */
	int nfds;
};

struct mt_links {
	struct mt_bpf_session *bpf;
	struct bound *v;
	size_t n, cap;
	struct file_links *files;
	size_t nfiles, cap_files;
	size_t share_at, unshare_at;	/* LINKS_SHARE_AT, LINKS_UNSHARE_AT; share_at 0: never */
	int closer;		/* the closer process's socket (the caller's); -1: links close in the pool's threads */
	struct mt_close_pool *pool;
	uint64_t released;	/* link fds this process gave up (handed over, or closed) */
	uint64_t full_mark;	/* 1 + fds given up when a bind ran out of them; 0: it did not */
};

/* MEMTRACK_SHARED_LINKS, if set: 0 or -EINVAL (said). */
static int links__thresholds(struct mt_links *l)
{
	const char *env = getenv("MEMTRACK_SHARED_LINKS");
	unsigned long n;
	char *end;

	l->share_at = LINKS_SHARE_AT;
	l->unshare_at = LINKS_UNSHARE_AT;
	if (!env || !*env)
		return 0;
	errno = 0;
	n = strtoul(env, &end, 10);
	if (errno || *end || env[0] == '-' || n > 1u << 20) {
		pr_err("MEMTRACK_SHARED_LINKS=%s: expected a number of processes (0: never shared)\n", env);
		return -EINVAL;
	}
	l->share_at = n;
	l->unshare_at = n / 4;
	return 0;
}

struct mt_links *mt_links__new(struct mt_bpf_session *s, int closer)
{
	struct mt_links *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->bpf = s;
	if (links__thresholds(l)) {
		free(l);
		errno = EINVAL;
		return NULL;
	}
	l->pool = mt_close_pool__new();
	if (!l->pool) {
		free(l);
		return NULL;
	}
	l->closer = closer;
	return l;
}

bool mt_links__has(const struct mt_links *l, pid_t pid, size_t file)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].pid == pid && l->v[i].file == file)
			return true;
	return false;
}

/* A thread that runs on: neither dead nor about to be (exit_group and fatal signals queue SIGKILL to each thread). */
static bool thread__lives(pid_t pid, pid_t tid)
{
	char path[96];
	unsigned long long pending = 0;
	struct mt_proc_stat st;
	bool killed = false;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (mt_proc__stat(path, &st) || st.state == 'Z' || st.state == 'X')
		return false;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	for (i = 0; i < 2 && !killed; i++)
		if (!mt_proc__status_field(path, i ? "ShdPnd:" : "SigPnd:", 16, &pending))
			killed = pending & (1ull << (SIGKILL - 1));
	return !killed;
}

/*
 * A link's pid filter holds the process's leader, and the kernel plants breakpoints only in that task's memory:
 * once the leader has called pthread_exit (its memory dropped, then a zombie) a new link would plant none, and the
 * file's calls would go unrecorded without a word. -EOWNERDEAD when the leader has let its memory go while another
 * thread runs on; -ESRCH when none does (the whole process exits: nothing is missed). A leader exiting during the
 * link's making escapes this, in a window of microseconds.
 */
static int leader__check(pid_t pid)
{
	struct mt_proc_stat st;
	char path[64];
	struct dirent *d;
	int err = -ESRCH;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (mt_proc__stat(path, &st) || (st.state != 'Z' && st.state != 'X' && st.vsize))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	while (dir && err == -ESRCH && (d = readdir(dir)))
		if (d->d_name[0] != '.' && atoi(d->d_name) != pid && thread__lives(pid, atoi(d->d_name)))
			err = -EOWNERDEAD;
	if (dir)
		closedir(dir);
	return err;
}

/* The file's entry, made at its first bind; NULL when out of memory. */
static struct file_links *links__file(struct mt_links *l, const struct mt_link_file *f)
{
	struct file_links *fl;
	size_t i;

	for (i = 0; i < l->nfiles; i++)
		if (l->files[i].index == f->index)
			return &l->files[i];
	if (mt_array__grow((void **)&l->files, &l->cap_files, l->nfiles, sizeof(*l->files)))
		return NULL;
	fl = &l->files[l->nfiles++];
	*fl = (struct file_links){ .index = f->index, .dev = f->dev, .ino = f->ino, .plan = f->plan,
				   .slot = l->nfiles < MT_SHARED_SLOTS ? l->nfiles : 0 };
	snprintf(fl->path, sizeof(fl->path), "%s", f->path);
	return fl;
}

static int links__add(struct mt_links *l, const struct bound *b)
{
	if (mt_array__grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v)))
		return -ENOMEM;
	l->v[l->n++] = *b;
	return 0;
}

/*
 * Before binding a file a process mapped and has no links for (a fork child or an exec's new leader is alive by
 * then). A file the kernel cannot probe for a process whose leader has exited is still entered, without links, and
 * marked in BPF as this process's: it is refused once, not at each mapping, and a child forked later gets it probed
 * for itself.
 */
int mt_links__check_leader(struct mt_links *l, pid_t pid, const struct mt_link_file *f)
{
	struct bound b = { .pid = pid, .file = f->index, .dev = f->dev, .ino = f->ino };
	struct file_links *fl;
	int err = leader__check(pid);

	if (err != -EOWNERDEAD)
		return err;
	fl = links__file(l, f);
	if (!fl)
		return err;
	b.fl = fl - l->files;
	if (!links__add(l, &b))
		mt_bpf_session__proc_file(l->bpf, pid, f->dev, f->ino, MT_PROC_FILE_REFUSED);
	return err;
}

static void links__close_fd(struct mt_links *l, int fd);

/* Closed, or on their way in the pool's threads: those count once their thread is done. */
static uint64_t links__given_up(struct mt_links *l)
{
	return l->released + mt_close_pool__closed(l->pool);
}

/* The links made for b, kept in b; fds is the caller's scratch array of MT_LINK_FDS_MAX. */
static int bound__link(struct mt_links *l, struct bound *b, const struct file_links *fl, int *fds)
{
	int err = mt_bpf_session__link_plan(l->bpf, fl->path, fl->plan, b->pid,
					    (uint64_t)fl->slot << MT_COOKIE_SLOT_SHIFT, fds, &b->nfds);

	b->fds = b->nfds ? malloc(b->nfds * sizeof(*fds)) : NULL;
	if (b->nfds && !b->fds) {
		while (b->nfds)
			links__close_fd(l, fds[--b->nfds]);
		return -ENOMEM;
	}
	memcpy(b->fds, fds, b->nfds * sizeof(*fds));
	return err;
}

static void bound__close(struct mt_links *l, struct bound *b)
{
	int i;

	for (i = 0; i < b->nfds; i++)	/* in the background: each close waits for RCU (see below) */
		links__close_fd(l, b->fds[i]);
	free(b->fds);
	b->fds = NULL;
	b->nfds = 0;
}

/* fds that links never take: the tracer's other work (a pidfd per untraced process, /proc reads, the artifact)
 * would meet EMFILE in a table that links had filled, and a failed pidfd_open drops a live process's links. */
#define LINKS_FD_RESERVE 32

/* 0 when need links leave the reserve free under the soft limit, else -EMFILE. Counted in /proc/self/fd: exact,
 * and cheap beside a link's making. */
static int links__headroom(size_t need)
{
	struct rlimit r;
	struct dirent *d;
	size_t open = 0;
	DIR *dir;

	if (getrlimit(RLIMIT_NOFILE, &r) || r.rlim_cur == RLIM_INFINITY || r.rlim_cur > 1u << 20)
		return 0;
	dir = opendir("/proc/self/fd");
	if (!dir)
		return -errno;
	while ((d = readdir(dir)))
		open += d->d_name[0] != '.';
	closedir(dir);
	return open + need + LINKS_FD_RESERVE > r.rlim_cur ? -EMFILE : 0;
}

/* b's own links for its file, unless the fd table is full. */
static int bound__own(struct mt_links *l, struct bound *b, const struct file_links *fl)
{
	int fds[MT_LINK_FDS_MAX];
	int err;

	/* A failed link takes long: the kernel plants the probes before it finds no fd, and waits for RCU to take
	 * them out again. While no link fd was given up since, the next would fail alike. */
	if (l->full_mark && l->full_mark == 1 + links__given_up(l))
		return -EMFILE;
	err = links__headroom(mt_bpf_session__per_probe(l->bpf) ? 2 * fl->plan->n : 2);
	if (err)
		return err;
	err = bound__link(l, b, fl, fds);
	l->full_mark = err == -EMFILE ? 1 + links__given_up(l) : 0;
	return err;
}

/* The file's name for the log, from the fd the attach worker keeps. */
static void file_links__name(const struct file_links *fl, char *name, size_t n)
{
	ssize_t len = readlink(fl->path, name, n - 1);

	name[len > 0 ? len : 0] = 0;
}

/*
 * Past share_at live processes the file gets one link for every process (pid 0), and BPF keeps the hits of the
 * tree's processes that have it bound (proc_files). The shared link is in before their own go: meanwhile the
 * kernel runs both at each of their hits, and BPF passes over the second (MT_SHARED_DEDUP, set first).
 */
static void links__share(struct mt_links *l, struct file_links *fl)
{
	uint64_t bits = (uint64_t)fl->slot << MT_COOKIE_SLOT_SHIFT | 1ull << MT_COOKIE_SHARED_SHIFT;
	char name[256];
	size_t i;
	int err;

	if (fl->shared || fl->share_failed || !l->share_at || fl->live < l->share_at || !fl->slot ||
	    mt_bpf_session__per_probe(l->bpf))
		return;
	file_links__name(fl, name, sizeof(name));
	err = mt_bpf_session__shared_file(l->bpf, fl->slot, fl->dev, fl->ino, MT_SHARED_DEDUP);
	if (!err)
		err = mt_bpf_session__link_plan(l->bpf, fl->path, fl->plan, 0, bits, fl->fds, &fl->nfds);
	if (err) {
		while (fl->nfds)
			links__close_fd(l, fl->fds[--fl->nfds]);
		fl->share_failed = true;
		pr_warn("%s: no shared link (%s): each process keeps its own\n", name, strerror(-err));
		return;
	}
	fl->shared = true;
	for (i = 0; i < l->n; i++)
		if (l->v[i].fl == (size_t)(fl - l->files))
			bound__close(l, &l->v[i]);
	pr_info("%s: %zu processes: one shared link from now on\n", name, fl->live);
}

/* At or below unshare_at live processes, each gets its own links again and the shared one goes. A process that
 * has exited meanwhile needs none; one whose leader has let its memory go could get none that work (leader__check),
 * and it or another failure keeps the shared link. */
static void links__unshare(struct mt_links *l, struct file_links *fl)
{
	size_t i, me = fl - l->files;
	char name[256];
	int err = 0;

	if (!fl->shared || fl->live > l->unshare_at)
		return;
	for (i = 0; i < l->n && !err; i++) {
		if (l->v[i].fl != me || !l->v[i].live)
			continue;
		err = leader__check(l->v[i].pid);
		if (!err)
			err = bound__own(l, &l->v[i], fl);
		if (err == -ESRCH) {
			bound__close(l, &l->v[i]);
			err = 0;
		}
	}
	if (err) {
		for (i = 0; i < l->n; i++)
			if (l->v[i].fl == me)
				bound__close(l, &l->v[i]);
		return;
	}
	while (fl->nfds)
		links__close_fd(l, fl->fds[--fl->nfds]);
	fl->shared = false;
	file_links__name(fl, name, sizeof(name));
	pr_info("%s: %zu processes: links of their own again\n", name, fl->live);
}

int mt_links__bind(struct mt_links *l, pid_t pid, const struct mt_link_file *f)
{
	struct bound b = { .pid = pid, .file = f->index, .dev = f->dev, .ino = f->ino };
	struct file_links *fl;
	int err;

	if (mt_links__has(l, pid, f->index))
		return 0;
	fl = links__file(l, f);
	if (!fl)
		return -ENOMEM;
	b.fl = fl - l->files;
	err = fl->shared ? 0 : bound__own(l, &b, fl);
	if (!err)
		err = mt_bpf_session__proc_file(l->bpf, pid, f->dev, f->ino, MT_PROC_FILE_LINKED);
	if (!err)	/* its failure only makes its new calls count as malloc: said, and the probes kept */
		mt_callers__bind(l->bpf, pid, f->dev, f->ino, f->plan);
	b.live = true;
	if (!err)
		err = links__add(l, &b);
	if (err) {
		mt_bpf_session__proc_file(l->bpf, pid, f->dev, f->ino, 0);
		bound__close(l, &b);
		return err;
	}
	fl->live++;
	links__share(l, fl);
	return 0;
}

size_t mt_links__files(const struct mt_links *l, pid_t pid, size_t *out, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < l->n && n < max; i++)
		if (l->v[i].pid == pid)
			out[n++] = l->v[i].file;
	return n;
}

/*
 * A link's close waits for RCU grace periods. The closer process waits for them instead: memtrack goes on at once,
 * and its exit waits for none of the last links (`-- /bin/true` ends sooner: bench/README.md).
 */
static void links__close_fd(struct mt_links *l, int fd)
{
	if (l->closer >= 0 && !mt_closer__give(l->closer, fd))
		l->released++;
	else
		mt_close_pool__close(l->pool, fd);
}

void mt_links__release(struct mt_links *l, pid_t pid)
{
	size_t i = l->n;

	struct file_links *fl;

	while (i--) {
		if (l->v[i].pid != pid)
			continue;
		fl = &l->files[l->v[i].fl];
		mt_bpf_session__proc_file(l->bpf, pid, l->v[i].dev, l->v[i].ino, 0);
		bound__close(l, &l->v[i]);
		fl->live -= l->v[i].live;
		l->v[i] = l->v[--l->n];
		links__unshare(l, fl);
	}
}

/* At the end no process gets links of its own again: a shared link goes with the last process. */
void mt_links__release_all(struct mt_links *l)
{
	l->unshare_at = 0;
	while (l->n)
		mt_links__release(l, l->v[0].pid);
}

void mt_links__free(struct mt_links *l)
{
	if (!l)
		return;
	mt_links__release_all(l);
	mt_close_pool__free(l->pool);
	free(l->files);
	free(l->v);
	free(l);
}
