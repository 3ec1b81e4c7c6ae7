// SPDX-License-Identifier: GPL-2.0-only
/* checkfp.c — `memtrack check-fp [--json] [--strict] DIR`: where frame-pointer chains go wrong, and whose fault. */
/*
 * The rule. The FP walk reads frame k+1's return address at [rbp_k + 8], rbp_k being the rbp that frame k (the
 * function of chain entry k) ran with. That is right only when frame k set up a frame pointer, rbp_k = CFA_k - 16.
 * So when the FP chain first differs from the DWARF chain at entry d, frame d - 1 is to blame: its function ran
 * without a frame pointer, and its rbp was its caller's (skipping a frame) or scratch (garbage, or the walk stops).
 * `memtrack unwind` records, per DWARF frame, whether rbp_k was CFA_k - 16; "confirmed" says that bit agreed.
 * The FP walk normally stops in the process's or thread's entry code (_start, __libc_start_main, start_thread,
 * clone3: built without frame pointers, with rbp = 0 or scratch by the ABI): DWARF frames left over there do not
 * count against the chain, nor do frames beyond MT_FP_MAX when the kernel walk was cut there.
 */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/json.h"
#include "common/log.h"
#include "common/plural.h"
#include "report/checkfp.h"
#include "report/report.h"
#include "stacks/unwind_run.h"

#define NAME_LEN 512

static bool is_entry_function(struct mt_stacks *s, const struct mt_frame *f)
{
	static const char *const names[] = {
		"_start", "__libc_start_main", "__libc_start_call_main", "start_thread", "clone", "clone3",
		"__clone", "__clone3", "__GI___clone3", "__GI___clone", "thread_start",
	};
	char name[NAME_LEN];
	struct mt_sym sym;
	size_t i;

	mt_stacks__symbolize(s, f, &sym);
	if (!sym.func)
		return false;
	mt_frame__name(f, &sym, false, name, sizeof(name));
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

bool mt_checkfp__entry_tail(struct mt_stacks *s, uint32_t chain, size_t n, size_t from)
{
	size_t i;

	for (i = from; i < n; i++)
		if (!is_entry_function(s, mt_stacks__frame(s, chain, i)))
			return false;
	return true;
}

static enum mt_fp_verdict checkfp__stack(struct mt_stacks *s, const struct mt_stack_entry *e, size_t *at)
{
	size_t d, n = e->nfp < e->ndwarf ? e->nfp : e->ndwarf;

	*at = 0;
	if (!e->has_dwarf || !e->ndwarf)
		return MT_FP_UNCHECKED;
	for (d = 0; d < n && mt_stacks__frame(s, e->fp, d)->addr == mt_stacks__frame(s, e->dwarf, d)->addr; d++)
		;
	/* a chain the kernel cut at MT_FP_MAX words is complete as far as it goes; one cut at a word that is no return
	 * address (fp_broken) is not */
	if (d < e->ndwarf && (mt_checkfp__entry_tail(s, e->dwarf, e->ndwarf, d) ||
			      (d == e->nfp && (e->truncated & MT_STACK_TRUNC_FP) && !e->fp_broken)))
		return MT_FP_COMPLETE;
	if (d < n || d < e->ndwarf) {
		*at = d;
		return MT_FP_DIVERGED;
	}
	return e->dwarf_stop == MT_STOP_END ? MT_FP_COMPLETE : MT_FP_UNCHECKED;
}

enum mt_fp_verdict mt_checkfp__verdict(struct mt_stacks *s, const struct mt_stack_entry *e, size_t *at)
{
	return checkfp__stack(s, e, at);
}

/* ---- tallies ---- */

void *mt_checkfp__module_slot(void **rows, size_t *n, size_t size, struct mt_module *mod)
{
	struct mt_check_module *m;
	char *grown;
	size_t i;

	for (i = 0; i < *n; i++) {
		m = (struct mt_check_module *)((char *)*rows + i * size);
		if (m->mod == mod)
			return m;
	}
	grown = realloc(*rows, (*n + 1) * size);
	if (!grown)
		return NULL;
	*rows = grown;
	m = memset(grown + (*n)++ * size, 0, size);
	m->mod = mod;
	m->path = !mod ? "[unknown]" : mod->path[0] ? mod->path : mod->name;
	return m;
}

_Static_assert(offsetof(struct mt_fp_module, mod) == offsetof(struct mt_check_module, mod) &&
		       offsetof(struct mt_fp_module, path) == offsetof(struct mt_check_module, path),
	       "a check's module row begins as struct mt_check_module");

static struct mt_fp_module *module_slot(struct mt_checkfp *c, struct mt_module *mod)
{
	return mt_checkfp__module_slot((void **)&c->modules, &c->nmodules, sizeof(*c->modules), mod);
}

/* The function frame f ran in, named as the other reports name it: demangled, template arguments elided. */
static void divergence_name(struct mt_stacks *s, const struct mt_frame *f, char *name, size_t len)
{
	const struct mt_symbol *elf_sym;
	const char *shown;
	struct mt_sym sym;

	mt_stacks__symbolize(s, f, &sym);
	elf_sym = f->mod && sym.func ? mt_module__symbol(f->mod, f->vaddr - 1) : NULL;
	shown = elf_sym ? mt_module__symbol_name(f->mod, elf_sym) : NULL;
	if (shown)
		sym.func = shown;
	mt_frame__name(f, &sym, false, name, len);
}

static int divergence_add(struct mt_checkfp *c, struct mt_stacks *s, const struct mt_stack_entry *e, size_t at)
{
	const struct mt_frame *f = at ? mt_stacks__frame(s, e->dwarf, at - 1) : NULL;
	const struct mt_stack_dwarf *d = mt_stacks__dwarf_of(s, e);
	bool confirmed = f && d && d->nofp && (d->nofp[(at - 1) / 8] >> ((at - 1) % 8) & 1);
	struct mt_stack_counts k;
	char name[NAME_LEN];
	struct mt_fp_divergence *dv;
	size_t i;

	if (f) {
		divergence_name(s, f, name, sizeof(name));
	} else {
		snprintf(name, sizeof(name), "[allocator]");	/* even [sp] disagreed: the entry registers are off */
	}
	for (i = 0; i < c->ndivs; i++) {
		dv = &c->divs[i];
		if (dv->mod == (f ? f->mod : NULL) && !strcmp(dv->function, name))
			goto count;
	}
	dv = realloc(c->divs, (c->ndivs + 1) * sizeof(*dv));
	if (!dv)
		return -ENOMEM;
	c->divs = dv;
	dv = &c->divs[c->ndivs];
	memset(dv, 0, sizeof(*dv));
	dv->function = strdup(name);
	if (!dv->function)
		return -ENOMEM;
	c->ndivs++;
	dv->mod = f ? f->mod : NULL;
	dv->module = !dv->mod ? "" : dv->mod->path[0] ? dv->mod->path : dv->mod->name;
	dv->confirmed = true;
	dv->example = e->hash;
count:
	dv->confirmed = dv->confirmed && confirmed;
	dv->stacks++;
	mt_stacks__counts(s, e, &k);
	dv->allocations += k.allocations;
	dv->bytes += k.bytes;
	return 0;
}

static int by_stacks(const void *a, const void *b)
{
	const struct mt_fp_module *x = a, *y = b;

	if (x->stacks != y->stacks)
		return x->stacks > y->stacks ? -1 : 1;
	return strcmp(x->path, y->path);
}

static int by_bytes(const void *a, const void *b)
{
	const struct mt_fp_divergence *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->stacks != y->stacks)
		return x->stacks > y->stacks ? -1 : 1;
	return strcmp(x->function, y->function);
}

