/* SPDX-License-Identifier: GPL-2.0-only */
/* elf.h — ELF files through libelf: opening one, its GNU build-id note, a section or segment and file offsets. */
#ifndef MEMTRACK_ELF_H
#define MEMTRACK_ELF_H

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* path opened (*fd) and begun as ELF (*elf; libelf set up on first use). 0, -errno, or -ENOEXEC: not an ELF file
 * (said with -v; elf_errmsg(-1) tells why), -EINVAL or -EISDIR: not a regular file (said: a FIFO is never waited
 * on). The caller ends *elf and closes *fd. */
int mt_elf__open(const char *path, int *fd, Elf **elf);
/* The GNU build-id note: sections first (a separate debug file keeps its notes there), then PT_NOTE segments. Its
 * length (at most max bytes copied to id), 0 without one. */
size_t mt_elf__build_id(Elf *elf, uint8_t *id, size_t max);
/* The build-id of the ELF file at path: its length, 0 without one, or -errno (-ENOEXEC: not an ELF file). */
int mt_elf__file_build_id(const char *path, uint8_t *id, size_t max);
/* ELF begun on fd, which stays the caller's (what names it in the debug line). 0 or -ENOEXEC. */
int mt_elf__begin(int fd, const char *what, Elf **elf);
/* The build-id of the ELF file open as fd, as mt_elf__file_build_id: a file opened once is the file asked about. */
int mt_elf__fd_build_id(int fd, uint8_t *id, size_t max);
/* The section named name, its header in *sh, or NULL. */
Elf_Scn *mt_elf__section(Elf *elf, const char *name, GElf_Shdr *sh);
/* The first program header of type (PT_GNU_EH_FRAME, ...) into *ph: 0, -ENOENT without one, -ENOEXEC. */
int mt_elf__segment(Elf *elf, Elf64_Word type, GElf_Phdr *ph);
/*
 * The file offset of vaddr through the PT_LOAD segment holding it: 0, -ENOENT outside every one, -ENOEXEC. in_file:
 * only where the segment has file bytes, to read them; else anywhere in its memory image (a uprobe's offset).
 */
int mt_elf__vaddr_offset(Elf *elf, uint64_t vaddr, bool in_file, uint64_t *off);
/* Lowercase hex of a build-id into buf (2 * len + 1 bytes). */
char *mt_elf__build_id_hex(const uint8_t *id, size_t len, char *buf);

#endif /* MEMTRACK_ELF_H */
