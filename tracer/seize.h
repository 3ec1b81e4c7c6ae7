/* SPDX-License-Identifier: GPL-2.0-only */
/* seize.h — record --pid: a running process's threads seized, and at the end every tracee let go, none stopped. */
#ifndef MEMTRACK_TRACER_SEIZE_H
#define MEMTRACK_TRACER_SEIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct mt_bpf_session;
struct mt_seized;

/* pid names a live process, not one of its threads, nor a kernel thread, nor memtrack, and no one traces it: 0, or
 * -ESRCH, -EINVAL (a thread), -ENOEXEC (a kernel thread), -EOWNERDEAD (a zombie), -EPERM, -EBUSY (traced). */
int mt_seize__check(pid_t pid);
/* Every thread of pid seized with MT_PTRACE_OPTIONS, read again until none is new (a thread born meanwhile to one
 * seized already is memtrack's by PTRACE_O_TRACECLONE). *threads gets their count. 0 or -errno. */
int mt_seize__threads(pid_t pid, unsigned int *threads);
/* Its credentials are not the user's (uid, gid): another real, effective, saved or file-system uid or gid, or a
 * capability; true too when they cannot be read. */
bool mt_seize__privileged(pid_t pid, uid_t uid, gid_t gid);
/* Its parent, command name (/proc/PID/comm) and executable (/proc/PID/exe) into s; "" for a name unknown. */
void mt_seize__describe(pid_t pid, struct mt_seized *s);
/* Its command line as argv (NULL-terminated, one block to free); an empty one when it has none. NULL + errno. */
char **mt_seize__cmdline(pid_t pid);
/*
 * Every tracee of memtrack's let go without a signal: interrupted, waited for, detached. A hold signal BPF queued
 * is suppressed, a signal of the program's own at its delivery stop goes on to it, a group-stop stays. Read again
 * until no tracee is left (an event stop may have brought a new one). The number of threads detached.
 */
size_t mt_seize__detach_all(struct mt_bpf_session *bpf);

#endif /* MEMTRACK_TRACER_SEIZE_H */
