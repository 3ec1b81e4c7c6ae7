/* SPDX-License-Identifier: GPL-2.0-only */
/* names.h — names of the values of bpf/memtrack.h's enums, and what a wait status means to a shell. */
#ifndef MEMTRACK_NAMES_H
#define MEMTRACK_NAMES_H

#include <stdint.h>

#include "bpf/memtrack.h"

/* NULL for values without a name. */
const char *mt_func__name(unsigned int func);		/* enum mt_func: "malloc", ..., "free" */
const char *mt_allocator__name(unsigned int allocator);	/* enum mt_allocator: "glibc" */
const char *mt_attach_reason__name(unsigned int reason);	/* enum mt_attach_reason: "exec", "interp" */
const char *mt_drop__name(unsigned int cause);		/* enum mt_drop: "ringbuf", "callstate", "read" */

/* A wait status the way a shell reports it: the exit code, or 128 + the terminating signal. */
int mt_status__shell(int32_t status);
/* The terminating signal, or 0 when the process exited normally. */
int mt_status__signal(int32_t status);

#endif /* MEMTRACK_NAMES_H */
