/* metadata.c — each process's command line, read at its exec stop, for DIR/memory_metadata.json. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/array.h"
#include "common/log.h"
#include "tracer/tracer.h"

#define CMDLINE_MAX 4096

/* Command lines are read at each exec stop, while /proc still shows the new image's arguments. */
struct cmdline {
	pid_t pid;
	size_t len;
	char *args;		/* NUL-separated, as /proc/PID/cmdline */
};

struct metadata {
	struct cmdline *v;
	size_t n, cap;
};

struct metadata *metadata__new(void)
{
	return calloc(1, sizeof(struct metadata));
}

static struct cmdline *cmdline__slot(struct metadata *md, pid_t pid)
{
	size_t i;

	for (i = 0; i < md->n; i++)
		if (md->v[i].pid == pid)
			return &md->v[i];
	if (mt_array__grow((void **)&md->v, &md->cap, md->n, sizeof(*md->v)))
		return NULL;
	md->v[md->n] = (struct cmdline){ .pid = pid };
	return &md->v[md->n++];
}

void metadata__on_exec(struct metadata *md, pid_t pid)
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
	c = n > 0 ? cmdline__slot(md, pid) : NULL;
	if (!c)
		return;
	free(c->args);
	c->args = malloc(n);
	c->len = c->args ? (size_t)n : 0;
	if (c->args)
		memcpy(c->args, buf, n);
}

static const struct cmdline *cmdline__find(const struct metadata *md, pid_t pid)
{
	size_t i;

	for (i = 0; i < md->n; i++)
		if (md->v[i].pid == pid)
			return &md->v[i];
	return NULL;
}

const char *metadata__cmdline(const struct metadata *md, pid_t pid, size_t *len)
{
	const struct cmdline *c = cmdline__find(md, pid);

	*len = c ? c->len : 0;
	return c ? c->args : NULL;
}

void metadata__free(struct metadata *md)
{
	size_t i;

	if (!md)
		return;
	for (i = 0; i < md->n; i++)
		free(md->v[i].args);
	free(md->v);
	free(md);
}
