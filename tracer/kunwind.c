// SPDX-License-Identifier: GPL-2.0-only
/* kunwind.c — the in-kernel unwinder's tables: a file's CFI (libdw) turned into rows and pages in BPF maps. */
#include <bpf/bpf.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/array.h"
#include "common/elf.h"
#include "common/log.h"
#include "tracer/bpf_session.h"
#include "tracer/kunwind.h"

#define X86_RSP 7
#define X86_RBP 6
#define X86_RA 16
#define EH_HDR_TABLE_ENC 0x3b	/* DW_EH_PE_datarel | DW_EH_PE_sdata4: what every linker writes */

struct mt_kunwind {
	struct mt_bpf_session *bpf;
	int fd_modules, fd_pages, fd_rows;
	uint32_t next_row, next_id, pages;
	struct mt_kunwind_stats st;
};

/* A file's view for the rows: its segments (vaddr -> file offset) and the rows so far. */
struct rows_build {
	Elf *elf;
	Dwarf_CFI *cfi;
	struct mt_urow *rows;
	size_t n, cap;
};

/* "CFA + off" as libdw spells a register's save slot; false for anything else (an expression, a register). */
static bool ops__cfa_plus(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (nops < 1 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (nops == 1)
		*off = 0;
	else if (nops == 2 && ops[1].atom == DW_OP_plus_uconst)
		*off = (int64_t)ops[1].number;
	else if (nops == 3 && (ops[1].atom == DW_OP_consts || ops[1].atom == DW_OP_constu) &&
		 ops[2].atom == DW_OP_plus)
		*off = (int64_t)ops[1].number;
	else if (nops == 3 && ops[1].atom == DW_OP_constu && ops[2].atom == DW_OP_minus)
		*off = -(int64_t)ops[1].number;
	else
		return false;
	return true;
}

/* The caller's rbp: 0 when this frame leaves it alone, else where it is saved (below the CFA); false when CFI keeps
 * it elsewhere (another register, an expression), which BPF cannot follow. */
static bool frame__bp_off(Dwarf_Frame *f, int16_t *bp_off)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t off;

	if (dwarf_frame_register(f, X86_RBP, mem, &ops, &nops) < 0)
		return false;
	if (nops == 0) {	/* same value, or undefined: no caller of this frame needs it from here */
		*bp_off = 0;
		return true;
	}
	if (!ops__cfa_plus(ops, nops, &off) || off >= 0 || off < INT16_MIN)
		return false;
	*bp_off = (int16_t)off;
	return true;
}

/* One CFI row as BPF walks it: the CFA from rsp or rbp, the return address at CFA - 8, rbp unchanged or saved. */
static struct mt_urow frame__row(Dwarf_Frame *f)
{
	struct mt_urow row = { 0 };
	Dwarf_Op mem[3], *ops;
	Dwarf_Word reg;
	size_t nops;
	int64_t off;

	if (dwarf_frame_register(f, X86_RA, mem, &ops, &nops) < 0)
		return row;
	if (nops == 0 && ops == mem) {	/* undefined: the outermost frame */
		row.cfa = MT_UROW_END;
		return row;
	}
	if (!ops__cfa_plus(ops, nops, &off) || off != -8)
		return row;
	if (dwarf_frame_cfa(f, &ops, &nops) || nops != 1 || ops[0].atom != DW_OP_bregx)
		return row;
	reg = ops[0].number;
	off = (int64_t)ops[0].number2;
	if ((reg != X86_RSP && reg != X86_RBP) || off != (int32_t)off || !frame__bp_off(f, &row.bp_off))
		return row;
	row.cfa_off = (int32_t)off;
	row.cfa = reg == X86_RBP ? MT_UROW_BP : MT_UROW_SP;
	return row;
}

static bool row__same_rule(const struct mt_urow *a, const struct mt_urow *b)
{
	return a->cfa == b->cfa && a->cfa_off == b->cfa_off && a->bp_off == b->bp_off;
}

/* A row from pc on: it replaces one at the same pc (a gap's end where the next FDE starts), and is left out when
 * it says what the row before it says. */
static int rows__push(struct rows_build *b, uint64_t pc, struct mt_urow row)
{
	row.pc = (uint32_t)pc;
	if (b->n && b->rows[b->n - 1].pc == row.pc)
		b->n--;
	if (b->n && row__same_rule(&b->rows[b->n - 1], &row))
		return 0;
	if (mt_array__grow((void **)&b->rows, &b->cap, b->n, sizeof(*b->rows)))
		return -ENOMEM;
	b->rows[b->n++] = row;
	return 0;
}

