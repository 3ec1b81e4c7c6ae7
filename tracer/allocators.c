// SPDX-License-Identifier: GPL-2.0-only
/* allocators.c — classifies an ELF file by the allocator it defines and lists the entry points to probe. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/memtrack.h"
#include "common/array.h"
#include "common/log.h"
#include "common/names.h"
#include "tracer/allocators.h"
#include "tracer/elf_symbols.h"
#include "tracer/probe_site.h"

struct entry {
	const char *name;
	uint8_t args;		/* enum mt_args */
	uint8_t func;		/* enum mt_func */
};

#define E(n, a, f) { n, MT_ARGS_##a, MT_FN_##f }

/* The standard names, in the order that names a shared offset (glibc aliases aligned_alloc to memalign). */
static const struct entry std_entries[] = {
	E("malloc", SIZE, MALLOC), E("calloc", NMEMB_SIZE, CALLOC), E("realloc", PTR_SIZE, REALLOC),
	E("reallocarray", PTR_NMEMB_SIZE, REALLOCARRAY), E("memalign", ALIGN_SIZE, MEMALIGN),
	E("aligned_alloc", ALIGN_SIZE, ALIGNED_ALLOC), E("posix_memalign", MEMPTR_ALIGN_SIZE, POSIX_MEMALIGN),
	E("valloc", SIZE, VALLOC), E("pvalloc", SIZE, PVALLOC), E("free", FREE, FREE), E("cfree", FREE, FREE),
};

/* operator new/delete, as libstdc++ and libc++ mangle them (x86-64: size_t is m). */
static const struct entry cxx_entries[] = {
	E("_Znwm", SIZE, NEW), E("_Znam", SIZE, NEW_ARRAY),
	E("_ZnwmRKSt9nothrow_t", SIZE, NEW), E("_ZnamRKSt9nothrow_t", SIZE, NEW_ARRAY),
	E("_ZnwmSt11align_val_t", SIZE_ALIGN, NEW), E("_ZnamSt11align_val_t", SIZE_ALIGN, NEW_ARRAY),
	E("_ZnwmSt11align_val_tRKSt9nothrow_t", SIZE_ALIGN, NEW),
	E("_ZnamSt11align_val_tRKSt9nothrow_t", SIZE_ALIGN, NEW_ARRAY),
	E("_ZdlPv", FREE, DELETE), E("_ZdaPv", FREE, DELETE_ARRAY),
	E("_ZdlPvm", FREE_SIZED, DELETE), E("_ZdaPvm", FREE_SIZED, DELETE_ARRAY),
	E("_ZdlPvSt11align_val_t", FREE, DELETE), E("_ZdaPvSt11align_val_t", FREE, DELETE_ARRAY),
	E("_ZdlPvmSt11align_val_t", FREE_SIZED, DELETE), E("_ZdaPvmSt11align_val_t", FREE_SIZED, DELETE_ARRAY),
	E("_ZdlPvRKSt9nothrow_t", FREE, DELETE), E("_ZdaPvRKSt9nothrow_t", FREE, DELETE_ARRAY),
	E("_ZdlPvSt11align_val_tRKSt9nothrow_t", FREE, DELETE),
	E("_ZdaPvSt11align_val_tRKSt9nothrow_t", FREE, DELETE_ARRAY),
};

/* jemalloc's own API; with a prefix (je_, tikv's _rjem_) the standard names carry it too. */
static const struct entry je_entries[] = {
	E("mallocx", SIZE, MALLOCX), E("rallocx", PTR_SIZE, RALLOCX), E("xallocx", PTR_SIZE, XALLOCX),
	E("dallocx", FREE, DALLOCX), E("sdallocx", FREE_SIZED, SDALLOCX),
};

static const struct entry mi_entries[] = {
	E("mi_malloc", SIZE, MALLOC), E("mi_calloc", NMEMB_SIZE, CALLOC), E("mi_realloc", PTR_SIZE, REALLOC),
	E("mi_zalloc", SIZE, CALLOC), E("mi_mallocn", NMEMB_SIZE, MALLOC),
	E("mi_reallocarray", PTR_NMEMB_SIZE, REALLOCARRAY), E("mi_malloc_aligned", SIZE_ALIGN, ALIGNED_ALLOC),
	E("mi_zalloc_aligned", SIZE_ALIGN, ALIGNED_ALLOC), E("mi_realloc_aligned", PTR_SIZE_ALIGN, REALLOC),
	E("mi_free", FREE, FREE), E("mi_free_size", FREE_SIZED, FREE), E("mi_free_aligned", FREE, FREE),
};

