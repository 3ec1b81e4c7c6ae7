// SPDX-License-Identifier: GPL-2.0-only
/* seccomp.c — the filter on ptrace(TRACEME, ATTACH, SEIZE) that lets memtrack hand a tracee off; its listener. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tracer/seccomp.h"

#define NR_PTRACE_X32 (0x40000000u | 521)	/* __X32_SYSCALL_BIT | x32's own ptrace entry */
#define NR_PTRACE_I386 26u			/* int 0x80 */
#define REQ_LO offsetof(struct seccomp_data, args[0])	/* x86 is little-endian: the low word first */

/*
 * ptrace of every x86 ABI: x86-64, x32 and i386 (a 32-bit helper must not slip past). Only the three requests that
 * make a task someone's tracee are held (SECCOMP_RET_USER_NOTIF); every other request, and every other syscall,
 * is allowed in the filter. Those get a verdict that does not depend on their arguments, which the kernel's
 * action cache (5.11+) gives without running the filter at all. Jumps count from the next instruction.
 */
static const struct sock_filter filter[] = {
	/* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	/* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 4),
	/* 2 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	/* 3 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ptrace, 5, 0),
	/* 4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_PTRACE_X32, 4, 0),
	/* 5 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	/* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 0, 10),
	/* 7 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	/* 8 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_PTRACE_I386, 0, 8),
	/* 9 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, REQ_LO + 4),
	/* 10 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 6),	/* a request above 32 bits names none */
	/* 11 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, REQ_LO),
	/* 12 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PTRACE_TRACEME, 3, 0),
	/* 13 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PTRACE_ATTACH, 2, 0),
	/* 14 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PTRACE_SEIZE, 1, 0),
	/* 15 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	/* 16 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	/* 17 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

/*
 * Without SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: with it, a caller whose notification was read sleeps killable
 * only, PTRACE_INTERRUPT cannot stop it, and a TRACEME caller (the subject of its own request) could never be let
 * go. The listener is close-on-exec: the command never holds it.
 */
int mt_seccomp__install(void)
{
	struct sock_fprog prog = { .len = sizeof(filter) / sizeof(filter[0]), .filter = (struct sock_filter *)filter };
	long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);

	return fd < 0 ? -errno : (int)fd;
}

int mt_seccomp__recv(int listener, struct mt_seccomp_req *req)
{
	struct seccomp_notif n;

	memset(&n, 0, sizeof(n));	/* the kernel refuses a buffer that is not zeroed */
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &n))
		return -errno;
	req->id = n.id;
	req->caller = n.pid;
	req->request = (uint32_t)n.data.args[0];
	req->target = req->request == PTRACE_TRACEME ? 0 : (pid_t)n.data.args[1];
	return 0;
}

int mt_seccomp__continue(int listener, uint64_t id)
{
	struct seccomp_notif_resp r = { .id = id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };

	return ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &r) ? -errno : 0;
}