static int checkfp_one(struct mt_checkfp *c, struct mt_stacks *s, const struct mt_stack_entry *e)
{
	const struct mt_frame *first = e->ndwarf ? mt_stacks__frame(s, e->dwarf, 0) :
				       e->nfp ? mt_stacks__frame(s, e->fp, 0) : NULL;
	struct mt_fp_module *m = module_slot(c, first ? first->mod : NULL);
	enum mt_fp_verdict v;
	size_t at;

	if (!m)
		return -ENOMEM;
	c->stacks++;
	m->stacks++;
	if (!e->has_dwarf)
		c->no_dwarf++;
	v = checkfp__stack(s, e, &at);
	if (v == MT_FP_UNCHECKED) {
		c->unchecked++;
		return 0;
	}
	m->checked++;
	if (v == MT_FP_COMPLETE) {
		m->complete++;
		return 0;
	}
	return divergence_add(c, s, e, at);
}

int mt_checkfp__run(struct mt_stacks *s, struct mt_checkfp *out)
{
	size_t i;
	int err = 0;

	memset(out, 0, sizeof(*out));
	for (i = 0; !err && i < mt_stacks__count(s); i++) {
		const struct mt_stack_entry *e = mt_stacks__entry(s, i);

		if (mt_stack_entry__allocates(e))	/* check-fp is about allocation stacks */
			err = checkfp_one(out, s, e);
	}
	if (err) {
		mt_checkfp__release(out);
		return err;
	}
	mt_array__sort(out->modules, out->nmodules, sizeof(*out->modules), by_stacks);
	mt_array__sort(out->divs, out->ndivs, sizeof(*out->divs), by_bytes);
	return 0;
}

