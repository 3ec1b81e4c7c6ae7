/* SPDX-License-Identifier: GPL-2.0-only */
/* elf.h — ELF files through libelf: opening one, and its GNU build-id note. */
#ifndef MEMTRACK_ELF_H
#define MEMTRACK_ELF_H

#include <libelf.h>
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
/* Lowercase hex of a build-id into buf (2 * len + 1 bytes). */
char *mt_elf__build_id_hex(const uint8_t *id, size_t len, char *buf);

#endif /* MEMTRACK_ELF_H */