static const struct entry tc_entries[] = {
	E("tc_malloc", SIZE, MALLOC), E("tc_calloc", NMEMB_SIZE, CALLOC), E("tc_realloc", PTR_SIZE, REALLOC),
	E("tc_memalign", ALIGN_SIZE, MEMALIGN), E("tc_posix_memalign", MEMPTR_ALIGN_SIZE, POSIX_MEMALIGN),
	E("tc_valloc", SIZE, VALLOC), E("tc_pvalloc", SIZE, PVALLOC), E("tc_free", FREE, FREE),
	E("tc_cfree", FREE, FREE), E("tc_free_sized", FREE_SIZED, FREE),
	E("tc_new", SIZE, NEW), E("tc_newarray", SIZE, NEW_ARRAY), E("tc_new_nothrow", SIZE, NEW),
	E("tc_newarray_nothrow", SIZE, NEW_ARRAY), E("tc_new_aligned", SIZE_ALIGN, NEW),
	E("tc_newarray_aligned", SIZE_ALIGN, NEW_ARRAY), E("tc_delete", FREE, DELETE),
	E("tc_deletearray", FREE, DELETE_ARRAY), E("tc_delete_sized", FREE_SIZED, DELETE),
	E("tc_deletearray_sized", FREE_SIZED, DELETE_ARRAY), E("tc_delete_nothrow", FREE, DELETE),
	E("tc_deletearray_nothrow", FREE, DELETE_ARRAY), E("tc_delete_aligned", FREE, DELETE),
	E("tc_deletearray_aligned", FREE, DELETE_ARRAY),
};

static const struct entry throw_entry = E("__cxa_allocate_exception", THROW, NEW);

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *const je_prefixes[] = { "", "je_", "_rjem_" };

/* Symbol names looked up in one file: the defined ones that matter, with their offsets and sizes. */
struct symset {
	struct {
		char *name;
		uint64_t off;
		uint64_t size;
	} *v;
	size_t n, cap;
	bool libcxx;		/* std::__1 symbols: operator new here is libc++'s */
	int fd;			/* the file, for the code at each entry point */
	bool throws;		/* it calls __cxa_throw or std::__throw_* through its PLT */
};

static bool name__wanted(const char *name)
{
	return !strncmp(name, "mi_", 3) || !strncmp(name, "tc_", 3) || !strncmp(name, "je_", 3) ||
	       !strncmp(name, "_rjem_", 6) || !strncmp(name, "_Zn", 3) || !strncmp(name, "_Zd", 3) ||
	       strstr(name, "alloc") || strstr(name, "align") || !strcmp(name, "free") || !strcmp(name, "cfree") ||
	       !strcmp(name, "__cxa_throw");
}

static void symset__add(const char *name, uint64_t off, uint64_t size, void *ctx)
{
	struct symset *s = ctx;

	if (!strncmp(name, "_ZNSt3__1", 9))
		s->libcxx = true;
	if (!name__wanted(name))
		return;
	if (mt_array__grow((void **)&s->v, &s->cap, s->n, sizeof(*s->v)))
		return;
	s->v[s->n].name = strdup(name);
	s->v[s->n].off = off;
	s->v[s->n].size = size;
	if (s->v[s->n].name)
		s->n++;
}

/* The index of the defined symbol prefix + name, or -1. */
static ssize_t symset__index(const struct symset *s, const char *prefix, const char *name)
{
	size_t i, plen = strlen(prefix);

	for (i = 0; i < s->n; i++)
		if (!strncmp(s->v[i].name, prefix, plen) && !strcmp(s->v[i].name + plen, name))
			return i;
	return -1;
}

static uint64_t symset__find(const struct symset *s, const char *prefix, const char *name)
{
	ssize_t i = symset__index(s, prefix, name);

	return i < 0 ? 0 : s->v[i].off;
}

static void symset__free(struct symset *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i].name);
	free(s->v);
}

static void symset__add_plt(const char *name, uint64_t stub, uint64_t target, void *ctx)
{
	struct symset *s = ctx;

	(void)stub;
	(void)target;
	if (!strcmp(name, "__cxa_throw") || !strcmp(name, "__cxa_rethrow") ||
	    (!strncmp(name, "_ZSt", 4) && strstr(name, "__throw_")))
		s->throws = true;
}