void mt_checkfp__release(struct mt_checkfp *c)
{
	size_t i;

	for (i = 0; i < c->ndivs; i++)
		free(c->divs[i].function);
	free(c->divs);
	free(c->modules);
	memset(c, 0, sizeof(*c));
}

/* ---- output ---- */

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

int mt_checkfp__text(FILE *f, const struct mt_checkfp *c)
{
	uint64_t checked = c->stacks - c->unchecked;
	size_t i;

	fprintf(f, "%" PRIu64 " %s; %" PRIu64 " checked against %s DWARF chain", c->stacks,
		mt_plural__of(c->stacks, "stack", "stacks"), checked, mt_plural__of(checked, "its", "their"));
	if (c->unchecked)
		fprintf(f, " (%" PRIu64 " not: DWARF stopped early or is missing)", c->unchecked);
	fprintf(f, "\n\n%8s %8s %12s  %s\n", "STACKS", "CHECKED", "FP COMPLETE", "MODULE (of the allocator's caller)");
	for (i = 0; i < c->nmodules; i++) {
		const struct mt_fp_module *m = &c->modules[i];

		fprintf(f, "%8" PRIu64 " %8" PRIu64, m->stacks, m->checked);
		if (m->checked)
			fprintf(f, " %11.1f%%  %s\n", pct(m->complete, m->checked), m->path);
		else
			fprintf(f, " %12s  %s\n", "-", m->path);
	}
	if (!checked) {
		fputs("\nno chain could be checked: DWARF stopped early, or is missing, in every stack\n", f);
		return ferror(f) ? -EIO : 0;
	}
	if (!c->ndivs) {
		fputs("\nno divergences: every checked frame-pointer chain is complete and correct\n", f);
		return ferror(f) ? -EIO : 0;
	}
	fputs("\ndivergences: at the first frame where the FP chain leaves the DWARF chain, the function before it\n"
	      "kept no frame pointer (* = confirmed by its unwound rbp)\n", f);
	fprintf(f, "%8s %8s %12s  %s\n", "STACKS", "ALLOCS", "BYTES", "FUNCTION in MODULE");
	for (i = 0; i < c->ndivs; i++) {
		const struct mt_fp_divergence *d = &c->divs[i];

		fprintf(f, "%8" PRIu64 " %8" PRIu64 " %12" PRIu64 "  %s%s in %s\n", d->stacks, d->allocations, d->bytes,
			d->function, d->confirmed ? " *" : "", d->module[0] ? d->module : "[unknown]");
	}
	return ferror(f) ? -EIO : 0;
}

/* json.h writes no fractions: the value goes straight after its key, which is all the writer's state needs. */
static void json_fixed1(struct mt_json *j, const char *key, double v)
{
	mt_json__key(j, key);
	fprintf(j->f, "%.1f", v);
	j->after_key = false;
}

int mt_checkfp__json(FILE *f, const struct mt_checkfp *c)
{
	struct mt_json j;
	size_t i;

	mt_json__init(&j, f, 2);
	mt_json__begin_object(&j);
	mt_json__kv_u64(&j, "stacks", c->stacks);
	mt_json__kv_u64(&j, "unchecked", c->unchecked);
	mt_json__key(&j, "modules");
	mt_json__begin_array(&j);
	for (i = 0; i < c->nmodules; i++) {
		const struct mt_fp_module *m = &c->modules[i];

		mt_json__begin_object(&j);
		mt_json__kv_string(&j, "path", m->path);
		mt_json__kv_u64(&j, "stacks", m->stacks);
		mt_json__kv_u64(&j, "checked", m->checked);
		mt_json__kv_u64(&j, "fp_complete", m->complete);
		if (m->checked)
			json_fixed1(&j, "fp_complete_pct", pct(m->complete, m->checked));
		else
			mt_json__kv_null(&j, "fp_complete_pct");
		mt_json__end_object(&j);
	}
	mt_json__end_array(&j);
	mt_json__key(&j, "divergences");
	mt_json__begin_array(&j);
	for (i = 0; i < c->ndivs; i++) {
		const struct mt_fp_divergence *d = &c->divs[i];

		mt_json__begin_object(&j);
		mt_json__kv_string(&j, "function", d->function);
		mt_json__kv_string(&j, "module", d->module);
		mt_json__kv_u64(&j, "stacks", d->stacks);
		mt_json__kv_u64(&j, "allocations", d->allocations);
		mt_json__kv_u64(&j, "bytes", d->bytes);
		mt_json__kv_bool(&j, "confirmed", d->confirmed);
		mt_json__kv_u64(&j, "example_stack", d->example);
		mt_json__end_object(&j);
	}
	mt_json__end_array(&j);
	mt_json__end_object(&j);
	fputc('\n', f);
	return mt_json__error(&j);
}
