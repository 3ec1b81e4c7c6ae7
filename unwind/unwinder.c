// SPDX-License-Identifier: GPL-2.0-only
/* unwinder.c — DWARF unwinding of a captured stack with libunwind's remote API and accessors of our own. */
/*
 * Registers and stack bytes come from the record, code and .eh_frame/.eh_frame_hdr from the module files through
 * the process's mappings, as perf's util/unwind-libunwind-local.c does for perf.data samples.
 */
#include <errno.h>
#include <libunwind.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "unwind/unwinder.h"

/* Not in libunwind's headers, but exported: the binary search of an .eh_frame_hdr table, through access_mem. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
					      unw_proc_info_t *pi, int need_unwind_info, void *arg);
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)

#define STACK_GUESS (8ull << 20)	/* reads this far above the window count as the budget running out */
#define REC_BUF_SIZE 65536

/* What one unwind is about; libunwind hands it back to every accessor. */
struct unw_ctx {
	const struct mt_stack *rec;
	const uint8_t *bytes;		/* rec's raw stack, from regs[SP] */
	struct mt_aspace *as;
	const struct mt_map *last;	/* the image of the last module read: most reads hit it again */
	/* why the current step failed, as the accessors saw it */
	uint8_t stop;
	bool info_failed;		/* find_proc_info found nothing: the step's rbp-based fallback is no DWARF */
	uint64_t stop_addr;
	const struct mt_module *stop_mod;
};

struct mt_unwinder {
	unw_addr_space_t as;
	const struct mt_aspace *cached_as;	/* libunwind's caches hold per-ip state of this address space */
	uint64_t cached_gen;
	uint64_t cpu_ns;
	uint64_t stacks;
	uint64_t frames[MT_UNWIND_FRAMES_MAX];
	uint8_t nofp[(MT_UNWIND_FRAMES_MAX + 7) / 8];
	_Alignas(8) uint8_t buf[REC_BUF_SIZE];
};

static void ctx_fail(struct unw_ctx *c, uint8_t stop, uint64_t addr, const struct mt_module *mod)
{
	pr_debug("unwind %#llx: %s at %#llx\n", (unsigned long long)c->rec->hash, mt_unwind_stop__text(stop),
		 (unsigned long long)addr);
	if (c->stop)
		return;		/* the first failure of a step is its cause */
	c->stop = stop;
	c->stop_addr = addr;
	c->stop_mod = mod;
}

/* ---- accessors ---- */

static const struct mt_map *image_of(struct unw_ctx *c, uint64_t addr)
{
	const struct mt_map *m = c->last;

	if (m && addr >= m->bias + m->mod->min_vaddr && addr < m->bias + m->mod->max_vaddr)
		return m;
	m = mt_aspace__find_image(c->as, addr);
	if (m)
		c->last = m;
	return m;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
	struct unw_ctx *c = arg;
	uint64_t sp = c->rec->regs[MT_REG_SP];
	const struct mt_map *m;

	(void)as;
	if (write)
		return 0;	/* nothing is written back: there is no process */
	if (addr >= sp && addr + sizeof(*val) <= sp + c->rec->nbytes && addr + sizeof(*val) > addr) {
		memcpy(val, c->bytes + (addr - sp), sizeof(*val));
		return 0;
	}
	m = image_of(c, addr);
	if (m && !mt_module__read(m->mod, addr - m->bias, val, sizeof(*val)))
		return 0;
	if (addr >= sp && addr < sp + STACK_GUESS && (c->rec->truncated & MT_STACK_TRUNC_BYTES))
		ctx_fail(c, MT_STOP_BUDGET, addr, NULL);
	else
		ctx_fail(c, MT_STOP_WINDOW, addr, NULL);
	*val = 0;
	return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg)
{
	const struct unw_ctx *c = arg;
	int idx;

	(void)as;
	switch (reg) {
	case UNW_X86_64_RIP: idx = MT_REG_IP; break;
	case UNW_X86_64_RSP: idx = MT_REG_SP; break;
	case UNW_X86_64_RBP: idx = MT_REG_BP; break;
	case UNW_X86_64_RBX: idx = MT_REG_BX; break;
	case UNW_X86_64_R12: idx = MT_REG_R12; break;
	case UNW_X86_64_R13: idx = MT_REG_R13; break;
	case UNW_X86_64_R14: idx = MT_REG_R14; break;
	case UNW_X86_64_R15: idx = MT_REG_R15; break;
	default: return -UNW_EBADREG;	/* not captured: caller-saved, dead across a call anyway */
	}
	if (!write)
		*val = c->rec->regs[idx];
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg)
{
	(void)as, (void)reg, (void)val, (void)write, (void)arg;
	return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *cursor, void *arg)
{
	(void)as, (void)cursor, (void)arg;
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len, unw_word_t *off, void *arg)
{
	(void)as, (void)addr, (void)buf, (void)len, (void)off, (void)arg;
	return -UNW_ENOINFO;	/* names come from the modules' symbol tables, offline */
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	(void)as, (void)addr, (void)arg;
	return -UNW_ENOINFO;	/* no JIT registration to read in a captured stack */
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	(void)as, (void)pi, (void)arg;	/* libunwind frees the table-format info it allocated itself */
}

