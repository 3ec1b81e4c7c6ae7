// SPDX-License-Identifier: GPL-2.0-only
/* dump.c — `memtrack dump DIR`: every record, in time order, as one JSON object per line. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/u64map.h"
#include "report/report.h"
#include "stacks/stacks.h"
#include "unwind/unwinder.h"

static void dump_alloc(struct mt_json *j, const struct mt_alloc *a)
{
	const char *name = mt_func__name(a->func), *allocator = mt_allocator__name(a->allocator);
	bool known = name != NULL;
	bool is_realloc = mt_func__is_realloc(a->func);
	bool aligned = a->func == MT_FN_ALIGNED_ALLOC || a->func == MT_FN_MEMALIGN || a->func == MT_FN_POSIX_MEMALIGN;

	mt_json__kv_string(j, "event", known ? name : "alloc");
	if (!known)
		mt_json__kv_u64(j, "func", a->func);
	mt_json__kv_u64(j, "addr", a->addr);
	if (!mt_func__is_free(a->func) || a->size)	/* sized frees say the size their caller gave */
		mt_json__kv_u64(j, "size", a->size);
	if (is_realloc || !known)
		mt_json__kv_u64(j, "old_addr", a->old_addr);
	if (aligned || !known)
		mt_json__kv_u64(j, "align", a->align);
	mt_json__kv_string(j, "allocator", allocator ? allocator : "unknown");
	if (!allocator)
		mt_json__kv_u64(j, "allocator_id", a->allocator);
	if (a->stack)	/* stacks: the definition is an "event": "stack" line */
		mt_json__kv_u64(j, "stack", a->stack);
}

/* ---- stacks: begin ---- */

/* With DIR/unwind.mtz, the stack's DWARF chain too: "dwarf": [return addresses], "dwarf_stop": reason. */
static void dump_dwarf(struct mt_json *j, const struct mt_unwind_rec *u)
{
	const __u64 *frames = mt_unwind_rec__frames(u);
	size_t i;

	mt_json__key(j, "dwarf");
	mt_json__begin_array(j);
	for (i = 0; i < u->nframes; i++)
		mt_json__u64(j, frames[i]);
	mt_json__end_array(j);
	mt_json__kv_string(j, "dwarf_stop", mt_unwind_stop__name(u->reason));
}

/* The kernel's CFI chain after the raw bytes: "kernel": [return addresses], "kernel_stop", "kernel_fp_frames". */
static void dump_kchain(struct mt_json *j, const struct mt_stack *st)
{
	static const char *const stops[MT_KSTOP__COUNT] = {
		[MT_KSTOP_END] = "end", [MT_KSTOP_NO_INFO] = "no_unwind_info", [MT_KSTOP_LOADING] = "loading",
		[MT_KSTOP_NO_MAPPING] = "no_mapping", [MT_KSTOP_DEPTH] = "depth_limit", [MT_KSTOP_READ] = "unreadable",
	};
	size_t at = sizeof(*st) + (size_t)st->nfp * 8 + st->nbytes, i;
	const struct mt_kchain *k = (const void *)((const __u8 *)st + at);
	const __u64 *ret = (const __u64 *)(k + 1);

	if (!(st->flags & MT_STACK_F_KCHAIN) || st->hdr.size < at + sizeof(*k) ||
	    st->hdr.size < at + sizeof(*k) + (size_t)k->n * 8)
		return;
	mt_json__key(j, "kernel");
	mt_json__begin_array(j);
	for (i = 0; i < k->n; i++)
		mt_json__u64(j, ret[i]);
	mt_json__end_array(j);
	mt_json__kv_string(j, "kernel_stop", k->stop < MT_KSTOP__COUNT && stops[k->stop] ? stops[k->stop] : "unknown");
	mt_json__kv_u64(j, "kernel_stop_pc", k->stop_pc);
	mt_json__kv_u64(j, "kernel_fp_frames", k->fp_frames);
}