/* How an entry point is probed. */
enum probe_as {
	AS_CALL,	/* an allocating call: entry and return */
	AS_RELEASE,	/* a release: its entry, where it is recorded */
	AS_INFLIGHT,	/* a wrapper's release: its return too, so that what it calls inside counts as nested */
	AS_MARK,	/* an allocating call that only jumps to another: its entry names the next call */
	AS_THROWS,	/* an allocating call that may throw: entry and return, its return address kept */
	AS_ENTRY,	/* an entry probed for itself only (MT_ARGS_THROW) */
};

/* Where the probe goes, where the arguments are there, and whether the function only jumps to another (where). */
struct site_code {
	uint64_t offset;
	uint16_t regs;
	bool forwards;
	uint64_t jumps_to;	/* the file offset it jumps to, 0 when unknown (through a PLT entry) */
};

/* 96 bytes: the sites of jemalloc's and mimalloc's free are 48 and 76 bytes in. */
static void site__read(int fd, uint64_t off, uint8_t args, struct site_code *sc)
{
	uint8_t code[96];
	ssize_t n = fd >= 0 ? pread(fd, code, sizeof(code), off) : -1;
	int64_t to;

	*sc = (struct site_code){ .offset = off };
	if (n <= 0)
		return;
	sc->offset = off + mt_probe_site__place(code, n, args, &sc->regs);
	sc->forwards = mt_probe_site__forwards(code, n, &to);
	sc->jumps_to = sc->forwards && to ? off + to : 0;
}

/*
 * The rank of a release entry point (MT_COOKIE_RANK). libstdc++ and libc++ make each decorated operator delete call
 * the one with a decoration fewer (delete[](p, size) calls delete[](p), which calls delete(p)) and the plain ones
 * call free; tcmalloc's sized free calls tc_free (page-aligned blocks); mimalloc's free, mi_free_size and its
 * operator deletes call mi_free. A thread's release of the block it just released, one rank down and not above it
 * on the stack, is that release going on; one of the same rank or higher is a new one (a thread that only frees may
 * well free the same address twice in a row, another thread having allocated it again in between).
 */
static uint8_t entry__rank(const struct entry *e)
{
	if (e->func == MT_FN_DELETE || e->func == MT_FN_DELETE_ARRAY)
		return 4 + (e->func == MT_FN_DELETE_ARRAY) + (e->args == MT_ARGS_FREE_SIZED) +
		       (strstr(e->name, "align") != NULL) + (strstr(e->name, "nothrow") != NULL);
	if (e->args == MT_ARGS_FREE_SIZED)
		return 3;
	if (e->args == MT_ARGS_FREE)
		return strcmp(e->name, "mi_free") ? 2 : 1;
	return 0;
}

/* Whether a release may call another probed one (MT_COOKIE_CHAINS): only then does it leave a chain to follow. */
static bool entry__chains(const struct entry *e, uint8_t allocator)
{
	/* libstdc++'s and libc++'s operator deletes, and jemalloc's (jmp free@plt, jmp sdallocx@plt) */
	if (e->func == MT_FN_DELETE || e->func == MT_FN_DELETE_ARRAY)
		return true;
	switch (allocator) {
	case MT_ALLOCATOR_MIMALLOC:
		return strcmp(e->name, "mi_free") != 0;
	case MT_ALLOCATOR_TCMALLOC:
		return e->args == MT_ARGS_FREE_SIZED;
	}
	return false;	/* glibc's free and jemalloc's C functions call no probed one */
}

static bool entry__releases(const struct entry *e)
{
	return e->args == MT_ARGS_FREE || e->args == MT_ARGS_FREE_SIZED;
}

static uint64_t site__cookie(const struct entry *e, uint8_t allocator, enum probe_as as, const struct site_code *sc)
{
	return MT_COOKIE(e->args, e->func, allocator) | (uint64_t)entry__rank(e) << MT_COOKIE_RANK_SHIFT |
	       (uint64_t)(as == AS_RELEASE && entry__chains(e, allocator)) << MT_COOKIE_CHAINS_SHIFT |
	       (uint64_t)sc->regs << MT_COOKIE_REGS_SHIFT | (uint64_t)(as == AS_INFLIGHT) << MT_COOKIE_INFLIGHT_SHIFT |
	       (uint64_t)(as == AS_MARK) << MT_COOKIE_MARK_SHIFT | (uint64_t)(as == AS_THROWS) << MT_COOKIE_THROWS_SHIFT;
}

