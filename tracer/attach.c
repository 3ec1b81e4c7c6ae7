// SPDX-License-Identifier: GPL-2.0-only
/* attach.c — the attach worker: each requested file is classified once, probed, and its held threads resumed. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "artifact/artifact.h"
#include "bpf/memtrack.h"
#include "common/array.h"
#include "common/log.h"
#include "common/names.h"
#include "common/proc.h"
#include "tracer/allocators.h"
#include "tracer/attach.h"
#include "tracer/bpf_session.h"
#include "tracer/kunwind.h"
#include "tracer/links.h"
#include "tracer/module_files.h"

/* A request seen on the attach ring, waiting for its thread's stop to be resumed and logged. */
struct pending {
	struct mt_attach_req req;
	struct mt_attach rec;	/* the log record, filled when the file was handled */
};

/* A file classified already: later requests for it only bind its probes to their process. */
struct seen_file {
	uint64_t dev, ino;
	uint8_t kind;
	struct mt_probe_plan *plan;	/* NULL: no allocator in it */
	int fd;				/* kept open, so the kernel finds it by /proc/self/fd even when deleted */
	char fd_path[32];
};

#define FORK_FILES_MAX 64

struct mt_attach_worker {
	struct mt_bpf_session *bpf;
	struct mt_writer *w;
	struct mt_module_files *mods;
	struct pending *pend;
	size_t npend, cap_pend;
	struct seen_file *files;
	size_t nfiles, cap_files;
	struct mt_links *links;
	struct mt_kunwind *kun;	/* --stacks: the in-kernel unwinder's tables, NULL without */
	mt_attach_sink_fn sink;	/* NULL: the writer */
	void *sink_ctx;
	uint64_t inherit_failures;	/* binds of fork children and rebinds that failed: only the first is told */
	uint64_t late_binds;	/* allocator files bound to processes memtrack does not trace, which ran meanwhile */
};

struct mt_attach_worker *mt_attach__new(struct mt_bpf_session *s, struct mt_writer *w, struct mt_module_files *mods,
					int closer)
{
	struct mt_attach_worker *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->bpf = s;
	a->w = w;
	a->mods = mods;
	a->links = mt_links__new(s, closer);
	if (!a->links)
		goto free_attach;
	if (mt_bpf_session__stacks(s)) {
		a->kun = mt_kunwind__new(s);
		if (!a->kun)
			goto free_links;
	}
	return a;

free_links:
	mt_links__free(a->links);
free_attach:
	free(a);
	return NULL;
}

static ssize_t files__find(const struct mt_attach_worker *a, uint64_t dev, uint64_t ino)
{
	size_t i;

	for (i = 0; i < a->nfiles; i++)
		if (a->files[i].dev == dev && a->files[i].ino == ino)
			return i;
	return -1;
}

static struct mt_link_file file__link(const struct mt_attach_worker *a, size_t i)
{
	const struct seen_file *f = &a->files[i];

	return (struct mt_link_file){ .index = i, .dev = f->dev, .ino = f->ino, .path = f->fd_path, .plan = f->plan };
}

/* Try k = 0 first: the mapping thread's entry. k = 1 is its process's: a thread that was not held may be gone. */
static void req__proc_path(const struct mt_attach_req *r, int k, const char *what, char *path, size_t n)
{
	snprintf(path, n, "/proc/%u/%s", k ? r->pid : r->tid, what);
}

/* fd's file is the mapped one: its inode, and its device in either encoding (the kernel's s_dev packs major:minor
 * as 12:20 bits, stat's st_dev as glibc's makedev()). An overlay's file shows the overlay's device, not the layer's
 * that BPF sees: through map_files (the mapping's own file) the inode suffices. */
static bool file__is_mapped(int fd, const struct mt_attach_req *r, bool by_mapping)
{
	struct stat st;
	uint64_t kdev;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_ino != r->ino)
		return false;
	kdev = ((uint64_t)major(st.st_dev) << MT_KDEV_MINOR_BITS) | minor(st.st_dev);
	return by_mapping || st.st_dev == r->dev || kdev == r->dev;
}

/* The path the mapping's map_files entry links to, for the record ("" when the mapping is gone). By the mapping
 * thread's id, not the process's: a leader that called pthread_exit is a zombie without memory. */
