/* SPDX-License-Identifier: GPL-2.0-only */
/* elf_symbols.h — the defined function symbols of an ELF file, with the file offsets uprobes take. */
#ifndef MEMTRACK_TRACER_ELF_SYMBOLS_H
#define MEMTRACK_TRACER_ELF_SYMBOLS_H

#include <stdint.h>

typedef void (*mt_elf_symbol_fn)(const char *name, uint64_t offset, uint64_t size, void *ctx);
/* fn for each defined function symbol of .dynsym and .symtab, with its size in bytes (0: unknown). 0 or -errno. */
int mt_elf_symbols__each(const char *path, mt_elf_symbol_fn fn, void *ctx);

/* A PLT entry: the file offset of its code, the function it calls through its GOT slot, and that function's file
 * offset when this file defines it (else 0: an import). */
typedef void (*mt_elf_plt_fn)(const char *name, uint64_t stub, uint64_t target, void *ctx);
/* fn for each entry of .plt and .plt.sec whose slot a JUMP_SLOT relocation names. 0 or -errno. */
int mt_elf_symbols__plt(const char *path, mt_elf_plt_fn fn, void *ctx);

#endif /* MEMTRACK_TRACER_ELF_SYMBOLS_H */
