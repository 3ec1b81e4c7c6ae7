// SPDX-License-Identifier: GPL-2.0-only
/* module_src.c — a module's source view: DWARF lines, demangled names and inline chains, each made once. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/text.h"
#include "common/u64map.h"
#include "unwind/module.h"
#include "unwind/module_src.h"

struct mt_dwarf_lines {
	Dwarf *dw;
};

/* A module's names and inline chains, each made once: reports ask for the same few thousand addresses again. */
struct mt_module_names {
	struct mt_u64map by_raw;	/* address of the raw name (in the ELF image or .debug_str) → index in names */
	char **names;
	size_t count;
	size_t cap;
	struct mt_u64map by_vaddr;	/* return address → index in chains */
	struct module_chain *chains;
	size_t nchains;
	size_t cap_chains;
};

struct module_chain {
	struct mt_src_frame *frames;
	size_t n;
};

static void names_free(struct mt_module_names *nm)
{
	size_t i;

	if (!nm)
		return;
	for (i = 0; i < nm->count; i++)
		free(nm->names[i]);
	for (i = 0; i < nm->nchains; i++)
		free(nm->chains[i].frames);
	free(nm->names);
	free(nm->chains);
	mt_u64map__release(&nm->by_raw);
	mt_u64map__release(&nm->by_vaddr);
	free(nm);
}

void mt_module__forget_names(struct mt_module *m)
{
	names_free(m->names);
	m->names = NULL;
}

void mt_module__src_free(struct mt_module *m)
{
	mt_module__forget_names(m);
	if (m->lines) {
		dwarf_end(m->lines->dw);
		free(m->lines);
		m->lines = NULL;
	}
}

static void module_open_lines(struct mt_module *m)
{
	Dwarf *dw;

	m->lines_tried = true;
	dw = dwarf_begin_elf(m->elf, DWARF_C_READ, NULL);
	if (!dw && m->debug_elf)
		dw = dwarf_begin_elf(m->debug_elf, DWARF_C_READ, NULL);
	if (!dw)
		return;
	m->lines = calloc(1, sizeof(*m->lines));
	if (!m->lines) {
		dwarf_end(dw);
		return;
	}
	m->lines->dw = dw;
}

/* Without .debug_aranges dwarf_addrdie finds nothing: then the CU whose ranges hold addr, by a scan. */
static Dwarf_Die *cu_scan(Dwarf *dw, uint64_t addr, Dwarf_Die *cu)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (!dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL)) {
		if (dwarf_offdie(dw, off + hsize, cu) && dwarf_haspc(cu, addr) > 0)
			return cu;
		off = next;
	}
	return NULL;
}

/* The CU holding addr (the module's DWARF open). */
static bool module_cu(struct mt_module *m, uint64_t addr, Dwarf_Die *cu)
{
	return dwarf_addrdie(m->lines->dw, addr, cu) || cu_scan(m->lines->dw, addr, cu);
}

static int cu_srcline(Dwarf_Die *cu, uint64_t addr, const char **file, int *line)
{
	Dwarf_Line *l = dwarf_getsrc_die(cu, addr);

	if (!l || dwarf_lineno(l, line) || !(*file = dwarf_linesrc(l, NULL, NULL))) {
		*file = NULL;
		*line = 0;
		return -ENOENT;
	}
	return 0;
}

int mt_module__srcline(struct mt_module *m, uint64_t vaddr, const char **file, int *line)
{
	Dwarf_Die cu;

	if (!m->lines_tried && !m->err && m->elf)
		module_open_lines(m);
	if (!m->lines || !module_cu(m, vaddr, &cu))
		return -ENOENT;
	return cu_srcline(&cu, vaddr, file, line);
}

/* ---- names and inline chains ---- */

/*
 * libiberty's cplus_demangle with DMGL_AUTO: one call for the Itanium C++ ABI and both Rust manglings (legacy, v0),
 * the demangler binutils and gdb use. libstdc++'s __cxa_demangle knows C++ only and would need libstdc++ linked.
 * Without DMGL_PARAMS, as perf prints them: "std::vector<int>::push_back", no parameter list (the line tells
 * overloads apart), since template arguments already make C++ names long.
 */