static void file__name(const struct mt_attach_req *r, char *name, size_t nlen)
{
	char what[64], map_path[96];
	ssize_t n = -1;
	int k;

	snprintf(what, sizeof(what), "map_files/%llx-%llx", (unsigned long long)r->start, (unsigned long long)r->end);
	for (k = 0; k < 2 && n <= 0; k++) {
		req__proc_path(r, k, what, map_path, sizeof(map_path));
		n = readlink(map_path, name, nlen - 1);
	}
	name[n > 0 ? n : 0] = 0;
	if (n <= 0)
		pr_warn("cannot resolve %s: %s\n", map_path, strerror(errno));
}

/*
 * The mapped file, opened once and never again by name: /proc/TID/map_files/START-END opens the very file that is
 * mapped, even when it was deleted or lives in an overlay (it needs CAP_CHECKPOINT_RESTORE: without it, name, the
 * path it links to, is opened instead). Either way the descriptor's inode must be the mapping's, so that a name
 * renamed or swapped for a symlink meanwhile cannot pass another file off as the module. The descriptor, or -errno.
 */
static int file__open(const struct mt_attach_req *r, const char *name)
{
	char what[64], map_path[96];
	bool by_mapping = true;
	int k, fd = -1;

	snprintf(what, sizeof(what), "map_files/%llx-%llx", (unsigned long long)r->start, (unsigned long long)r->end);
	for (k = 0; k < 2 && fd < 0; k++) {
		req__proc_path(r, k, what, map_path, sizeof(map_path));
		fd = open(map_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	}
	if (fd < 0 && (errno == EPERM || errno == EACCES) && name[0]) {
		fd = open(name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		by_mapping = false;
	}
	if (fd < 0)
		return -errno;
	if (!file__is_mapped(fd, r, by_mapping)) {
		pr_warn("%s: not the mapped file (replaced meanwhile): not looked at\n", name[0] ? name : map_path);
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* The first request for a file: classify it once; it is known from now on, whatever the outcome. */
static ssize_t file__classify(struct mt_attach_worker *a, int fd, struct mt_attach *rec)
{
	struct seen_file f = { .dev = rec->dev, .ino = rec->ino, .fd = -1 };
	struct mt_probe_plan plan;
	char fd_path[32];
	int err;

	snprintf(fd_path, sizeof(fd_path), "/proc/self/fd/%d", fd);
	err = mt_allocators__plan(fd_path, rec->path, &plan);
	if (err)
		pr_warn("%s: cannot read its symbols: %s\n", rec->path, strerror(-err));
	if (!err && plan.n) {
		f.plan = malloc(sizeof(plan));
		f.fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (!f.plan || f.fd < 0) {
			free(f.plan);
			f.plan = NULL;
			rec->err = -ENOMEM;
		} else {
			*f.plan = plan;
			f.kind = plan.kind;
			snprintf(f.fd_path, sizeof(f.fd_path), "/proc/self/fd/%d", f.fd);
		}
	}
	err = mt_bpf_session__file_state(a->bpf, f.dev, f.ino, f.plan ? MT_FILE_ALLOCATOR : MT_FILE_NONE);
	if (err)
		pr_warn("cannot mark %s known: %s\n", rec->path, strerror(-err));
	mt_module_files__add(a->mods, a->w, fd, rec, f.kind);
	mt_kunwind__add(a->kun, fd, rec->path, f.dev, f.ino);	/* before the held thread runs its code */
	if (mt_array__grow((void **)&a->files, &a->cap_files, a->nfiles, sizeof(*a->files))) {
		free(f.plan);
		if (f.fd >= 0)
			close(f.fd);
		return -1;
	}
	a->files[a->nfiles] = f;
	return a->nfiles++;
}

/* Why mt_links__bind failed, in words; EOWNERDEAD is its own: see links.c. */
static const char *bind__why(int err)
{
	if (err == -EOWNERDEAD)
		return "its main thread has exited, and the kernel binds probes to that thread: its calls into this "
		       "file go unrecorded";
	if (err == -EMFILE)
		return "too many open files (each live process holds two per allocator file, one per probe site "
		       "without uprobe_multi links: raise `ulimit -Hn`)";
	return strerror(-err);
}

/* Bind the file's probes to the requesting process (each process has its own: untracked ones never trap). The file
 * is opened only the first time (file__open). */
static void file__handle(struct mt_attach_worker *a, const struct mt_attach_req *r, struct mt_attach *rec)
{
	ssize_t i = files__find(a, rec->dev, rec->ino);
	struct mt_link_file lf;
	int err, fd;

	file__name(r, rec->path, sizeof(rec->path));
	if (i < 0) {
		fd = file__open(r, rec->path);
		if (fd < 0) {
			rec->err = fd;
			return;
		}
		i = file__classify(a, fd, rec);
		close(fd);
	}
	if (i < 0 || !a->files[i].plan)
		return;
	rec->kind = a->files[i].kind;
	if (mt_links__has(a->links, rec->hdr.pid, i))
		return;
	lf = file__link(a, i);
	err = mt_links__check_leader(a->links, rec->hdr.pid, &lf);
	if (!err)
		err = mt_links__bind(a->links, rec->hdr.pid, &lf);
	if (err == -ESRCH)	/* the process is exiting: nothing of it is left to probe */
		return;
	rec->probes = err ? 0 : lf.plan->n;
	rec->err = err;
	if (err)
		pr_warn("%s: no probes attached for %u: %s\n", rec->path, rec->hdr.pid, bind__why(err));
	else
		pr_info("%s: %zu %s entry points probed for %u\n", rec->path, lf.plan->n,
			mt_allocator__name(lf.plan->kind), rec->hdr.pid);
}

void mt_attach__set_sink(struct mt_attach_worker *a, mt_attach_sink_fn fn, void *ctx)
{
	a->sink = fn;
	a->sink_ctx = ctx;
}

/*
 * A record of the worker's, after every record the ring holds from before it: a thread's mapping read in /proc at
 * its stop must follow the thread's exec, which may still wait for an earlier number in another CPU's batch, and
 * both may bear the same tick (then the readers keep the order they were written in).
 */
static int attach__write(struct mt_attach_worker *a, struct mt_rec_hdr *rec)
{
	if (a->sink)
		return a->sink(a->sink_ctx, rec);
	return mt_writer__append(a->w, rec, rec->size);
}

/* A bind that no request asked for failed: logged like a request's, so that the report counts it. */
static void attach__log_failure(struct mt_attach_worker *a, pid_t pid, const struct mt_link_file *lf, int err)
{
	struct mt_attach rec = { .hdr = { .ts_ns = mt_bpf_session__now(a->bpf), .pid = pid, .tid = pid,
					  .type = MT_REC_ATTACH, .size = sizeof(rec) },
				 .dev = lf->dev, .ino = lf->ino, .kind = a->files[lf->index].kind,
				 .reason = MT_ATTACH_INHERIT, .err = err };
	ssize_t n = readlink(lf->path, rec.path, sizeof(rec.path) - 1);

	rec.path[n > 0 ? n : 0] = 0;
	if (!a->inherit_failures++)	/* a tree may fail hundreds alike: the end's summary counts them all */
		pr_warn("%s: no probes attached for %d: %s\n", n > 0 ? rec.path : lf->path, pid, bind__why(err));
	attach__write(a, &rec.hdr);
}

/* Binds to pid the files of the index list, as mt_attach__on_fork and a thread's exec need. */
static void attach__bind_files(struct mt_attach_worker *a, pid_t pid, const size_t *files, size_t n)
{
	struct mt_link_file lf;
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		lf = file__link(a, files[i]);
		err = mt_links__bind(a->links, pid, &lf);
		if (err && err != -ESRCH)
			attach__log_failure(a, pid, &lf, err);
	}
}

/* A fork child runs its parent's image: it gets the parent's probes before its first instruction. */
void mt_attach__on_fork(struct mt_attach_worker *a, pid_t parent, pid_t child)
{
	size_t files[FORK_FILES_MAX], n = mt_links__files(a->links, parent, files, FORK_FILES_MAX);

	attach__bind_files(a, child, files, n);
}

/* No stop of the child's comes: its probes are bound when its fork record is read, and it has run meanwhile. */
void mt_attach__on_untraced_fork(struct mt_attach_worker *a, pid_t parent, pid_t child)
{
	size_t files[FORK_FILES_MAX], n = mt_links__files(a->links, parent, files, FORK_FILES_MAX);

	attach__bind_files(a, child, files, n);
	a->late_binds += n != 0;
}

uint64_t mt_attach__late_binds(const struct mt_attach_worker *a)
{
	return a->late_binds;
}

/* resumed is CLOCK_MONOTONIC, like the request's ktime_ns: the hold they measure goes onto the records' clock,
 * which may be the tick, so that resumed_ns - ts_ns is the hold to the ns either way. */
static void pending__log(struct mt_attach_worker *a, size_t i, uint64_t resumed)
{
	struct pending *p = &a->pend[i];
	uint64_t held = resumed > p->req.ktime_ns ? resumed - p->req.ktime_ns : 0;

	p->rec.resumed_ns = resumed ? p->rec.hdr.ts_ns + held : 0;
	attach__write(a, &p->rec.hdr);
	a->pend[i] = a->pend[--a->npend];
}

/* The mapping record BPF writes at an executable mapping, written by the tracer for one it read in /proc. */
static int mapping__write(struct mt_attach_worker *a, uint64_t ts, pid_t pid, pid_t tid, const struct mt_proc_map *l)
{
	struct mt_mapping m = { .hdr = { .ts_ns = ts, .pid = pid, .tid = tid, .type = MT_REC_MAPPING,
					 .size = sizeof(m) },
				.start = l->start, .end = l->end, .pgoff = l->pgoff, .dev = l->dev, .ino = l->ino,
				.prot = l->prot };

	return attach__write(a, &m.hdr);
}

/* The mapping into the process's code ranges, for the in-kernel unwinder (beyond MT_EXEC_RANGES, as BPF: no more). */
static void mapping__range(struct mt_attach_worker *a, pid_t pid, const struct mt_proc_map *l)
{
	struct mt_exec_range m = { .lo = l->start, .hi = l->end, .pgoff = l->pgoff, .dev = l->dev, .ino = l->ino };

	mt_bpf_session__exec_range(a->bpf, pid, &m);
}

/* BPF could not read the mapping (the mmap lock was taken): find it in /proc/TID/maps and record it here. */
static int req__resolve(struct mt_attach_worker *a, struct mt_attach_req *r)
{
	char path[64], line[PATH_MAX + 128];
	struct mt_proc_map l;
	FILE *f = NULL;
	int found = 0, k;

	for (k = 0; k < 2 && !f; k++) {
		req__proc_path(r, k, "maps", path, sizeof(path));
		f = fopen(path, "re");
	}
	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f))
		found = mt_proc__maps_line(line, &l) && r->start >= l.start && r->start < l.end && l.ino;
	fclose(f);
	if (!found)
		return -ENOENT;
	r->start = l.start;
	r->end = l.end;
	r->dev = l.dev;
	r->ino = l.ino;
	l.prot = PROT_READ | PROT_EXEC;	/* what the watcher looks at */
	mapping__range(a, r->pid, &l);
	return mapping__write(a, r->ts_ns, r->pid, r->tid, &l);
}

int mt_attach__on_request(struct mt_attach_worker *a, const struct mt_attach_req *in)
{
	struct mt_attach_req req = *in, *r = &req;
	struct mt_attach *rec;
	bool file;

	if (mt_array__grow((void **)&a->pend, &a->cap_pend, a->npend, sizeof(*a->pend)))
		return -ENOMEM;
	rec = &a->pend[a->npend].rec;
	memset(rec, 0, sizeof(*rec));
	rec->hdr = (struct mt_rec_hdr){ .ts_ns = r->ts_ns, .pid = r->pid, .tid = r->tid, .type = MT_REC_ATTACH,
					.size = sizeof(*rec) };
	file = r->ino || !req__resolve(a, r);
	a->pend[a->npend].req = *r;
	rec->dev = r->dev;
	rec->ino = r->ino;
	rec->reason = r->reason;
	if (file)
		file__handle(a, r, rec);
	a->late_binds += r->foreign && rec->probes;
	a->npend++;
	/* A thread BPF could not hold has been running all along: there is no stop to wait for. */
	if (!r->held)
		pending__log(a, a->npend - 1, mt_bpf_session__monotonic_ns());
	return 0;
}

/* One request per file, as BPF would have made at the first of its mappings: later ones need none. */
static bool seized__first(const struct mt_proc_map *v, size_t i, const struct mt_proc_map *l)
{
	while (i--)
		if (v[i].dev == l->dev && v[i].ino == l->ino)
			return false;
	return true;
}

int mt_attach__seized(struct mt_attach_worker *a, pid_t pid)
{
	struct mt_attach_req r = { .pid = pid, .tid = pid, .reason = MT_ATTACH_SEIZE };
	char path[64], line[PATH_MAX + 128];
	struct mt_proc_map l, *seen = NULL;
	size_t n = 0, cap = 0;
	int err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		if (!mt_proc__maps_line(line, &l) || !(l.prot & PROT_EXEC) || !l.ino)
			continue;
		r.ts_ns = mt_bpf_session__now(a->bpf);
		err = mapping__write(a, r.ts_ns, pid, pid, &l);
		mapping__range(a, pid, &l);
		if (err || !seized__first(seen, n, &l))
			continue;
		if (mt_array__grow((void **)&seen, &cap, n, sizeof(*seen))) {
			err = -ENOMEM;
			break;
		}
		seen[n++] = l;
		r.ktime_ns = mt_bpf_session__monotonic_ns();
		r.dev = l.dev;
		r.ino = l.ino;
		r.start = l.start;
		r.end = l.end;
		err = mt_attach__on_request(a, &r);
	}
	fclose(f);
	free(seen);
	return err;
}

