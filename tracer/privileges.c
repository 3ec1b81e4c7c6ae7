/* privileges.c — checks before anything is loaded: BPF and uprobes allowed here, and the kernel's pids seen. */
#include <errno.h>
#include <linux/capability.h>
#include <stdbool.h>
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

#define MT_PID_NS_INIT_INO 0xeffffffcu	/* the kernel's PROC_PID_INIT_INO: the initial PID namespace */

/* BPF sees the kernel's pids, and this process those of its own PID namespace: in a nested one (a container
 * without --pid=host, unshare --pid) nothing would match, and nothing would be recorded. */
static int pid_ns__check(void)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st))
		return 0;	/* no namespaces: one set of pids */
	return st.st_ino == MT_PID_NS_INIT_INO ? 0 : -EXDEV;
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
	err = pid_ns__check();
	if (err)
		pr_err("recording needs the host's PID namespace (BPF sees the kernel's pids, not this namespace's): "
		       "run it on the host, or in a container started with --pid=host\n");
	return err;
}
