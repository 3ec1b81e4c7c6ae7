// SPDX-License-Identifier: GPL-2.0-only
/* module.c — finds each recorded ELF file (DIR/modules copy, the module cache's, else a matching original), maps it,
 * reads it once. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/array.h"
#include "common/elf.h"
#include "common/elf_syms.h"
#include "common/log.h"
#include "common/modcache.h"
#include "common/openreg.h"
#include "common/sha256.h"
#include "common/u64map.h"
#include "unwind/module.h"
#include "unwind/module_src.h"

#define PAGE_MASK_4K 0xfffull

/* DWARF eh_frame pointer encodings (LSB 5.0, "DWARF Extensions"): the ones .eh_frame_hdr uses. */
#define DW_EH_PE_absptr 0x00
#define DW_EH_PE_udata2 0x02
#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_udata8 0x04
#define DW_EH_PE_sdata2 0x0a
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_sdata8 0x0c
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30
#define DW_EH_PE_omit 0xff

struct mt_modules {
	char *dir;
	char cache[PATH_MAX];	/* the module cache (common/modcache.h); "" without one */
	bool raw_names;
	bool full_names;
	struct mt_module **mods;
	size_t count;
	size_t cap;
	struct mt_u64map index;		/* devino_key → index in mods (collisions fall back to a scan) */
};

/* ---- the cache ---- */

static uint64_t devino_key(uint64_t dev, uint64_t ino)
{
	return ino * 0x9e3779b97f4a7c15ull ^ dev;
}

struct mt_modules *mt_modules__new(const char *dir)
{
	struct mt_modules *ms = calloc(1, sizeof(*ms));

	if (!ms)
		return NULL;
	if (mt_modcache__dir(NULL, ms->cache, sizeof(ms->cache)))
		ms->cache[0] = '\0';
	ms->dir = strdup(dir);
	if (!ms->dir) {
		free(ms);
		errno = ENOMEM;
		return NULL;
	}
	return ms;
}

static void module_close(struct mt_module *m)
{
	mt_module__src_free(m);
	if (m->debug_elf)
		elf_end(m->debug_elf);
	if (m->debug_fd >= 0)
		close(m->debug_fd);
	if (m->elf)
		elf_end(m->elf);
	if (m->fd >= 0)
		close(m->fd);
	free(m->debug_file);
	free(m->file);
	free(m->segs);
	free(m->syms);
}

void mt_modules__free(struct mt_modules *ms)
{
	size_t i;

	if (!ms)
		return;
	for (i = 0; i < ms->count; i++) {
		module_close(ms->mods[i]);
		free(ms->mods[i]->path);
		free(ms->mods[i]);
	}
	free(ms->mods);
	mt_u64map__release(&ms->index);
	free(ms->dir);
	free(ms);
}

static struct mt_module *modules_find(const struct mt_modules *ms, uint64_t dev, uint64_t ino)
{
	uint64_t *idx = mt_u64map__find(&ms->index, devino_key(dev, ino));
	size_t i;

	if (idx && ms->mods[*idx]->dev == dev && ms->mods[*idx]->ino == ino)
		return ms->mods[*idx];
	for (i = 0; idx && i < ms->count; i++)	/* a key collision: rare enough for a scan */
		if (ms->mods[i]->dev == dev && ms->mods[i]->ino == ino)
			return ms->mods[i];
	return NULL;
}

static void module_set_name(struct mt_module *m)
{
	const char *slash = strrchr(m->path, '/');

	m->name = slash ? slash + 1 : m->path[0] ? m->path : m->devino_name;
}

static struct mt_module *modules_add(struct mt_modules *ms, uint64_t dev, uint64_t ino)
{
	struct mt_module *m;

	if (mt_array__grow((void **)&ms->mods, &ms->cap, ms->count, sizeof(*ms->mods)))
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->dev = dev;
	m->ino = ino;
	m->dir = ms->dir;
	m->cache = ms->cache;
	m->raw_names = ms->raw_names;
	m->full_names = ms->full_names;
	m->fd = m->debug_fd = -1;
	snprintf(m->devino_name, sizeof(m->devino_name), "dev%llu-ino%llu", (unsigned long long)dev,
		 (unsigned long long)ino);
	m->name = m->devino_name;
	m->path = strdup("");
	if (!m->path) {
		free(m);
		return NULL;
	}
	if (mt_u64map__put(&ms->index, devino_key(dev, ino), ms->count, NULL) < 0) {
		free(m->path);
		free(m);
		return NULL;
	}
	ms->mods[ms->count++] = m;
	return m;
}

