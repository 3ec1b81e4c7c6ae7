/* exit_sites.h — where a function returns: its ret instructions, found by following its jumps from its entry. */
#ifndef MEMTRACK_TRACER_EXIT_SITES_H
#define MEMTRACK_TRACER_EXIT_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the walk asks of the file, all in file offsets. */
struct mt_exit_walk {
	int fd;			/* the file, for its code */
	/* The end of the code that off lies in: its function's, or for code no symbol covers the next symbol's start.
	 * False when unknown. */
	bool (*end_of)(uint64_t off, uint64_t *end, void *ctx);
	/* Whether off is a PLT entry: then *target is the function it calls when the file defines it (else 0), and
	 * *noreturn says it never returns (abort, __cxa_throw...). */
	bool (*plt)(uint64_t off, uint64_t *target, bool *noreturn, void *ctx);
	void *ctx;
};

/*
 * The ret instructions through which the function at entry (code up to end) returns to its caller: the walk
 * follows its branches and its jumps, a tail call's into the function it jumps to (through the PLT too), never a
 * call's; a path ends at a call that never returns, and at a jump far into code no symbol covers (an error path's
 * cold code). At most max offsets into sites; their count, or -ENOTSUP when it meets code it cannot follow (an
 * indirect jump, an instruction it does not know, a tail call into another file), -E2BIG when too long.
 */
int mt_exit_sites__find(const struct mt_exit_walk *w, uint64_t entry, uint64_t end, uint64_t *sites, size_t max);

#endif /* MEMTRACK_TRACER_EXIT_SITES_H */
