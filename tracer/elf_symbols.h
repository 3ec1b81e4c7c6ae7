/* elf_symbols.h — the defined function symbols of an ELF file, with the file offsets uprobes take. */
#ifndef MEMTRACK_TRACER_ELF_SYMBOLS_H
#define MEMTRACK_TRACER_ELF_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

typedef void (*mt_elf_symbol_fn)(const char *name, uint64_t offset, void *ctx);
/* fn for each defined function symbol of .dynsym and .symtab. 0 or -errno. */
int mt_elf_symbols__each(const char *path, mt_elf_symbol_fn fn, void *ctx);
/* File offsets of the named symbols (0 where a name is absent). 0 or -errno. */
int mt_elf_symbols__offsets(const char *path, const char *const *names, size_t n, uint64_t *offsets);
/* The GNU build-id note: its length (0: none), or -errno. */
int mt_elf_symbols__build_id(const char *path, uint8_t *id, size_t max);

#endif /* MEMTRACK_TRACER_ELF_SYMBOLS_H */
