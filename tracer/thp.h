/* SPDX-License-Identifier: GPL-2.0-only */
/* thp.h — the tracer's malloc heap in transparent huge pages for a while (libbpf's load of the kernel's BTF). */
#ifndef MEMTRACK_TRACER_THP_H
#define MEMTRACK_TRACER_THP_H

#include <stddef.h>

/* The malloc heap's next bytes in transparent huge pages: 0, or -EOPNOTSUPP without THP. */
int mt_thp__prefer(size_t bytes);
/* In a thread, after mt_thp__prefer: the thread's own malloc arena in huge pages as well, until mt_thp__trim. */
void mt_thp__prefer_thread(void);
/* Undoes mt_thp__prefer (and mt_thp__prefer_thread) and gives the freed heap back. */
void mt_thp__trim(void);

#endif /* MEMTRACK_TRACER_THP_H */
