/* unwind_cmd.c — `memtrack unwind [--stats] [--list] DIR`: DWARF-unwinds every stack definition into DIR/unwind.mtz. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "cli.h"
#include "log.h"
#include "report.h"
#include "unwind_cmd.h"
#include "unwinder.h"

#define EARLY_SHOWN 10		/* stacks that stopped early, listed without --list */

struct unwind_run {
	struct mt_unwinder *u;
	struct mt_writer *w;		/* NULL: results stay in memory */
	unsigned long repeat;		/* --repeat: unwind each stack this many times (for the rate) */
	bool list;
	FILE *out;			/* per-stack lines, or NULL */
	uint64_t reasons[MT_STOP__COUNT];
	uint64_t stacks;
	uint64_t frames;
	uint64_t early_shown;
};

static void run_line(struct unwind_run *r, const struct mt_unwind_rec *u)
{
	const char *detail = mt_unwind_rec__detail(u);

	if (!r->out || (!r->list && (u->reason == MT_STOP_END || r->early_shown++ >= EARLY_SHOWN)))
		return;
	fprintf(r->out, "stack %#018" PRIx64 " pid %" PRIu32 ": %u frames, %s", (uint64_t)u->hash, u->hdr.pid,
		u->nframes, mt_unwind_stop__text(u->reason));
	if (detail && detail[0])
		fprintf(r->out, " %s", detail);
	if (u->reason == MT_STOP_ERROR)
		fprintf(r->out, " %d", u->error);
	if (u->reason != MT_STOP_END)
		fprintf(r->out, " (at %#" PRIx64 ")", (uint64_t)u->stop_addr);
	fputc('\n', r->out);
}

static const struct mt_unwind_rec *run_hook(void *ctx, const struct mt_stack *rec, uint32_t size, struct mt_aspace *as,
					    int *err)
{
	struct unwind_run *r = ctx;
	const struct mt_unwind_rec *u;
	unsigned long i;

	u = mt_unwinder__unwind(r->u, rec, size, as, err);
	for (i = 1; u && i < r->repeat; i++)
		u = mt_unwinder__unwind(r->u, rec, size, as, err);
	if (!u) {
		*err = 0;	/* a malformed definition: it just has no DWARF chain */
		return NULL;
	}
	r->stacks++;
	r->frames += u->nframes;
	if (u->reason < MT_STOP__COUNT)
		r->reasons[u->reason]++;
	run_line(r, u);
	if (r->w)
		*err = mt_writer__append(r->w, u, u->hdr.size);
	return u;
}

int mt_unwind__load(const char *path, struct mt_stacks **out, struct mt_read_status *st)
{
	struct unwind_run r = { .repeat = 1 };
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
	struct mt_unwind_end e = { .stacks = r->stacks, .frames = r->frames, .cpu_ns = mt_unwinder__cpu_ns(r->u) };
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
		e.reasons[i] = r->reasons[i];
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

/* ---- the command ---- */

struct unwind_args {
	bool stats;
	bool list;
	unsigned long repeat;
	const char *dir;
};

static void unwind_usage(FILE *f)
{
	fputs("usage: memtrack unwind [--stats] [--list] [--repeat N] DIR\n"
	      "DWARF-unwinds every stack of a run recorded with --stacks, from its registers and stack bytes and the\n"
	      "module files in DIR/modules, into DIR/unwind.mtz; report, dump, flamegraph and check-fp then use those\n"
	      "chains. Prints why unwinding stopped early per stack (the first ten; --list: every stack), then counts\n"
	      "by reason.\n"
	      "  --stats     the unwinding rate: stacks per second of one core's CPU time\n"
	      "  --list      one line per stack\n"
	      "  --repeat N  unwind each stack N times (to measure the rate on a small DIR)\n"
	      "  -h, --help  this text\n"
	      "Exit status: 0; 1 when DIR is damaged (the stacks before the damage are unwound);\n"
	      "2 when DIR cannot be read or written, or the command line is wrong.\n", f);
}

static int unwind_args(int argc, char **argv, struct unwind_args *a)
{
	static const struct option opts[] = {
		{ "stats", no_argument, NULL, 's' },
		{ "list", no_argument, NULL, 'l' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 's') {
			a->stats = true;
		} else if (c == 'l') {
			a->list = true;
		} else if (c == 'r') {
			a->repeat = strtoul(optarg, &end, 10);
			if (!a->repeat || *end || optarg[0] == '-') {
				pr_err("unwind: --repeat takes a count above 0, not '%s'\n", optarg);
				return -EINVAL;
			}
		} else if (c == 'h') {
			unwind_usage(stdout);
			return 1;
		} else {
			return mt_cli__bad_option("unwind", argv);
		}
	}
	return mt_cli__one_dir("unwind", "memtrack unwind [--stats] [--list] DIR", argc, argv, &a->dir);
}

static void print_summary(const struct unwind_run *r, const char *dir, const struct unwind_args *a)
{
	uint64_t ns = mt_unwinder__cpu_ns(r->u), n = mt_unwinder__stacks(r->u);
	size_t i;

	printf("%s: %" PRIu64 " stacks unwound, %" PRIu64 " frames, into %s/" MT_UNWIND_FILE "\n", dir, r->stacks,
	       r->frames, dir);
	printf("stopped because:\n");
	for (i = 0; i < MT_STOP__COUNT; i++)
		if (r->reasons[i] || i == MT_STOP_END)
			printf("  %-36s %8" PRIu64 "\n", mt_unwind_stop__text(i), r->reasons[i]);
	if (a->stats)
		printf("rate: %" PRIu64 " unwinds in %.3f ms of CPU: %.0f stacks/s on one core (module tables cached)"
		       "\n",
		       n, ns / 1e6, ns ? n * 1e9 / ns : 0.0);
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

int mt_cmd_unwind(int argc, char **argv)
{
	struct unwind_args a = { .repeat = 1 };
	struct unwind_run r = { 0 };
	struct mt_read_status st = { 0 };
	char scratch[4096], *dir = NULL;
	int err, werr, ret = 2;

	err = unwind_args(argc, argv, &a);
	if (err)
		return err > 0 ? 0 : 2;
	r.repeat = a.repeat;
	r.list = a.list;
	r.out = stdout;
	r.u = mt_unwinder__new();
	dir = mt_stacks__dir_of(a.dir);
	if (!r.u || !dir) {
		pr_err("unwind: %s\n", strerror(ENOMEM));
		goto out_free;
	}
	snprintf(scratch, sizeof(scratch), "%s/.unwind.%d", dir, (int)getpid());
	r.w = mt_writer__open(scratch);
	if (!r.w) {
		pr_err("unwind: cannot create %s: %s\n", scratch, strerror(errno));
		goto out_free;
	}
	err = unwind_into(&r, a.dir, dir, &st);
	werr = mt_writer__close(r.w);
	if (!werr && (!err || err == -EBADMSG))
		werr = scratch_commit(scratch, dir);
	scratch_remove(scratch);
	if (werr) {
		pr_err("unwind: writing %s/" MT_UNWIND_FILE ": %s\n", dir, strerror(-werr));
		goto out_free;
	}
	if (!err || err == -EBADMSG)
		print_summary(&r, dir, &a);
	ret = fflush(stdout) ? 2 : mt_report__exit_status(a.dir, err, &st, "unwinding");
out_free:
	free(dir);
	mt_unwinder__free(r.u);
	return ret;
}
