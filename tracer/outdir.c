// SPDX-License-Identifier: GPL-2.0-only
/* outdir.c — DIR made or taken safely for the user it belongs to, and everything in it handed to that user. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "tracer/outdir.h"

/* Why an existing DIR is not to be written into, or NULL: a symlink (whoever made it could point it anywhere), a
 * file, another user's directory, or one that holds something (a previous artifact would be overwritten). */
static const char *existing__refusal(int fd, const struct stat *st, uid_t owner, char *buf, size_t len)
{
	struct dirent *e;
	DIR *d;
	int dup_fd;
	bool empty = true;

	if (st->st_uid != owner) {
		snprintf(buf, len, "belongs to uid %u", (unsigned int)st->st_uid);
		return buf;
	}
	dup_fd = dup(fd);
	d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		snprintf(buf, len, "cannot be read: %s", strerror(errno));
		return buf;
	}
	while (empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty ? NULL : "exists and is not empty";
}

/* Opened without following a symlink at its end: -ELOOP and -ENOTDIR say what it is instead. */
static int dir__open(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0 || errno != ENOTDIR)
		return fd < 0 ? -errno : fd;
	return !lstat(path, &st) && S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
}

static const char *open__why(int err)
{
	return err == -ELOOP ? "is a symlink" : err == -ENOTDIR ? "is not a directory" : strerror(-err);
}

/*
 * mkdir, then open with O_NOFOLLOW: DIR is the directory memtrack made, or one that was there, empty and the
 * user's, never a symlink's target. Everything after goes by the descriptor.
 */
int mt_outdir__open(const char *dir, uid_t owner, gid_t group, bool *made)
{
	char path[PATH_MAX], buf[64];
	size_t n = strlen(dir);
	const char *why = NULL;
	struct stat st;
	int fd, err;

	while (n > 1 && dir[n - 1] == '/')	/* "link/" would resolve the link */
		n--;
	snprintf(path, sizeof(path), "%.*s", (int)n, dir);
	*made = !mkdir(path, 0755);
	if (!*made && errno != EEXIST) {
		err = -errno;
		pr_err("-o %s: cannot create it: %s\n", path, strerror(-err));
		return err;
	}
	fd = dir__open(path);
	if (fd < 0) {
		pr_err("-o %s: %s\n", path, open__why(fd));
		return fd;
	}
	if (fstat(fd, &st))
		why = strerror(errno);
	else if (*made && st.st_uid != geteuid())
		why = "was replaced while memtrack made it";
	else if (!*made)
		why = existing__refusal(fd, &st, owner, buf, sizeof(buf));
	else if (geteuid() != owner && fchown(fd, owner, group))
		why = strerror(errno);
	if (why) {
		pr_err("-o %s: %s\n", path, why);
		close(fd);
		return -EEXIST;
	}
	return fd;
}

/* dfd's entries, and the directories among them one level down (DIR/modules): modules/ holds files only. */
static int entries__chown(int dfd, uid_t owner, gid_t group, int depth)
{
	DIR *d;
	struct dirent *e;
	int fd = dup(dfd), sub, err = 0;

	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fchownat(dfd, e->d_name, owner, group, AT_SYMLINK_NOFOLLOW) && !err)
			err = -errno;
		if (e->d_type != DT_DIR || !depth)
			continue;
		sub = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0) {
			err = err ? err : entries__chown(sub, owner, group, depth - 1);
			close(sub);
		}
	}
	closedir(d);
	return err;
}

int mt_outdir__chown(int dfd, uid_t owner, gid_t group)
{
	int err = entries__chown(dfd, owner, group, 1);

	if (fchown(dfd, owner, group) && !err)
		err = -errno;
	return err;
}

void mt_outdir__path(int dfd, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", dfd);
}
