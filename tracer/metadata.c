/* metadata.c — DIR/memory_metadata.json: who each process was (name, exe, cmdline, ppid, start and exit times). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "json.h"
#include "log.h"
#include "model.h"
#include "tracer.h"

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

/* A fork child that did not exec runs its parent's command line. */
static void cmdline__json(struct mt_json *j, const struct metadata *md, const struct mt_model *m, pid_t pid)
{
	const struct cmdline *c = cmdline__find(md, pid);
	const struct mt_proc *p = mt_model__find_proc(m, pid);
	size_t i, start, depth;

	for (depth = 0; !c && p && p->ppid && depth < 64; depth++) {
		c = cmdline__find(md, p->ppid);
		p = mt_model__find_proc(m, p->ppid);
	}
	mt_json__key(j, "cmdline");
	mt_json__begin_array(j);
	for (start = 0, i = 0; c && i < c->len; i++) {
		if (c->args[i])
			continue;
		mt_json__string_n(j, c->args + start, i - start);
		start = i + 1;
	}
	if (c && start < c->len)
		mt_json__string_n(j, c->args + start, c->len - start);
	mt_json__end_array(j);
}

static void proc__json(struct mt_json *j, const struct metadata *md, const struct mt_model *m,
		       const struct mt_proc *p, uint64_t base)
{
	mt_json__begin_object(j);
	mt_json__kv_u64(j, "pid", p->pid);
	mt_json__kv_u64(j, "ppid", p->ppid);
	mt_json__kv_string_n(j, "name", p->comm, sizeof(p->comm));
	mt_json__kv_string_n(j, "exe", p->exe, sizeof(p->exe));
	cmdline__json(j, md, m, p->pid);
	mt_json__kv_u64(j, "start_ns", p->start_ns >= base ? p->start_ns - base : 0);
	if (p->exited) {
		mt_json__kv_u64(j, "exit_ns", p->exit_ns >= base ? p->exit_ns - base : 0);
		mt_json__kv_i64(j, "status", mt_status__shell(p->status));
	} else {
		mt_json__kv_null(j, "exit_ns");
		mt_json__kv_null(j, "status");
	}
	mt_json__end_object(j);
}

/* Times are nanoseconds since the session started, like the report's. */
int metadata__write(struct metadata *md, const struct mt_model *m, const char *dir)
{
	const struct mt_session_info *si = mt_model__session(m);
	char path[PATH_MAX];
	struct mt_json j;
	size_t i;
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/memory_metadata.json", dir);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	mt_json__init(&j, f, 2);
	mt_json__begin_object(&j);
	mt_json__kv_u64(&j, "root_pid", si->root_pid);
	mt_json__kv_u64(&j, "realtime_ns", si->realtime_ns);
	mt_json__key(&j, "processes");
	mt_json__begin_array(&j);
	for (i = 0; i < mt_model__nr_procs(m); i++)
		proc__json(&j, md, m, mt_model__proc(m, i), si->ts_ns);
	mt_json__end_array(&j);
	mt_json__end_object(&j);
	fputc('\n', f);
	err = ferror(f) ? -EIO : 0;
	if (fclose(f) && !err)
		err = -errno;
	return err;
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
