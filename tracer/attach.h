/* SPDX-License-Identifier: GPL-2.0-only */
/* attach.h — the attach worker: looks at each requested file once, probes it, lets its held threads go. */
#ifndef MEMTRACK_TRACER_ATTACH_H
#define MEMTRACK_TRACER_ATTACH_H

#include <stdbool.h>
#include <sys/types.h>

struct mt_attach_req;
struct mt_bpf_session;
struct mt_module_files;
struct mt_rec_hdr;
struct mt_writer;

/* struct mt_attach is the attach record (bpf/memtrack.h): the worker is mt_attach_worker. */
struct mt_attach_worker;
/* closer: the closer's socket, or -1. NULL + errno. */
struct mt_attach_worker *mt_attach__new(struct mt_bpf_session *s, struct mt_writer *w, struct mt_module_files *mods,
					int closer);
/* Where the worker's attach and mapping records go: the consumer's order (mt_consumer__append), numbered after every
 * record of the ring's so far. Until it is set, straight to the writer. */
typedef int (*mt_attach_sink_fn)(void *ctx, struct mt_rec_hdr *rec);
void mt_attach__set_sink(struct mt_attach_worker *a, mt_attach_sink_fn fn, void *ctx);
/* A request from the attach ring: the file classified (once), probed for the process, logged at the thread's stop. */
int mt_attach__on_request(struct mt_attach_worker *a, const struct mt_attach_req *r);
/* record --pid: the executable file mappings pid has, recorded, and their files probed for it as requests would be
 * (reason MT_ATTACH_SEIZE). 0 or -errno. */
int mt_attach__seized(struct mt_attach_worker *a, pid_t pid);
/* A held thread's SIGSTOP (SI_KERNEL): its requests logged as resumed. false: no request held it. */
bool mt_attach__on_hold_stop(struct mt_attach_worker *a, pid_t tid);
/* The exec event stop: the image's requests logged; a thread that was not the leader gets the process's links. */
void mt_attach__on_exec_stop(struct mt_attach_worker *a, pid_t pid, pid_t former_tid);
/* A fork child's first stop: the parent's files bound to it. */
void mt_attach__on_fork(struct mt_attach_worker *a, pid_t parent, pid_t child);
/* The same for a child that memtrack does not trace (MT_FORK_UNTRACED), when its fork record is read. */
void mt_attach__on_untraced_fork(struct mt_attach_worker *a, pid_t parent, pid_t child);
/* Allocator files bound to a process memtrack does not trace, after it could run (MT_DROP_HANDOFF). */
uint64_t mt_attach__late_binds(const struct mt_attach_worker *a);
void mt_attach__on_exit(struct mt_attach_worker *a, pid_t tid);
/* The last log records written and every link given up (see mt_links__release_all); after a flush it uses neither
 * the writer nor the BPF session. */
void mt_attach__flush(struct mt_attach_worker *a);
void mt_attach__free(struct mt_attach_worker *a);

#endif /* MEMTRACK_TRACER_ATTACH_H */
