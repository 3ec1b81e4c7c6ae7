// SPDX-License-Identifier: GPL-2.0-only
/* callers.c — a process's C++ runtime operator new code, told to BPF: a malloc returning there was a new. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "bpf/memtrack.h"
#include "common/log.h"
#include "common/proc.h"
#include "tracer/allocators.h"
#include "tracer/bpf_session.h"
#include "tracer/callers.h"

/* One executable mapping of a file: file offsets [pgoff, pgoff + end - start) at start. */
struct text_map {
	unsigned long long start, end, pgoff;
};

static bool callers__has_file(const struct mt_callers *cs, uint64_t dev, uint64_t ino)
{
	uint32_t i;

	for (i = 0; i < cs->n && i < MT_CALLERS_MAX; i++)
		if (cs->c[i].dev == dev && cs->c[i].ino == ino)
			return true;
	return false;
}

/* The plan's callers that lie in m, at their addresses in the process. */
static void callers__add_map(struct mt_callers *cs, const struct mt_probe_plan *plan, const struct text_map *m,
			     uint64_t dev, uint64_t ino)
{
	const struct mt_probe_caller *pc;
	size_t i;

	for (i = 0; i < plan->ncallers && cs->n < MT_CALLERS_MAX; i++) {
		pc = &plan->callers[i];
		if (pc->lo < m->pgoff || pc->hi > m->pgoff + (m->end - m->start))
			continue;
		cs->c[cs->n++] = (struct mt_caller){ .lo = m->start + pc->lo - m->pgoff, .hi = m->start + pc->hi - m->pgoff,
						     .dev = dev, .ino = ino, .func = pc->func,
						     .allocator = pc->allocator };
	}
}

/* /proc/PID/maps: the executable mappings of (dev, ino), in the kernel's dev_t as BPF reads s_dev. */
static int callers__read_maps(struct mt_callers *cs, pid_t pid, uint64_t dev, uint64_t ino,
			      const struct mt_probe_plan *plan)
{
	char path[64], line[512];
	struct mt_proc_map pm;
	struct text_map m;
	uint32_t before = cs->n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!mt_proc__maps_line(line, &pm) || !(pm.prot & PROT_EXEC) || pm.ino != ino || pm.dev != dev)
			continue;
		m = (struct text_map){ .start = pm.start, .end = pm.end, .pgoff = pm.pgoff };
		callers__add_map(cs, plan, &m, dev, ino);
	}
	fclose(f);
	return cs->n > before ? 0 : -ENOENT;
}

/* The plan's callers as file offsets, for BPF to place in the processes that map the file later. */
static int callers__tell_file(struct mt_bpf_session *s, uint64_t dev, uint64_t ino, const struct mt_probe_plan *plan)
{
	struct text_map whole = { .start = 0, .end = UINT64_MAX, .pgoff = 0 };
	struct mt_callers cs = { .n = 0 };

	callers__add_map(&cs, plan, &whole, dev, ino);
	return mt_bpf_session__caller_file(s, dev, ino, &cs);
}

int mt_callers__bind(struct mt_bpf_session *s, pid_t pid, uint64_t dev, uint64_t ino,
		     const struct mt_probe_plan *plan)
{
	struct mt_callers cs = { .n = 0 };
	int err;

	if (!plan->ncallers)
		return 0;
	err = callers__tell_file(s, dev, ino, plan);
	if (!err)
		err = mt_bpf_session__callers_get(s, pid, &cs);
	if (err == -ENOENT)
		err = 0;
	if (!err && callers__has_file(&cs, dev, ino))
		return 0;
	if (!err)
		err = callers__read_maps(&cs, pid, dev, ino, plan);
	if (!err)
		err = mt_bpf_session__callers_set(s, pid, &cs);
	if (err)
		pr_warn("process %d: cannot tell BPF where its operator new is (%s): its new calls count as malloc\n",
			pid, strerror(-err));
	return err;
}
