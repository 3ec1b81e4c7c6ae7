/* SPDX-License-Identifier: GPL-2.0-only */
/* module.h — the ELF files a recording mapped: found once, opened once, asked for segments, symbols and lines. */
#ifndef MEMTRACK_MODULE_H
#define MEMTRACK_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/memtrack.h"

#define MT_MODULES_SUBDIR "modules"	/* DIR/modules/<build-id hex>[.debug], DIR/modules/dev<dev>-ino<ino> */

struct mt_symbol {
	uint64_t addr;		/* ELF virtual address (st_value) */
	uint64_t size;		/* 0: unknown, the symbol reaches the next one */
	const char *name;	/* points into the ELF image, valid while the module is */
};

struct mt_segment {
	uint64_t vaddr;
	uint64_t memsz;
	uint64_t offset;
	uint64_t filesz;
	uint32_t flags;		/* PF_R | PF_W | PF_X */
};

/* Where a module's .eh_frame_hdr binary search table is, in ELF virtual addresses. */
struct mt_eh_table {
	uint64_t hdr_vaddr;	/* .eh_frame_hdr: libunwind's segbase */
	uint64_t table_vaddr;	/* its sorted (initial location, FDE) pairs, both s32 relative to hdr_vaddr */
	uint64_t fde_count;
};

struct mt_dwarf_lines;
struct mt_module_names;

/*
 * One function a return address stands for, with where in it: the functions the compiler inlined at the call (from
 * DWARF's inline scopes), innermost first, then the one the address is in.
 */
struct mt_src_frame {
	const char *func;	/* demangled unless the modules keep raw names; NULL when nothing names it */
	uint64_t offset;	/* the return address from func's symbol (perf's convention); 0 in an inlined frame */
	const char *file;	/* the source file of the call (innermost: of vaddr's instruction) as DWARF names it */
	int line;
	bool inlined;		/* func was inlined into the next frame; the last frame never is */
};

struct mt_module {
	uint64_t dev;
	uint64_t ino;
	char *path;			/* on the recording machine; "" when no MT_REC_FILE named it */
	const char *name;		/* basename of path, or devino_name */
	char devino_name[48];		/* "dev<dev>-ino<ino>", also the DIR/modules name without a build-id */
	const char *dir;		/* the artifact DIR of the cache */
	const char *cache;		/* the module cache's directory (common/modcache.h), "" without one */
	uint8_t build_id[MT_BUILD_ID_MAX];
	uint8_t build_id_len;
	bool described;			/* an MT_REC_FILE was seen */
	bool hashed;			/* sha256 is the recorded content's: a candidate of other content is ignored */
	bool withheld;			/* the recording user could not read it: nothing was copied (MT_FILE_WITHHELD) */
	uint8_t sha256[32];

	/* set by mt_module__open() */
	bool tried;
	int err;			/* 0 when open; -ENOENT when no usable file was found; -ENOEXEC not ELF */
	char *file;			/* the file read: a DIR/modules copy or the original path */
	int fd;
	void *elf;			/* Elf * */
	const uint8_t *image;		/* the whole file, mapped */
	size_t image_size;
	struct mt_segment *segs;	/* PT_LOAD, in file order */
	size_t nsegs;
	uint64_t min_vaddr;		/* lowest PT_LOAD address, page aligned down */
	uint64_t max_vaddr;		/* end of the highest PT_LOAD */
	struct mt_symbol *syms;		/* functions, sorted by addr, one per address */
	size_t nsyms;
	bool has_eh;
	struct mt_eh_table eh;

	char *debug_file;		/* the separate debug file, when one was found */
	int debug_fd;
	void *debug_elf;
	struct mt_dwarf_lines *lines;	/* NULL until the first line lookup */
	bool lines_tried;

	bool raw_names;			/* mt_modules__set_raw_names(): names as the ELF file spells them */
	bool full_names;		/* mt_modules__set_full_names(): template arguments kept */
	struct mt_module_names *names;	/* demangled names and inline chains, made on first use */
};

struct mt_modules;

