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

#endif /* MEMTRACK_TRACER_USER_H */
