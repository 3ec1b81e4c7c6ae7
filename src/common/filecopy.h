/* SPDX-License-Identifier: GPL-2.0-only */
/* filecopy.h — a file copied into a directory by its descriptor: never through a symlink, never wider than 0600. */
#ifndef MEMTRACK_FILECOPY_H
#define MEMTRACK_FILECOPY_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * in (read by pread; lseek finds its holes and moves its offset) copied to dir_fd/name, sparse where in is, with
 * in's mode cut to max_mode. atomic: written under a temporary name, synced, then renamed to name, so that a reader
 * or a concurrent copy never sees part of it; else created with O_EXCL. A name there already is the same content
 * (it is named by it): left as it is. owner (NULL: memtrack's): whose the copy becomes, by fchown of its own
 * descriptor before it is named, never of whatever is at the name. 0 or -errno (-ENOSPC for a short write); nothing
 * is left behind on failure.
 */
int mt_filecopy__copy(int in, int dir_fd, const char *name, mode_t max_mode, bool atomic, const struct stat *owner);
/* All of in (by pread, its holes left holes) written to out at the same offsets: for a file the caller created
 * itself. 0 or -errno (-ENOSPC for a short write). */
int mt_filecopy__data(int in, int out);

#endif /* MEMTRACK_FILECOPY_H */
