// SPDX-License-Identifier: GPL-2.0-only
/* checkstacks.c — `memtrack check-stacks`: each in-kernel CFI chain against the DWARF chain and the FP chain. */
/*
 * The kernel walks a stack with the tables the tracer made from each module's CFI; libunwind walks the raw bytes
 * copied with the definition, offline, with the same CFI read from the module file. Both should give the same
 * return addresses. DWARF's walk may stop earlier (the raw bytes' budget): then the kernel's chain agrees when it
 * has every frame DWARF found. Any other difference is a bug in one of them, or a frame the kernel walked by frame
 * pointer (no CFI for it) and got wrong.
 */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/json.h"
#include "common/plural.h"
#include "report/checkfp.h"
#include "report/checkstacks.h"

#define NAME_LEN 512

enum mt_kcheck mt_checkstacks__verdict(const struct mt_stacks *s, const struct mt_stack_entry *e, size_t *at)
{
	size_t d;

	*at = 0;
	if (!e->has_kchain || !e->has_dwarf || !e->ndwarf)
		return MT_KCHECK_UNCHECKED;
	for (d = 0; d < e->nk && d < e->ndwarf &&
		    mt_stacks__frame(s, e->kchain, d)->addr == mt_stacks__frame(s, e->dwarf, d)->addr;
	     d++)
		;
	if (d == e->nk && d == e->ndwarf)
		return MT_KCHECK_AGREE;
	if (d == e->ndwarf && (e->dwarf_stop == MT_STOP_BUDGET || e->dwarf_stop == MT_STOP_MAX_FRAMES))
		return MT_KCHECK_AGREE;
	*at = d;
	return MT_KCHECK_DIVERGED;
}

_Static_assert(offsetof(struct mt_kcheck_module, mod) == offsetof(struct mt_check_module, mod) &&
		       offsetof(struct mt_kcheck_module, path) == offsetof(struct mt_check_module, path),
	       "a check's module row begins as struct mt_check_module");

static struct mt_kcheck_module *module_slot(struct mt_checkstacks *c, struct mt_module *mod)
{
	return mt_checkfp__module_slot((void **)&c->modules, &c->nmodules, sizeof(*c->modules), mod);
}

/* A frame of a chain by name, "-" past its end. */
static char *frame_text(struct mt_stacks *s, uint32_t chain, size_t n, size_t at)
{
	const struct mt_frame *f;
	char name[NAME_LEN];
	struct mt_sym sym;

	if (at >= n)
		return strdup("-");
	f = mt_stacks__frame(s, chain, at);
	mt_stacks__symbolize(s, f, &sym);
	return strdup(mt_frame__name(f, &sym, true, name, sizeof(name)));
}

static int module_div(struct mt_stacks *s, struct mt_kcheck_module *m, const struct mt_stack_entry *e, size_t at)
{
	if (m->has_div)
		return 0;
	m->has_div = true;
	m->div.stack = e->hash;
	m->div.frame = at;
	m->div.kernel = frame_text(s, e->kchain, e->nk, at);
	m->div.dwarf = frame_text(s, e->dwarf, e->ndwarf, at);
	return m->div.kernel && m->div.dwarf ? 0 : -ENOMEM;
}

/* The FP chain equal to the kernel's, frame for frame, but for the process or thread entry functions the kernel's
 * may go on through: the rule by which check-fp calls an FP chain complete against DWARF's. */
static bool fp_is_kernel(struct mt_stacks *s, const struct mt_stack_entry *e)
{
	uint16_t i;

	if (e->nfp > e->nk)
		return false;
	for (i = 0; i < e->nfp; i++)
		if (mt_stacks__frame(s, e->fp, i)->addr != mt_stacks__frame(s, e->kchain, i)->addr)
			return false;
	return e->nfp == e->nk || mt_checkfp__entry_tail(s, e->kchain, e->nk, e->nfp);
}

static int check_one(struct mt_checkstacks *c, struct mt_stacks *s, const struct mt_stack_entry *e)
{
	const struct mt_frame *first = e->nk ? mt_stacks__frame(s, e->kchain, 0) :
				       e->nfp ? mt_stacks__frame(s, e->fp, 0) : NULL;
	struct mt_kcheck_module *m = module_slot(c, first ? first->mod : NULL);
	enum mt_fp_verdict fv;
	size_t at;

	if (!m)
		return -ENOMEM;
	c->stacks++;
	m->stacks++;
	if (!e->has_kchain)
		return 0;
	c->kernel++;
	m->kernel_fp_frames += e->kfp_frames != 0;
	m->fp_kernel += fp_is_kernel(s, e);
	fv = mt_checkfp__verdict(s, e, &at);
	m->fp_dwarf_checked += fv != MT_FP_UNCHECKED;
	m->fp_dwarf += fv == MT_FP_COMPLETE;
	switch (mt_checkstacks__verdict(s, e, &at)) {
	case MT_KCHECK_AGREE:
		c->checked++;
		m->checked++;
		m->agree++;
		return 0;
	case MT_KCHECK_DIVERGED:
		c->checked++;
		c->diverged++;
		m->checked++;
		return module_div(s, m, e, at);
	default:
		return 0;
	}
}

static int by_stacks(const void *a, const void *b)
{
	const struct mt_kcheck_module *x = a, *y = b;

	if (x->stacks != y->stacks)
		return x->stacks > y->stacks ? -1 : 1;
	return strcmp(x->path, y->path);
}