struct mt_module *mt_modules__get(struct mt_modules *ms, uint64_t dev, uint64_t ino)
{
	struct mt_module *m = modules_find(ms, dev, ino);

	return m ? m : modules_add(ms, dev, ino);
}

int mt_modules__describe(struct mt_modules *ms, const struct mt_file *f)
{
	struct mt_module *m = mt_modules__get(ms, f->dev, f->ino);
	char *path;

	if (!m)
		return -ENOMEM;
	if (m->described)
		return 0;
	path = strndup(f->path, sizeof(f->path));
	if (!path)
		return -ENOMEM;
	free(m->path);
	m->path = path;
	module_set_name(m);
	m->build_id_len = f->build_id_len > MT_BUILD_ID_MAX ? MT_BUILD_ID_MAX : f->build_id_len;
	memcpy(m->build_id, f->build_id, m->build_id_len);
	m->hashed = f->flags & MT_FILE_HASHED;
	m->withheld = f->flags & MT_FILE_WITHHELD;
	memcpy(m->sha256, f->sha256, sizeof(m->sha256));
	m->described = true;
	return 0;
}

int mt_modules__describe_rec(struct mt_modules *ms, const struct mt_rec_hdr *rec)
{
	struct mt_file f = { 0 };

	if (rec->type != MT_REC_FILE || rec->size < MT_FILE_SIZE_V1)
		return 0;
	memcpy(&f, rec, rec->size < sizeof(f) ? rec->size : sizeof(f));
	if (rec->size < sizeof(f))
		f.flags &= ~MT_FILE_HASHED;	/* the record has no hash to go by */
	return mt_modules__describe(ms, &f);
}

/* Every module names as ms says from now on: the names made so far go. */
static void names_reset(struct mt_modules *ms)
{
	size_t i;

	for (i = 0; i < ms->count; i++) {
		ms->mods[i]->raw_names = ms->raw_names;
		ms->mods[i]->full_names = ms->full_names;
		mt_module__forget_names(ms->mods[i]);
	}
}

void mt_modules__set_full_names(struct mt_modules *ms, bool full)
{
	ms->full_names = full;
	names_reset(ms);
}

void mt_modules__set_raw_names(struct mt_modules *ms, bool raw)
{
	ms->raw_names = raw;
	names_reset(ms);
}

/* ---- finding the file ---- */

static bool build_id_matches(const struct mt_module *m, Elf *elf)
{
	uint8_t id[MT_BUILD_ID_MAX];
	size_t len = mt_elf__build_id(elf, id, sizeof(id));

	return len == m->build_id_len && !memcmp(id, m->build_id, len);
}

/* The kernel's s_dev packs major:minor as 12:20 bits, stat's st_dev as glibc's makedev(): accept either. */
static bool same_file(const struct mt_module *m, const char *path)
{
	struct stat sb;
	uint64_t kdev;

	if (stat(path, &sb))
		return false;
	kdev = ((uint64_t)major(sb.st_dev) << MT_KDEV_MINOR_BITS) | minor(sb.st_dev);
	return sb.st_ino == m->ino && (sb.st_dev == m->dev || kdev == m->dev);
}

/* A candidate's content against the recorded hash: a file forged with the module's build-id is not the module. */
static int content_matches(const struct mt_module *m, int fd, const char *path)
{
	uint8_t sum[MT_SHA256_LEN];
	int err;

	if (!m->hashed)
		return 0;
	err = mt_sha256__fd(fd, sum);
	if (err)
		return err;
	if (!memcmp(sum, m->sha256, sizeof(sum)))
		return 0;
	pr_warn("%s: not the module %s recorded (its content's hash differs, though its build-id is the same): "
		"ignored\n", path, m->path[0] ? m->path : m->name);
	return -ESTALE;
}

/* A regular file opened for reading, without waiting on a FIFO (one planted is said and refused); entry: DIR's or
 * the cache's, not through a symlink. The descriptor, or -errno. */
static int candidate_open(const char *path, bool entry)
{
	char why[96];
	struct stat st;
	int fd = mt_openreg__at(AT_FDCWD, path, entry ? O_NOFOLLOW : 0, &st);

	if (fd == -EINVAL || fd == -EISDIR)
		pr_warn("%s: %s: not read\n", path, mt_openreg__why(fd, &st, why, sizeof(why)));
	return fd;
}

