// SPDX-License-Identifier: GPL-2.0-only
/* mapped.c — the anonymous private mappings of one address space, from its memory syscalls: ranges by address. */
/*
 * The kernel's rules, followed from the calls' arguments and results alone: lengths round up to the page; a mapping
 * (MAP_FIXED or not) ends whatever it lands on; munmap ends any part, splitting a range; mremap moves the range at
 * its old address (in place when the result is that address), ending its old place unless MREMAP_DONTUNMAP; brk
 * maps or unmaps between the old and the new break, page-rounded, from the first break the address space is seen
 * with. A range keeps who made it and the call path of the call that made it (its tag: the syscall record's stack,
 * 0 without one); adjacent ranges of the same maker and tag are one. A holder of the books may be told of every
 * change to the program's ranges, by tag (mt_mapped__set_note).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "model/mapped.h"

struct range {
	uint64_t lo, hi;		/* [lo, hi), page-aligned */
	uint64_t tag;			/* the stack of the call that made it (0: none) */
	uint8_t by;			/* enum mt_mapped_by */
};

struct mt_mapped {
	struct range *r;		/* by address, apart */
	size_t n, cap;
	uint64_t bytes[MT_MAPPED__COUNT];
	bool brk_known;			/* a brk call was seen since the address space began */
	uint64_t brk;			/* the break then, page-rounded up */
	mt_mapped_note_fn note;		/* told of the program's ranges' changes (NULL: nobody) */
	void *note_ctx;
};

struct mt_mapped *mt_mapped__new(void)
{
	return calloc(1, sizeof(struct mt_mapped));
}

void mt_mapped__free(struct mt_mapped *mm)
{
	if (!mm)
		return;
	free(mm->r);
	free(mm);
}

void mt_mapped__set_note(struct mt_mapped *mm, mt_mapped_note_fn fn, void *ctx)
{
	mm->note = fn;
	mm->note_ctx = ctx;
}

/* bytes more (two's complement: less) in ranges of by and tag. */
static void count(struct mt_mapped *mm, uint8_t by, uint64_t tag, uint64_t bytes)
{
	mm->bytes[by] += bytes;
	if (mm->note && by == MT_MAPPED_PROGRAM)
		mm->note(mm->note_ctx, tag, (int64_t)bytes);
}

/* Every program range told to the note as gone (sign -1) or come (a copy's, +1). */
static void note_all(struct mt_mapped *mm, int64_t sign)
{
	size_t i;

	for (i = 0; mm->note && i < mm->n; i++)
		if (mm->r[i].by == MT_MAPPED_PROGRAM)
			mm->note(mm->note_ctx, mm->r[i].tag, sign * (int64_t)(mm->r[i].hi - mm->r[i].lo));
}

void mt_mapped__clear(struct mt_mapped *mm)
{
	note_all(mm, -1);
	mm->n = 0;
	memset(mm->bytes, 0, sizeof(mm->bytes));
	mm->brk_known = false;
	mm->brk = 0;
}

int mt_mapped__copy(struct mt_mapped *dst, const struct mt_mapped *src)
{
	struct range *r = NULL;

	if (src->n) {
		r = malloc(src->n * sizeof(*r));
		if (!r)
			return -ENOMEM;
		memcpy(r, src->r, src->n * sizeof(*r));
	}
	note_all(dst, -1);
	free(dst->r);
	*dst = *src;
	dst->r = r;
	dst->cap = src->n;
	note_all(dst, 1);
	return 0;
}

uint64_t mt_mapped__bytes(const struct mt_mapped *mm, enum mt_mapped_by by)
{
	return by < MT_MAPPED__COUNT ? mm->bytes[by] : 0;
}

static uint64_t page_up(uint64_t x)
{
	return (x + MT_MAPPED_PAGE - 1) & ~(MT_MAPPED_PAGE - 1);
}

/* The end of [addr, addr + len) page-rounded, kept from wrapping. */
static uint64_t range_end(uint64_t addr, uint64_t len)
{
	uint64_t end = addr + page_up(len);

	return end < addr ? UINT64_MAX & ~(MT_MAPPED_PAGE - 1) : end;
}

