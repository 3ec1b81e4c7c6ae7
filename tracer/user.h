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
