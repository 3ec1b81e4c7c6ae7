/* SPDX-License-Identifier: GPL-2.0-only */
/* links.h — which allocator files each process has probes for; their links, given to the closer at exit. */
#ifndef MEMTRACK_TRACER_LINKS_H
#define MEMTRACK_TRACER_LINKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mt_bpf_session;
struct mt_probe_plan;

/* A file to bind, as the attach worker knows it. */
struct mt_link_file {
	size_t index;		/* the attach worker's number for the file */
	uint64_t dev, ino;
	const char *path;	/* for the kernel to find the inode: /proc/self/fd/N of an fd kept open */
	const struct mt_probe_plan *plan;
};

struct mt_links;
struct mt_links *mt_links__new(struct mt_bpf_session *s, int closer);	/* closer: its socket, or -1 */
bool mt_links__has(const struct mt_links *l, pid_t pid, size_t file);
/* Before the first bind of a file for pid: -EOWNERDEAD when its leader has let its memory go while another thread
 * runs on (the file is entered, unprobed), -ESRCH when the process exits, else 0. */
int mt_links__check_leader(struct mt_links *l, pid_t pid, const struct mt_link_file *f);
/* The file's probes bound to pid (0 when they are already). 0 or -errno (-EMFILE: out of fds). */
int mt_links__bind(struct mt_links *l, pid_t pid, const struct mt_link_file *f);
/* The indices of pid's files, at most max of them. */
size_t mt_links__files(const struct mt_links *l, pid_t pid, size_t *out, size_t max);
/* pid's links given up: to the closer, or closing in a thread. */
void mt_links__release(struct mt_links *l, pid_t pid);
/* Every link goes to the closer (or, without one, starts closing in a thread: mt_links__free waits for those). */
void mt_links__release_all(struct mt_links *l);
void mt_links__free(struct mt_links *l);

#endif /* MEMTRACK_TRACER_LINKS_H */
