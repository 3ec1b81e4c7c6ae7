/* SPDX-License-Identifier: GPL-2.0-only */
/* elf_syms.h — one walk over the defined function symbols of an ELF file (the tracer's probes, the unwinder's names). */
#ifndef MEMTRACK_ELF_SYMS_H
#define MEMTRACK_ELF_SYMS_H

#include <gelf.h>

/* A symbol the walk hands out: its table entry and its name (never NULL or empty). A negative return stops it. */
typedef int (*mt_elf_syms_fn)(const GElf_Sym *sym, const char *name, void *ctx);

/*
 * fn for each defined function symbol (STT_FUNC or STT_GNU_IFUNC, in a section, at a non-zero address, named) of
 * the tables of type (SHT_SYMTAB or SHT_DYNSYM; 0: both, in section order). Returns how many fn was given, fn's
 * negative return, or -ENOEXEC when a section header cannot be read.
 */
int mt_elf_syms__each(Elf *elf, Elf64_Word type, mt_elf_syms_fn fn, void *ctx);

#endif /* MEMTRACK_ELF_SYMS_H */
