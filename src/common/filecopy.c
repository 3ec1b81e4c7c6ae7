// SPDX-License-Identifier: GPL-2.0-only
/* filecopy.c — copies of module files into DIR/modules and the module cache, safe against symlinks and races. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/filecopy.h"

/* All of buf, or -errno (a short write is the disk being full). */
static int write__full(int fd, const char *buf, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -ENOSPC;
		buf += w;
		n -= w;
	}
	return 0;
}

/* in's bytes [off, end) to out at the same offsets. 0 or -errno. */
static int copy__range(int in, int out, off_t off, off_t end)
{
	char buf[1 << 16];
	size_t want;
	ssize_t n;
	int err = 0;

	while (!err && off < end) {
		want = end - off < (off_t)sizeof(buf) ? (size_t)(end - off) : sizeof(buf);
		n = pread(in, buf, want, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : 0;	/* cut short meanwhile: the size set at the end says so */
		if (lseek(out, off, SEEK_SET) < 0)
			return -errno;
		err = write__full(out, buf, n);
		off += n;
	}
	return err;
}

/*
 * in's data copied to out, its holes left holes (SEEK_DATA, SEEK_HOLE): a sparse file of gigabytes stays a few blocks,
 * so that nobody's sparse file makes memtrack fill a disk. A file system without them is read whole.
 */
static int copy__data(int in, int out, off_t size)
{
	off_t data = 0, hole;
	int err = 0;

	while (!err && data < size) {
		data = lseek(in, data, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break;	/* holes to the end */
		if (data < 0)
			return errno == EINVAL ? copy__range(in, out, 0, size) : -errno;
		hole = lseek(in, data, SEEK_HOLE);
		if (hole < 0)
			return -errno;
		err = copy__range(in, out, data, hole > size ? size : hole);
		data = hole;
	}
	if (!err && ftruncate(out, size))
		err = -errno;
	return err;
}

int mt_filecopy__data(int in, int out)
{
	struct stat st;

	if (fstat(in, &st))
		return -errno;
	return copy__data(in, out, st.st_size);
}

/* A temporary name no other process or thread uses: the pid and a counter, hidden by a leading dot. */
static void temp__name(const char *name, char *buf, size_t len)
{
	static unsigned int seq;

	snprintf(buf, len, ".%s.%d.%u.tmp", name, (int)getpid(), __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
}

int mt_filecopy__copy(int in, int dir_fd, const char *name, mode_t max_mode, bool atomic, const struct stat *owner)
{
	char tmp[512];
	struct stat st;
	int out, err;

	if (fstat(in, &st))
		return -errno;
	if (atomic && !fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW))
		return 0;
	if (atomic)
		temp__name(name, tmp, sizeof(tmp));
	out = openat(dir_fd, atomic ? tmp : name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     st.st_mode & max_mode);
	if (out < 0)
		return errno == EEXIST && !atomic ? 0 : -errno;
	/* by its descriptor, before it has its name: whatever is put at the name meanwhile is never chowned */
	err = owner && fchown(out, owner->st_uid, owner->st_gid) ? -errno : 0;
	if (!err)
		err = copy__data(in, out, st.st_size);
	if (!err && atomic && fdatasync(out))
		err = -errno;	/* renamed unsynced, a crash could leave an empty file under the final name */
	if (close(out) && !err)
		err = -errno;
	if (!err && atomic && renameat(dir_fd, tmp, dir_fd, name))
		err = -errno;
	if (err)
		unlinkat(dir_fd, atomic ? tmp : name, 0);
	return err;
}
