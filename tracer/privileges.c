/* privileges.c — checks, before anything is loaded, that this process may use BPF and uprobes here. */
#include <errno.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "tracer.h"

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

int privileges__check(void)
{
	int err = caps__check();

	if (err) {
		pr_err("recording needs root, or the capabilities CAP_BPF and CAP_PERFMON (try sudo)\n");
		return err;
	}
	if (access(MT_BTF_PATH, R_OK)) {
		err = -errno;
		pr_err("this kernel has no BTF (%s is missing): it needs CONFIG_DEBUG_INFO_BTF=y\n", MT_BTF_PATH);
		return err;
	}
	return 0;
}
