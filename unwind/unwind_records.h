/* SPDX-License-Identifier: GPL-2.0-only */
/* unwind_records.h — the records of DIR/unwind.mtz: `memtrack unwind`'s DWARF chains (userspace-only types, 64+). */
#ifndef MEMTRACK_UNWIND_RECORDS_H
#define MEMTRACK_UNWIND_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/memtrack.h"

#define MT_UNWIND_FILE "unwind.mtz"	/* next to events.mtz; same container format (docs/FORMAT.md) */
#define MT_UNWIND_FRAMES_MAX 1024	/* frames kept per chain; a record must stay below 64 KiB */

/* Types above 63 are never written by BPF or the tracer: they belong to offline tools. */
enum mt_unwind_rec_type {
	MT_REC_UNWIND = 64,		/* struct mt_unwind_rec + frames + no-FP bits + detail: a DWARF chain */
	MT_REC_UNWIND_END = 65,		/* struct mt_unwind_end: written last; a file without it is incomplete */
};

/* Why DWARF unwinding of a stack stopped. */
enum mt_unwind_stop {
	MT_STOP_END = 0,	/* reached the outermost frame (the return address is undefined): normal */
	MT_STOP_BUDGET,		/* needed stack bytes above the captured ones, and the capture hit its byte budget */
	MT_STOP_WINDOW,		/* read memory that is neither in the captured window nor in a module's file image */
	MT_STOP_NO_INFO,	/* the module (detail) has no .eh_frame_hdr entry covering the address */
	MT_STOP_NO_FILE,	/* the module's file (detail) is not in DIR/modules; its original is gone or differs */
	MT_STOP_NO_MODULE,	/* the address is in no recorded executable mapping */
	MT_STOP_ERROR,		/* libunwind failed: error = its UNW_E* code */
	MT_STOP_BAD_FRAME,	/* the next frame's stack pointer did not move up: a loop */
	MT_STOP_MAX_FRAMES,	/* MT_UNWIND_FRAMES_MAX frames */
	MT_STOP__COUNT,
};

/*
 * Followed by nframes u64 return addresses (innermost first, starting at the allocator's caller, like the FP chain),
 * then (nframes + 7) / 8 bytes of bits, bit i of byte i / 8 set when frame i did not keep a frame pointer
 * (its rbp was not its CFA - 16), then a NUL-terminated detail string (the module path for NO_INFO / NO_FILE,
 * else empty). hdr copies the stack definition's ts_ns, pid and tid.
 */
struct mt_unwind_rec {
	struct mt_rec_hdr hdr;
	__u64 hash;		/* the stack (mt_stack.hash) */
	__u64 stop_addr;	/* the address the last step was about: the ip without unwind info, the failed read */
	__s32 error;		/* MT_STOP_ERROR: libunwind's error, positive (UNW_EUNSPEC = 1, ...); else 0 */
	__u16 nframes;
	__u8 reason;		/* enum mt_unwind_stop */
	__u8 nofp_known;	/* 1: the no-frame-pointer bits were computed */
};

struct mt_unwind_end {
	struct mt_rec_hdr hdr;
	__u64 stacks;			/* stack definitions unwound (first definitions only) */
	__u64 frames;			/* frames found in all */
	__u64 cpu_ns;			/* thread CPU time spent in unwinding proper */
	__u64 events_bytes;		/* size of events.mtz when unwound: a later recording makes the file stale */
	__u64 reasons[16];		/* stacks by enum mt_unwind_stop */
};

_Static_assert(sizeof(struct mt_unwind_rec) == 48, "mt_unwind_rec size");
_Static_assert(sizeof(struct mt_unwind_end) == 184, "mt_unwind_end size");
_Static_assert(MT_STOP__COUNT <= 16, "mt_unwind_end.reasons holds every reason");
_Static_assert(sizeof(struct mt_unwind_rec) + MT_UNWIND_FRAMES_MAX * 9 + MT_PATH_MAX < 65536, "fits hdr.size");

static inline const __u64 *mt_unwind_rec__frames(const struct mt_unwind_rec *r)
{
	return (const __u64 *)(r + 1);
}

static inline const __u8 *mt_unwind_rec__nofp(const struct mt_unwind_rec *r)
{
	return (const __u8 *)(mt_unwind_rec__frames(r) + r->nframes);
}

/* The size without the detail string. */
static inline size_t mt_unwind_rec__fixed_size(unsigned int nframes)
{
	return sizeof(struct mt_unwind_rec) + nframes * 8 + (nframes + 7) / 8;
}

/* The detail string, or NULL when the record is too short for its frames (then the record is malformed). */
static inline const char *mt_unwind_rec__detail(const struct mt_unwind_rec *r)
{
	size_t fixed = mt_unwind_rec__fixed_size(r->nframes);

	if (r->hdr.size < fixed + 1 || ((const char *)r)[r->hdr.size - 1] != '\0')
		return NULL;
	return (const char *)r + fixed;
}

#endif /* MEMTRACK_UNWIND_RECORDS_H */
