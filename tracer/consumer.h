/* SPDX-License-Identifier: GPL-2.0-only */
/* consumer.h — the ring's records into the artifact, in order; the process tree learnt from them on the way. */
#ifndef MEMTRACK_TRACER_CONSUMER_H
#define MEMTRACK_TRACER_CONSUMER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct mt_attach_worker;
struct mt_bpf_session;
struct mt_rec_hdr;
struct mt_writer;

/* Also feeds the attach worker the requests of the attach ring. */
struct mt_consumer;
struct mt_consumer *mt_consumer__new(struct mt_bpf_session *s, struct mt_writer *w, struct mt_attach_worker *a);
/* Ready (epoll) when either ring has records. */
int mt_consumer__fd(const struct mt_consumer *c);
int mt_consumer__drain(struct mt_consumer *c);
/* The same, and past records still being written: what was reserved before the call is all written after it.
 * Before a record the tracer stamps now (an exit, the end), which may share its tick with the last of them. */
int mt_consumer__drain_past(struct mt_consumer *c);
/* The same, with the records still in the CPUs' batches (a quiet process's last calls): before a periodic flush. */
int mt_consumer__drain_batches(struct mt_consumer *c);
/* A record the tracer writes among BPF's, in its place after everything BPF recorded before the call: an exit. */
int mt_consumer__append(struct mt_consumer *c, struct mt_rec_hdr *rec);
/* At the end: every CPU's batch drained and written, the records behind a lost number too; the attach worker
 * writes straight to the writer from then on. */
void mt_consumer__finish(struct mt_consumer *c);
/* fn(ctx, parent, child) as each fork record of a child memtrack does not trace (MT_FORK_UNTRACED) arrives. */
void mt_consumer__set_untraced_fork(struct mt_consumer *c, void (*fn)(void *ctx, pid_t parent, pid_t child),
				    void *ctx);
void mt_consumer__add_process(struct mt_consumer *c, pid_t pid);
bool mt_consumer__is_process(const struct mt_consumer *c, pid_t pid);
/* The parent of a process seen forked (0: unknown or the command), and its MT_FORK_* flags. */
pid_t mt_consumer__parent(const struct mt_consumer *c, pid_t pid, uint32_t *flags);
/* Records not written because they were malformed: the end record counts them as drops. */
uint64_t mt_consumer__malformed_records(const struct mt_consumer *c);
/* Allocation records start off (--paused): written only between a start mark and a stop mark. */
void mt_consumer__set_paused(struct mt_consumer *c, bool paused);
void mt_consumer__free(struct mt_consumer *c);

#endif /* MEMTRACK_TRACER_CONSUMER_H */