static bool plan__has(const struct mt_probe_plan *p, uint64_t off)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (p->sites[i].entry == off)
			return true;
	for (i = 0; i < p->ncallers; i++)
		if (p->callers[i].lo == off)
			return true;
	for (i = 0; i < p->nforwarders; i++)
		if (p->forwarders[i] == off)
			return true;
	return false;
}

/*
 * A free that only jumps to another (mimalloc's mi_free_size, its aligned ones and the operator deletes that alias
 * them, to mi_free) is that one's call: its own probe would cost a trap and tell only the size its caller gave. An
 * operator delete that jumps to free still tells a delete, and is probed.
 */
static bool plan__forwarder(struct mt_probe_plan *p, uint64_t off, const struct entry *e, enum probe_as as,
			    const struct site_code *sc)
{
	if (as != AS_RELEASE || e->func != MT_FN_FREE || !sc->forwards || p->nforwarders == MT_PROBE_FORWARDERS_MAX)
		return false;
	p->forwarders[p->nforwarders++] = off;
	return true;
}

/* An allocating entry point that jumps to another one probed here (jemalloc's new[] to its new) needs only a mark:
 * the target's probes see the call. */
static bool plan__jumps_to_call(const struct mt_probe_plan *p, const struct site_code *sc)
{
	size_t i;

	for (i = 0; sc->jumps_to && i < p->n; i++)
		if (p->sites[i].entry == sc->jumps_to && !mt_func__is_free(MT_COOKIE_FUNC(p->sites[i].cookie)))
			return true;
	return false;
}

static void plan__add(struct mt_probe_plan *p, int fd, uint64_t off, const struct entry *e, uint8_t allocator,
		      enum probe_as as)
{
	struct mt_probe_site *site = &p->sites[p->n];
	struct site_code sc;

	if (!off || p->n == MT_PROBE_PLAN_MAX || plan__has(p, off))
		return;
	site__read(fd, off, e->args, &sc);
	if (plan__forwarder(p, off, e, as, &sc))
		return;
	if ((as == AS_CALL || as == AS_THROWS) && (e->func == MT_FN_NEW || e->func == MT_FN_NEW_ARRAY) &&
	    plan__jumps_to_call(p, &sc))
		as = AS_MARK;
	if (sc.offset != off)
		pr_debug("%s: probed at +%llu, an emulated instruction (arguments in registers %#x)\n", e->name,
			 (unsigned long long)(sc.offset - off), sc.regs);
	site->entry = off;
	site->offset = sc.offset;
	site->cookie = site__cookie(e, allocator, as, &sc);
	site->ret = as == AS_CALL || as == AS_INFLIGHT || as == AS_THROWS;
	p->n++;
}

/* jemalloc's, tcmalloc's, mimalloc's and a wrapper's operator new, but the nothrow ones: a bad_alloc may come out. */
static bool entry__throws(const struct entry *e, uint8_t allocator)
{
	return (e->func == MT_FN_NEW || e->func == MT_FN_NEW_ARRAY) && !strstr(e->name, "nothrow") &&
	       (allocator == MT_ALLOCATOR_JEMALLOC || allocator == MT_ALLOCATOR_TCMALLOC ||
		allocator == MT_ALLOCATOR_MIMALLOC || allocator == MT_ALLOCATOR_WRAPPER);
}

static bool cxx__runtime(const struct symset *s);

/*
 * An operator new that may throw keeps its return address for the tracer to put back (MT_COOKIE_THROWS). Debian's
 * mimalloc is built as C: it throws nothing (its new aborts), and needs not. A wrapper's new may forward to the next
 * one (dlsym(RTLD_NEXT)), which throws through its frame without the wrapper importing anything that tells.
 */
static enum probe_as entry__as(const struct symset *s, const struct entry *e, uint8_t allocator)
{
	bool throws = allocator == MT_ALLOCATOR_WRAPPER || s->throws || cxx__runtime(s);

	if (entry__releases(e))
		return allocator == MT_ALLOCATOR_WRAPPER ? AS_INFLIGHT : AS_RELEASE;
	return entry__throws(e, allocator) && throws ? AS_THROWS : AS_CALL;
}

