/* SPDX-License-Identifier: GPL-2.0-only */
/* outdir.h — DIR: made (or taken) for the user it belongs to, never through a symlink; that user's at the end. */
#ifndef MEMTRACK_TRACER_OUTDIR_H
#define MEMTRACK_TRACER_OUTDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* DIR's descriptor (a directory, not reached through a symlink at its end), made with mode 0755 when missing and
 * then owner's (*made true), or one that is there, empty and owner's. -errno with the reason said. */
int mt_outdir__open(const char *path, uid_t owner, gid_t group, bool *made);
/* DIR and everything in it (modules/ too) to owner:group, no symlink followed. 0 or -errno. */
int mt_outdir__chown(int dfd, uid_t owner, gid_t group);
/* DIR by its descriptor, "/proc/self/fd/N", for code that takes a path: the very directory opened. */
void mt_outdir__path(int dfd, char *buf, size_t len);

#endif /* MEMTRACK_TRACER_OUTDIR_H */
