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

struct mt_control {
	char dir[PATH_MAX];
	char path[PATH_MAX];
	int fd;			/* read and write: the FIFO never reads EOF, and the tree's open() never waits */
	int stop_fd;		/* an eventfd: the reader's signal to end (no pthread_cancel, which ASan mishandles) */
	uint64_t dev, ino;
	pthread_t reader;
	bool reading;
};

/* $TMPDIR if it is set, else /tmp: the directory is the user's and 0700, whoever else may write there. */
static int control__make_dir(struct mt_control *c, uid_t uid, gid_t gid)
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
	return chown(c->dir, uid, gid) ? -errno : 0;
}

static int control__make_fifo(struct mt_control *c, uid_t uid, gid_t gid)
{
	struct stat st;

	if (snprintf(c->path, sizeof(c->path), "%.*s/control", (int)sizeof(c->dir) - 16, c->dir) >= (int)sizeof(c->path))
		return -ENAMETOOLONG;
	if (mkfifo(c->path, 0600)) {
		c->path[0] = 0;
		return -errno;
	}
	c->fd = open(c->path, O_RDWR | O_CLOEXEC);
	if (c->fd < 0 || fchown(c->fd, uid, gid) || fchmod(c->fd, 0600) || fstat(c->fd, &st))
		return -errno;
	c->dev = (uint64_t)major(st.st_dev) << MT_KDEV_MINOR_BITS | minor(st.st_dev);
	c->ino = st.st_ino;
	return 0;
}

struct mt_control *mt_control__new(uid_t uid, gid_t gid)
{
	struct mt_control *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return NULL;
	c->fd = -1;
	c->stop_fd = -1;
	err = control__make_dir(c, uid, gid);
	if (!err)
		err = control__make_fifo(c, uid, gid);
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
	if (c->path[0])
		unlink(c->path);
	if (c->dir[0])
		rmdir(c->dir);
	free(c);
}