static void dump_stack(struct mt_json *j, const struct mt_stack *st, const struct mt_unwind_index *dwarf)
{
	const struct mt_unwind_rec *u = mt_unwind_index__find(dwarf, st->hash);
	const __u64 *fp = (const __u64 *)(st + 1);
	size_t i, n = (st->hdr.size - sizeof(*st)) / sizeof(*fp);

	if (n > st->nfp)
		n = st->nfp;
	mt_json__kv_string(j, "event", "stack");
	mt_json__kv_u64(j, "hash", st->hash);
	mt_json__key(j, "fp");
	mt_json__begin_array(j);
	for (i = 0; i < n; i++)
		mt_json__u64(j, fp[i]);
	mt_json__end_array(j);
	mt_json__kv_u64(j, "bytes", st->nbytes);
	mt_json__kv_bool(j, "truncated", st->truncated != 0);
	if (st->truncated & MT_STACK_WITHHELD)
		mt_json__kv_bool(j, "withheld", true);
	dump_kchain(j, st);
	if (u)
		dump_dwarf(j, u);
}
/* ---- stacks: end ---- */

static void dump_syscall(struct mt_json *j, const struct mt_syscall *s)
{
	static const char *const names[] = {
		[MT_SYS_MMAP] = "mmap", [MT_SYS_MUNMAP] = "munmap", [MT_SYS_MREMAP] = "mremap", [MT_SYS_BRK] = "brk",
	};
	const char *name = s->sys < sizeof(names) / sizeof(names[0]) ? names[s->sys] : NULL;

	mt_json__kv_string(j, "event", name ? name : "syscall");
	if (!name)
		mt_json__kv_u64(j, "sys", s->sys);
	mt_json__kv_u64(j, "addr", s->addr);
	mt_json__kv_u64(j, "size", s->size);
	if (s->sys == MT_SYS_MMAP || !name)
		mt_json__kv_u64(j, "prot", s->prot);
	if (s->sys == MT_SYS_MREMAP || !name) {
		mt_json__kv_u64(j, "old_addr", s->old_addr);
		mt_json__kv_u64(j, "old_size", s->old_size);
	}
	if (s->sys == MT_SYS_MMAP || s->sys == MT_SYS_MREMAP || !name)
		mt_json__kv_u64(j, "flags", s->flags);
	mt_json__kv_i64(j, "ret", s->ret);
	if (s->origin)	/* not in earlier writers' records */
		mt_json__kv_string(j, "by", s->origin == MT_SYS_ORIGIN_ALLOCATOR ? "allocator" : "program");
	if (s->hdr.size >= sizeof(*s) && s->stack)
		mt_json__kv_u64(j, "stack", s->stack);
}

static void dump_exec(struct mt_json *j, const struct mt_exec *e)
{
	mt_json__kv_string(j, "event", "exec");
	mt_json__kv_string_n(j, "path", e->path, sizeof(e->path));
	mt_json__kv_string_n(j, "comm", e->comm, sizeof(e->comm));
	mt_json__kv_u64(j, "old_pid", e->old_pid);
}

static void dump_exit(struct mt_json *j, const struct mt_exit *x)
{
	mt_json__kv_string(j, "event", "exit");
	mt_json__kv_i64(j, "status", mt_status__shell(x->status));
	if (mt_status__signal(x->status))
		mt_json__kv_i64(j, "signal", mt_status__signal(x->status));
	mt_json__kv_i64(j, "raw_status", x->status);
}

/* A control line: "start" and "stop" switched the recording, "mark" carries its label. */
static void dump_mark(struct mt_json *j, const struct mt_mark *k)
{
	static const char *const kinds[] = { [MT_MARK_START] = "start", [MT_MARK_STOP] = "stop",
					     [MT_MARK_LABEL] = "mark" };
	const char *kind = k->kind <= MT_MARK_LABEL ? kinds[k->kind] : NULL;

	mt_json__kv_string(j, "event", "mark");
	mt_json__kv_string(j, "kind", kind ? kind : "?");
	if (k->kind == MT_MARK_LABEL)
		mt_json__kv_string_n(j, "label", k->label, k->len < MT_MARK_LABEL_MAX ? k->len : MT_MARK_LABEL_MAX);
}

static void dump_thread_exit(struct mt_json *j, const struct mt_thread_exit *t)
{
	mt_json__kv_string(j, "event", "thread_exit");
	mt_json__kv_bool(j, "with_process", t->flags & MT_THREAD_EXIT_GROUP);
	if (t->flags & MT_THREAD_EXIT_LAST)	/* not in earlier writers' records */
		mt_json__kv_bool(j, "last", true);
}

