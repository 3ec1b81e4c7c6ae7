// SPDX-License-Identifier: GPL-2.0-only
/* control.c — the control FIFO: a private directory, the FIFO in it, a thread that drains it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bpf/memtrack.h"
#include "common/log.h"
#include "tracer/control.h"
#include "tracer/outdir.h"

#define CONTROL_NAME "control"

struct mt_control {
	char dir[PATH_MAX];
	char path[PATH_MAX];
	int fd;			/* read and write: the FIFO never reads EOF, and the tree's open() never waits */
	int stop_fd;		/* an eventfd: the reader's signal to end (no pthread_cancel, which ASan mishandles) */
	int dir_fd;		/* the directory: the FIFO is made, opened and removed through it */
	uint64_t dev, ino;
	pthread_t reader;
	bool reading;
};

/* $TMPDIR if it is set, else /tmp: a 0700 directory, memtrack's until the FIFO in it is open (control__give). */
static int control__make_dir(struct mt_control *c)
{
	const char *tmp = getenv("TMPDIR");

	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (snprintf(c->dir, sizeof(c->dir), "%s/memtrack-XXXXXX", tmp) >= (int)sizeof(c->dir))
		return -ENAMETOOLONG;
	if (!mkdtemp(c->dir)) {
		c->dir[0] = 0;
		return -errno;
	}
	c->dir_fd = open(c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return c->dir_fd < 0 ? -errno : 0;
}

/* Made and opened by its directory's fd, never followed through a link, while the directory is memtrack's alone. */
static int control__make_fifo(struct mt_control *c)
{
	struct stat st;

	if (snprintf(c->path, sizeof(c->path), "%.*s/" CONTROL_NAME, (int)sizeof(c->dir) - 16, c->dir) >=
	    (int)sizeof(c->path))
		return -ENAMETOOLONG;
	if (mkfifoat(c->dir_fd, CONTROL_NAME, 0600)) {
		c->path[0] = 0;
		return -errno;
	}
	c->fd = openat(c->dir_fd, CONTROL_NAME, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (c->fd < 0 || fstat(c->fd, &st))
		return -errno;
	if (!S_ISFIFO(st.st_mode))
		return -EINVAL;
	c->dev = (uint64_t)major(st.st_dev) << MT_KDEV_MINOR_BITS | minor(st.st_dev);
	c->ino = st.st_ino;
	return 0;
}

/* Both become the user's last, by their fds: what the user may do in the directory from then on reaches neither. */
static int control__give(struct mt_control *c, uid_t uid, gid_t gid)
{
	if (fchown(c->fd, uid, gid) || fchmod(c->fd, 0600) || fchown(c->dir_fd, uid, gid))
		return -errno;
	return 0;
}

struct mt_control *mt_control__new(uid_t uid, gid_t gid)
{
	struct mt_control *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return NULL;
	c->fd = -1;
	c->dir_fd = -1;
	c->stop_fd = -1;
	err = control__make_dir(c);
	if (!err)
		err = control__make_fifo(c);
	if (!err)
		err = control__give(c, uid, gid);
	if (!err)
		return c;
	mt_control__free(c);
	errno = -err;
	return NULL;
}

const char *mt_control__path(const struct mt_control *c)
{
	return c->path;
}

void mt_control__file(const struct mt_control *c, uint64_t *dev, uint64_t *ino)
{
	*dev = c->dev;
	*ino = c->ino;
}

/* Reads until stop_fd is signalled: the lines were acted on in BPF already. */
static void *control__drain(void *arg)
{
	struct mt_control *c = arg;
	struct pollfd fds[2] = { { .fd = c->fd, .events = POLLIN }, { .fd = c->stop_fd, .events = POLLIN } };
	char buf[4096];

	for (;;) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (fds[1].revents)
			return NULL;
		if (fds[0].revents && read(c->fd, buf, sizeof(buf)) < 0 && errno != EINTR && errno != EAGAIN)
			break;
	}
	pr_warn("cannot read the control FIFO %s: %s; writers to it may block\n", c->path, strerror(errno));
	return NULL;
}

int mt_control__start(struct mt_control *c)
{
	int err;

	c->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (c->stop_fd < 0)
		return -errno;
	err = pthread_create(&c->reader, NULL, control__drain, c);

	c->reading = !err;
	return -err;
}

int mt_control__dir_fd(const struct mt_control *c)
{
	return c->dir_fd;
}

/*
 * What memtrack left of a control directory it held as dir_fd: the FIFO (only a FIFO: the user may have put
 * anything there), then the directory by its parent, when its name still leads to it and it is empty. The closer's
 * work once memtrack is gone: after a normal end it finds nothing.
 */
void mt_control__remove(int dir_fd)
{
	char self[64], path[PATH_MAX], *slash;
	struct stat st;
	ssize_t n;
	int pfd;

	if (!fstatat(dir_fd, CONTROL_NAME, &st, AT_SYMLINK_NOFOLLOW) && S_ISFIFO(st.st_mode))
		unlinkat(dir_fd, CONTROL_NAME, 0);
	snprintf(self, sizeof(self), "/proc/self/fd/%d", dir_fd);
	n = readlink(self, path, sizeof(path) - 1);
	if (n <= 0 || path[0] != '/')
		return;
	path[n] = '\0';
	slash = strrchr(path, '/');
	*slash = '\0';
	pfd = open(slash == path ? "/" : path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return;
	mt_outdir__unlink_own(pfd, slash + 1, dir_fd, true);
	close(pfd);
}

void mt_control__free(struct mt_control *c)
{
	if (!c)
		return;
	if (c->reading) {
		eventfd_write(c->stop_fd, 1);
		pthread_join(c->reader, NULL);
	}
	if (c->stop_fd >= 0)
		close(c->stop_fd);
	if (c->fd >= 0)
		close(c->fd);
	if (c->dir_fd >= 0) {	/* the user's since control__give: by its descriptor, never by what is at its path */
		mt_control__remove(c->dir_fd);
		close(c->dir_fd);
	} else if (c->dir[0]) {
		rmdir(c->dir);	/* made but not opened: still memtrack's */
	}
	free(c);
}
