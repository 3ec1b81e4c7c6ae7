// SPDX-License-Identifier: GPL-2.0-only
/* addrspace.c — per-process mapping tables: sorted arrays, edited the way the kernel edits a process's VMAs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "unwind/addrspace.h"

void mt_aspaces__init(struct mt_aspaces *as, struct mt_modules *mods)
{
	memset(as, 0, sizeof(*as));
	as->mods = mods;
	as->next_gen = 1;
}

static void aspace_free(struct mt_aspace *s)
{
	if (!s)
		return;
	free(s->maps);
	free(s);
}

void mt_aspaces__release(struct mt_aspaces *as)
{
	size_t i;

	for (i = 0; i < as->count; i++)
		aspace_free(as->spaces[i]);
	free(as->spaces);
	mt_u64map__release(&as->by_pid);
	memset(as, 0, sizeof(*as));
}

struct mt_aspace *mt_aspaces__get(const struct mt_aspaces *as, uint32_t pid)
{
	uint64_t *idx = mt_u64map__find(&as->by_pid, pid);

	return idx ? as->spaces[*idx] : NULL;
}

/* Installs s as pid's address space (the old one, if any, is freed). */
static int aspaces_set(struct mt_aspaces *as, uint32_t pid, struct mt_aspace *s)
{
	uint64_t *idx = mt_u64map__find(&as->by_pid, pid);
	int err;

	if (idx) {
		aspace_free(as->spaces[*idx]);
		as->spaces[*idx] = s;
		return 0;
	}
	if (mt_array__grow((void **)&as->spaces, &as->cap, as->count, sizeof(*as->spaces)))
		return -ENOMEM;
	err = mt_u64map__put(&as->by_pid, pid, as->count, NULL);
	if (err < 0)
		return err;
	as->spaces[as->count++] = s;
	return 0;
}

static struct mt_aspace *aspaces_get_or_new(struct mt_aspaces *as, uint32_t pid)
{
	struct mt_aspace *s = mt_aspaces__get(as, pid);

	if (s)
		return s;
	s = calloc(1, sizeof(*s));
	if (!s || aspaces_set(as, pid, s)) {
		free(s);
		return NULL;
	}
	return s;
}

static int aspace_reserve(struct mt_aspace *s, size_t more)
{
	struct mt_map *maps;
	size_t cap;

	if (s->count + more <= s->cap)
		return 0;
	cap = s->cap ? s->cap * 2 : 16;
	while (cap < s->count + more)
		cap *= 2;
	maps = realloc(s->maps, cap * sizeof(*maps));
	if (!maps)
		return -ENOMEM;
	s->maps = maps;
	s->cap = cap;
	return 0;
}

/* Removes [lo, hi): mappings inside go, mappings it cuts keep their outside parts (pgoff follows the start). */
static int aspace_unmap(struct mt_aspace *s, uint64_t lo, uint64_t hi)
{
	size_t i = 0;
	struct mt_map *m, tail;
	int err;

	while (i < s->count) {
		m = &s->maps[i];
		if (m->end <= lo || m->start >= hi) {
			i++;
			continue;
		}
		if (m->start < lo && m->end > hi) {	/* a hole in the middle: split */
			err = aspace_reserve(s, 1);
			if (err)
				return err;
			m = &s->maps[i];
			tail = *m;
			tail.pgoff += hi - m->start;
			tail.start = hi;
			m->end = lo;
			memmove(&s->maps[i + 2], &s->maps[i + 1], (s->count - i - 1) * sizeof(*m));
			s->maps[i + 1] = tail;
			s->count++;
			return 0;
		}
		if (m->start < lo) {
			m->end = lo;
			i++;
		} else if (m->end > hi) {
			m->pgoff += hi - m->start;
			m->start = hi;
			i++;
		} else {
			memmove(m, m + 1, (s->count - i - 1) * sizeof(*m));
			s->count--;
		}
	}
	return 0;
}

/* The load bias from the file offset the mapping starts at; the module is opened here, once per module. */
static struct mt_map *map_bias(struct mt_map *m)
{
	uint64_t vaddr;