bool mt_attach__on_hold_stop(struct mt_attach_worker *a, pid_t tid)
{
	uint64_t now = mt_bpf_session__monotonic_ns();
	bool ours = false;
	size_t i = a->npend;

	while (i--) {
		const struct mt_attach_req *r = &a->pend[i].req;

		if (r->tid == (uint32_t)tid && r->held && r->reason == MT_ATTACH_MMAP) {
			pending__log(a, i, now);
			ours = true;
		}
	}
	return ours;
}

/*
 * A link's pid filter holds the task it was made for, the process's leader, and the kernel plants breakpoints only
 * in that task's memory. A thread that is not the leader and execs takes the leader's pid, and the old leader's
 * task is gone: the process's links are made anew for it, before the new image runs.
 */
void mt_attach__on_exec_stop(struct mt_attach_worker *a, pid_t pid, pid_t former_tid)
{
	size_t files[FORK_FILES_MAX], n, i = a->npend;
	uint64_t now = mt_bpf_session__monotonic_ns();

	while (i--)
		if (a->pend[i].req.pid == (uint32_t)pid && a->pend[i].req.reason != MT_ATTACH_MMAP)
			pending__log(a, i, now);
	if (former_tid == pid)
		return;
	i = a->npend;
	while (i--)	/* holds of the old leader, which died unseen: its tid is the exec'ing thread's now */
		if (a->pend[i].req.tid == (uint32_t)pid && a->pend[i].req.held)
			pending__log(a, i, 0);
	n = mt_links__files(a->links, pid, files, FORK_FILES_MAX);
	mt_links__release(a->links, pid);
	attach__bind_files(a, pid, files, n);
}

