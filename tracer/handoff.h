/* SPDX-License-Identifier: GPL-2.0-only */
/* handoff.h — tracees let go to a descendant's ptrace, and the processes memtrack records without tracing them. */
#ifndef MEMTRACK_TRACER_HANDOFF_H
#define MEMTRACK_TRACER_HANDOFF_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct mt_attach_worker;
struct mt_closer_notifs;
struct mt_consumer;

struct mt_handoff;
/* listener: the seccomp listener from the pre-exec child (the caller keeps it), or -1; root: the command, memtrack's
 * child; notifs: the table shared with the closer, or NULL. Binds the children that memtrack does not trace from
 * the consumer's fork records. NULL + errno. */
struct mt_handoff *mt_handoff__new(int listener, pid_t root, struct mt_attach_worker *a, struct mt_consumer *c,
				   struct mt_closer_notifs *notifs);
/* Ready (epoll) when a ptrace call is held, or a process memtrack does not trace has ended. */
int mt_handoff__fd(const struct mt_handoff *h);
void mt_handoff__on_ready(struct mt_handoff *h);
/*
 * At a stop of tid, after the loop's own work, instead of resuming it with sig: true when tid is being handed
 * off, and was let go (detached) or resumed to the stop of a SIGSTOP queued to it. false: resume it as usual.
 */
bool mt_handoff__at_stop(struct mt_handoff *h, pid_t tid, int status, int sig);
/* A tracee's exit: its hand-off, if one was under way, ends. */
void mt_handoff__on_exit(struct mt_handoff *h, pid_t tid);
/* Processes recorded but not traced (handed off, or born to one) that still run: the recording waits for them. */
size_t mt_handoff__live(const struct mt_handoff *h);
/* Hand-offs still under way stay in the closer's table, for it to answer once memtrack is gone. */
void mt_handoff__free(struct mt_handoff *h);

#endif /* MEMTRACK_TRACER_HANDOFF_H */
