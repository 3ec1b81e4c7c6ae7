/* SPDX-License-Identifier: GPL-2.0-only */
/* kernel_caps.h — what the kernel and the machine offer the BPF session: its tick, uprobe_multi links, the load. */
#ifndef MEMTRACK_TRACER_KERNEL_CAPS_H
#define MEMTRACK_TRACER_KERNEL_CAPS_H

#include <stdbool.h>

/* CONFIG_HZ from the kernel's configuration (/proc/config.gz, /boot/config-*); 0 when none says. */
unsigned int mt_kernel__hz(void);
/* Whether the kernel has uprobe_multi links whose pid filter is the process's (6.10, and the stable kernels). */
bool mt_kernel__has_uprobe_multi(void);
/* The uprobe PMU's perf event type, or -errno. */
int mt_kernel__uprobe_pmu_type(void);
/* Tasks runnable on the machine now (/proc/loadavg); 0 when unknown. */
unsigned int mt_kernel__runnable(void);

#endif /* MEMTRACK_TRACER_KERNEL_CAPS_H */
