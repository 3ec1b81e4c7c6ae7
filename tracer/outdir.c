// SPDX-License-Identifier: GPL-2.0-only
/* outdir.c — DIR made or taken safely for the user it belongs to; what memtrack creates in it, created safely. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/filecopy.h"
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
int mt_outdir__open(struct mt_outdir *d, const char *dir, uid_t owner, gid_t group, bool give)
{
	size_t n = strlen(dir);
	const char *why = NULL;
	char buf[64];
	struct stat st;
	int fd, err;

	*d = (struct mt_outdir){ .fd = -1, .uid = owner, .gid = group, .give = give };
	while (n > 1 && dir[n - 1] == '/')	/* "link/" would resolve the link */
		n--;
	snprintf(d->path, sizeof(d->path), "%.*s", (int)n, dir);
	d->made = !mkdir(d->path, 0755);
	if (!d->made && errno != EEXIST) {
		err = -errno;
		pr_err("-o %s: cannot create it: %s\n", d->path, strerror(-err));
		return err;
	}
	fd = dir__open(d->path);
	if (fd < 0) {
		pr_err("-o %s: %s\n", d->path, open__why(fd));
		return fd;
	}
	if (fstat(fd, &st))
		why = strerror(errno);
	else if (d->made && st.st_uid != geteuid())
		why = "was replaced while memtrack made it";
	else if (!d->made)
		why = existing__refusal(fd, &st, owner, buf, sizeof(buf));
	else if (geteuid() != owner && fchown(fd, owner, group))
		why = strerror(errno);
	if (why) {
		pr_err("-o %s: %s\n", d->path, why);
		close(fd);
		return -EEXIST;
	}
	d->fd = fd;
	return 0;
}

int mt_outdir__create(const struct mt_outdir *d, int dfd, const char *name, mode_t mode)
{
	int fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode), err;

	if (fd < 0)
		return -errno;
	if (d->give && fchown(fd, d->uid, d->gid)) {
		err = -errno;
		unlinkat(dfd, name, 0);	/* ours (O_EXCL) */
		close(fd);
		return err;
	}
	return fd;
}

int mt_outdir__mkdir(const struct mt_outdir *d, int dfd, const char *name, mode_t mode, bool *made)
{
	int fd, err;

	*made = !mkdirat(dfd, name, mode);
	if (!*made && errno != EEXIST)
		return -errno;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (*made && d->give && fchown(fd, d->uid, d->gid)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int mt_outdir__copy(const struct mt_outdir *d, int dfd, const char *name, int in, mode_t max_mode)
{
	struct stat st;
	int out, err;

	if (fstat(in, &st))
		return -errno;
	out = mt_outdir__create(d, dfd, name, st.st_mode & max_mode);
	if (out < 0)
		return out;
	err = mt_filecopy__data(in, out);
	if (close(out) && !err)
		err = -errno;
	if (err)
		unlinkat(dfd, name, 0);	/* ours (O_EXCL) */
	return err;
}

/* name in dfd, when it is still the file fd holds: removed; anything put there in its place stays. */
void mt_outdir__unlink_own(int dfd, const char *name, int fd, bool dir)
{
	struct stat mine, now;

	if (fd < 0 || fstat(fd, &mine) || fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW))
		return;
	if (mine.st_dev == now.st_dev && mine.st_ino == now.st_ino)
		unlinkat(dfd, name, dir ? AT_REMOVEDIR : 0);
}

/* DIR itself, by its parent and its last name, when that name still leads to it (rmdir: when it is empty). */
void mt_outdir__remove(const struct mt_outdir *d)
{
	const char *slash = strrchr(d->path, '/');
	char parent[PATH_MAX];
	int pfd = AT_FDCWD;

	if (d->fd < 0)
		return;
	if (slash) {
		snprintf(parent, sizeof(parent), "%.*s", slash == d->path ? 1 : (int)(slash - d->path), d->path);
		pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (pfd < 0)
			return;
	}
	mt_outdir__unlink_own(pfd, slash ? slash + 1 : d->path, d->fd, true);
	if (pfd >= 0)
		close(pfd);
}

void mt_outdir__close(struct mt_outdir *d)
{
	if (d->fd < 0)
		return;
	if (d->give && fchown(d->fd, d->uid, d->gid))
		pr_warn("cannot give %s to uid %u: %s\n", d->path, (unsigned int)d->uid, strerror(errno));
	close(d->fd);
	d->fd = -1;
}

void mt_outdir__path(int dfd, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", dfd);
}
