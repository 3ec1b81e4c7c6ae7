/* SPDX-License-Identifier: GPL-2.0-only */
/* addrspace.h — the executable file mappings of every recorded process, followed through fork, exec and munmap. */
#ifndef MEMTRACK_ADDRSPACE_H
#define MEMTRACK_ADDRSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/memtrack.h"
#include "common/u64map.h"
#include "unwind/module.h"

struct mt_map {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint32_t prot;
	struct mt_module *mod;
	bool bias_tried;	/* the module was opened for the bias (lazily: reports without stacks open nothing) */
	bool has_bias;		/* the module's file was found and maps pgoff */
	uint64_t bias;		/* address - bias = the module's ELF virtual address */
};

/* One process: its mappings sorted by start, never overlapping. */
struct mt_aspace {
	struct mt_map *maps;
	size_t count;
	size_t cap;
	uint64_t gen;		/* changes whenever the mappings do: a key for caches of derived state */
};

struct mt_aspaces {
	struct mt_modules *mods;	/* not owned */
	struct mt_aspace **spaces;
	size_t count;
	size_t cap;
	struct mt_u64map by_pid;	/* pid → index in spaces */
	uint64_t next_gen;
};

void mt_aspaces__init(struct mt_aspaces *as, struct mt_modules *mods);
void mt_aspaces__release(struct mt_aspaces *as);
/*
 * Follows one record in time order: MT_REC_FILE (describes a module), MT_REC_MAPPING (adds, replacing what it
 * overlaps), MT_REC_FORK (the child gets a copy of the parent's), MT_REC_EXEC (clears), MT_REC_SYSCALL munmap
 * (removes the range, splitting mappings it cuts). Other records are ignored. 0 or -ENOMEM.
 */
int mt_aspaces__apply(struct mt_aspaces *as, const struct mt_rec_hdr *rec);
/* The process's address space now, or NULL when nothing was mapped in it. */
struct mt_aspace *mt_aspaces__get(const struct mt_aspaces *as, uint32_t pid);

/* The mapping holding addr, or NULL; its module is opened and its bias known (has_bias) when the file is found. */
const struct mt_map *mt_aspace__find(struct mt_aspace *s, uint64_t addr);
/*
 * The mapping of the module whose loaded image (all of its PT_LOAD segments, mapped executable or not) holds addr:
 * for reads of .eh_frame_hdr and friends, which sit in segments the records do not list. NULL when none does.
 */
const struct mt_map *mt_aspace__find_image(struct mt_aspace *s, uint64_t addr);

#endif /* MEMTRACK_ADDRSPACE_H */