static void dump_rss(struct mt_json *j, const struct mt_rss *r)
{
	static const char *const whys[] = { [MT_RSS_WHY_STEP] = "step", [MT_RSS_WHY_PERIOD] = "period",
					    [MT_RSS_WHY_EXIT] = "exit" };
	const char *why = r->why <= MT_RSS_WHY_EXIT ? whys[r->why] : NULL;

	mt_json__kv_string(j, "event", "rss");
	mt_json__kv_u64(j, "rss_bytes", r->anon + r->file + r->shmem);
	mt_json__kv_u64(j, "anon", r->anon);
	mt_json__kv_u64(j, "file", r->file);
	mt_json__kv_u64(j, "shmem", r->shmem);
	mt_json__kv_u64(j, "swap", r->swap);
	mt_json__kv_string(j, "why", why ? why : "?");
}

static void dump_session(struct mt_json *j, const struct mt_session *s)
{
	size_t pos = 0, len;
	const char *arg;
	uint32_t i;

	mt_json__kv_string(j, "event", "session");
	mt_json__key(j, "argv");
	mt_json__begin_array(j);
	for (i = 0; i < s->argc && (arg = mt_session__next_arg(s, &pos, &len)); i++)
		mt_json__string_n(j, arg, len);
	mt_json__end_array(j);
	mt_json__kv_u64(j, "tracer_pid", s->tracer_pid);
	mt_json__kv_u64(j, "realtime_ns", s->realtime_ns);
}

static void dump_end(struct mt_json *j, const struct mt_end *e)
{
	uint64_t drops[MT_DROP__COUNT], sum = 0;
	unsigned int i;

	for (i = 0; i < MT_DROP__COUNT; i++) {
		drops[i] = e->drops[i];
		sum += drops[i];
	}
	mt_json__kv_string(j, "event", "end");
	mt_json__kv_u64(j, "dropped_events", sum);
	mt_json__key(j, "drops");
	mt_report__json_drops(j, drops);
	mt_json__kv_i64(j, "status", mt_status__shell(e->status));
	mt_json__kv_i64(j, "raw_status", e->status);
}

/* The attach log: ts is when the file was mapped (and its thread held), resumed_ns when the thread went on. */
static void dump_attach(struct mt_json *j, const struct mt_attach *a)
{
	const char *kind = mt_allocator__name(a->kind);
	const char *reason = mt_attach_reason__name(a->reason);

	mt_json__kv_string(j, "event", "attach");
	mt_json__kv_string_n(j, "path", a->path, sizeof(a->path));
	mt_json__kv_u64(j, "dev", a->dev);
	mt_json__kv_u64(j, "ino", a->ino);
	mt_json__kv_string(j, "reason", reason ? reason : "?");
	mt_json__kv_string(j, "kind", kind ? kind : "none");
	mt_json__kv_u64(j, "probes", a->probes);
	mt_json__kv_u64(j, "resumed_ns", a->resumed_ns);
	if (a->err)
		mt_json__kv_i64(j, "error", a->err);
}

static void dump_mapping(struct mt_json *j, const struct mt_mapping *m)
{
	mt_json__kv_string(j, "event", "mapping");
	mt_json__kv_u64(j, "start", m->start);
	mt_json__kv_u64(j, "end", m->end);
	mt_json__kv_u64(j, "pgoff", m->pgoff);
	mt_json__kv_u64(j, "dev", m->dev);
	mt_json__kv_u64(j, "ino", m->ino);
	mt_json__kv_u64(j, "prot", m->prot);
}

