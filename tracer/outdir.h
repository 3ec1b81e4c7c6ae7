/* SPDX-License-Identifier: GPL-2.0-only */
/* outdir.h — DIR: made (or taken) for the user it belongs to, never through a symlink; what memtrack writes in it
 * is created through DIR's descriptor and handed to that user by its own descriptor, nothing else touched. */
#ifndef MEMTRACK_TRACER_OUTDIR_H
#define MEMTRACK_TRACER_OUTDIR_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct mt_outdir {
	char path[PATH_MAX];	/* as given, without trailing slashes: for messages, and to remove DIR */
	int fd;			/* DIR, opened once (mt_outdir__open): everything in it goes through this, or -1 */
	uid_t uid;		/* whom DIR and what memtrack creates in it belong to */
	gid_t gid;
	bool give;		/* uid is not memtrack's: each file memtrack creates is fchown()ed to it */
	bool made;		/* memtrack made DIR (it may remove it again), else DIR was there, empty and uid's */
};

/* DIR opened into *d: made with mode 0755 when missing and then owner's (d->made), or one that is there, empty and
 * owner's. give: what memtrack creates in it is owner's too. 0, or -errno with the reason said. */
int mt_outdir__open(struct mt_outdir *d, const char *path, uid_t owner, gid_t group, bool give);
/* name made in dfd (DIR or a directory in it) with O_CREAT|O_EXCL|O_NOFOLLOW (never a planted file or link) and
 * given to DIR's user by its descriptor; read-write. Its descriptor, or -errno (-EEXIST: something is there). */
int mt_outdir__create(const struct mt_outdir *d, int dfd, const char *name, mode_t mode);
/* in (read from offset 0) copied to name in dfd, made as mt_outdir__create makes it, with in's mode cut to
 * max_mode. 0 or -errno (-EEXIST: something is there, left as it is); nothing of memtrack's left on failure. */
int mt_outdir__copy(const struct mt_outdir *d, int dfd, const char *name, int in, mode_t max_mode);
/* Directory name in dfd, made (*made, then given to DIR's user) or there already; opened without following a link.
 * Its descriptor, or -errno. */
int mt_outdir__mkdir(const struct mt_outdir *d, int dfd, const char *name, mode_t mode, bool *made);
/* name removed from dfd only while it is still the file (dir: the empty directory) that fd holds. */
void mt_outdir__unlink_own(int dfd, const char *name, int fd, bool dir);
/* DIR removed (only when empty) if its path still leads to the directory d holds. */
void mt_outdir__remove(const struct mt_outdir *d);
/* DIR itself given to its user (nothing in it: what memtrack made was given as it was made), and closed. */
void mt_outdir__close(struct mt_outdir *d);
/* A file by its descriptor, "/proc/self/fd/N", for code that takes a path: the very file opened, whatever is at
 * its name now. */
void mt_outdir__path(int dfd, char *buf, size_t len);

#endif /* MEMTRACK_TRACER_OUTDIR_H */
