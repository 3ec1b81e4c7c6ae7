/* elf_symbols.h — the defined function symbols of an ELF file, with the file offsets uprobes take. */
#ifndef MEMTRACK_TRACER_ELF_SYMBOLS_H
#define MEMTRACK_TRACER_ELF_SYMBOLS_H

#include <stdint.h>

typedef void (*mt_elf_symbol_fn)(const char *name, uint64_t offset, uint64_t size, void *ctx);
/* fn for each defined function symbol of .dynsym and .symtab, with its size in bytes (0: unknown). 0 or -errno. */
int mt_elf_symbols__each(const char *path, mt_elf_symbol_fn fn, void *ctx);

#endif /* MEMTRACK_TRACER_ELF_SYMBOLS_H */
