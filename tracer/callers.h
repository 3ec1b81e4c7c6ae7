/* SPDX-License-Identifier: GPL-2.0-only */
/* callers.h — a process's C++ runtime operator new code, told to BPF: a malloc returning there was a new. */
#ifndef MEMTRACK_TRACER_CALLERS_H
#define MEMTRACK_TRACER_CALLERS_H

#include <stdint.h>
#include <sys/types.h>

struct mt_bpf_session;
struct mt_probe_plan;

/* Where the plan's callers (file dev, ino) are mapped in pid, added to pid's entry in BPF; nothing when the plan has
 * none or the entry holds the file already (a fork child's, copied by BPF). 0 or -errno. */
int mt_callers__bind(struct mt_bpf_session *s, pid_t pid, uint64_t dev, uint64_t ino,
		     const struct mt_probe_plan *plan);

#endif /* MEMTRACK_TRACER_CALLERS_H */
