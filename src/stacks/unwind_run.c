// SPDX-License-Identifier: GPL-2.0-only
/* unwind_run.c — every stack definition of an artifact DWARF-unwound: in memory, into DIR/unwind.mtz, or cached. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/plural.h"
#include "stacks/unwind_run.h"
#include "unwind/unwinder.h"

#define EARLY_SHOWN 10		/* stacks that stopped early, listed without --list */

struct mt_unwind_run {
	struct mt_unwinder *u;
	struct mt_writer *w;		/* NULL: nothing written (yet) */
	const struct mt_unwind_opts *o;
	struct mt_unwind_summary *sum;
	struct mt_unwind_summary own_sum;
	uint64_t early_shown;
	char *dir;
	int dfd;			/* DIR, opened once: what is written in it goes by this descriptor, or -1 */
	int dfd_errno;			/* why there is no dfd */
	int sfd;			/* the scratch directory in it, while the file is written there, or -1 */
	char scratch[32];		/* its name, .unwind.<pid>: the file is there until it is complete */
	bool lazy;			/* the cache: the scratch file is made at the first stack, if it can be */
	bool tried;			/* the lazy open was tried */
	struct mt_unwind_index *ix;	/* the results kept in memory too, or NULL */
};

static const struct mt_unwind_opts quiet = { .repeat = 1 };

static void run_line(struct mt_unwind_run *r, const struct mt_unwind_rec *u)
{
	const char *detail = mt_unwind_rec__detail(u);

	if (!r->o->out || (!r->o->list && (u->reason == MT_STOP_END || r->early_shown++ >= EARLY_SHOWN)))
		return;
	fprintf(r->o->out, "stack %#018" PRIx64 " pid %" PRIu32 ": %u %s, %s", (uint64_t)u->hash, u->hdr.pid,
		u->nframes, mt_plural__of(u->nframes, "frame", "frames"), mt_unwind_stop__text(u->reason));
	if (detail && detail[0])
		fprintf(r->o->out, " %s", detail);
	if (u->reason == MT_STOP_ERROR)
		fprintf(r->o->out, " %d", u->error);
	if (u->reason != MT_STOP_END)
		fprintf(r->o->out, " (at %#" PRIx64 ")", (uint64_t)u->stop_addr);
	fputc('\n', r->o->out);
}