/* A cache over the artifact DIR (for DIR/modules); NULL + errno. */
struct mt_modules *mt_modules__new(const char *dir);
void mt_modules__free(struct mt_modules *ms);
/* Records what an MT_REC_FILE says about dev/ino (the first record wins). 0 or -ENOMEM. */
int mt_modules__describe(struct mt_modules *ms, const struct mt_file *f);
/* The same for an MT_REC_FILE record as read, of either size (MT_FILE_SIZE_V1 has no hash). */
int mt_modules__describe_rec(struct mt_modules *ms, const struct mt_rec_hdr *rec);
/* The module of dev/ino, created (not opened) when new; NULL on ENOMEM. */
struct mt_module *mt_modules__get(struct mt_modules *ms, uint64_t dev, uint64_t ino);
/*
 * Names as the ELF files spell them (true: `--no-demangle`) or demangled (the default), for every module of ms,
 * present and future. The names made before are dropped: pointers returned earlier by this file dangle.
 */
void mt_modules__set_raw_names(struct mt_modules *ms, bool raw);
/* Demangled names whole (true: `--full-names`), or with their template arguments elided (the default: "<…>",
 * mt_text__elide_templates), for every module of ms, present and future. */
void mt_modules__set_full_names(struct mt_modules *ms, bool full);

/*
 * Finds and opens the module's file, once: DIR/modules/<build-id> (or DIR/modules/dev<dev>-ino<ino> without a
 * build-id), else the module cache's entry, else the original path, each when its build-id matches (without one:
 * DIR's copy, or the original when its dev and inode match) and, when the recording kept the content's hash, its
 * content is the recorded one: a mismatch is said (a warning) and the candidate ignored. DIR's and the cache's
 * entries are not taken through a symlink. Returns m->err: 0, -ENOENT (nothing usable: the reason
 * was logged once at debug level), -ENOEXEC, -ENOMEM.
 */
int mt_module__open(struct mt_module *m);
/*
 * Only finds the files, as mt_module__open does and saying nothing: m->file, and m->debug_file (NULL when there is
 * none) from DIR/modules, the cache, then /usr/lib/debug. 0, -ENOENT, -ENOMEM, or why the cache's entry, there,
 * could not be read (-EACCES, -EIO) when nothing else was found.
 */
int mt_module__find(struct mt_module *m);

/* ELF virtual address of a file offset, through the PT_LOAD segment that maps it. 0 or -ENOENT. */
int mt_module__offset_to_vaddr(const struct mt_module *m, uint64_t offset, uint64_t *vaddr);
/*
 * Reads len bytes at vaddr as the file loads them: a PT_LOAD segment's file contents, zeros past p_filesz. For a
 * writable segment that is its initial contents, not what the process made of it. 0 or -EFAULT.
 */
int mt_module__read(const struct mt_module *m, uint64_t vaddr, void *buf, size_t len);
/* The function symbol holding vaddr, or NULL. */
const struct mt_symbol *mt_module__symbol(const struct mt_module *m, uint64_t vaddr);
/* Source file and line of the instruction at vaddr, from DWARF (the module's or its debug file's). 0 or -ENOENT. */
int mt_module__srcline(struct mt_module *m, uint64_t vaddr, const char **file, int *line);

/* A symbol's name as reports print it: demangled (unless raw names), without its "@VERSION"; NULL on ENOMEM. */
const char *mt_module__symbol_name(struct mt_module *m, const struct mt_symbol *sym);
/*
 * The functions the return address vaddr stands for (looked up at vaddr - 1, inside the call), innermost first:
 * *frames (n of them, at least 1) stays valid while the module is. Without DWARF one frame, from the symbol table.
 * 0, -ENOENT (the module is not open), -ENOMEM.
 */
int mt_module__frames(struct mt_module *m, uint64_t vaddr, const struct mt_src_frame **frames, size_t *n);
/*
 * A C++ (Itanium ABI) or Rust (legacy or v0) symbol demangled without its parameter list, malloc'd; NULL when name
 * is not one (or on ENOMEM).
 */
char *mt_symbol__demangle(const char *name);

#endif /* MEMTRACK_MODULE_H */