int mt_checkstacks__run(struct mt_stacks *s, struct mt_checkstacks *out)
{
	size_t i;
	int err = 0;

	memset(out, 0, sizeof(*out));
	for (i = 0; !err && i < mt_stacks__count(s); i++) {
		const struct mt_stack_entry *e = mt_stacks__entry(s, i);

		if (mt_stack_entry__allocates(e))	/* check-stacks is about allocation stacks */
			err = check_one(out, s, e);
	}
	if (err) {
		mt_checkstacks__release(out);
		return err;
	}
	mt_array__sort(out->modules, out->nmodules, sizeof(*out->modules), by_stacks);
	return 0;
}

void mt_checkstacks__release(struct mt_checkstacks *c)
{
	size_t i;

	for (i = 0; i < c->nmodules; i++) {
		free(c->modules[i].div.kernel);
		free(c->modules[i].div.dwarf);
	}
	free(c->modules);
	memset(c, 0, sizeof(*c));
}

/* ---- output ---- */

static void text_pct(FILE *f, uint64_t part, uint64_t whole, int width)
{
	if (whole)
		fprintf(f, " %*.1f%%", width - 1, 100.0 * part / whole);
	else
		fprintf(f, " %*s", width, "-");
}

int mt_checkstacks__text(FILE *f, const struct mt_checkstacks *c)
{
	size_t i;

	fprintf(f, "%" PRIu64 " %s; %" PRIu64 " with an in-kernel chain, %" PRIu64 " checked against DWARF's, %" PRIu64
		" diverged\n\n", c->stacks, mt_plural__of(c->stacks, "stack", "stacks"), c->kernel, c->checked,
		c->diverged);
	fprintf(f, "%8s %8s %13s %10s %9s %7s  %s\n", "STACKS", "CHECKED", "KERNEL=DWARF", "FP=KERNEL", "FP=DWARF",
		"BY FP", "MODULE (of the allocator's caller)");
	for (i = 0; i < c->nmodules; i++) {
		const struct mt_kcheck_module *m = &c->modules[i];

		fprintf(f, "%8" PRIu64 " %8" PRIu64, m->stacks, m->checked);
		text_pct(f, m->agree, m->checked, 13);
		text_pct(f, m->fp_kernel, m->stacks, 10);
		text_pct(f, m->fp_dwarf, m->fp_dwarf_checked, 9);
		fprintf(f, " %7" PRIu64 "  %s\n", m->kernel_fp_frames, m->path);
	}
	if (!c->kernel)
		fputs("\nno in-kernel chains: recorded before memtrack unwound stacks in the kernel\n", f);
	else if (!c->diverged)
		fputs("\nno divergences: every checked in-kernel chain is the DWARF chain\n", f);
	for (i = 0; i < c->nmodules; i++) {
		const struct mt_kcheck_div *d = &c->modules[i].div;

		if (c->modules[i].has_div)
			fprintf(f, "first divergence in %s: stack %" PRIu64 ", frame %zu: kernel %s, DWARF %s\n",
				c->modules[i].path, d->stack, d->frame, d->kernel, d->dwarf);
	}
	return ferror(f) ? -EIO : 0;
}

/* json.h writes no fractions: the value goes straight after its key (as check-fp's). */
static void json_pct(struct mt_json *j, const char *key, uint64_t part, uint64_t whole)
{
	if (!whole) {
		mt_json__kv_null(j, key);
		return;
	}
	mt_json__key(j, key);
	fprintf(j->f, "%.1f", 100.0 * part / whole);
	j->after_key = false;
}

static void json_module(struct mt_json *j, const struct mt_kcheck_module *m)
{
	mt_json__begin_object(j);
	mt_json__kv_string(j, "path", m->path);
	mt_json__kv_u64(j, "stacks", m->stacks);
	mt_json__kv_u64(j, "checked", m->checked);
	json_pct(j, "kernel_dwarf_pct", m->agree, m->checked);
	json_pct(j, "fp_kernel_pct", m->fp_kernel, m->stacks);
	json_pct(j, "fp_dwarf_pct", m->fp_dwarf, m->fp_dwarf_checked);
	mt_json__kv_u64(j, "kernel_fp_stacks", m->kernel_fp_frames);
	if (!m->has_div) {
		mt_json__kv_null(j, "first_divergence");
	} else {
		mt_json__key(j, "first_divergence");
		mt_json__begin_object(j);
		mt_json__kv_u64(j, "stack", m->div.stack);
		mt_json__kv_u64(j, "frame", m->div.frame);
		mt_json__kv_string(j, "kernel", m->div.kernel);
		mt_json__kv_string(j, "dwarf", m->div.dwarf);
		mt_json__end_object(j);
	}
	mt_json__end_object(j);
}

int mt_checkstacks__json(FILE *f, const struct mt_checkstacks *c)
{
	struct mt_json j;
	size_t i;

	mt_json__init(&j, f, 2);
	mt_json__begin_object(&j);
	mt_json__kv_u64(&j, "stacks", c->stacks);
	mt_json__kv_u64(&j, "kernel_chains", c->kernel);
	mt_json__kv_u64(&j, "checked", c->checked);
	mt_json__kv_u64(&j, "diverged", c->diverged);
	mt_json__key(&j, "modules");
	mt_json__begin_array(&j);
	for (i = 0; i < c->nmodules; i++)
		json_module(&j, &c->modules[i]);
	mt_json__end_array(&j);
	mt_json__end_object(&j);
	fputc('\n', f);
	return mt_json__error(&j);
}
