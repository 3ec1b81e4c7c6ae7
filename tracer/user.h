/* SPDX-License-Identifier: GPL-2.0-only */
/* user.h — who the command runs as, and whom DIR belongs to: the user sudo was run by, or `record --user`. */
#ifndef MEMTRACK_TRACER_USER_H
#define MEMTRACK_TRACER_USER_H

#include <stdbool.h>
#include <sys/types.h>

struct mt_user {
	bool set;		/* the command runs as uid, gid and groups; else as memtrack */
	uid_t uid;
	gid_t gid;
	gid_t *groups;		/* the user's groups (initgroups' list), computed before the fork */
	int ngroups;
};

/* name (--user), else SUDO_UID and SUDO_GID when memtrack is root, else none (u->set false). 0, or -errno with
 * the reason said. */
int mt_user__resolve(const char *name, struct mt_user *u);
void mt_user__release(struct mt_user *u);
/*
 * The owner of a file memtrack writes into as root (pack: DIR's owner), uid and gid with the passwd entry's groups;
 * none (u->set false) when memtrack is not root or the owner is root: nothing to check for them. 0 or -ENOMEM.
 */
int mt_user__of_owner(uid_t uid, gid_t gid, struct mt_user *u);
/*
 * Whether u could read the file of fd themselves: it is opened again through /proc/self/fd with u's file ids and
 * groups (the kernel checks mode, ACLs and security modules; root's capabilities are off). Not knowing is no. Always
 * true without a user (u->set false).
 */
bool mt_user__may_read(const struct mt_user *u, int fd);

/* What mt_user__fs_enter changed, to be put back. */
struct mt_user_fs {
	gid_t *groups;
	int ngroups;
};
/*
 * This thread's file accesses as u's, the kernel checking them with u's ids and groups (fsuid, fsgid, groups: root's
 * file capabilities go with fsuid 0), the tracer's other threads untouched. 0, or -errno with nothing changed.
 */
int mt_user__fs_enter(const struct mt_user *u, struct mt_user_fs *saved);
/* This thread's file accesses as memtrack's again. */
void mt_user__fs_leave(struct mt_user_fs *saved);

#endif /* MEMTRACK_TRACER_USER_H */
