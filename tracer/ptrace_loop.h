/* SPDX-License-Identifier: GPL-2.0-only */
/* ptrace_loop.h — every stop of every tracee handled, signals forwarded, until the tree (or the command) ends. */
#ifndef MEMTRACK_TRACER_PTRACE_LOOP_H
#define MEMTRACK_TRACER_PTRACE_LOOP_H

#include <stdbool.h>
#include <sys/types.h>

struct mt_attach_worker;
struct mt_bpf_session;
struct mt_cmdlines;
struct mt_consumer;
struct mt_handoff;
struct mt_spawn;
struct mt_writer;

/* The caller fills everything above exec_errno; the loop sets the rest. */
struct mt_ptrace_loop {
	struct mt_spawn *sp;
	struct mt_bpf_session *bpf;	/* the records' clock */
	struct mt_consumer *cons;
	struct mt_attach_worker *attach;
	struct mt_cmdlines *cmdlines;
	struct mt_handoff *handoff;	/* tracees let go to a descendant's ptrace; processes recorded untraced */
	struct mt_writer *w;
	int sig_fd;		/* signalfd: SIGCHLD, and the signals that would end memtrack (record.c) */
	bool exit_with_command;	/* stop when the command exits, not when its last descendant does */
	bool quiet;
	bool attached;		/* record --pid: the root was seized running, and signals to memtrack detach */
	int exec_errno;		/* set when the command could not be exec'd */
	int root_status;
	bool detached;		/* record --pid: memtrack was told to stop before the process ended */
};
/* 0 when the command ended (its wait status in root_status) or, attached, memtrack was told to stop; or -errno. */
int mt_ptrace_loop__run(struct mt_ptrace_loop *l);
/*
 * A stop of tid's at the delivery of sig is one of BPF's holds (watch.bpf.h), to suppress. restored: it was held
 * because a C++ exception begins inside its return-probed new (bpf/memtrack.h, MT_COOKIE_THROWS), and its return
 * address is back where the uretprobe had put its trampoline, so that the unwinder finds the caller's frame.
 * pressured: it was held because it allocated while the ring was over half full (bpf/pressure.bpf.h).
 */
bool mt_ptrace_loop__take_hold(struct mt_bpf_session *bpf, pid_t tid, int sig, bool *restored, bool *pressured);

#endif /* MEMTRACK_TRACER_PTRACE_LOOP_H */
