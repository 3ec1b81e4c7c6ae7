/* SPDX-License-Identifier: GPL-2.0-only */
/* probe_site.h — where in an allocator function its probe goes, and what a probe site is. */
#ifndef MEMTRACK_TRACER_PROBE_SITE_H
#define MEMTRACK_TRACER_PROBE_SITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One probed entry point of a file. */
struct mt_probe_site {
	uint64_t entry;		/* file offset of the function */
	uint64_t offset;	/* file offset of the probe: the entry, or the first emulated instruction after it */
	uint64_t cookie;	/* MT_COOKIE(args, func, allocator) and the MT_COOKIE_* fields above it */
	bool ret;		/* needs the return probe too */
};

/*
 * Where in a function whose first bytes are code (len of them) its probe goes: the offset of the first instruction
 * the kernel emulates when only harmless ones come before it, else 0. args: enum mt_args; *regs: 0, or where the
 * arguments are at the site (MT_COOKIE_REGS).
 */
uint64_t mt_probe_site__place(const uint8_t *code, size_t len, uint8_t args, uint16_t *regs);

/* Whether a function whose first bytes are code (len of them) only moves registers and jumps to another: a forwarder
 * (libstdc++'s operator delete and new[], mimalloc's mi_free_size), whose every call is a call of its target. *to:
 * where it jumps, from the function's start; 0 when through memory (a PLT entry's GOT slot). */
bool mt_probe_site__forwards(const uint8_t *code, size_t len, int64_t *to);

/* The length of an x86 ModRM operand at c (the ModRM byte, SIB, displacement), 0 when len does not hold it. */
size_t mt_probe_site__modrm_len(const uint8_t *c, size_t len);

#endif /* MEMTRACK_TRACER_PROBE_SITE_H */