static void plan__entries(struct mt_probe_plan *p, const struct symset *s, const char *prefix,
			  const struct entry *e, size_t n, uint8_t allocator)
{
	size_t i;

	for (i = 0; i < n; i++)
		plan__add(p, s->fd, symset__find(s, prefix, e[i].name), &e[i], allocator, entry__as(s, &e[i], allocator));
}

/*
 * A C++ runtime's operator new is never return-probed: that would be a trap more than its malloc's, and a bad_alloc
 * thrown through it would need its return address put back (MT_COOKIE_THROWS). One that calls malloc with the size
 * it was given (the plain ones) is not probed at all: its malloc is, and a malloc that returns into its code is
 * recorded as the new (struct mt_callers), at no cost above the malloc's. The others are probed at their entry only
 * (AS_MARK), to name the call they lead to with their own size: new[] jumps to new, the aligned ones round the size
 * up for aligned_alloc. A new whose end the symbols do not tell is marked too.
 */
static bool cxx_marks_only;	/* mt_allocators__mark_cxx_news */

void mt_allocators__mark_cxx_news(bool on)
{
	cxx_marks_only = on;
}

static bool cxx_fast;	/* mt_allocators__fast_cxx */

void mt_allocators__fast_cxx(bool on)
{
	cxx_fast = on;
}

/* --fast-cxx leaves this entry point alone: a delete (it ends in free), a plain new[] (it jumps to new). */
static bool cxx__skipped(const struct entry *e)
{
	return cxx_fast && (entry__releases(e) || (e->func == MT_FN_NEW_ARRAY && e->args == MT_ARGS_SIZE));
}

static void plan__cxx_runtime(struct mt_probe_plan *p, const struct symset *s, uint8_t allocator)
{
	struct mt_probe_caller *c;
	struct site_code sc;
	ssize_t k;
	size_t i;

	for (i = 0; i < N(cxx_entries); i++) {
		const struct entry *e = &cxx_entries[i];

		k = symset__index(s, "", e->name);
		if (cxx__skipped(e))
			continue;
		if (k < 0 || entry__releases(e) || plan__has(p, s->v[k].off)) {
			plan__entries(p, s, "", e, 1, allocator);
			continue;
		}
		site__read(s->fd, s->v[k].off, e->args, &sc);
		if (cxx_marks_only || e->args != MT_ARGS_SIZE || sc.forwards || !s->v[k].size ||
		    p->ncallers == MT_CALLERS_MAX) {
			plan__add(p, s->fd, s->v[k].off, e, allocator, AS_MARK);
			continue;
		}
		c = &p->callers[p->ncallers++];
		*c = (struct mt_probe_caller){ .lo = s->v[k].off, .hi = s->v[k].off + s->v[k].size, .func = e->func,
					       .allocator = allocator };
	}
}

/* libstdc++ or libc++ itself (or linked into the file), not a program or library with an operator new of its own. */
static bool cxx__runtime(const struct symset *s)
{
	return s->libcxx || symset__find(s, "", "__cxa_throw");
}

/* Which allocators the file defines, as a bit per enum mt_allocator; *je_prefix names jemalloc's prefix. */
static unsigned int kinds__detect(const struct symset *s, const char **je_prefix)
{
	unsigned int kinds = 0;
	size_t i;

	for (i = 0; i < N(je_prefixes) && !(kinds & 1u << MT_ALLOCATOR_JEMALLOC); i++) {
		if (symset__find(s, je_prefixes[i], "mallocx")) {
			kinds |= 1u << MT_ALLOCATOR_JEMALLOC;
			*je_prefix = je_prefixes[i];
		}
	}
	if (symset__find(s, "", "mi_malloc"))
		kinds |= 1u << MT_ALLOCATOR_MIMALLOC;
	if (symset__find(s, "", "tc_malloc"))
		kinds |= 1u << MT_ALLOCATOR_TCMALLOC;
	if (symset__find(s, "", "__libc_malloc") && symset__find(s, "", "malloc"))
		kinds |= 1u << MT_ALLOCATOR_GLIBC;
	/* malloc defined by none of those: an interposer of its own (a leak checker forwarding to __libc_malloc,
	 * libmemusage.so to dlsym(RTLD_NEXT)'s), its operator new/delete with it */
	if (!kinds && symset__find(s, "", "malloc") && !cxx__runtime(s))
		return 1u << MT_ALLOCATOR_WRAPPER;
	if (symset__find(s, "", "_Znwm"))
		kinds |= 1u << (s->libcxx ? MT_ALLOCATOR_LIBCXX : MT_ALLOCATOR_LIBSTDCXX);
	return kinds;
}

