// SPDX-License-Identifier: GPL-2.0-only
/* elf_syms.c — the defined function symbols of .symtab and .dynsym, walked with libelf. */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stddef.h>

#include "common/elf_syms.h"

static int table_each(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, mt_elf_syms_fn fn, void *ctx)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, count;
	const char *name;
	GElf_Sym sym;
	int given = 0, err;

	if (!data || !sh->sh_entsize)
		return 0;
	count = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < count; i++) {
		if (!gelf_getsym(data, i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !name[0])
			continue;
		err = fn(&sym, name, ctx);
		if (err < 0)
			return err;
		given++;
	}
	return given;
}

int mt_elf_syms__each(Elf *elf, Elf64_Word type, mt_elf_syms_fn fn, void *ctx)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int total = 0, r;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			return -ENOEXEC;
		if (type ? sh.sh_type != type : sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		r = table_each(elf, scn, &sh, fn, ctx);
		if (r < 0)
			return r;
		total += r;
	}
	return total;
}
