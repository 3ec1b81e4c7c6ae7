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

int mt_filecopy__data(int in, int out)
{
	char buf[1 << 16];
	off_t off = 0;
	ssize_t n;
	int err = 0;

	while (!err && (n = pread(in, buf, sizeof(buf), off)) > 0) {
		err = write__full(out, buf, n);
		off += n;
	}
	return !err && n < 0 ? -errno : err;
}

/* A temporary name no other process or thread uses: the pid and a counter, hidden by a leading dot. */
static void temp__name(const char *name, char *buf, size_t len)
{
	static unsigned int seq;

	snprintf(buf, len, ".%s.%d.%u.tmp", name, (int)getpid(), __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
}

int mt_filecopy__copy(int in, int dir_fd, const char *name, mode_t max_mode, bool atomic)
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
	err = mt_filecopy__data(in, out);
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
