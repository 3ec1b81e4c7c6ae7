/* SPDX-License-Identifier: GPL-2.0-only */
/* seccomp.h — the seccomp filter that holds a descendant's ptrace hand-off requests, and its listener's calls. */
#ifndef MEMTRACK_TRACER_SECCOMP_H
#define MEMTRACK_TRACER_SECCOMP_H

#include <stdint.h>
#include <sys/types.h>

/* A held ptrace call: PTRACE_TRACEME, PTRACE_ATTACH or PTRACE_SEIZE. */
struct mt_seccomp_req {
	uint64_t id;		/* the notification's, to answer it */
	pid_t caller;		/* in the listener's PID namespace */
	pid_t target;		/* ptrace's pid argument, in the caller's namespace (0 for TRACEME) */
	uint32_t request;	/* PTRACE_TRACEME, PTRACE_ATTACH, PTRACE_SEIZE */
};

/* In the pre-exec child: the filter, for it and its descendants. The listener's fd, or -errno. Async-signal-safe. */
int mt_seccomp__install(void);
/* The next held call. 0, or -errno: -ENOENT when its caller was interrupted or died before it was read. */
int mt_seccomp__recv(int listener, struct mt_seccomp_req *req);
/* The held call runs, as it would without the filter. 0, or -errno: -ENOENT when its caller no longer waits. */
int mt_seccomp__continue(int listener, uint64_t id);

#endif /* MEMTRACK_TRACER_SECCOMP_H */
