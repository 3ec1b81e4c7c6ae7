// SPDX-License-Identifier: GPL-2.0-only
/* floor.bpf.c — empty uprobe, uretprobe and sys_exit programs: the least any probe at memtrack's sites can cost. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
char LICENSE[] SEC("license") = "GPL";

SEC("uprobe")
int floor_enter(void *ctx)
{
	return 0;
}

SEC("uretprobe")
int floor_return(void *ctx)
{
	return 0;
}

/* -k session: one uprobe session link, whose entry run declines the return (non-zero), as a shared link's does
 * for a process outside the tree; -k session-ret accepts it (returns 0 at the entry). */
SEC("uprobe")
int floor_session(void *ctx)
{
	return 1;
}

SEC("uprobe")
int floor_session_ret(void *ctx)
{
	return 0;
}

/* With -s: memtrack's memory-syscall hook, empty. Every syscall of the machine runs it, and so does the syscall
 * that the uretprobe trampoline makes at each malloc return. */
SEC("tp_btf/sys_exit")
int floor_sys_exit(void *ctx)
{
	return 0;
}
