// SPDX-License-Identifier: GPL-2.0-only
/* openreg.c — files memtrack did not create (DIR's, the module cache's), opened to read without blocking. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/openreg.h"

int mt_openreg__at(int dfd, const char *name, int flags, struct stat *st)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | flags), err;

	st->st_mode = 0;
	if (fd < 0)
		return -errno;
	if (fstat(fd, st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (S_ISREG(st->st_mode))
		return fd;
	close(fd);
	return S_ISDIR(st->st_mode) ? -EISDIR : -EINVAL;
}

const char *mt_openreg__kind(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISDIR(mode))
		return "a directory";
	return "a special file";
}

const char *mt_openreg__why(int err, const struct stat *st, char *buf, size_t len)
{
	if ((err != -EINVAL && err != -EISDIR) || !st->st_mode)
		return err == -ELOOP ? "a symbolic link (not followed)" : strerror(-err);
	snprintf(buf, len, "not a regular file (%s)", mt_openreg__kind(st->st_mode));
	return buf;
}
