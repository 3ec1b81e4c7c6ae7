/* SPDX-License-Identifier: GPL-2.0-only */
/* options.h — what `memtrack record` was asked for: filled by the CLI, read by the recording and the BPF session. */
#ifndef MEMTRACK_TRACER_OPTIONS_H
#define MEMTRACK_TRACER_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mt_options {
	const char *out_dir;	/* NULL: memtrack.<pid> */
	char *const *argv;	/* the command (NULL with pid) */
	int pid;		/* --pid: the running process to attach to (0: run argv) */
	size_t ring_bytes;	/* BPF ring buffer size, a power of two */
	uint32_t stack_bytes;	/* --stacks: raw stack bytes per definition (of MT_STACK_CHUNKs); 0: no stacks */
	uint32_t stack_sample;	/* --stack-sample: whole chains keep raw bytes one in N after the first ones (1: all) */
	bool exit_with_command;	/* --exit-with-command */
	bool no_handoff;	/* --no-handoff: no seccomp filter; descendants' ptrace calls fail as under any tracer */
	const char *user;	/* --user NAME: the command runs as NAME, DIR is NAME's (NULL: sudo's user, if any) */
	bool syscall_tracepoints;	/* --syscall-tracepoints: per-syscall tracepoints instead of the raw ones */
	bool precise_time;	/* --precise-time: bpf_ktime_get_ns instead of the kernel's tick */
	uint64_t ts_resolution;	/* --ts-resolution: allocation timestamps rounded to this many ns (1: exact) */
	bool quiet;
	bool paused;		/* --paused: allocation records off until the command writes "start" (tracer/control.h) */
	bool strict;		/* --strict: exit MT_EXIT_STRICT when an event was dropped or an attach failed */
	bool portable;		/* --portable: with stacks, modules copied into DIR/modules, not kept in the cache */
	bool no_rss;		/* --no-rss: no rss_stat program, no MT_REC_RSS records */
	bool drop_when_full;	/* --drop-when-full: no ring back-pressure (bpf/pressure.bpf.h) */
	bool fast_cxx;		/* --fast-cxx: C++ runtimes' deletes and new[] not probed (mt_allocators__fast_cxx) */
};

#endif /* MEMTRACK_TRACER_OPTIONS_H */
