/* SPDX-License-Identifier: GPL-2.0-only */
/* spawn.h — the command, held in its TRACEME stop before exec, then turned into a seized tracee. */
#ifndef MEMTRACK_TRACER_SPAWN_H
#define MEMTRACK_TRACER_SPAWN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

struct mt_user;

/* Every tracee's ptrace options (<sys/ptrace.h>): its children, threads and execs are followed. */
#define MT_PTRACE_OPTIONS \
	(PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC)

/* The pre-exec child's steps. One that fails is sent back with its errno, and the child exits without exec. */
enum mt_spawn_step {
	MT_SPAWN_EXEC = 1,	/* execvp: the command cannot be run (126/127, as a shell says) */
	MT_SPAWN_TRACEME,	/* PTRACE_TRACEME */
	MT_SPAWN_SECCOMP,	/* the hand-off's filter (tracer/seccomp.c): sends the listener, or why there is none */
	MT_SPAWN_LISTENER,	/* sending the listener to memtrack */
	MT_SPAWN_GROUPS,	/* setgroups: the user's groups (tracer/user.c) */
	MT_SPAWN_GID,		/* setresgid */
	MT_SPAWN_UID,		/* setresuid */
	MT_SPAWN_STOP,		/* raise(SIGSTOP): the hold before exec */
};

/* The restore_* fields and what they restore are the caller's to set before mt_spawn__start. */
struct mt_spawn {
	pid_t pid;
	int err_fd;		/* the child's messages (mt_spawn__read), close-on-exec: EOF once it has exec'd */
	bool restore_nofile;	/* the tracer raised its open-file limit: the command gets nofile back */
	struct rlimit nofile;
	bool restore_nice;	/* the tracer raised its priority: the command gets its nice value back */
	int nice;
	bool handoff;		/* the child installs the hand-off's seccomp filter */
	const struct mt_user *user;	/* the command runs as this user (NULL, or not set: as memtrack) */
	int listener;		/* its listener, or -1 (set by mt_spawn__start) */
	int listener_errno;	/* why there is none, when the filter was asked for */
	int fail_step;		/* set when mt_spawn__start fails because a step of the child failed */
	int fail_errno;
};
/* Forked and held before exec; the child runs with orig_mask. 0 or -errno; -ECANCELED: the child could not be
 * set up (fail_step, fail_errno), and exited without exec. mt_spawn__fork, then mt_spawn__held. */
int mt_spawn__start(struct mt_spawn *sp, char *const *argv, const sigset_t *orig_mask);
/* mt_spawn__start in two halves, so that the child sets itself up while the tracer does other work: forked (0 or
 * -errno; sp->pid is 0 when it failed), then waited for at its stop before exec (mt_spawn__start's answers). */
int mt_spawn__fork(struct mt_spawn *sp, char *const *argv, const sigset_t *orig_mask);
int mt_spawn__held(struct mt_spawn *sp);
/* Seized with the fork, clone and exec events, and let go on to its exec. 0 or -errno. */
int mt_spawn__seize(struct mt_spawn *sp);
/* One message of the child's: 1 (*step, *err), 0 at EOF, -EAGAIN when none is there yet, else -errno. */
int mt_spawn__read(int fd, int *step, int *err);
/* Why a step failed, in one line (without the "cannot trace" that precedes it). */
void mt_spawn__describe(int step, int err, char *buf, size_t len);

#endif /* MEMTRACK_TRACER_SPAWN_H */