/*
 * The module's .eh_frame_hdr table, as UNW_INFO_FORMAT_REMOTE_TABLE: libunwind binary-searches it and reads the
 * FDE through access_mem, which serves both from the file. Addresses are the process's: ELF address + bias.
 */
static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need, void *arg)
{
	struct unw_ctx *c = arg;
	const struct mt_map *m = mt_aspace__find(c->as, ip);
	unw_dyn_info_t di;
	int ret;

	c->info_failed = true;
	if (!m) {
		ctx_fail(c, MT_STOP_NO_MODULE, ip, NULL);
		return -UNW_ENOINFO;
	}
	if (!m->has_bias) {
		ctx_fail(c, MT_STOP_NO_FILE, ip, m->mod);
		return -UNW_ENOINFO;
	}
	if (!m->mod->has_eh) {
		ctx_fail(c, MT_STOP_NO_INFO, ip, m->mod);
		return -UNW_ENOINFO;
	}
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = m->bias + m->mod->min_vaddr;
	di.end_ip = m->bias + m->mod->max_vaddr;
	di.u.rti.segbase = m->bias + m->mod->eh.hdr_vaddr;
	di.u.rti.table_data = m->bias + m->mod->eh.table_vaddr;
	di.u.rti.table_len = m->mod->eh.fde_count * 8 / sizeof(unw_word_t);
	ret = dwarf_search_unwind_table(as, ip, &di, pi, need, arg);
	if (ret == -UNW_ENOINFO)
		ctx_fail(c, MT_STOP_NO_INFO, ip, m->mod);
	else if (ret >= 0)
		c->info_failed = false;
	return ret;
}

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

/* ---- the unwinder ---- */

struct mt_unwinder *mt_unwinder__new(void)
{
	struct mt_unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->as = unw_create_addr_space(&accessors, 0);
	if (!u->as) {
		free(u);
		errno = ENOMEM;
		return NULL;
	}
	/* per-ip register rules are cached across stacks; flushed when the address space changes (below) */
	unw_set_caching_policy(u->as, UNW_CACHE_GLOBAL);
	return u;
}

void mt_unwinder__free(struct mt_unwinder *u)
{
	if (!u)
		return;
	unw_destroy_addr_space(u->as);
	free(u);
}

uint64_t mt_unwinder__cpu_ns(const struct mt_unwinder *u)
{
	return u->cpu_ns;
}

uint64_t mt_unwinder__stacks(const struct mt_unwinder *u)
{
	return u->stacks;
}

static uint64_t cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

struct walk {
	size_t n;
	uint8_t stop;
	int32_t error;
	uint64_t stop_addr;
	const struct mt_module *stop_mod;
};

/* One step's outcome: 1 go on, 0 stop (w->stop says why). */
static int walk_step(struct mt_unwinder *u, unw_cursor_t *cur, struct unw_ctx *c, struct walk *w, uint64_t *prev_sp)
{
	unw_word_t rbp, ip, sp;
	bool have_rbp;
	int ret;

	have_rbp = !unw_get_reg(cur, UNW_X86_64_RBP, &rbp);
	c->stop = 0;
	c->info_failed = false;
	ret = unw_step(cur);
	if (c->info_failed || (ret < 0 && c->stop)) {
		w->stop = c->stop ? c->stop : MT_STOP_NO_INFO;
		w->stop_addr = c->stop_addr;
		w->stop_mod = c->stop_mod;
		return 0;
	}
	if (ret < 0) {
		w->stop = MT_STOP_ERROR;
		w->error = -ret;
		return 0;
	}
	if (!ret || unw_get_reg(cur, UNW_REG_IP, &ip) || unw_get_reg(cur, UNW_REG_SP, &sp) || !ip) {
		w->stop = MT_STOP_END;
		return 0;
	}
	/* the frame just left kept a frame pointer when its rbp was its CFA - 16 (pushed rbp, then mov rsp, rbp) */
	if (w->n && have_rbp && rbp != sp - 16)
		u->nofp[(w->n - 1) / 8] |= 1u << ((w->n - 1) % 8);
	if (sp <= *prev_sp) {
		w->stop = MT_STOP_BAD_FRAME;
		w->stop_addr = ip;
		return 0;
	}
	if (w->n == MT_UNWIND_FRAMES_MAX) {
		w->stop = MT_STOP_MAX_FRAMES;
		return 0;
	}
	u->frames[w->n++] = ip;
	*prev_sp = sp;
	return 1;
}

