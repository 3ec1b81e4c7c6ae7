/* attach.c — the attach worker: each requested file is classified once, probed, and its held threads resumed. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "log.h"
#include "model.h"
#include "tracer.h"

/* A request seen on the attach ring, waiting for its thread's stop to be resumed and logged. */
struct pending {
	struct mt_attach_req req;
	struct mt_attach rec;	/* the log record, filled when the file was handled */
};

/* A file handled already: later requests for it attach nothing. */
struct seen_file {
	uint64_t dev, ino;
	uint8_t kind;
};

struct attach {
	struct bpf_session *bpf;
	struct mt_writer *w;
	struct modules *mods;
	struct pending *pend;
	size_t npend, cap_pend;
	struct seen_file *files;
	size_t nfiles, cap_files;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

struct attach *attach__new(struct bpf_session *s, struct mt_writer *w, struct modules *mods)
{
	struct attach *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->bpf = s;
	a->w = w;
	a->mods = mods;
	return a;
}

static struct seen_file *files__find(struct attach *a, uint64_t dev, uint64_t ino)
{
	size_t i;

	for (i = 0; i < a->nfiles; i++)
		if (a->files[i].dev == dev && a->files[i].ino == ino)
			return &a->files[i];
	return NULL;
}

/*
 * /proc/PID/map_files/START-END opens the very file that is mapped, even when it was deleted or lives in an overlay;
 * the record keeps the name it links to. The uprobe goes by that name when it still is the same inode.
 */
static void file__paths(const struct mt_attach_req *r, char *map_path, size_t mlen, char *name, size_t nlen)
{
	struct stat st;
	ssize_t n;

	snprintf(map_path, mlen, "/proc/%u/map_files/%llx-%llx", r->pid, (unsigned long long)r->start,
		 (unsigned long long)r->end);
	n = readlink(map_path, name, nlen - 1);
	name[n > 0 ? n : 0] = 0;
	if (n <= 0) {
		pr_warn("cannot resolve %s: %s\n", map_path, strerror(errno));
		return;
	}
	if (stat(name, &st) || st.st_ino != r->ino) {
		pr_warn("%s is deleted or not the mapped file (overlay?): attaching through %s\n", name, map_path);
		return;
	}
	snprintf(map_path, mlen, "%s", name);
}

/* Classify and probe a file the tree has not mapped before; it is known from now on, whatever the outcome. */
static void file__handle(struct attach *a, const char *open_path, struct mt_attach *rec)
{
	struct seen_file *seen = files__find(a, rec->dev, rec->ino);
	struct alloc_plan plan;
	int err;

	if (seen) {
		rec->kind = seen->kind;
		return;
	}
	err = allocators__plan(open_path, &plan);
	if (!err && plan.n)
		err = bpf_session__attach_plan(a->bpf, open_path, &plan);
	rec->kind = plan.kind;
	rec->probes = err ? 0 : plan.n;
	rec->err = err;
	if (err)
		pr_warn("%s: no probes attached: %s\n", rec->path, strerror(-err));
	else if (plan.n)
		pr_info("%s: %zu %s entry points probed\n", rec->path, plan.n, mt_allocator__name(plan.kind));
	if (!mt_array__grow((void **)&a->files, &a->cap_files, a->nfiles, sizeof(*a->files)))
		a->files[a->nfiles++] = (struct seen_file){ rec->dev, rec->ino, plan.kind };
	modules__add(a->mods, a->w, open_path, rec);
	err = bpf_session__file_done(a->bpf, rec->dev, rec->ino);
	if (err)
		pr_warn("cannot mark %s known: %s\n", rec->path, strerror(-err));
}

static void pending__log(struct attach *a, size_t i, uint64_t resumed)
{
	struct pending *p = &a->pend[i];

	p->rec.resumed_ns = resumed;
	mt_writer__append(a->w, &p->rec, sizeof(p->rec));
	a->pend[i] = a->pend[--a->npend];
}

int attach__on_request(struct attach *a, const struct mt_attach_req *r)
{
	char open_path[PATH_MAX];
	struct mt_attach *rec;

	if (mt_array__grow((void **)&a->pend, &a->cap_pend, a->npend, sizeof(*a->pend)))
		return -ENOMEM;
	a->pend[a->npend].req = *r;
	rec = &a->pend[a->npend].rec;
	memset(rec, 0, sizeof(*rec));
	rec->hdr = (struct mt_rec_hdr){ .ts_ns = r->ts_ns, .pid = r->pid, .tid = r->tid, .type = MT_REC_ATTACH,
					.size = sizeof(*rec) };
	rec->dev = r->dev;
	rec->ino = r->ino;
	rec->reason = r->reason;
	file__paths(r, open_path, sizeof(open_path), rec->path, sizeof(rec->path));
	file__handle(a, open_path, rec);
	a->npend++;
	/* A thread BPF could not hold has been running all along: there is no stop to wait for. */
	if (r->reason == MT_ATTACH_MMAP && !r->held)
		pending__log(a, a->npend - 1, now_ns());
	return 0;
}

bool attach__on_hold_stop(struct attach *a, pid_t tid)
{
	uint64_t now = now_ns();
	bool ours = false;
	size_t i = a->npend;

	while (i--) {
		if (a->pend[i].req.tid == (uint32_t)tid && a->pend[i].req.held) {
			pending__log(a, i, now);
			ours = true;
		}
	}
	return ours;
}

void attach__on_exec_stop(struct attach *a, pid_t pid)
{
	uint64_t now = now_ns();
	size_t i = a->npend;

	while (i--)
		if (a->pend[i].req.pid == (uint32_t)pid && a->pend[i].req.reason != MT_ATTACH_MMAP)
			pending__log(a, i, now);
}

/* A held thread that died before its stop was seen: logged without a resume time. */
void attach__on_exit(struct attach *a, pid_t tid)
{
	size_t i = a->npend;

	while (i--)
		if (a->pend[i].req.tid == (uint32_t)tid)
			pending__log(a, i, 0);
}

void attach__free(struct attach *a)
{
	if (!a)
		return;
	while (a->npend)
		pending__log(a, a->npend - 1, 0);
	free(a->pend);
	free(a->files);
	free(a);
}