/* The rows of one FDE, from start up to next (the next FDE's start), then a gap row where it ends. */
static int rows__fde(struct rows_build *b, uint64_t start, uint64_t next)
{
	struct mt_urow none = { 0 };
	Dwarf_Addr lo, hi, a = start;
	uint64_t off;
	Dwarf_Frame *f;
	bool signal;
	int err = 0;

	while (!err && a < next && !dwarf_cfi_addrframe(b->cfi, a, &f)) {
		struct mt_urow row = frame__row(f);

		if (dwarf_frame_info(f, &lo, &hi, &signal) < 0 || hi <= a)
			hi = a;
		free(f);
		if (hi == a || mt_elf__vaddr_offset(b->elf, a, true, &off) || off > UINT32_MAX)
			break;
		err = rows__push(b, off, signal ? none : row);
		a = hi;
	}
	if (!err && a > start && !mt_elf__vaddr_offset(b->elf, a - 1, true, &off) && off < UINT32_MAX)
		err = rows__push(b, off + 1, none);
	return err;
}

/* .eh_frame_hdr's table: FDE initial locations, sorted; the usual encodings only (version 1, a 4-byte
 * eh_frame_ptr, a udata4 count, datarel sdata4 pairs). */
static int eh_hdr__starts(Elf *elf, uint64_t **starts, size_t *n)
{
	size_t i, size;
	const uint8_t *raw = (const uint8_t *)elf_rawfile(elf, &size), *p;
	uint32_t count;
	GElf_Phdr ph;
	int32_t rel;

	if (!raw || mt_elf__segment(elf, PT_GNU_EH_FRAME, &ph) || ph.p_offset + 12 > size || ph.p_filesz < 12)
		return -ENODATA;
	p = raw + ph.p_offset;
	if (p[0] != 1 || (p[1] & 0x0f) != 0x0b || p[2] != 0x03 || p[3] != EH_HDR_TABLE_ENC)
		return -ENODATA;
	memcpy(&count, p + 8, 4);
	if (12 + (uint64_t)count * 8 > ph.p_filesz || ph.p_offset + 12 + (uint64_t)count * 8 > size)
		return -ENODATA;
	*starts = malloc((count + 1) * sizeof(**starts));
	if (!*starts)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		memcpy(&rel, p + 12 + i * 8, 4);
		(*starts)[i] = ph.p_vaddr + rel;
	}
	*n = count;
	return 0;
}

/* The size of .eh_frame, for the cost figures. */
static uint64_t eh_frame__size(Elf *elf)
{
	GElf_Shdr sh;

	return mt_elf__section(elf, ".eh_frame", &sh) ? sh.sh_size : 0;
}

static int urow__cmp(const void *a, const void *b)
{
	const struct mt_urow *x = a, *y = b;

	return (x->pc > y->pc) - (x->pc < y->pc);
}

static int rows__build(struct rows_build *b)
{
	uint64_t *starts = NULL;
	size_t i, n = 0;
	int err = eh_hdr__starts(b->elf, &starts, &n);

	for (i = 0; !err && i < n; i++)
		err = rows__fde(b, starts[i], i + 1 < n ? starts[i + 1] : UINT64_MAX);
	free(starts);
	if (!err && !b->n)
		err = -ENODATA;
	for (i = 1; !err && i < b->n; i++)
		if (b->rows[i].pc < b->rows[i - 1].pc)
			break;
	if (!err && i < b->n)	/* FDEs out of file order (segments out of order): rare, sorted once */
		qsort(b->rows, b->n, sizeof(*b->rows), urow__cmp);
	return err;
}

int mt_kunwind__rows(int fd, const char *name, struct mt_urow **rows, size_t *n, uint64_t *eh_bytes)
{
	struct rows_build b = { 0 };
	int err = mt_elf__begin(fd, name, &b.elf);

	if (err)
		return err;
	*eh_bytes = eh_frame__size(b.elf);
	b.cfi = dwarf_getcfi_elf(b.elf);
	err = b.cfi ? rows__build(&b) : -ENODATA;
	if (b.cfi)
		dwarf_cfi_end(b.cfi);
	elf_end(b.elf);
	if (err) {
		free(b.rows);
		return err;
	}
	*rows = b.rows;
	*n = b.n;
	return 0;
}

