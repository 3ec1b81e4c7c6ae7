// SPDX-License-Identifier: GPL-2.0-only
/* elf_symbols.c — turns defined function symbols of an ELF file into file offsets for uprobes (libelf). */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "common/elf.h"
#include "common/elf_syms.h"
#include "common/log.h"
#include "common/u64map.h"
#include "tracer/elf_symbols.h"

struct sym_scan {
	Elf *elf;
	mt_elf_symbol_fn fn;
	void *ctx;
};

/* Uprobes take file offsets: a symbol outside every PT_LOAD segment has none to probe, and is skipped. */
static int sym__offer(const GElf_Sym *sym, const char *name, void *ctx)
{
	struct sym_scan *sc = ctx;
	uint64_t off;

	if (!mt_elf__vaddr_offset(sc->elf, sym->st_value, false, &off))
		sc->fn(name, off, sym->st_size, sc->ctx);
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
	err = mt_elf_syms__each(sc.elf, 0, sym__offer, &sc);
	if (err > 0)
		err = 0;
	if (err)
		pr_warn("%s: cannot read its sections: %s\n", path, elf_errmsg(-1));
	elf_end(sc.elf);
	close(fd);
	return err;
}

/* The GOT slot a PLT stub jumps through: jmp *disp32(%rip), after endbr64 and a bnd prefix, or 0. */
static uint64_t stub__slot(const uint8_t *c, size_t len, uint64_t vaddr)
{
	size_t p = len >= 4 && c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa ? 4 : 0;
	int32_t disp;

	p += p < len && c[p] == 0xf2;
	if (p + 6 > len || c[p] != 0xff || c[p + 1] != 0x25)
		return 0;
	memcpy(&disp, c + p + 2, 4);
	return vaddr + p + 6 + (int64_t)disp;
}

struct plt_scan {
	Elf *elf;
	Elf_Data *rela, *syms;
	size_t strtab;
	struct mt_u64map slots;	/* GOT slot -> its relocation's index */
};

/* The symbol whose JUMP_SLOT relocation targets slot, as (name, file offset or 0). */
static const char *plt__symbol(const struct plt_scan *ps, uint64_t slot, uint64_t *target)
{
	uint64_t *i = mt_u64map__find(&ps->slots, slot);
	GElf_Rela r;
	GElf_Sym sym;

	*target = 0;
	if (!i || !gelf_getrela(ps->rela, *i, &r) || !gelf_getsym(ps->syms, GELF_R_SYM(r.r_info), &sym))
		return NULL;
	if (sym.st_shndx != SHN_UNDEF && sym.st_value && mt_elf__vaddr_offset(ps->elf, sym.st_value, false, target))
		*target = 0;
	return elf_strptr(ps->elf, ps->strtab, sym.st_name);
}

static int plt__index(struct plt_scan *ps, size_t n)
{
	GElf_Rela r;
	size_t i;

	for (i = 0; i < n; i++)
		if (gelf_getrela(ps->rela, i, &r) && GELF_R_TYPE(r.r_info) == R_X86_64_JUMP_SLOT &&
		    mt_u64map__put(&ps->slots, r.r_offset, i, NULL) < 0)
			return -ENOMEM;
	return 0;
}

static void plt__walk(const struct plt_scan *ps, const char *section, mt_elf_plt_fn fn, void *ctx)
{
	Elf_Scn *scn;
	Elf_Data *d;
	GElf_Shdr sh;
	uint64_t slot, target, off;
	const char *name;
	size_t i;

	scn = mt_elf__section(ps->elf, section, &sh);
	d = scn ? elf_getdata(scn, NULL) : NULL;
	if (!d || !d->d_buf || sh.sh_type != SHT_PROGBITS)
		return;
	for (i = 0; i + 16 <= d->d_size; i += 16) {
		slot = stub__slot((const uint8_t *)d->d_buf + i, 16, sh.sh_addr + i);
		name = slot ? plt__symbol(ps, slot, &target) : NULL;
		if (name && !mt_elf__vaddr_offset(ps->elf, sh.sh_addr + i, false, &off))
			fn(name, off, target, ctx);
	}
}

int mt_elf_symbols__plt(const char *path, mt_elf_plt_fn fn, void *ctx)
{
	struct plt_scan ps = { .elf = NULL };
	GElf_Shdr sh, dsh;
	Elf_Scn *scn, *dyn;
	int fd, err = mt_elf__open(path, &fd, &ps.elf);

	if (err)
		return err;
	scn = mt_elf__section(ps.elf, ".rela.plt", &sh);
	dyn = scn ? elf_getscn(ps.elf, sh.sh_link) : NULL;
	if (dyn && gelf_getshdr(dyn, &dsh) && sh.sh_entsize) {
		ps.rela = elf_getdata(scn, NULL);
		ps.syms = elf_getdata(dyn, NULL);
		ps.strtab = dsh.sh_link;
		if (ps.rela && ps.syms)
			err = plt__index(&ps, sh.sh_size / sh.sh_entsize);
		if (!err && ps.rela && ps.syms) {
			plt__walk(&ps, ".plt", fn, ctx);
			plt__walk(&ps, ".plt.sec", fn, ctx);
		}
	}
	mt_u64map__release(&ps.slots);
	elf_end(ps.elf);
	close(fd);
	return err;
}