/* Tries one candidate; 0 when it was taken (m->fd, m->elf, m->file set). */
static int module_try(struct mt_module *m, const char *path, bool check_id, bool entry)
{
	Elf *elf = NULL;
	int fd = candidate_open(path, entry), err;

	if (fd < 0)
		return fd;
	err = mt_elf__begin(fd, path, &elf);
	if (err) {
		close(fd);
		return err;
	}
	if (check_id && !build_id_matches(m, elf)) {
		pr_debug("%s: build-id differs from the recorded one: not used for %s\n", path, m->path);
		elf_end(elf);
		close(fd);
		return -ESTALE;
	}
	err = content_matches(m, fd, path);
	if (err) {
		elf_end(elf);
		close(fd);
		return err;
	}
	m->file = strdup(path);
	if (!m->file) {
		elf_end(elf);
		close(fd);
		return -ENOMEM;
	}
	m->fd = fd;
	m->elf = elf;
	return 0;
}

/* The module cache's entry what of m, when there is a cache. */
static bool cache_entry(const struct mt_module *m, const char *hex, const char *what, char *path, size_t len)
{
	return m->cache[0] && !mt_modcache__entry(m->cache, hex, what, path, len);
}

/* Why nothing was found: -ENOENT, unless the cache's entry is there but cannot be read (pack says which). */
static int not_found(int cache_err)
{
	if (cache_err == -EACCES || cache_err == -EPERM || cache_err == -EIO || cache_err == -ENOMEM)
		return cache_err;
	return -ENOENT;
}

static int module_find_file(struct mt_module *m, const char *dir)
{
	char hex[2 * MT_BUILD_ID_MAX + 1], path[4096];
	int cache_err = 0;

	if (m->build_id_len) {
		mt_elf__build_id_hex(m->build_id, m->build_id_len, hex);
		snprintf(path, sizeof(path), "%s/" MT_MODULES_SUBDIR "/%s", dir, hex);
		if (!module_try(m, path, true, true))
			return 0;
		if (cache_entry(m, hex, MT_MODCACHE_FILE, path, sizeof(path)) &&
		    !(cache_err = module_try(m, path, true, true)))
			return 0;
		if (m->path[0] && !module_try(m, m->path, true, false))
			return 0;
		return not_found(cache_err);
	}
	snprintf(path, sizeof(path), "%s/" MT_MODULES_SUBDIR "/%s", dir, m->devino_name);
	if (!module_try(m, path, false, true))
		return 0;
	if (m->path[0] && same_file(m, m->path) && !module_try(m, m->path, false, false))
		return 0;
	return -ENOENT;
}

/* One debug file candidate, taken when its build-id is m's (entry: DIR's or the cache's, as in module_try). */
static bool debug_try(struct mt_module *m, const char *path, bool entry)
{
	Elf *elf;
	int fd = candidate_open(path, entry);

	if (fd < 0)
		return false;
	if (mt_elf__begin(fd, path, &elf)) {
		close(fd);
		return false;
	}
	if (!build_id_matches(m, elf) || !(m->debug_file = strdup(path))) {
		elf_end(elf);
		close(fd);
		return false;
	}
	m->debug_fd = fd;
	m->debug_elf = elf;
	return true;
}

/* DIR/modules/<id>.debug, the module cache's, else this machine's /usr/lib/debug/.build-id/xx/rest.debug. */
static void module_find_debug(struct mt_module *m, const char *dir)
{
	char hex[2 * MT_BUILD_ID_MAX + 1], path[4096];

	if (!m->build_id_len)
		return;
	mt_elf__build_id_hex(m->build_id, m->build_id_len, hex);
	snprintf(path, sizeof(path), "%s/" MT_MODULES_SUBDIR "/%s.debug", dir, hex);
	if (debug_try(m, path, true))
		return;
	if (cache_entry(m, hex, MT_MODCACHE_DEBUG, path, sizeof(path)) && debug_try(m, path, true))
		return;
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	debug_try(m, path, false);
}

int mt_module__find(struct mt_module *m)
{
	int err;

	if (m->file)
		return 0;
	err = module_find_file(m, m->dir);
	if (!err)
		module_find_debug(m, m->dir);
	return err;
}

/* ---- reading the ELF ---- */