char *mt_symbol__demangle(const char *name)
{
	return cplus_demangle(name, DMGL_ANSI | DMGL_AUTO);
}

static struct mt_module_names *module_names(struct mt_module *m)
{
	if (!m->names)
		m->names = calloc(1, sizeof(*m->names));
	return m->names;
}

/* raw demangled (or copied) once; an ELF symbol's "@VERSION" names an alias, not a function: cut. */
static const char *name_intern(struct mt_module *m, const char *raw, bool elf_symbol)
{
	struct mt_module_names *nm = module_names(m);
	uint64_t *idx;
	char *copy, *dem;

	if (!nm)
		return NULL;
	idx = mt_u64map__find(&nm->by_raw, (uintptr_t)raw);
	if (idx)
		return nm->names[*idx];
	if (mt_array__grow((void **)&nm->names, &nm->cap, nm->count, sizeof(*nm->names)))
		return NULL;
	copy = strndup(raw, elf_symbol ? strcspn(raw, "@") : strlen(raw));
	if (!copy)
		return NULL;
	if (!m->raw_names && (dem = mt_symbol__demangle(copy))) {
		free(copy);
		copy = dem;
	}
	if (!m->raw_names && !m->full_names && strchr(copy, '<')) {
		dem = mt_text__elide_templates(copy);
		free(copy);
		copy = dem;
		if (!copy)
			return NULL;
	}
	if (mt_u64map__put(&nm->by_raw, (uintptr_t)raw, nm->count, NULL) < 0) {
		free(copy);
		return NULL;
	}
	nm->names[nm->count++] = copy;
	return copy;
}

const char *mt_module__symbol_name(struct mt_module *m, const struct mt_symbol *sym)
{
	return name_intern(m, sym->name, true);
}

/* A DIE's function name: its linkage name (through abstract origins and declarations) demangled, else its name. */
static const char *die_func(struct mt_module *m, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *raw;

	raw = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!raw)
		raw = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!raw)
		raw = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return raw ? name_intern(m, raw, false) : NULL;
}

/* Where an inlined subroutine was called from: DW_AT_call_file (an index into its CU's file table), call_line. */
static void call_site(Dwarf_Die *inl, const char **file, int *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx, l;
	Dwarf_Files *files;
	Dwarf_Die cu;
	size_t nfiles;

	*file = NULL;
	*line = 0;
	if (!dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &attr), &l))
		*line = (int)l;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &attr), &idx) || !dwarf_diecu(inl, &cu, NULL, NULL) ||
	    dwarf_getsrcfiles(&cu, &files, &nfiles) || idx >= nfiles)
		return;
	*file = dwarf_filesrc(files, idx, NULL, NULL);
}

#define SCOPES_MAX 64	/* inline depth kept; deeper nesting keeps its outermost scopes */

static bool code_scope(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block ||
	       tag == DW_TAG_try_block || tag == DW_TAG_catch_block;
}

/* Tags without code of their own whose children may have some: a compiler may nest definitions in them. */
static bool may_nest(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_module || tag == DW_TAG_class_type ||
	       tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
}

/*
 * Appends to path the code scopes among parent's children holding pc, outermost first, and so on down. Only those
 * holding pc are entered; namespaces and classes only when no child of parent itself holds pc (GCC and clang put
 * definitions at the CU's level), since their declarations are most of a C++ CU.
 */
static bool scope_find(Dwarf_Die *parent, uint64_t pc, bool nested, Dwarf_Die *path, int *n)
{
	Dwarf_Die child;
	int pass;

	for (pass = 0; pass < (nested ? 2 : 1); pass++) {
		if (dwarf_child(parent, &child))
			return false;
		do {
			if (!pass && code_scope(dwarf_tag(&child)) && dwarf_haspc(&child, pc) > 0) {
				if (*n < SCOPES_MAX)
					path[(*n)++] = child;
				scope_find(&child, pc, false, path, n);
				return true;
			}
			if (pass && may_nest(dwarf_tag(&child)) && scope_find(&child, pc, true, path, n))
				return true;
		} while (!dwarf_siblingof(&child, &child));
	}
	return false;
}