static struct mt_unwind_run *run_new(const char *path, const struct mt_unwind_opts *o, struct mt_unwind_summary *sum)
{
	struct mt_unwind_run *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->o = o ? o : &quiet;
	r->sum = sum ? sum : &r->own_sum;
	r->u = mt_unwinder__new();
	r->dir = path ? mt_stacks__dir_of(path) : NULL;
	if (!r->u || (path && !r->dir)) {
		mt_unwinder__free(r->u);
		free(r->dir);
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	r->sfd = -1;
	r->dfd = r->dir ? open(r->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	r->dfd_errno = r->dfd < 0 && r->dir ? errno : ENOENT;
	snprintf(r->scratch, sizeof(r->scratch), ".unwind.%d", (int)getpid());
	return r;
}

/* The scratch directory name in dfd (sfd: it, opened, or -1) and the file in it, gone. */
static void scratch_remove(int dfd, const char *name, int sfd)
{
	int fd = sfd >= 0 ? sfd : openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return;
	unlinkat(fd, MT_ARTIFACT_FILE, 0);
	close(fd);
	unlinkat(dfd, name, AT_REMOVEDIR);
}

/* The file written in a scratch directory memtrack makes (never one that is there: it could be anyone's). */
static struct mt_writer *scratch_open(struct mt_unwind_run *r)
{
	struct mt_writer *w;
	int err;

	if (r->dfd < 0) {
		errno = r->dfd_errno;
		return NULL;
	}
	if (mkdirat(r->dfd, r->scratch, 0700))
		return NULL;
	r->sfd = openat(r->dfd, r->scratch, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	w = r->sfd >= 0 ? mt_writer__open_at(r->sfd) : NULL;
	if (!w) {
		err = errno;
		scratch_remove(r->dfd, r->scratch, r->sfd);
		r->sfd = -1;
		errno = err;
	}
	return w;
}

static void scratch_close(struct mt_unwind_run *r)
{
	mt_writer__close(r->w);
	r->w = NULL;
	scratch_remove(r->dfd, r->scratch, r->sfd);
	r->sfd = -1;
}

static void run_free(struct mt_unwind_run *r)
{
	if (!r)
		return;
	if (r->w)
		scratch_close(r);
	if (r->dfd >= 0)
		close(r->dfd);
	mt_unwind_index__free(r->ix);
	mt_unwinder__free(r->u);
	free(r->dir);
	free(r);
}

/* Scratch directories of readers that were killed while writing (their pid is gone) are removed. */
static void scratch_sweep(int dfd)
{
	int fd = dfd >= 0 ? dup(dfd) : -1;
	DIR *dp = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *d;
	long pid;
	char *end;

	if (!dp) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((d = readdir(dp))) {
		if (strncmp(d->d_name, ".unwind.", 8))
			continue;
		pid = strtol(d->d_name + 8, &end, 10);
		if (*end || pid <= 0 || !kill((pid_t)pid, 0) || errno != ESRCH)
			continue;
		scratch_remove(dfd, d->d_name, -1);
	}
	closedir(dp);
}

/* The cache's file is opened at its first stack: a recording without stacks gets none, a read-only DIR none. */
static void run_open_lazy(struct mt_unwind_run *r)
{
	scratch_sweep(r->dfd);
	r->tried = true;
	r->w = scratch_open(r);
	if (!r->w)
		pr_debug("%s: not cached: %s\n", r->dir, strerror(errno));
}

static int run_keep(struct mt_unwind_run *r, const struct mt_unwind_rec *u)
{
	int err;

	if (r->lazy && !r->tried)
		run_open_lazy(r);
	if (r->ix) {
		err = mt_unwind_index__add(r->ix, u);
		if (err)
			return err;
	}
	if (!r->w)
		return 0;
	err = mt_writer__append(r->w, u, u->hdr.size);
	if (err && r->lazy) {
		pr_debug("%s: not cached: %s\n", r->dir, strerror(-err));
		scratch_close(r);
		return 0;
	}
	return err;
}

const struct mt_unwind_rec *mt_unwind_run__hook(void *ctx, const struct mt_stack *rec, uint32_t size,
						struct mt_aspace *as, int *err)
{
	struct mt_unwind_run *r = ctx;
	const struct mt_unwind_rec *u;
	unsigned long i;

	*err = 0;
	if ((rec->flags & MT_STACK_F_BRIEF) && !rec->nbytes)
		return NULL;	/* no bytes to unwind (its chain is the kernel's): no result, no record, no state */
	u = mt_unwinder__unwind(r->u, rec, size, as, err);
	for (i = 1; u && i < r->o->repeat; i++)
		u = mt_unwinder__unwind(r->u, rec, size, as, err);
	if (!u) {
		*err = 0;	/* a malformed definition: it just has no DWARF chain */
		return NULL;
	}
	r->sum->stacks++;
	r->sum->frames += u->nframes;
	if (u->reason < MT_STOP__COUNT)
		r->sum->reasons[u->reason]++;
	run_line(r, u);
	*err = run_keep(r, u);
	return u;
}

int mt_unwind__load(const char *path, struct mt_stacks **out, struct mt_read_status *st)
{
	struct mt_unwind_run *r = run_new(NULL, NULL, NULL);
	struct mt_stacks_opts opts = { .hook = mt_unwind_run__hook, .hook_ctx = r };
	int err;

	if (!r) {
		*out = NULL;
		if (st)
			snprintf(st->reason, sizeof(st->reason), "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	err = mt_stacks__read(path, &opts, out, st);
	run_free(r);
	return err;
}

/* ---- DIR/unwind.mtz: through the artifact writer in a scratch directory, then renamed into place ---- */

static int end_record(struct mt_unwind_run *r)
{
	struct mt_unwind_end e = { .stacks = r->sum->stacks, .frames = r->sum->frames,
				   .cpu_ns = mt_unwinder__cpu_ns(r->u) };
	struct stat sb;
	size_t i;

	if (fstatat(r->dfd, MT_ARTIFACT_FILE, &sb, AT_SYMLINK_NOFOLLOW))
		return -errno;
	e.events_bytes = sb.st_size;
	e.hdr.type = MT_REC_UNWIND_END;
	e.hdr.size = sizeof(e);
	for (i = 0; i < MT_STOP__COUNT; i++)
		e.reasons[i] = r->sum->reasons[i];
	return mt_writer__append(r->w, &e, sizeof(e));
}

/* The end record, the file closed and renamed into DIR; the scratch directory goes either way. */
static int run_commit(struct mt_unwind_run *r)
{
	int err = end_record(r), cerr;

	cerr = mt_writer__close(r->w);
	r->w = NULL;
	err = err ? err : cerr;
	if (!err && renameat(r->sfd, MT_ARTIFACT_FILE, r->dfd, MT_UNWIND_FILE))
		err = -errno;
	scratch_remove(r->dfd, r->scratch, r->sfd);
	r->sfd = -1;
	return err;
}

int mt_unwind__write(const char *path, const struct mt_unwind_opts *o, struct mt_unwind_summary *sum,
		     struct mt_read_status *st, int *read_err)
{
	struct mt_unwind_run *r = run_new(path, o, sum);
	struct mt_stacks_opts opts = { .hook = mt_unwind_run__hook, .hook_ctx = r, .chains_only = true };
	struct mt_stacks *s;
	int err;

	*read_err = 0;
	if (!r)
		return -ENOMEM;
	r->w = scratch_open(r);
	if (!r->w) {
		err = -errno;
		run_free(r);
		return err;
	}
	*read_err = mt_stacks__read(path, &opts, &s, st);
	mt_stacks__free(s);
	err = !*read_err || *read_err == -EBADMSG ? run_commit(r) : 0;
	sum->unwinds = mt_unwinder__stacks(r->u);
	sum->cpu_ns = mt_unwinder__cpu_ns(r->u);
	run_free(r);
	return err;
}

/* ---- the cache: DWARF chains on first use ---- */

struct mt_unwind_run *mt_unwind_run__cache(const char *dir, bool with_index)
{
	struct mt_unwind_run *r = run_new(dir, NULL, NULL);

	if (!r)
		return NULL;
	r->lazy = true;
	if (with_index && !(r->ix = mt_unwind_index__new())) {
		run_free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

void mt_unwind_run__finish(struct mt_unwind_run *r, int read_err)
{
	int err;

	if (!r)
		return;
	if (r->w && (!read_err || read_err == -EBADMSG)) {
		err = run_commit(r);
		if (err)
			pr_debug("%s: not cached: %s\n", r->dir, strerror(-err));
	}
	run_free(r);
}

struct mt_unwind_index *mt_unwind_run__take_index(struct mt_unwind_run *r)
{
	struct mt_unwind_index *ix = r->ix;

	r->ix = NULL;
	return ix;
}
