// SPDX-License-Identifier: GPL-2.0-only
/* kernel_caps.c — what the kernel and the machine offer the BPF session: its tick, uprobe_multi links, the load. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <zlib.h>

#include "tracer/bpf_session.h"
#include "tracer/kernel_caps.h"

/* CONFIG_HZ from the kernel's configuration (gzopen reads the plain /boot file as well); 0 when none says. */
unsigned int mt_kernel__hz(void)
{
	char path[PATH_MAX], line[128];
	const char *paths[] = { "/proc/config.gz", path };
	struct utsname u;
	unsigned int hz = 0;

	snprintf(path, sizeof(path), "/boot/config-%s", uname(&u) ? "" : u.release);
	for (size_t i = 0; i < 2 && !hz; i++) {
		gzFile f = gzopen(paths[i], "r");

		if (!f)
			continue;
		while (!hz && gzgets(f, line, sizeof(line)))
			if (sscanf(line, "CONFIG_HZ=%u", &hz) != 1 || hz < 10 || hz > 10000)
				hz = 0;	/* Kconfig offers 100 to 1000 */
		gzclose(f);
	}
	return hz;
}

/* A program that does nothing, loaded as an uprobe_multi one: its link tells whether the kernel has those. */
static int probe__multi_prog(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = MT_BPF_TRACE_UPROBE_MULTI);
	int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &opts);

	return fd < 0 ? -errno : fd;
}

/*
 * Whether the kernel has uprobe_multi links (6.6) whose pid filter is the process's, as libbpf probes it: a link
 * on "/" fails with EBADF where they exist, and pid -1 with EINVAL once the filter was fixed (6.10, and the stable
 * kernels it went to); the first ones filtered by thread, which would miss every thread but the leader.
 */
bool mt_kernel__has_uprobe_multi(void)
{
	unsigned long off = 0;
	int prog = probe__multi_prog(), fd;
	bool has = false;

	if (prog < 0)
		return false;
	fd = mt_bpf_session__uprobe_multi(prog, "/", &off, NULL, 1, MT_UPROBE_ENTRY, 0);
	if (fd == -EBADF) {
		fd = mt_bpf_session__uprobe_multi(prog, "/", &off, NULL, 1, MT_UPROBE_ENTRY, -1);
		has = fd == -EINVAL;
	}
	if (fd >= 0)
		close(fd);
	close(prog);
	return has;
}

/* The uprobe PMU's perf event type (4.17+), which perf-event uprobes are opened with. */
int mt_kernel__uprobe_pmu_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "re");
	int type = -1;

	if (!f)
		return -errno;
	if (fscanf(f, "%d", &type) != 1)
		type = -EINVAL;
	fclose(f);
	return type;
}

/* Tasks runnable on the machine now, this one included (/proc/loadavg's fourth field); 0 when unknown. */
unsigned int mt_kernel__runnable(void)
{
	FILE *f = fopen("/proc/loadavg", "re");
	unsigned int n = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%*f %*f %*f %u/", &n) != 1)
		n = 0;
	fclose(f);
	return n;
}
