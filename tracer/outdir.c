/* outdir.c — DIR made or taken safely for the user it belongs to, and everything in it handed to that user. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "tracer/outdir.h"

/* mkdir, then open with O_NOFOLLOW: DIR is the directory made, or one that is there, never a symlink's target. */
int mt_outdir__open(const char *path, uid_t owner, gid_t group)
{
	bool made = !mkdir(path, 0755);
	int fd, err;

	if (!made && errno != EEXIST) {
		err = -errno;
		pr_err("-o %s: cannot create it: %s\n", path, strerror(-err));
		return err;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_err("-o %s: %s\n", path, strerror(-err));
		return err;
	}
	if (made && geteuid() != owner && fchown(fd, owner, group)) {
		err = -errno;
		pr_err("-o %s: cannot give it to uid %u: %s\n", path, (unsigned int)owner, strerror(-err));
		close(fd);
		return err;
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