	if (m->bias_tried)
		return m;
	m->bias_tried = true;
	if (!m->mod || mt_module__open(m->mod) || mt_module__offset_to_vaddr(m->mod, m->pgoff, &vaddr))
		return m;
	m->bias = m->start - vaddr;
	m->has_bias = true;
	return m;
}

static int aspace_map(struct mt_aspaces *as, const struct mt_mapping *rec)
{
	struct mt_aspace *s = aspaces_get_or_new(as, rec->hdr.pid);
	struct mt_map m = { rec->start, rec->end, rec->pgoff, rec->prot };
	size_t i;
	int err;

	if (!s)
		return -ENOMEM;
	if (rec->end <= rec->start)
		return 0;
	m.mod = mt_modules__get(as->mods, rec->dev, rec->ino);
	if (!m.mod)
		return -ENOMEM;
	err = aspace_unmap(s, m.start, m.end);
	if (!err)
		err = aspace_reserve(s, 1);
	if (err)
		return err;
	for (i = s->count; i && s->maps[i - 1].start > m.start; i--)
		;
	memmove(&s->maps[i + 1], &s->maps[i], (s->count - i) * sizeof(m));
	s->maps[i] = m;
	s->count++;
	s->gen = as->next_gen++;
	return 0;
}

static int aspace_fork(struct mt_aspaces *as, uint32_t parent, uint32_t child)
{
	struct mt_aspace *p = mt_aspaces__get(as, parent), *c;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (p && p->count) {
		c->maps = malloc(p->count * sizeof(*c->maps));
		if (!c->maps) {
			free(c);
			return -ENOMEM;
		}
		memcpy(c->maps, p->maps, p->count * sizeof(*c->maps));
		c->count = c->cap = p->count;
	}
	c->gen = as->next_gen++;
	if (aspaces_set(as, child, c)) {
		aspace_free(c);
		return -ENOMEM;
	}
	return 0;
}

static int aspace_munmap(struct mt_aspaces *as, const struct mt_syscall *sc)
{
	struct mt_aspace *s = mt_aspaces__get(as, sc->hdr.pid);
	int err;

	if (!s || sc->ret < 0 || !sc->size)
		return 0;
	err = aspace_unmap(s, sc->addr, sc->addr + sc->size);
	s->gen = as->next_gen++;
	return err;
}

int mt_aspaces__apply(struct mt_aspaces *as, const struct mt_rec_hdr *rec)
{
	struct mt_aspace *s;

	switch (rec->type) {
	case MT_REC_FILE:
		return mt_modules__describe_rec(as->mods, rec);
	case MT_REC_MAPPING:
		if (rec->size < sizeof(struct mt_mapping))
			return 0;
		return aspace_map(as, (const struct mt_mapping *)rec);
	case MT_REC_FORK:
		if (rec->size < sizeof(struct mt_fork))
			return 0;
		return aspace_fork(as, rec->pid, ((const struct mt_fork *)rec)->child);
	case MT_REC_EXEC:
		s = mt_aspaces__get(as, rec->pid);
		if (s) {
			s->count = 0;
			s->gen = as->next_gen++;
		}
		return 0;
	case MT_REC_SYSCALL:
		if (rec->size < sizeof(struct mt_syscall) || ((const struct mt_syscall *)rec)->sys != MT_SYS_MUNMAP)
			return 0;
		return aspace_munmap(as, (const struct mt_syscall *)rec);
	default:
		return 0;
	}
}

const struct mt_map *mt_aspace__find(struct mt_aspace *s, uint64_t addr)
{
	size_t lo = 0, hi = s ? s->count : 0, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (addr < s->maps[mid].start)
			hi = mid;
		else if (addr >= s->maps[mid].end)
			lo = mid + 1;
		else
			return map_bias(&s->maps[mid]);
	}
	return NULL;
}

const struct mt_map *mt_aspace__find_image(struct mt_aspace *s, uint64_t addr)
{
	const struct mt_map *m = mt_aspace__find(s, addr);
	size_t i;

	if (m)
		return m->has_bias ? m : NULL;
	for (i = 0; s && i < s->count; i++) {
		m = map_bias(&s->maps[i]);
		if (m->has_bias && addr >= m->bias + m->mod->min_vaddr && addr < m->bias + m->mod->max_vaddr)
			return m;
	}
	return NULL;
}
