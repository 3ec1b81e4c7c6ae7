/* elf_symbols.c — turns defined function symbols of an ELF file into file offsets for uprobes (libelf). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "tracer/elf_symbols.h"

/* Uprobes take file offsets: map a virtual address through the PT_LOAD segment holding it. */
static int vaddr__to_offset(Elf *elf, GElf_Addr vaddr, uint64_t *off)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

struct sym_scan {
	Elf *elf;
	mt_elf_symbol_fn fn;
	void *ctx;
};

static void symtab__walk(struct sym_scan *sc, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, count;
	uint64_t off;
	GElf_Sym sym;
	const char *name;

	if (!data || !sh->sh_entsize)
		return;
	count = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < count; i++) {
		if (!gelf_getsym(data, i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
			continue;
		name = elf_strptr(sc->elf, sh->sh_link, sym.st_name);
		if (name && *name && !vaddr__to_offset(sc->elf, sym.st_value, &off))
			sc->fn(name, off, sc->ctx);
	}
}

static int elf__scan(struct sym_scan *sc)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(sc->elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			return -ENOEXEC;
		if (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB)
			symtab__walk(sc, scn, &sh);
	}
	return 0;
}

int mt_elf_symbols__each(const char *path, mt_elf_symbol_fn fn, void *ctx)
{
	struct sym_scan sc = { .fn = fn, .ctx = ctx };
	int fd, err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	sc.elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!sc.elf || elf_kind(sc.elf) != ELF_K_ELF) {
		pr_warn("%s: not an ELF file: %s\n", path, elf_errmsg(-1));
		err = -ENOEXEC;
		goto close_fd;
	}
	err = elf__scan(&sc);
	if (err)
		pr_warn("%s: cannot read its sections: %s\n", path, elf_errmsg(-1));
close_fd:
	elf_end(sc.elf);
	close(fd);
	return err;
}

struct offsets_ctx {
	const char *const *names;
	size_t n;
	uint64_t *offsets;
};

static void offsets__match(const char *name, uint64_t off, void *data)
{
	struct offsets_ctx *c = data;
	size_t k;

	for (k = 0; k < c->n; k++)
		if (!c->offsets[k] && !strcmp(name, c->names[k]))
			c->offsets[k] = off;
}

int mt_elf_symbols__offsets(const char *path, const char *const *names, size_t n, uint64_t *offsets)
{
	struct offsets_ctx c = { names, n, offsets };

	memset(offsets, 0, n * sizeof(*offsets));
	return mt_elf_symbols__each(path, offsets__match, &c);
}

static int notes__build_id(Elf *elf, const GElf_Phdr *ph, uint8_t *id, size_t max)
{
	Elf_Data *data = elf_getdata_rawchunk(elf, ph->p_offset, ph->p_filesz, ELF_T_NHDR);
	size_t off = 0, name_off, desc_off, n;
	GElf_Nhdr nh;

	while (data && (n = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4)) {
			n = nh.n_descsz < max ? nh.n_descsz : max;
			memcpy(id, (const uint8_t *)data->d_buf + desc_off, n);
			return n;
		}
		off = n;
	}
	return 0;
}

int mt_elf_symbols__build_id(const char *path, uint8_t *id, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), len = 0;
	size_t i, n;
	GElf_Phdr ph;
	Elf *elf;

	if (fd < 0)
		return -errno;
	if (elf_version(EV_CURRENT) == EV_NONE)
		goto close_fd;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && !elf_getphdrnum(elf, &n)) {
		for (i = 0; i < n && !len; i++)
			if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_NOTE)
				len = notes__build_id(elf, &ph, id, max);
	}
	elf_end(elf);
close_fd:
	close(fd);
	return len;
}