static const struct mt_unwind_rec *result_build(struct mt_unwinder *u, const struct mt_stack *rec,
						const struct walk *w)
{
	struct mt_unwind_rec *r = (struct mt_unwind_rec *)u->buf;
	const char *detail = "";
	size_t fixed = mt_unwind_rec__fixed_size(w->n), len;

	if (w->stop_mod && (w->stop == MT_STOP_NO_INFO || w->stop == MT_STOP_NO_FILE))
		detail = w->stop_mod->path[0] ? w->stop_mod->path : w->stop_mod->name;
	len = strnlen(detail, MT_PATH_MAX - 1);
	memset(r, 0, sizeof(*r));
	r->hdr = rec->hdr;
	r->hdr.type = MT_REC_UNWIND;
	r->hdr.size = fixed + len + 1;
	r->hash = rec->hash;
	r->stop_addr = w->stop_addr;
	r->error = w->error;
	r->nframes = w->n;
	r->reason = w->stop;
	r->nofp_known = 1;
	memcpy(r + 1, u->frames, w->n * 8);
	memcpy((uint8_t *)(r + 1) + w->n * 8, u->nofp, (w->n + 7) / 8);
	memcpy(u->buf + fixed, detail, len);
	u->buf[fixed + len] = '\0';
	return r;
}

const struct mt_unwind_rec *mt_unwinder__unwind(struct mt_unwinder *u, const struct mt_stack *rec, uint32_t rec_size,
						struct mt_aspace *as, int *err)
{
	struct unw_ctx c = { .rec = rec, .as = as };
	struct walk w = { 0 };
	uint64_t t0 = cpu_now(), prev_sp;
	unw_cursor_t cur;
	int ret;

	*err = 0;
	if (rec_size < sizeof(*rec) + (size_t)rec->nfp * 8 + rec->nbytes) {
		*err = -EINVAL;
		return NULL;
	}
	c.bytes = (const uint8_t *)(rec + 1) + (size_t)rec->nfp * 8;
	if (u->cached_as != as || (as && u->cached_gen != as->gen)) {
		unw_flush_cache(u->as, 0, 0);
		u->cached_as = as;
		u->cached_gen = as ? as->gen : 0;
	}
	memset(u->nofp, 0, sizeof(u->nofp));
	prev_sp = rec->regs[MT_REG_SP];
	ret = unw_init_remote(&cur, u->as, &c);
	if (ret) {
		w.stop = MT_STOP_ERROR;
		w.error = -ret;
	} else {
		while (walk_step(u, &cur, &c, &w, &prev_sp))
			;
	}
	u->stacks++;
	u->cpu_ns += cpu_now() - t0;
	return result_build(u, rec, &w);
}

static const char *const stop_names[MT_STOP__COUNT] = {
	[MT_STOP_END] = "end",
	[MT_STOP_BUDGET] = "budget",
	[MT_STOP_WINDOW] = "window",
	[MT_STOP_NO_INFO] = "no_unwind_info",
	[MT_STOP_NO_FILE] = "no_module_file",
	[MT_STOP_NO_MODULE] = "no_module",
	[MT_STOP_ERROR] = "libunwind_error",
	[MT_STOP_BAD_FRAME] = "bad_frame",
	[MT_STOP_MAX_FRAMES] = "max_frames",
};

static const char *const stop_texts[MT_STOP__COUNT] = {
	[MT_STOP_END] = "reached the end (normal)",
	[MT_STOP_BUDGET] = "stack budget exhausted",
	[MT_STOP_WINDOW] = "read outside the captured window",
	[MT_STOP_NO_INFO] = "no unwind info for module",
	[MT_STOP_NO_FILE] = "module file not found",
	[MT_STOP_NO_MODULE] = "address in no known module",
	[MT_STOP_ERROR] = "libunwind error",
	[MT_STOP_BAD_FRAME] = "stack pointer did not move up",
	[MT_STOP_MAX_FRAMES] = "frame limit reached",
};

const char *mt_unwind_stop__name(unsigned int stop)
{
	return stop < MT_STOP__COUNT ? stop_names[stop] : "unknown";
}

const char *mt_unwind_stop__text(unsigned int stop)
{
	return stop < MT_STOP__COUNT ? stop_texts[stop] : "unknown reason";
}
