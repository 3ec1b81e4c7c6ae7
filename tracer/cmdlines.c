// SPDX-License-Identifier: GPL-2.0-only
/* cmdlines.c — each image's command line, read at its exec stop, for DIR/memory_metadata.json. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/array.h"
#include "common/log.h"
#include "tracer/cmdlines.h"

#define CMDLINE_MAX 4096

/* Command lines are read at each exec stop, while /proc still shows the new image's arguments: one per exec, in
 * the order of the stops (a pid that execs twice has two). */
struct cmdline {
	pid_t pid;
	size_t len;
	char *args;		/* NUL-separated, as /proc/PID/cmdline */
};

struct mt_cmdlines {
	struct cmdline *v;
	size_t n, cap;
};

struct mt_cmdlines *mt_cmdlines__new(void)
{
	return calloc(1, sizeof(struct mt_cmdlines));
}

/* pid's last one. */
static struct cmdline *cmdline__find(const struct mt_cmdlines *cl, pid_t pid)
{
	size_t i;

	for (i = cl->n; i-- > 0;)
		if (cl->v[i].pid == pid)
			return &cl->v[i];
	return NULL;
}

static struct cmdline *cmdline__slot(struct mt_cmdlines *cl, pid_t pid)
{
	if (mt_array__grow((void **)&cl->v, &cl->cap, cl->n, sizeof(*cl->v)))
		return NULL;
	cl->v[cl->n] = (struct cmdline){ .pid = pid };
	return &cl->v[cl->n++];
}

void mt_cmdlines__on_exec(struct mt_cmdlines *cl, pid_t pid)
{
	char path[64], buf[CMDLINE_MAX];
	struct cmdline *c;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	c = n > 0 ? cmdline__slot(cl, pid) : NULL;
	if (!c)
		return;
	c->args = malloc(n);
	c->len = c->args ? (size_t)n : 0;
	if (c->args)
		memcpy(c->args, buf, n);
}

const char *mt_cmdlines__get(const struct mt_cmdlines *cl, pid_t pid, size_t *len)
{
	const struct cmdline *c = cmdline__find(cl, pid);

	*len = c ? c->len : 0;
	return c ? c->args : NULL;
}

const char *mt_cmdlines__get_exec(const struct mt_cmdlines *cl, pid_t pid, size_t k, size_t *len)
{
	size_t i;

	for (i = 0; i < cl->n; i++) {
		if (cl->v[i].pid != pid || k--)
			continue;
		*len = cl->v[i].len;
		return cl->v[i].args;
	}
	*len = 0;
	return NULL;
}

void mt_cmdlines__free(struct mt_cmdlines *cl)
{
	size_t i;

	if (!cl)
		return;
	for (i = 0; i < cl->n; i++)
		free(cl->v[i].args);
	free(cl->v);
	free(cl);
}