static int module_load_segments(struct mt_module *m)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(m->elf, &n))
		return -ENOEXEC;
	m->segs = calloc(n ? n : 1, sizeof(*m->segs));
	if (!m->segs)
		return -ENOMEM;
	m->min_vaddr = UINT64_MAX;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(m->elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		m->segs[m->nsegs++] = (struct mt_segment){ ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz,
							   ph.p_flags };
		if ((ph.p_vaddr & ~PAGE_MASK_4K) < m->min_vaddr)
			m->min_vaddr = ph.p_vaddr & ~PAGE_MASK_4K;
		if (ph.p_vaddr + ph.p_memsz > m->max_vaddr)
			m->max_vaddr = ph.p_vaddr + ph.p_memsz;
	}
	if (!m->nsegs)
		m->min_vaddr = 0;
	return 0;
}

/* Reads an encoded pointer at *p (vaddr of *p is pv); hdr is .eh_frame_hdr's vaddr for datarel. */
static int eh_read(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t pv, uint64_t hdr, uint64_t *val)
{
	size_t sz;
	int64_t v;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: case DW_EH_PE_udata8: case DW_EH_PE_sdata8: sz = 8; break;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: sz = 4; break;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: sz = 2; break;
	default: return -EINVAL;
	}
	if (*p + sz > end)
		return -EINVAL;
	if (sz == 8) {
		memcpy(&v, *p, 8);
	} else if (sz == 4) {
		int32_t s; uint32_t u;

		memcpy(&s, *p, 4);
		memcpy(&u, *p, 4);
		v = (enc & 0x0f) == DW_EH_PE_sdata4 ? s : (int64_t)u;
	} else {
		int16_t s; uint16_t u;

		memcpy(&s, *p, 2);
		memcpy(&u, *p, 2);
		v = (enc & 0x0f) == DW_EH_PE_sdata2 ? s : (int64_t)u;
	}
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		v += pv;
	else if ((enc & 0x70) == DW_EH_PE_datarel)
		v += hdr;
	else if (enc & 0x70)
		return -EINVAL;
	*p += sz;
	*val = v;
	return 0;
}

/*
 * PT_GNU_EH_FRAME is .eh_frame_hdr: version 1, three encodings, eh_frame_ptr, fde_count, then the table. libunwind
 * can binary-search the table only in its usual form, (datarel | sdata4) pairs; other forms count as no table.
 */
