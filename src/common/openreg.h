/* SPDX-License-Identifier: GPL-2.0-only */
/* openreg.h — a file memtrack did not create, opened to read: never blocking on a FIFO, a regular file or refused. */
#ifndef MEMTRACK_OPENREG_H
#define MEMTRACK_OPENREG_H

#include <sys/stat.h>
#include <sys/types.h>

/*
 * name in dfd (AT_FDCWD: a path) opened read-only with O_NONBLOCK (a FIFO would wait for a writer for ever) and
 * flags (O_NOFOLLOW, say) added; kept only when it is a regular file. Its descriptor, with *st filled; else -errno:
 * -EISDIR for a directory, -EINVAL for anything else that is not a regular file (*st's mode says what it is, and
 * mt_openreg__kind names it), -ELOOP for a symlink under O_NOFOLLOW.
 */
int mt_openreg__at(int dfd, const char *name, int flags, struct stat *st);
/* What a file that is not a regular one is, for messages: "a FIFO", "a socket", "a directory", ... */
const char *mt_openreg__kind(mode_t mode);
/* The reason for a refusal of mt_openreg__at, for a message: "not a regular file (a FIFO)" and the like, or
 * strerror's. buf holds it when it is built. */
const char *mt_openreg__why(int err, const struct stat *st, char *buf, size_t len);

#endif /* MEMTRACK_OPENREG_H */