/* The first range that ends above addr: the only one that may hold it. */
static size_t first_above(const struct mt_mapped *mm, uint64_t addr)
{
	size_t lo = 0, hi = mm->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (mm->r[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int insert_at(struct mt_mapped *mm, size_t i, struct range r)
{
	if (mt_array__grow((void **)&mm->r, &mm->cap, mm->n, sizeof(*mm->r)))
		return -ENOMEM;
	memmove(&mm->r[i + 1], &mm->r[i], (mm->n - i) * sizeof(*mm->r));
	mm->r[i] = r;
	mm->n++;
	return 0;
}

/* Ends what [lo, hi) covers: a range that holds it splits in two. 0 or -ENOMEM. */
static int cut(struct mt_mapped *mm, uint64_t lo, uint64_t hi)
{
	size_t i = first_above(mm, lo), j;
	struct range *r;
	uint64_t end;

	if (lo >= hi)
		return 0;
	if (i < mm->n && mm->r[i].lo < lo) {
		r = &mm->r[i];
		end = r->hi;
		count(mm, r->by, r->tag, -((end < hi ? end : hi) - lo));
		r->hi = lo;
		if (end > hi)
			return insert_at(mm, i + 1, (struct range){ hi, end, r->tag, r->by });
		i++;
	}
	for (j = i; j < mm->n && mm->r[j].hi <= hi; j++)
		count(mm, mm->r[j].by, mm->r[j].tag, -(mm->r[j].hi - mm->r[j].lo));
	if (j > i && j < mm->n)	/* mm->r may be NULL when there is nothing to move */
		memmove(&mm->r[i], &mm->r[j], (mm->n - j) * sizeof(*mm->r));
	mm->n -= j - i;
	if (i < mm->n && mm->r[i].lo < hi) {
		count(mm, mm->r[i].by, mm->r[i].tag, -(hi - mm->r[i].lo));
		mm->r[i].lo = hi;
	}
	return 0;
}

/* [lo, hi) mapped by by with tag, over nothing (cut first): joined to a neighbour of the same maker and tag. 0 or
 * -ENOMEM. */
static int add(struct mt_mapped *mm, uint64_t lo, uint64_t hi, uint8_t by, uint64_t tag)
{
	size_t i = first_above(mm, lo);
	bool left = i > 0 && mm->r[i - 1].hi == lo && mm->r[i - 1].by == by && mm->r[i - 1].tag == tag;
	bool right = i < mm->n && mm->r[i].lo == hi && mm->r[i].by == by && mm->r[i].tag == tag;

	if (lo >= hi)
		return 0;
	if (left && right) {
		mm->r[i - 1].hi = mm->r[i].hi;
		memmove(&mm->r[i], &mm->r[i + 1], (mm->n - i - 1) * sizeof(*mm->r));
		mm->n--;
	} else if (left) {
		mm->r[i - 1].hi = hi;
	} else if (right) {
		mm->r[i].lo = lo;
	} else if (insert_at(mm, i, (struct range){ lo, hi, tag, by })) {
		return -ENOMEM;
	}
	count(mm, by, tag, hi - lo);
	return 0;
}

static uint8_t origin_by(const struct mt_syscall *s)
{
	return s->origin == MT_SYS_ORIGIN_ALLOCATOR ? MT_MAPPED_ALLOCATOR : MT_MAPPED_PROGRAM;
}

/* The call path of the call (records of MT_SYSCALL_SIZE_V1 bytes have none). */
static uint64_t call_tag(const struct mt_syscall *s)
{
	return s->hdr.size >= sizeof(*s) ? s->stack : 0;
}

static int apply_mmap(struct mt_mapped *mm, const struct mt_syscall *s)
{
	uint64_t lo = (uint64_t)s->ret, hi = range_end(lo, s->size);
	int err = cut(mm, lo, hi);

	if (err || !(s->flags & MT_MAP_ANONYMOUS) || (s->flags & MT_MAP_TYPE) != MT_MAP_PRIVATE)
		return err;
	return add(mm, lo, hi, origin_by(s), call_tag(s));
}

/* The range at the old address moves (or stays) with its maker and tag, grown or shrunk: the call that made it keeps
 * it. One not kept (a file's, shared) is not kept there. */
static int apply_mremap(struct mt_mapped *mm, const struct mt_syscall *s)
{
	size_t i = first_above(mm, s->old_addr);
	bool kept = i < mm->n && mm->r[i].lo <= s->old_addr && s->old_size;
	uint8_t by = kept ? mm->r[i].by : MT_MAPPED_PROGRAM;
	uint64_t tag = kept ? mm->r[i].tag : 0;
	uint64_t lo = (uint64_t)s->ret, hi = range_end(lo, s->size);
	int err = 0;

	if (!(s->flags & MT_MREMAP_DONTUNMAP))
		err = cut(mm, s->old_addr, range_end(s->old_addr, s->old_size));
	if (!err)
		err = cut(mm, lo, hi);
	if (err || !kept)
		return err;
	return add(mm, lo, hi, by, tag);
}

/* The first break seen is where the count starts (the loader's brk(0), after an exec). */
static int apply_brk(struct mt_mapped *mm, const struct mt_syscall *s)
{
	uint64_t now = page_up((uint64_t)s->ret), was = mm->brk;
	int err = 0;

	if (!mm->brk_known) {
		mm->brk_known = true;
		mm->brk = now;
		return 0;
	}
	if (now > was) {
		err = cut(mm, was, now);
		if (!err)
			err = add(mm, was, now, origin_by(s), call_tag(s));
	} else if (now < was)
		err = cut(mm, now, was);
	if (!err)
		mm->brk = now;
	return err;
}

int mt_mapped__apply(struct mt_mapped *mm, const struct mt_syscall *s)
{
	if (s->ret < 0)
		return 0;
	switch (s->sys) {
	case MT_SYS_MMAP: return apply_mmap(mm, s);
	case MT_SYS_MUNMAP: return cut(mm, s->addr, range_end(s->addr, s->size));
	case MT_SYS_MREMAP: return apply_mremap(mm, s);
	case MT_SYS_BRK: return apply_brk(mm, s);
	default: return 0;
	}
}
