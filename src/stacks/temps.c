// SPDX-License-Identifier: GPL-2.0-only
/* temps.c — temporary allocations: each thread's last allocation remembered until it allocates again or it ends. */
#include <errno.h>
#include <stdlib.h>

#include "common/array.h"
#include "stacks/temps.h"

struct mt_temp_thread {
	uint64_t addr;
	uint32_t pid;
	bool set;
};

static uint64_t pend_key(uint32_t pid, uint64_t addr)
{
	return addr * 0x9e3779b97f4a7c15ull ^ pid;
}

static struct mt_temp_thread *thread_get(struct mt_temps *t, uint32_t tid, bool create)
{
	uint64_t *idx;

	if (t->last_idx && t->last_tid == tid)
		return &t->threads[t->last_idx - 1];
	idx = mt_u64map__find(&t->tids, tid);
	if (!idx) {
		if (!create || mt_array__grow((void **)&t->threads, &t->cap, t->n, sizeof(*t->threads)) ||
		    mt_u64map__put(&t->tids, tid, t->n, NULL) < 0)
			return NULL;
		t->threads[t->n++] = (struct mt_temp_thread){ 0 };
		idx = mt_u64map__find(&t->tids, tid);
	}
	t->last_tid = tid;
	t->last_idx = *idx + 1;
	return &t->threads[*idx];
}

int mt_temps__alloc(struct mt_temps *t, uint32_t pid, uint32_t tid, uint64_t addr)
{
	struct mt_temp_thread *th = thread_get(t, tid, true);
	uint64_t *owner;

	if (!th)
		return -ENOMEM;
	if (th->set && (owner = mt_u64map__find(&t->pend, pend_key(th->pid, th->addr))) && *owner == tid)
		mt_u64map__del(&t->pend, pend_key(th->pid, th->addr), NULL);
	*th = (struct mt_temp_thread){ addr, pid, true };
	return mt_u64map__put(&t->pend, pend_key(pid, addr), tid, NULL) < 0 ? -ENOMEM : 0;
}

bool mt_temps__free(struct mt_temps *t, uint32_t pid, uint32_t tid, uint64_t addr)
{
	uint64_t key = pend_key(pid, addr), *owner = mt_u64map__find(&t->pend, key);
	struct mt_temp_thread *th;
	uint32_t o;

	if (!owner)
		return false;
	o = (uint32_t)*owner;
	th = thread_get(t, o, false);
	if (!th || !th->set || th->pid != pid || th->addr != addr)
		return false;	/* another block's key */
	mt_u64map__del(&t->pend, key, NULL);
	th->set = false;
	return o == tid;
}

void mt_temps__release(struct mt_temps *t)
{
	mt_u64map__release(&t->pend);
	mt_u64map__release(&t->tids);
	free(t->threads);
	*t = (struct mt_temps){ 0 };
}
