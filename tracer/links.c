/* links.c — each tracked process's probe links, per allocator file; closed in the background when it exits. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "log.h"
#include "tracer.h"

#define CLOSERS_MAX 256		/* threads closing links at once; past that the loop closes them itself */

struct bound {
	pid_t pid;
	size_t file;		/* the attach worker's index of the file */
	uint64_t dev, ino;
	int fds[2];
	int nfds;
};

struct links {
	struct bpf_session *bpf;
	struct bound *v;
	size_t n, cap;
	pthread_mutex_t lock;
	pthread_cond_t idle;
	int closers;		/* background threads still closing */
};

struct close_job {
	struct links *l;
	int fd;
};

struct links *links__new(struct bpf_session *s)
{
	struct links *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->bpf = s;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->idle, NULL);
	return l;
}

bool links__has(const struct links *l, pid_t pid, size_t file)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].pid == pid && l->v[i].file == file)
			return true;
	return false;
}

/*
 * A link's pid filter holds the process's leader, and the kernel plants breakpoints only in that task's memory:
 * once the leader has called pthread_exit (a zombie, its memory gone from it) a new link would plant none, and the
 * file's calls would go unrecorded without a word. /proc/PID/stat gives the leader's own state.
 */
static bool leader__exited(pid_t pid)
{
	char path[64], line[512], *p;
	bool gone = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(line, sizeof(line), f) && (p = strrchr(line, ')')) && p[1] == ' ')
		gone = p[2] == 'Z' || p[2] == 'X';
	fclose(f);
	return gone;
}

int links__bind(struct links *l, pid_t pid, const struct link_file *f)
{
	struct bound b = { .pid = pid, .file = f->index, .dev = f->dev, .ino = f->ino };
	int err, i;

	if (links__has(l, pid, f->index))
		return 0;
	if (leader__exited(pid))
		return -EOWNERDEAD;
	if (mt_array__grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v)))
		return -ENOMEM;
	err = bpf_session__link_plan(l->bpf, f->path, f->plan, pid, b.fds, &b.nfds);
	if (!err)
		err = bpf_session__proc_file(l->bpf, pid, f->dev, f->ino, true);
	if (err) {
		for (i = 0; i < b.nfds; i++)
			close(b.fds[i]);
		return err;
	}
	l->v[l->n++] = b;
	return 0;
}

size_t links__files(const struct links *l, pid_t pid, size_t *out, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < l->n && n < max; i++)
		if (l->v[i].pid == pid)
			out[n++] = l->v[i].file;
	return n;
}

static void *close_job__run(void *arg)
{
	struct close_job *j = arg;
	struct links *l = j->l;

	close(j->fd);
	free(j);
	pthread_mutex_lock(&l->lock);
	if (!--l->closers)
		pthread_cond_broadcast(&l->idle);
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

/*
 * A link's close waits for RCU grace periods (20-40 ms here): one short-lived thread per link keeps the ptrace loop
 * going and lets the waits overlap, those of one process's entry and return links as well as those of many
 * exiting processes.
 */
static void links__close_fd(struct links *l, int fd)
{
	struct close_job *j = malloc(sizeof(*j));
	pthread_attr_t attr;
	pthread_t t;
	bool started = false;

	if (j) {
		*j = (struct close_job){ .l = l, .fd = fd };
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_mutex_lock(&l->lock);
		if (l->closers < CLOSERS_MAX) {
			started = !pthread_create(&t, &attr, close_job__run, j);
			l->closers += started;
		}
		pthread_mutex_unlock(&l->lock);
		pthread_attr_destroy(&attr);
	}
	if (started)
		return;
	free(j);
	close(fd);
}

void links__release(struct links *l, pid_t pid)
{
	size_t i = l->n;
	int j;

	while (i--) {
		if (l->v[i].pid != pid)
			continue;
		bpf_session__proc_file(l->bpf, pid, l->v[i].dev, l->v[i].ino, false);
		for (j = 0; j < l->v[i].nfds; j++)
			links__close_fd(l, l->v[i].fds[j]);
		l->v[i] = l->v[--l->n];
	}
}

void links__release_all(struct links *l)
{
	while (l->n)
		links__release(l, l->v[0].pid);
}

void links__free(struct links *l)
{
	if (!l)
		return;
	links__release_all(l);
	pthread_mutex_lock(&l->lock);
	while (l->closers)
		pthread_cond_wait(&l->idle, &l->lock);
	pthread_mutex_unlock(&l->lock);
	free(l->v);
	free(l);
}
