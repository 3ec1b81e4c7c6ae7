// SPDX-License-Identifier: GPL-2.0-only
/* elf.c — opens ELF files with libelf, reads their GNU build-id note, finds a section, a segment, a file offset. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/elf.h"
#include "common/log.h"
#include "common/openreg.h"

static int elf__init(void)
{
	static bool done;

	if (!done && elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	done = true;
	return 0;
}

int mt_elf__open(const char *path, int *fd, Elf **elf)
{
	int err = elf__init();
	struct stat st;
	char why[64];

	if (err)
		return err;
	*fd = mt_openreg__at(AT_FDCWD, path, 0, &st);
	if (*fd == -EINVAL || *fd == -EISDIR)	/* a FIFO planted in DIR/modules or the cache: refused, not waited on */
		pr_warn("%s: %s: not read\n", path, mt_openreg__why(*fd, &st, why, sizeof(why)));
	if (*fd < 0)
		return *fd;
	*elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!*elf || elf_kind(*elf) != ELF_K_ELF) {
		pr_debug("%s: not an ELF file: %s\n", path, elf_errmsg(-1));
		if (*elf)
			elf_end(*elf);
		close(*fd);
		*elf = NULL;
		*fd = -1;
		return -ENOEXEC;
	}
	return 0;
}

static size_t notes__build_id(Elf_Data *data, uint8_t *id, size_t max)
{
	size_t off = 0, next, name_off, desc_off, n;
	GElf_Nhdr nh;

	while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4) && nh.n_descsz) {
			n = nh.n_descsz > max ? max : nh.n_descsz;
			memcpy(id, (const char *)data->d_buf + desc_off, n);
			return n;
		}
		off = next;
	}
	return 0;
}

size_t mt_elf__build_id(Elf *elf, uint8_t *id, size_t max)
{
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Shdr sh;
	GElf_Phdr ph;
	size_t i, n, len;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (data && (len = notes__build_id(data, id, max)))
			return len;
	}
	if (elf_getphdrnum(elf, &n))
		return 0;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (data && (len = notes__build_id(data, id, max)))
			return len;
	}
	return 0;
}

Elf_Scn *mt_elf__section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t strndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &strndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, sh) && (n = elf_strptr(elf, strndx, sh->sh_name)) && !strcmp(n, name))
			return scn;
	return NULL;
}

int mt_elf__segment(Elf *elf, Elf64_Word type, GElf_Phdr *ph)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(elf, i, ph) && ph->p_type == type)
			return 0;
	return -ENOENT;
}

int mt_elf__vaddr_offset(Elf *elf, uint64_t vaddr, bool in_file, uint64_t *off)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + (in_file ? ph.p_filesz : ph.p_memsz)) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

int mt_elf__file_build_id(const char *path, uint8_t *id, size_t max)
{
	Elf *elf = NULL;
	int fd = -1, err;
	size_t len;

	err = mt_elf__open(path, &fd, &elf);
	if (err)
		return err;
	len = mt_elf__build_id(elf, id, max);
	elf_end(elf);
	close(fd);
	return (int)len;
}

char *mt_elf__build_id_hex(const uint8_t *id, size_t len, char *buf)
{
	size_t i;

	for (i = 0; i < len; i++)
		sprintf(buf + 2 * i, "%02x", id[i]);
	buf[2 * len] = '\0';
	return buf;
}

int mt_elf__begin(int fd, const char *what, Elf **elf)
{
	int err = elf__init();

	if (err)
		return err;
	*elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (*elf && elf_kind(*elf) == ELF_K_ELF)
		return 0;
	pr_debug("%s: not an ELF file: %s\n", what, elf_errmsg(-1));
	if (*elf)
		elf_end(*elf);
	*elf = NULL;
	return -ENOEXEC;
}

int mt_elf__fd_build_id(int fd, uint8_t *id, size_t max)
{
	Elf *elf;
	size_t len;
	int err = mt_elf__begin(fd, "module", &elf);

	if (err)
		return err;
	len = mt_elf__build_id(elf, id, max);
	elf_end(elf);
	return (int)len;
}