/*
 * The scopes of cu holding pc, innermost first, as the code nests them (malloc'd). One walk that enters only what
 * holds pc: dwarf_getscopes follows an inlined subroutine into its abstract definition, and asking the nesting
 * again (dwarf_getscopes_die, as eu-addr2line -i does) walks the whole CU twice, for each address.
 */
static int scopes_at(Dwarf_Die *cu, uint64_t pc, Dwarf_Die **scopes)
{
	Dwarf_Die path[SCOPES_MAX];
	int n = 0, i;

	*scopes = NULL;
	if (!scope_find(cu, pc, true, path, &n) || !(*scopes = malloc(n * sizeof(**scopes))))
		return 0;
	for (i = 0; i < n; i++)
		(*scopes)[i] = path[n - 1 - i];
	return n;
}

static size_t count_inlined(Dwarf_Die *scopes, int n)
{
	size_t k = 0;
	int i;

	for (i = 0; i < n && dwarf_tag(&scopes[i]) != DW_TAG_subprogram; i++)
		k += dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine;
	return k;
}

/* The chain of vaddr: one frame per inlined subroutine holding pc, then the function (its ELF symbol). */
static int chain_build(struct mt_module *m, uint64_t vaddr, struct module_chain *c)
{
	const struct mt_symbol *sym = mt_module__symbol(m, vaddr - 1);
	Dwarf_Die cu, *scopes;
	const char *file = NULL;
	int n, i, line = 0;
	size_t k = 0;

	if (!m->lines_tried && !m->err && m->elf)
		module_open_lines(m);
	if (m->lines && module_cu(m, vaddr - 1, &cu)) {
		n = scopes_at(&cu, vaddr - 1, &scopes);
		cu_srcline(&cu, vaddr - 1, &file, &line);
	} else {
		n = 0;
		scopes = NULL;
	}
	c->frames = calloc(count_inlined(scopes, n) + 1, sizeof(*c->frames));
	if (!c->frames) {
		free(scopes);
		return -ENOMEM;
	}
	for (i = 0; i < n && dwarf_tag(&scopes[i]) != DW_TAG_subprogram; i++) {
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		c->frames[k++] = (struct mt_src_frame){ die_func(m, &scopes[i]), 0, file, line, true };
		call_site(&scopes[i], &file, &line);
	}
	c->frames[k] = (struct mt_src_frame){ NULL, 0, file, line, false };
	if (sym) {
		c->frames[k].func = mt_module__symbol_name(m, sym);
		c->frames[k].offset = vaddr - sym->addr;
	} else if (i < n) {
		c->frames[k].func = die_func(m, &scopes[i]);
	}
	c->n = k + 1;
	free(scopes);
	return 0;
}

int mt_module__frames(struct mt_module *m, uint64_t vaddr, const struct mt_src_frame **frames, size_t *n)
{
	struct mt_module_names *nm;
	uint64_t *idx, at;
	int err;

	if (!m->tried || m->err || !m->elf)
		return -ENOENT;
	nm = module_names(m);
	if (!nm)
		return -ENOMEM;
	idx = mt_u64map__find(&nm->by_vaddr, vaddr);
	at = idx ? *idx : nm->nchains;
	if (!idx) {
		if (mt_array__grow((void **)&nm->chains, &nm->cap_chains, nm->nchains, sizeof(*nm->chains)))
			return -ENOMEM;
		err = chain_build(m, vaddr, &nm->chains[at]);
		if (err)
			return err;
		if (mt_u64map__put(&nm->by_vaddr, vaddr, at, NULL) < 0) {
			free(nm->chains[at].frames);
			return -ENOMEM;
		}
		nm->nchains++;
	}
	*frames = nm->chains[at].frames;
	*n = nm->chains[at].n;
	return 0;
}