struct mt_kunwind *mt_kunwind__new(struct mt_bpf_session *s)
{
	struct mt_kunwind *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->bpf = s;
	mt_bpf_session__unwind_fds(s, &k->fd_modules, &k->fd_pages, &k->fd_rows);
	return k;
}

/* n values at consecutive keys from first, in one call when the kernel takes batches. */
static int rows__store(int fd, uint32_t first, const struct mt_urow *rows, uint32_t n)
{
	uint32_t *keys = malloc(n * sizeof(*keys)), i, count = n;
	int err = 0;

	if (!keys)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		keys[i] = first + i;
	if (bpf_map_update_batch(fd, keys, rows, &count, NULL))
		for (i = 0; i < n && !err; i++)
			err = bpf_map_update_elem(fd, &keys[i], &rows[i], BPF_ANY) ? -errno : 0;
	free(keys);
	return err;
}

/* A page's run: from the row that covers its first byte (or its first row) to its last. */
static int page__store(struct mt_kunwind *k, uint32_t module, uint32_t page, uint32_t first, uint32_t count)
{
	struct mt_upage_key key = { .module = module, .page = page };
	struct mt_upage v = { .first = k->next_row + first, .count = count };

	if (k->pages >= MT_UPAGES_MAX)
		return -ENOSPC;
	if (bpf_map_update_elem(k->fd_pages, &key, &v, BPF_ANY))
		return -errno;
	k->pages++;
	return 0;
}

/* Every page the rows touch; a page inside one row (a long function) points at that row alone. */
static int pages__store(struct mt_kunwind *k, uint32_t module, const struct mt_urow *rows, uint32_t n)
{
	uint32_t i = 0, j, page, p, first;
	int err = 0;

	while (!err && i < n) {
		page = rows[i].pc >> MT_UPAGE_SHIFT;
		first = rows[i].pc > page << MT_UPAGE_SHIFT && i ? i - 1 : i;
		for (j = i; j < n && rows[j].pc >> MT_UPAGE_SHIFT == page; j++)
			;
		err = page__store(k, module, page, first, j - first);
		for (p = page + 1; !err && j < n && p < rows[j].pc >> MT_UPAGE_SHIFT; p++)
			if (rows[j - 1].cfa != MT_UROW_NONE)
				err = page__store(k, module, p, j - 1, 1);
		i = j;
	}
	return err;
}

static int module__store(struct mt_kunwind *k, uint64_t dev, uint64_t ino, uint32_t state)
{
	struct { __u64 dev, ino; } key = { dev, ino };
	struct mt_umodule m = { .id = k->next_id, .state = state };

	return bpf_map_update_elem(k->fd_modules, &key, &m, BPF_ANY) ? -errno : 0;
}

static uint64_t now__ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Rows, then pages, then the module entry that makes BPF use them: a walk never sees half a table. */
static int kunwind__load(struct mt_kunwind *k, int fd, const char *path, uint64_t dev, uint64_t ino)
{
	struct mt_urow *rows = NULL;
	uint64_t eh = 0;
	size_t n = 0;
	int err = mt_kunwind__rows(fd, path, &rows, &n, &eh);

	k->st.eh_frame_bytes += eh;
	if (!err && n > MT_UROWS_MAX - k->next_row)
		err = -ENOSPC;
	if (!err)
		err = rows__store(k->fd_rows, k->next_row, rows, n);
	if (!err)
		err = pages__store(k, k->next_id, rows, n);
	if (!err)
		err = module__store(k, dev, ino, MT_UMOD_READY);
	if (!err) {
		k->next_row += n;
		k->st.rows += n;
	}
	free(rows);
	return err;
}

int mt_kunwind__add(struct mt_kunwind *k, int fd, const char *path, uint64_t dev, uint64_t ino)
{
	uint64_t t0 = now__ns();
	int err;

	if (!k)
		return 0;
	k->next_id++;
	err = kunwind__load(k, fd, path, dev, ino);
	if (err) {
		if (err != -ENODATA)
			pr_warn("%s: no in-kernel unwind table (%s): its frames are walked by frame pointer\n", path,
				strerror(-err));
		k->st.no_cfi++;
		err = module__store(k, dev, ino, MT_UMOD_NO_CFI);
	}
	k->st.modules++;
	k->st.pages = k->pages;
	k->st.build_ns += now__ns() - t0;
	return err;
}

void mt_kunwind__stats(const struct mt_kunwind *k, struct mt_kunwind_stats *st)
{
	*st = k ? k->st : (struct mt_kunwind_stats){ 0 };
}

void mt_kunwind__free(struct mt_kunwind *k)
{
	free(k);
}