/* jemalloc, mimalloc, tcmalloc, then the C++ runtimes, then glibc: the first present names the standard entries. */
static uint8_t kinds__primary(unsigned int kinds)
{
	static const uint8_t order[] = { MT_ALLOCATOR_JEMALLOC, MT_ALLOCATOR_MIMALLOC, MT_ALLOCATOR_TCMALLOC,
					 MT_ALLOCATOR_LIBSTDCXX, MT_ALLOCATOR_LIBCXX, MT_ALLOCATOR_GLIBC,
					 MT_ALLOCATOR_WRAPPER };
	size_t i;

	for (i = 0; i < N(order); i++)
		if (kinds & 1u << order[i])
			return order[i];
	return 0;
}

static void plan__build(struct mt_probe_plan *p, const struct symset *s, unsigned int kinds, const char *je_prefix)
{
	uint8_t primary = kinds__primary(kinds);
	const char *std_prefix = primary == MT_ALLOCATOR_JEMALLOC ? je_prefix : "";

	if (kinds & 1u << MT_ALLOCATOR_JEMALLOC)
		plan__entries(p, s, je_prefix, je_entries, N(je_entries), MT_ALLOCATOR_JEMALLOC);
	if (kinds & 1u << MT_ALLOCATOR_MIMALLOC)
		plan__entries(p, s, "", mi_entries, N(mi_entries), MT_ALLOCATOR_MIMALLOC);
	if (kinds & 1u << MT_ALLOCATOR_TCMALLOC)
		plan__entries(p, s, "", tc_entries, N(tc_entries), MT_ALLOCATOR_TCMALLOC);
	plan__entries(p, s, std_prefix, std_entries, N(std_entries), primary);
	if ((primary == MT_ALLOCATOR_LIBSTDCXX || primary == MT_ALLOCATOR_LIBCXX) && cxx__runtime(s))
		plan__cxx_runtime(p, s, primary);
	else
		plan__entries(p, s, "", cxx_entries, N(cxx_entries), primary);
	/* where a C++ exception begins: a new of the AS_THROWS kind in flight then fails */
	if (cxx__runtime(s))
		plan__add(p, s->fd, symset__find(s, "", throw_entry.name), &throw_entry, primary, AS_ENTRY);
}

static void kinds__warn_many(const char *path, unsigned int kinds, uint8_t primary)
{
	unsigned int own = kinds & (1u << MT_ALLOCATOR_JEMALLOC | 1u << MT_ALLOCATOR_MIMALLOC |
				    1u << MT_ALLOCATOR_TCMALLOC);

	if (!own || !(own & (own - 1)))
		return;
	pr_warn("%s holds more than one allocator (%s%s%s): each one's own entry points are probed as its own; "
		"malloc, free and operator new/delete are counted as %s\n", path,
		kinds & 1u << MT_ALLOCATOR_JEMALLOC ? "jemalloc " : "",
		kinds & 1u << MT_ALLOCATOR_MIMALLOC ? "mimalloc " : "",
		kinds & 1u << MT_ALLOCATOR_TCMALLOC ? "tcmalloc" : "", mt_allocator__name(primary));
}

int mt_allocators__plan(const char *path, const char *name, struct mt_probe_plan *plan)
{
	struct symset s = { .fd = -1 };
	const char *je_prefix = "";
	unsigned int kinds;
	int err = mt_elf_symbols__each(path, symset__add, &s);

	memset(plan, 0, sizeof(*plan));
	if (err)
		goto free_set;
	s.fd = open(path, O_RDONLY | O_CLOEXEC);
	kinds = kinds__detect(&s, &je_prefix);
	if (kinds & (1u << MT_ALLOCATOR_JEMALLOC | 1u << MT_ALLOCATOR_TCMALLOC | 1u << MT_ALLOCATOR_MIMALLOC))
		mt_elf_symbols__plt(path, symset__add_plt, &s);	/* for entry__as */
	plan->kind = kinds__primary(kinds);
	if (plan->kind) {
		plan__build(plan, &s, kinds, je_prefix);
		kinds__warn_many(name, kinds, plan->kind);
	}
free_set:
	if (s.fd >= 0)
		close(s.fd);
	symset__free(&s);
	return err;
}
