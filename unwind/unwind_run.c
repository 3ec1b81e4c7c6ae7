/* unwind_run.c — every stack definition of an artifact DWARF-unwound, in memory or into DIR/unwind.mtz. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/plural.h"
#include "unwind/unwind_run.h"
#include "unwind/unwinder.h"

#define EARLY_SHOWN 10		/* stacks that stopped early, listed without --list */

struct unwind_run {
	struct mt_unwinder *u;
	struct mt_writer *w;		/* NULL: results stay in memory */
	const struct mt_unwind_opts *o;
	struct mt_unwind_summary *sum;
	uint64_t early_shown;
};

static void run_line(struct unwind_run *r, const struct mt_unwind_rec *u)
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

static const struct mt_unwind_rec *run_hook(void *ctx, const struct mt_stack *rec, uint32_t size, struct mt_aspace *as,
					    int *err)
{
	struct unwind_run *r = ctx;
	const struct mt_unwind_rec *u;
	unsigned long i;

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
	if (r->w)
		*err = mt_writer__append(r->w, u, u->hdr.size);
	return u;
}

int mt_unwind__load(const char *path, struct mt_stacks **out, struct mt_read_status *st)
{
	static const struct mt_unwind_opts quiet = { .repeat = 1 };
	struct mt_unwind_summary sum = { 0 };
	struct unwind_run r = { .o = &quiet, .sum = &sum };
	struct mt_stacks_opts opts = { .hook = run_hook, .hook_ctx = &r };
	int err;

	r.u = mt_unwinder__new();
	if (!r.u) {
		*out = NULL;
		if (st)
			snprintf(st->reason, sizeof(st->reason), "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	err = mt_stacks__load(path, &opts, out, st);
	mt_unwinder__free(r.u);
	return err;
}

/* ---- writing DIR/unwind.mtz: through the artifact writer in a scratch directory, then renamed into place ---- */

static int end_record(struct unwind_run *r, const char *dir)
{
	struct mt_unwind_end e = { .stacks = r->sum->stacks, .frames = r->sum->frames,
				   .cpu_ns = mt_unwinder__cpu_ns(r->u) };
	char path[4096];
	struct stat sb;
	size_t i;

	snprintf(path, sizeof(path), "%s/" MT_ARTIFACT_FILE, dir);
	if (stat(path, &sb))
		return -errno;
	e.events_bytes = sb.st_size;
	e.hdr.type = MT_REC_UNWIND_END;
	e.hdr.size = sizeof(e);
	for (i = 0; i < MT_STOP__COUNT; i++)
		e.reasons[i] = r->sum->reasons[i];
	return mt_writer__append(r->w, &e, sizeof(e));
}

static int scratch_commit(const char *scratch, const char *dir)
{
	char from[4200], to[4200];

	snprintf(from, sizeof(from), "%s/" MT_ARTIFACT_FILE, scratch);
	snprintf(to, sizeof(to), "%s/" MT_UNWIND_FILE, dir);
	if (rename(from, to))
		return -errno;
	return 0;
}

static void scratch_remove(const char *scratch)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/" MT_ARTIFACT_FILE, scratch);
	unlink(path);
	rmdir(scratch);
}

/* Unwinds into the writer; returns what mt_stacks__load returned. */
static int unwind_into(struct unwind_run *r, const char *path, const char *dir, struct mt_read_status *st)
{
	struct mt_stacks_opts opts = { .hook = run_hook, .hook_ctx = r };
	struct mt_stacks *s;
	int err, werr;

	err = mt_stacks__load(path, &opts, &s, st);
	mt_stacks__free(s);
	if (err && err != -EBADMSG)
		return err;
	werr = end_record(r, dir);
	return werr ? werr : err;
}


int mt_unwind__write(const char *path, const struct mt_unwind_opts *o, struct mt_unwind_summary *sum,
		     struct mt_read_status *st, int *read_err)
{
	struct unwind_run r = { .o = o, .sum = sum };
	char scratch[4096], *dir;
	int err;

	*read_err = 0;
	r.u = mt_unwinder__new();
	dir = mt_stacks__dir_of(path);
	if (!r.u || !dir) {
		err = -ENOMEM;
		goto out_free;
	}
	snprintf(scratch, sizeof(scratch), "%s/.unwind.%d", dir, (int)getpid());
	r.w = mt_writer__open(scratch);
	if (!r.w) {
		err = -errno;
		goto out_free;
	}
	*read_err = unwind_into(&r, path, dir, st);
	err = mt_writer__close(r.w);
	if (!err && (!*read_err || *read_err == -EBADMSG))
		err = scratch_commit(scratch, dir);
	scratch_remove(scratch);
	sum->unwinds = mt_unwinder__stacks(r.u);
	sum->cpu_ns = mt_unwinder__cpu_ns(r.u);
out_free:
	free(dir);
	mt_unwinder__free(r.u);
	return err;
}
