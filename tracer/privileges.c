// SPDX-License-Identifier: GPL-2.0-only
/* privileges.c — checks before anything is loaded: BPF and uprobes allowed here, and a /proc of our pids. */
#include <errno.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/log.h"
#include "tracer/privileges.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define MT_BTF_PATH "/sys/kernel/btf/vmlinux"

static bool cap__effective(const struct __user_cap_data_struct data[2], int cap)
{
	return data[cap / 32].effective & (1u << (cap % 32));
}

static int caps__check(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	if (cap__effective(data, CAP_SYS_ADMIN))
		return 0;
	if (cap__effective(data, CAP_BPF) && cap__effective(data, CAP_PERFMON))
		return 0;
	return -EPERM;
}

#define MT_USER_NS_INIT_INO 0xeffffffdu	/* the kernel's PROC_USER_INIT_INO: the initial user namespace */

/* BPF and uprobes ask for capabilities in the initial user namespace: a container's root in its own has none. */
static int user_ns__check(void)
{
	struct stat st;

	if (stat("/proc/self/ns/user", &st))
		return 0;	/* no namespaces: the capabilities seen are the kernel's */
	return st.st_ino == MT_USER_NS_INIT_INO ? 0 : -EPERM;
}

/* memtrack, BPF and the user speak of the pids of memtrack's PID namespace (tracer/bpf_session.c), and memtrack
 * reads them in /proc: a /proc of another namespace (a parent's, kept by unshare --pid without --mount-proc) would
 * name other processes. /proc/self is this process's pid in /proc's namespace, or nothing when it has none there. */
static int proc__check(void)
{
	char buf[32];
	ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);

	if (n <= 0)
		return -EXDEV;
	buf[n] = 0;
	return strtol(buf, NULL, 10) == getpid() ? 0 : -EXDEV;
}

int mt_privileges__check(void)
{
	int err = caps__check();

	if (err) {
		pr_err("recording needs root, or the capabilities CAP_BPF and CAP_PERFMON (try sudo, or give them to "
		       "the binary: setcap cap_bpf,cap_perfmon+ep)\n");
		return err;
	}
	if (access(MT_BTF_PATH, R_OK)) {
		err = -errno;
		pr_err("this kernel has no BTF (%s is missing): it needs CONFIG_DEBUG_INFO_BTF=y\n", MT_BTF_PATH);
		return err;
	}
	err = user_ns__check();
	if (err) {
		pr_err("recording needs CAP_BPF and CAP_PERFMON in the host's user namespace, which the root of a user "
		       "namespace (a rootless or user-namespaced container) does not have: run it on the host, or in a "
		       "container without a user namespace, with those capabilities\n");
		return err;
	}
	err = proc__check();
	if (err)
		pr_err("/proc belongs to another PID namespace than memtrack's (unshare --pid without --mount-proc?): "
		       "mount this namespace's (unshare --mount-proc, or mount -t proc proc /proc in a mount namespace)\n");
	return err;
}