static void dump_file(struct mt_json *j, const struct mt_file *f)
{
	char hex[2 * MT_BUILD_ID_MAX + 1];
	unsigned int i, n = f->build_id_len < MT_BUILD_ID_MAX ? f->build_id_len : MT_BUILD_ID_MAX;
	const char *kind = mt_allocator__name(f->kind);

	for (i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", f->build_id[i]);
	hex[2 * n] = 0;
	mt_json__kv_string(j, "event", "file");
	mt_json__kv_string_n(j, "path", f->path, sizeof(f->path));
	mt_json__kv_u64(j, "dev", f->dev);
	mt_json__kv_u64(j, "ino", f->ino);
	mt_json__kv_string(j, "build_id", hex);
	mt_json__kv_string(j, "kind", kind ? kind : "none");
}

static void dump_body(struct mt_json *j, const struct mt_rec_hdr *rec, const struct mt_unwind_index *dwarf)
{
	size_t min = mt_rec__min_size(rec->type);

	if (rec->type == MT_REC_STACK && rec->size >= sizeof(struct mt_stack)) {	/* stacks */
		dump_stack(j, (const struct mt_stack *)rec, dwarf);
		return;
	}
	if (!min || rec->size < min) {
		mt_json__kv_string(j, "event", "unknown");
		mt_json__kv_u64(j, "type", rec->type);
		mt_json__kv_u64(j, "size", rec->size);
		return;
	}
	switch (rec->type) {
	case MT_REC_ALLOC: dump_alloc(j, (const struct mt_alloc *)rec); break;
	case MT_REC_SYSCALL: dump_syscall(j, (const struct mt_syscall *)rec); break;
	case MT_REC_FORK:
		mt_json__kv_string(j, "event", "fork");
		mt_json__kv_u64(j, "child", ((const struct mt_fork *)rec)->child);
		break;
	case MT_REC_EXEC: dump_exec(j, (const struct mt_exec *)rec); break;
	case MT_REC_EXIT: dump_exit(j, (const struct mt_exit *)rec); break;
	case MT_REC_THREAD_EXIT: dump_thread_exit(j, (const struct mt_thread_exit *)rec); break;
	case MT_REC_SESSION: dump_session(j, (const struct mt_session *)rec); break;
	case MT_REC_END: dump_end(j, (const struct mt_end *)rec); break;
	case MT_REC_ATTACH: dump_attach(j, (const struct mt_attach *)rec); break;
	case MT_REC_MAPPING: dump_mapping(j, (const struct mt_mapping *)rec); break;
	case MT_REC_FILE: dump_file(j, (const struct mt_file *)rec); break;
	case MT_REC_MARK: dump_mark(j, (const struct mt_mark *)rec); break;
	case MT_REC_RSS: dump_rss(j, (const struct mt_rss *)rec); break;
	case MT_REC_SEIZED:
		mt_json__kv_string(j, "event", "seized");
		mt_json__kv_u64(j, "threads", ((const struct mt_seized *)rec)->threads);
		break;
	}
}

static void dump_object(struct mt_json *j, const struct mt_rec_hdr *rec, const struct mt_unwind_index *dwarf)
{
	mt_json__begin_object(j);
	mt_json__kv_u64(j, "ts_ns", rec->ts_ns);
	mt_json__kv_u64(j, "pid", rec->pid);
	mt_json__kv_u64(j, "tid", rec->tid);
	dump_body(j, rec, dwarf);
	mt_json__end_object(j);
}

static int dump_record(FILE *f, const struct mt_rec_hdr *rec, const struct mt_unwind_index *dwarf)
{
	struct mt_json j;

	mt_json__init(&j, f, 0);
	dump_object(&j, rec, dwarf);
	fputc('\n', f);
	return mt_json__error(&j);
}

struct dump_ctx {
	FILE *f;
	unsigned int only;		/* a record type, or 0 for every record */
	struct mt_json *array;		/* the records go into {"<array_key>": [...]} instead of one line each, or NULL */
	const char *array_key;
	bool opened;			/* the array's object was begun */
	struct mt_unwind_index *dwarf;	/* stacks: DIR/unwind.mtz, or NULL */
	const struct mt_filter *filter;	/* NULL: every record */
	struct mt_u64map exe_ok;	/* pid + 1 → 1 when its current image passes the exe filter, else 0 */
	bool have_base;
	uint64_t base_ts;		/* what --from and --to count from, as the model's times */
};

/* Whether pid's current image passes --exe: a fork child's is its parent's, an exec decides anew. */
static bool exe_passes(struct dump_ctx *d, uint32_t pid)
{
	const uint64_t *ok = mt_u64map__find(&d->exe_ok, (uint64_t)pid + 1);

	return ok ? *ok : mt_filter__exe(d->filter, "", "");
}

/*
 * A record passes when its process (a fork: parent or child) passes --pid and --exe (the session and end records,
 * which describe the recording, always do), and its time the window.
 */
static bool dump_passes(struct dump_ctx *d, const struct mt_rec_hdr *rec)
{
	const struct mt_exec *e = (const void *)rec;
	const struct mt_fork *fk = (const void *)rec;
	bool ok;

	if (!d->have_base) {
		d->have_base = true;
		d->base_ts = rec->ts_ns;
	}
	if (rec->type == MT_REC_EXEC && rec->size >= sizeof(*e))
		mt_u64map__put(&d->exe_ok, (uint64_t)rec->pid + 1,
			       mt_filter__exe(d->filter, e->path, e->comm), NULL);
	ok = (mt_filter__pid(d->filter, rec->pid) && exe_passes(d, rec->pid)) || rec->type == MT_REC_SESSION ||
	     rec->type == MT_REC_END;
	if (rec->type == MT_REC_FORK && rec->size >= sizeof(*fk)) {
		mt_u64map__put(&d->exe_ok, (uint64_t)fk->child + 1, exe_passes(d, rec->pid), NULL);
		ok = ok || (mt_filter__pid(d->filter, fk->child) && exe_passes(d, fk->child));
	}
	return ok && mt_filter__in_window(d->filter, rec->ts_ns > d->base_ts ? rec->ts_ns - d->base_ts : 0);
}

/* Begun at the first record (or at a good end): an artifact that cannot be read gets no half an object. */
static void array_open(struct dump_ctx *d)
{
	if (d->opened)
		return;
	d->opened = true;
	mt_json__begin_object(d->array);
	mt_json__key(d->array, d->array_key);
	mt_json__begin_array(d->array);
}

static int dump_emit(const struct mt_rec_hdr *rec, void *ctx)
{
	struct dump_ctx *d = ctx;

	if (d->only && rec->type != d->only)
		return 0;
	if (d->filter && !dump_passes(d, rec))
		return 0;
	if (!d->array)
		return dump_record(d->f, rec, d->dwarf);
	array_open(d);
	dump_object(d->array, rec, d->dwarf);
	return 0;
}

struct dump_push_ctx {
	struct mt_reorder *r;
	struct dump_ctx *d;
};

/* The session's time is the base, as the model takes it: when it is read, before the window reorders. */
static int dump_push(const struct mt_rec_hdr *rec, void *ctx)
{
	struct dump_push_ctx *p = ctx;

	if (!p->d->have_base && rec->type == MT_REC_SESSION) {
		p->d->have_base = true;
		p->d->base_ts = rec->ts_ns;
	}
	return mt_reorder__push(p->r, rec);
}

/* stacks: the DWARF chains of DIR/unwind.mtz, when path is a DIR (or its events file) that has a good one */
static int dump_dwarf_load(const char *path, struct mt_unwind_index **ix)
{
	char *dir = mt_stacks__dir_of(path);
	int err;

	if (!dir)
		return -ENOMEM;
	err = mt_unwind_index__load(dir, ix);
	free(dir);
	return err;
}

/* The records of d->only (all of them when 0), in time order, to dump_emit. */
static int dump_run(struct dump_ctx *d, const char *path, struct mt_read_status *st)
{
	struct mt_reorder *r;
	int err, ferr;

	memset(st, 0, sizeof(*st));
	err = d->only ? 0 : dump_dwarf_load(path, &d->dwarf);
	r = err ? NULL : mt_reorder__new(MT_REORDER_WINDOW, dump_emit, d);
	if (!r) {
		err = err ? err : -errno;
		snprintf(st->reason, sizeof(st->reason), "%s", strerror(-err));
		return err;
	}
	err = mt_artifact__read(path, dump_push, &(struct dump_push_ctx){ r, d }, st);
	if (!err || err == -EBADMSG) {
		ferr = mt_reorder__flush(r);
		if (ferr)
			err = ferr;
	}
	mt_reorder__free(r);
	mt_unwind_index__free(d->dwarf);
	mt_u64map__release(&d->exe_ok);
	return err;
}

int mt_dump__write(FILE *f, const char *path, struct mt_read_status *st)
{
	return mt_dump__write_filtered(f, path, NULL, st);
}

int mt_dump__write_filtered(FILE *f, const char *path, const struct mt_filter *filter, struct mt_read_status *st)
{
	struct dump_ctx d = { .f = f, .filter = filter };

	return dump_run(&d, path, st);
}

int mt_dump__attach_json(FILE *f, const char *path, struct mt_read_status *st)
{
	struct mt_json j;
	struct dump_ctx d = { .f = f, .only = MT_REC_ATTACH, .array = &j, .array_key = "attach" };
	int err;

	mt_json__init(&j, f, 2);
	err = dump_run(&d, path, st);
	if (!err || err == -EBADMSG)
		array_open(&d);
	if (!d.opened)
		return err;
	mt_json__end_array(&j);
	mt_json__end_object(&j);
	fputc('\n', f);
	return err;
}
