/* SPDX-License-Identifier: GPL-2.0-only */
/* cmdlines.h — each image's command line, read at its exec stop, for DIR/memory_metadata.json. */
#ifndef MEMTRACK_TRACER_CMDLINES_H
#define MEMTRACK_TRACER_CMDLINES_H

#include <stddef.h>
#include <sys/types.h>

struct mt_cmdlines;
struct mt_cmdlines *mt_cmdlines__new(void);
/* Reads /proc/PID/cmdline while it shows the new image's arguments. */
void mt_cmdlines__on_exec(struct mt_cmdlines *cl, pid_t pid);
/* The command line of pid as read at its last exec (NUL-separated, *len bytes), or NULL. */
const char *mt_cmdlines__get(const struct mt_cmdlines *cl, pid_t pid, size_t *len);
/* The same as read at its k-th exec stop (0: the first seen), each image its own; NULL past the last. */
const char *mt_cmdlines__get_exec(const struct mt_cmdlines *cl, pid_t pid, size_t k, size_t *len);
void mt_cmdlines__free(struct mt_cmdlines *cl);

#endif /* MEMTRACK_TRACER_CMDLINES_H */
