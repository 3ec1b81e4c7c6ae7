/* SPDX-License-Identifier: GPL-2.0-only */
/* closer.h — probe link fds closed in the background, where their RCU grace periods hold no one up. */
#ifndef MEMTRACK_TRACER_CLOSER_H
#define MEMTRACK_TRACER_CLOSER_H

#include <stdint.h>
#include <sys/resource.h>

/* Threads that close fds, each its own. */
struct mt_close_pool;
struct mt_close_pool *mt_close_pool__new(void);			/* NULL + errno */
void mt_close_pool__close(struct mt_close_pool *p, int fd);	/* in a thread of its own, else at once */
uint64_t mt_close_pool__closed(struct mt_close_pool *p);	/* closes the threads finished */
void mt_close_pool__free(struct mt_close_pool *p);		/* once its threads are done */

/*
 * The seccomp notifications memtrack has read and not answered yet (tracer/handoff.c), in memory it shares with
 * the closer: the closer answers them once memtrack is gone, whatever its end. 0 is a free slot.
 */
#define MT_CLOSER_NOTIFS 64
struct mt_closer_notifs {
	uint64_t id[MT_CLOSER_NOTIFS];
};
struct mt_closer_notifs *mt_closer__notifs_new(void);	/* before mt_closer__start; NULL + errno */

/* The closer: a process of memtrack's that outlives it, closing what it is handed. notifs may be NULL. Its socket,
 * or -errno; *middle: the child that forks it and exits, for mt_closer__started. */
int mt_closer__start(const struct mt_closer_notifs *notifs, pid_t *middle);
/* The middle child reaped, before anything waits for any child: 0 when the closer runs, else -errno and the socket
 * closed (what was sent on it is lost: the run goes on without a closer). Not waited for at the start, it runs
 * beside memtrack's first steps. */
int mt_closer__started(int sock, pid_t middle);
/* The hand-off's seccomp listener: the closer keeps it, and once memtrack is gone it lets each held ptrace call
 * run, until no process uses the filter. 0 or -errno. */
int mt_closer__keep_listener(int sock, int listener);
/* BPF's map `held`: once memtrack is gone, whatever its end, the closer SIGCONTs the processes of the threads BPF
 * held with SIGSTOP that memtrack did not resume. 0 or -errno (then BPF must not hold with SIGSTOP). */
int mt_closer__keep_held(int sock, int held_map);
/* The warm start's lock (tracer/bpf_warm.c): the closer lets it go once memtrack is gone and every link it was
 * handed is closed, so that no program of this run runs when the next one resets the maps. 0 or -errno. */
int mt_closer__keep_warm(int sock, int lock_fd);
/* The control FIFO's directory: removed by the closer when memtrack ends without removing it (killed). */
int mt_closer__keep_control(int sock, int dir_fd);
/* The same without a closer: a process of its own, forked now, serves the listener once memtrack is gone. */
int mt_closer__leave_listener(int listener, const struct mt_closer_notifs *notifs);
int mt_closer__give(int sock, int fd);			/* closes fd when it returns 0 */
/* mt_closer__give in two steps, for a caller with more copies of what fd refers to: the closer holds fd (sent, not
 * closed) until the ack, which the caller sends once it has closed all of its own. */
int mt_closer__send(int sock, int fd);
void mt_closer__ack(int sock);
/* Soft open-file limit to the hard one (links are fds); *old gets the limits before. -EEXIST: soft is hard already. */
int mt_closer__raise_fd_limit(struct rlimit *old);

#endif /* MEMTRACK_TRACER_CLOSER_H */
