/* elf_symbols.c — turns defined function symbols of an ELF file into file offsets for uprobes (libelf). */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include "common/elf.h"
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
			sc->fn(name, off, sym.st_size, sc->ctx);
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
	int fd, err = mt_elf__open(path, &fd, &sc.elf);

	if (err == -ENOEXEC)
		pr_warn("%s: not an ELF file: %s\n", path, elf_errmsg(-1));
	if (err)
		return err;
	err = elf__scan(&sc);
	if (err)
		pr_warn("%s: cannot read its sections: %s\n", path, elf_errmsg(-1));
	elf_end(sc.elf);
	close(fd);
	return err;
}