/* A held thread that died before its stop was seen is logged without a resume time; a process's links go. */
void mt_attach__on_exit(struct mt_attach_worker *a, pid_t tid)
{
	size_t i = a->npend;

	while (i--)
		if (a->pend[i].req.tid == (uint32_t)tid)
			pending__log(a, i, 0);
	mt_links__release(a->links, tid);
}

void mt_attach__flush(struct mt_attach_worker *a)
{
	while (a->npend)
		pending__log(a, a->npend - 1, 0);
	mt_links__release_all(a->links);
}

/* What the in-kernel unwinder's tables cost: bench/stacks.sh reads this line. */
static void attach__log_tables(const struct mt_attach_worker *a)
{
	struct mt_kunwind_stats st;

	if (!a->kun)
		return;
	mt_kunwind__stats(a->kun, &st);
	pr_info("in-kernel unwind tables: %llu modules (%llu without CFI), %llu rows, %llu pages (%.1f KiB), built in "
		"%.1f ms from %.1f KiB of .eh_frame\n", (unsigned long long)st.modules, (unsigned long long)st.no_cfi,
		(unsigned long long)st.rows, (unsigned long long)st.pages,
		(st.rows * sizeof(struct mt_urow) + st.pages * 16) / 1024.0, st.build_ns / 1e6,
		st.eh_frame_bytes / 1024.0);
}

void mt_attach__free(struct mt_attach_worker *a)
{
	size_t i;

	if (!a)
		return;
	attach__log_tables(a);
	mt_attach__flush(a);
	mt_links__free(a->links);
	mt_kunwind__free(a->kun);
	for (i = 0; i < a->nfiles; i++) {
		free(a->files[i].plan);
		if (a->files[i].fd >= 0)
			close(a->files[i].fd);
	}
	free(a->pend);
	free(a->files);
	free(a);
}
