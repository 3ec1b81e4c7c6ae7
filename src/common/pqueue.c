// SPDX-License-Identifier: GPL-2.0-only
/* pqueue.c — the binary min-heap behind mt_pqueue, ordered by key, then by push. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/pqueue.h"

static bool ent__before(const struct mt_pqueue_ent *a, const struct mt_pqueue_ent *b)
{
	return a->key < b->key || (a->key == b->key && a->nth < b->nth);
}

/* The entry e, whose place was i, moved up to where its parents are smaller. */
static void heap__up(struct mt_pqueue *q, size_t i, struct mt_pqueue_ent e)
{
	size_t parent;

	while (i) {
		parent = (i - 1) / 2;
		if (!ent__before(&e, &q->v[parent]))
			break;
		q->v[i] = q->v[parent];
		i = parent;
	}
	q->v[i] = e;
}

/* The entry e, whose place was i, moved down to where its children are larger. */
static void heap__down(struct mt_pqueue *q, size_t i, struct mt_pqueue_ent e)
{
	size_t child;

	while ((child = 2 * i + 1) < q->n) {
		if (child + 1 < q->n && ent__before(&q->v[child + 1], &q->v[child]))
			child++;
		if (!ent__before(&q->v[child], &e))
			break;
		q->v[i] = q->v[child];
		i = child;
	}
	q->v[i] = e;
}

int mt_pqueue__push(struct mt_pqueue *q, uint64_t key, void *item)
{
	struct mt_pqueue_ent e = { .key = key, .nth = q->pushed, .item = item };

	if (mt_array__grow((void **)&q->v, &q->cap, q->n, sizeof(*q->v)))
		return -ENOMEM;
	q->pushed++;
	heap__up(q, q->n++, e);
	return 0;
}

const struct mt_pqueue_ent *mt_pqueue__top(const struct mt_pqueue *q)
{
	return q->n ? &q->v[0] : NULL;
}

void *mt_pqueue__pop(struct mt_pqueue *q)
{
	void *item;

	if (!q->n)
		return NULL;
	item = q->v[0].item;
	if (--q->n)
		heap__down(q, 0, q->v[q->n]);
	return item;
}

void mt_pqueue__rekey_top(struct mt_pqueue *q, uint64_t key)
{
	struct mt_pqueue_ent e = { .key = key, .nth = q->pushed++, .item = q->v[0].item };

	heap__down(q, 0, e);
}

void mt_pqueue__release(struct mt_pqueue *q)
{
	free(q->v);
	memset(q, 0, sizeof(*q));
}
