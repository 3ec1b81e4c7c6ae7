// SPDX-License-Identifier: GPL-2.0-only
/* stack_mapped.c — the program's anonymous private mappings by the stack of the call that made each range. */
/*
 * The ranges and their lives are src/model/mapped.c's (with the model's fork, exec and exit rules): it notes each
 * change to a program range with the range's tag, the stack of the call that made it. The notes of one record are
 * summed per stack, then counted by what the record was (mt_stack_mapped__apply): a call's growth is mapped, its
 * shrink unmapped; a fork's copy inherited; an exec's end discarded, an exit's exited.
 *
 * The peak is the sum of every stack's live bytes; a stack's bytes at the peak are copied the first time it changes
 * after a newer peak (and at the end), so a new peak costs nothing (as stack_heap.c's cells).
 */
#include <errno.h>
#include <stdlib.h>

#include "common/array.h"
#include "common/u64map.h"
#include "stacks/stack_mapped.h"

struct tag {
	struct mt_stack_mapped c;
	int64_t live;
	int64_t pending;		/* the notes of the record being accounted */
	uint64_t snap;			/* the peak that c.peak_bytes belongs to */
	uint64_t hash;
};

struct mt_stack_mapped_books {
	struct tag *tags;
	size_t ntags, cap;
	struct mt_u64map by_hash;	/* hash → index in tags */
	size_t *touched;		/* tags with notes of the record being accounted */
	size_t ntouched, cap_touched;
	int64_t total;			/* live bytes in all */
	uint64_t peak, peak_seq, seq;
	int err;			/* a note's -ENOMEM, returned by the next apply */
};

struct mt_stack_mapped_books *mt_stack_mapped__new(void)
{
	return calloc(1, sizeof(struct mt_stack_mapped_books));
}

void mt_stack_mapped__free(struct mt_stack_mapped_books *b)
{
	if (!b)
		return;
	free(b->tags);
	free(b->touched);
	mt_u64map__release(&b->by_hash);
	free(b);
}

static struct tag *tag_get(struct mt_stack_mapped_books *b, uint64_t hash)
{
	uint64_t *at = mt_u64map__find(&b->by_hash, hash);

	if (at)
		return &b->tags[*at];
	if (mt_array__grow((void **)&b->tags, &b->cap, b->ntags, sizeof(*b->tags)) ||
	    mt_u64map__put(&b->by_hash, hash, b->ntags, NULL) < 0)
		return NULL;
	b->tags[b->ntags] = (struct tag){ .hash = hash };
	return &b->tags[b->ntags++];
}

void mt_stack_mapped__note(void *ctx, uint64_t tag, int64_t bytes)
{
	struct mt_stack_mapped_books *b = ctx;
	struct tag *t = tag_get(b, tag);

	if (!t || (!t->pending && mt_array__grow((void **)&b->touched, &b->cap_touched, b->ntouched,
						  sizeof(*b->touched)))) {
		b->err = -ENOMEM;
		return;
	}
	if (!t->pending)
		b->touched[b->ntouched++] = (size_t)(t - b->tags);
	t->pending += bytes;	/* a move nets 0: touched again by a later note, counted once */
}

/* t's bytes at the latest peak, when it has not changed since. */
static void tag_snap(struct mt_stack_mapped_books *b, struct tag *t)
{
	if (t->snap == b->peak_seq)
		return;
	t->c.peak_bytes = (uint64_t)t->live;
	t->snap = b->peak_seq;
}

/* One stack's net change in a record of type. */
static void tag_count(struct mt_stack_mapped_books *b, struct tag *t, const struct mt_rec_hdr *rec)
{
	const struct mt_syscall *s = (const void *)rec;
	uint64_t up = t->pending > 0 ? (uint64_t)t->pending : 0, down = t->pending < 0 ? (uint64_t)-t->pending : 0;

	tag_snap(b, t);
	t->live += t->pending;
	b->total += t->pending;
	t->pending = 0;
	if (rec && rec->type == MT_REC_FORK) {
		t->c.inherited_bytes += up;
		t->c.unmapped_bytes += down;
		return;
	}
	if (rec && rec->type == MT_REC_EXEC) {
		t->c.discarded_bytes += down;
		return;
	}
	if (rec && (rec->type == MT_REC_EXIT || rec->type == MT_REC_THREAD_EXIT)) {
		t->c.exited_bytes += down;
		return;
	}
	t->c.bytes += up;
	t->c.unmapped_bytes += down;
	t->c.calls += up && rec && rec->type == MT_REC_SYSCALL && rec->size >= sizeof(*s) && s->stack == t->hash;
}

int mt_stack_mapped__apply(struct mt_stack_mapped_books *b, const struct mt_rec_hdr *rec)
{
	size_t i;
	int err = b->err;

	b->seq++;
	for (i = 0; i < b->ntouched; i++)
		tag_count(b, &b->tags[b->touched[i]], rec);
	b->ntouched = 0;
	b->err = 0;
	if (b->total > 0 && (uint64_t)b->total > b->peak) {
		b->peak = (uint64_t)b->total;
		b->peak_seq = b->seq;
	}
	return err;
}

int mt_stack_mapped__finish(struct mt_stack_mapped_books *b)
{
	int err = mt_stack_mapped__apply(b, NULL);
	size_t i;

	for (i = 0; i < b->ntags; i++) {
		tag_snap(b, &b->tags[i]);
		b->tags[i].c.live_bytes = (uint64_t)b->tags[i].live;
	}
	return err;
}

const struct mt_stack_mapped *mt_stack_mapped__counts(const struct mt_stack_mapped_books *b, uint64_t hash)
{
	uint64_t *at = b ? mt_u64map__find(&b->by_hash, hash) : NULL;

	return at ? &b->tags[*at].c : NULL;
}

uint64_t mt_stack_mapped__peak_bytes(const struct mt_stack_mapped_books *b)
{
	return b ? b->peak : 0;
}
