// SPDX-License-Identifier: GPL-2.0-only
/* user.c — the user the command runs as: sudo's invoking user (SUDO_UID, SUDO_GID) or --user, with its groups. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/log.h"
#include "tracer/user.h"

#define USER_GROUPS_START 64

/* The groups initgroups would give: the user's, computed here (not async-signal-safe), set in the child. */
static int user__groups(struct mt_user *u, const char *name)
{
	int n = USER_GROUPS_START, want;

	for (;;) {
		u->groups = malloc(n * sizeof(*u->groups));
		if (!u->groups)
			return -ENOMEM;
		want = n;
		if (!name) {	/* no passwd entry: the primary group alone */
			u->groups[0] = u->gid;
			u->ngroups = 1;
			return 0;
		}
		if (getgrouplist(name, u->gid, u->groups, &want) >= 0) {
			u->ngroups = want;
			return 0;
		}
		free(u->groups);
		u->groups = NULL;
		if (want <= n)
			return -EINVAL;
		n = want;
	}
}

static int user__number(const char *what, const char *s, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno || end == s || *end || *out >= (unsigned long)(uid_t)-1) {
		pr_err("%s is not a user or group id: '%s'\n", what, s);
		return -EINVAL;
	}
	return 0;
}

/* uid and gid, with the groups of uid's passwd entry when there is one. */
static int user__ids(struct mt_user *u, uid_t uid, gid_t gid)
{
	struct passwd *pw = getpwuid(uid);

	u->uid = uid;
	u->gid = gid;
	u->set = true;
	return user__groups(u, pw ? pw->pw_name : NULL);
}

/* Under sudo: its invoking user. sudo sets both; the passwd entry gives the groups, when there is one. */
static int user__from_sudo(struct mt_user *u)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	unsigned long uid, gid;

	if (!su || !sg || geteuid() != 0)
		return 0;
	if (user__number("SUDO_UID", su, &uid) || user__number("SUDO_GID", sg, &gid))
		return -EINVAL;
	return user__ids(u, uid, gid);
}

int mt_user__of_owner(uid_t uid, gid_t gid, struct mt_user *u)
{
	memset(u, 0, sizeof(*u));
	return geteuid() == 0 && uid != 0 ? user__ids(u, uid, gid) : 0;
}

int mt_user__resolve(const char *name, struct mt_user *u)
{
	struct passwd *pw;
	int err;

	memset(u, 0, sizeof(*u));
	if (!name) {
		err = user__from_sudo(u);
		if (err == -ENOMEM)
			pr_err("cannot read the groups of uid %u: %s\n", (unsigned int)u->uid, strerror(-err));
		return err;
	}
	if (geteuid() != 0) {
		pr_err("--user %s: running the command as another user needs root\n", name);
		return -EPERM;
	}
	errno = 0;
	pw = getpwnam(name);
	if (!pw) {
		pr_err("--user %s: no such user%s%s\n", name, errno ? ": " : "", errno ? strerror(errno) : "");
		return -ENOENT;
	}
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	u->set = true;
	err = user__groups(u, pw->pw_name);
	if (err)
		pr_err("--user %s: cannot read its groups: %s\n", name, strerror(-err));
	return err;
}

void mt_user__release(struct mt_user *u)
{
	free(u->groups);
	u->groups = NULL;
	u->set = false;
}

/* This thread's groups, by the raw call: glibc's setgroups() sets every thread's (the tracer's other threads stay). */
static int thread__setgroups(int n, const gid_t *groups)
{
	return syscall(SYS_setgroups, (size_t)n, groups) ? -errno : 0;
}

int mt_user__fs_enter(const struct mt_user *u, struct mt_user_fs *saved)
{
	int n = getgroups(0, NULL), err;

	saved->groups = NULL;
	saved->ngroups = 0;
	if (n < 0 || !(saved->groups = malloc((n ? n : 1) * sizeof(gid_t))))
		return n < 0 ? -errno : -ENOMEM;
	saved->ngroups = getgroups(n, saved->groups);
	err = saved->ngroups < 0 ? -errno : thread__setgroups(u->ngroups, u->groups);
	if (!err) {
		setfsgid(u->gid);
		setfsuid(u->uid);
		/* setfsuid says nothing of a failure: the ids read back (an invalid id changes nothing) must be u's */
		if ((uid_t)setfsuid(-1) != u->uid || (gid_t)setfsgid(-1) != u->gid)
			err = -EPERM;
	}
	if (err)
		mt_user__fs_leave(saved);
	return err;
}

void mt_user__fs_leave(struct mt_user_fs *saved)
{
	setfsuid(geteuid());
	setfsgid(getegid());
	if (saved->groups && saved->ngroups >= 0)
		thread__setgroups(saved->ngroups, saved->groups);
	free(saved->groups);
	saved->groups = NULL;
}

bool mt_user__may_read(const struct mt_user *u, int fd)
{
	struct mt_user_fs saved;
	char path[32];
	int rfd;

	if (!u->set)
		return true;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (mt_user__fs_enter(u, &saved))
		return false;
	rfd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	mt_user__fs_leave(&saved);
	if (rfd < 0)
		return false;
	close(rfd);
	return true;
}