static void module_load_eh(struct mt_module *m)
{
	const uint8_t *p, *end;
	uint64_t skip, count;
	GElf_Phdr ph;

	if (mt_elf__segment(m->elf, PT_GNU_EH_FRAME, &ph) || ph.p_offset + ph.p_filesz > m->image_size ||
	    ph.p_filesz < 4)
		return;
	p = m->image + ph.p_offset;
	end = p + ph.p_filesz;
	if (p[0] != 1 || p[2] == DW_EH_PE_omit || p[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return;
	m->eh.hdr_vaddr = ph.p_vaddr;
	p += 4;
	if (eh_read(&p, end, m->image[ph.p_offset + 1], ph.p_vaddr + (p - m->image - ph.p_offset), ph.p_vaddr, &skip) ||
	    eh_read(&p, end, m->image[ph.p_offset + 2], ph.p_vaddr + (p - m->image - ph.p_offset), ph.p_vaddr, &count))
		return;
	if (count > (uint64_t)(end - p) / 8)
		return;
	m->eh.table_vaddr = ph.p_vaddr + (p - m->image - ph.p_offset);
	m->eh.fde_count = count;
	m->has_eh = count > 0;
}

static int sym_rank(const GElf_Sym *s)
{
	int bind = GELF_ST_BIND(s->st_info);

	return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

struct sym_tmp {
	struct mt_symbol sym;
	int rank;		/* global, weak, local: an alias is named by the best */
};

static int sym_cmp(const void *a, const void *b)
{
	const struct sym_tmp *x = a, *y = b;

	if (x->sym.addr != y->sym.addr)
		return x->sym.addr < y->sym.addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	if ((x->sym.name[0] == '_') != (y->sym.name[0] == '_'))
		return x->sym.name[0] == '_' ? 1 : -1;
	return strcmp(x->sym.name, y->sym.name);
}

struct sym_collect {
	struct sym_tmp *tmp;
	size_t n;
	size_t cap;
};

static int sym_collect(const GElf_Sym *sym, const char *name, void *ctx)
{
	struct sym_collect *c = ctx;

	if (mt_array__grow((void **)&c->tmp, &c->cap, c->n, sizeof(*c->tmp)))
		return -ENOMEM;
	c->tmp[c->n].sym = (struct mt_symbol){ sym->st_value, sym->st_size, name };
	c->tmp[c->n++].rank = sym_rank(sym);
	return 0;
}

/* .symtab of the file, else of its debug file, else .dynsym; sorted, one symbol per address. */
static int module_load_symbols(struct mt_module *m)
{
	struct sym_collect c = { 0 };
	struct sym_tmp *tmp;
	size_t n, i, out = 0;
	int r;

	r = mt_elf_syms__each(m->elf, SHT_SYMTAB, sym_collect, &c);
	if (!r && m->debug_elf)
		r = mt_elf_syms__each(m->debug_elf, SHT_SYMTAB, sym_collect, &c);
	if (!r)
		r = mt_elf_syms__each(m->elf, SHT_DYNSYM, sym_collect, &c);
	tmp = c.tmp;
	n = c.n;
	if (r < 0) {
		free(tmp);
		return r;
	}
	mt_array__sort(tmp, n, sizeof(*tmp), sym_cmp);
	m->syms = malloc((n ? n : 1) * sizeof(*m->syms));
	if (!m->syms) {
		free(tmp);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (out && m->syms[out - 1].addr == tmp[i].sym.addr) {
			if (!m->syms[out - 1].size)
				m->syms[out - 1].size = tmp[i].sym.size;
			continue;
		}
		m->syms[out++] = tmp[i].sym;
	}
	m->nsyms = out;
	free(tmp);
	return 0;
}

int mt_module__open(struct mt_module *m)
{
	size_t size;
	int err;

	if (m->tried)
		return m->err;
	m->tried = true;
	err = mt_module__find(m);
	if (err && m->withheld) {
		pr_warn("%s: withheld at recording (the recording user may not read it, so no copy was kept) and not "
			"readable here: not symbolized\n", m->path[0] ? m->path : m->name);
		return m->err = err == -ENOMEM ? err : -ENOENT;
	}
	if (err) {
		pr_warn("%s: no copy in %s/" MT_MODULES_SUBDIR ", none in the module cache and no original with its "
			"build-id: not symbolized\n", m->path[0] ? m->path : m->name, m->dir);
		return m->err = err == -ENOMEM ? err : -ENOENT;
	}
	if (m->withheld)
		pr_warn("%s: withheld at recording (the recording user may not read it): symbolized from %s\n",
			m->path[0] ? m->path : m->name, m->file);
	m->image = (const uint8_t *)elf_rawfile(m->elf, &size);
	m->image_size = size;
	if (!m->image)
		return m->err = -ENOEXEC;
	err = module_load_segments(m);
	if (!err)
		err = module_load_symbols(m);
	if (err)
		return m->err = err;
	module_load_eh(m);
	return m->err = 0;
}

/* ---- lookups ---- */

/* A mapping's pgoff is page aligned while p_offset need not be: the segment's first page counts as its own. */
int mt_module__offset_to_vaddr(const struct mt_module *m, uint64_t offset, uint64_t *vaddr)
{
	const struct mt_segment *s;
	size_t i;

	for (i = 0; i < m->nsegs; i++) {
		s = &m->segs[i];
		if (offset >= (s->offset & ~PAGE_MASK_4K) && offset < s->offset + (s->filesz ? s->filesz : 1)) {
			*vaddr = s->vaddr - s->offset + offset;
			return 0;
		}
	}
	return -ENOENT;
}

int mt_module__read(const struct mt_module *m, uint64_t vaddr, void *buf, size_t len)
{
	const struct mt_segment *s;
	uint64_t off, n;
	size_t i;

	for (i = 0; i < m->nsegs; i++) {
		s = &m->segs[i];
		if (vaddr < s->vaddr || vaddr - s->vaddr >= s->memsz || len > s->memsz - (vaddr - s->vaddr))
			continue;
		off = vaddr - s->vaddr;
		n = off >= s->filesz ? 0 : s->filesz - off < len ? s->filesz - off : len;
		if (s->offset + off + n > m->image_size)
			return -EFAULT;
		memcpy(buf, m->image + s->offset + off, n);
		memset((char *)buf + n, 0, len - n);	/* .bss */
		return 0;
	}
	return -EFAULT;
}

const struct mt_symbol *mt_module__symbol(const struct mt_module *m, uint64_t vaddr)
{
	size_t lo = 0, hi = m->nsyms, mid;
	const struct mt_symbol *s;

	while (lo < hi) {	/* the last symbol at or below vaddr */
		mid = lo + (hi - lo) / 2;
		if (m->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &m->syms[lo - 1];
	if (s->size && vaddr - s->addr >= s->size)
		return NULL;
	return s;
}
