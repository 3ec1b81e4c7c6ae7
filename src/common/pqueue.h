/* SPDX-License-Identifier: GPL-2.0-only */
/* pqueue.h — a min-priority queue of (key, item) pairs, a binary heap: equal keys leave in the order they came. */
#ifndef MEMTRACK_PQUEUE_H
#define MEMTRACK_PQUEUE_H

#include <stddef.h>
#include <stdint.h>

struct mt_pqueue_ent {
	uint64_t key;
	uint64_t nth;		/* the push's number: equal keys leave by it */
	void *item;
};

/* Zero-initialised is an empty queue. n is the number of entries; v[0] the smallest, when n is not 0. */
struct mt_pqueue {
	struct mt_pqueue_ent *v;
	size_t n, cap;
	uint64_t pushed;
};

/* 0 or -ENOMEM. */
int mt_pqueue__push(struct mt_pqueue *q, uint64_t key, void *item);
/* The smallest entry, or NULL when the queue is empty; valid until the queue changes. */
const struct mt_pqueue_ent *mt_pqueue__top(const struct mt_pqueue *q);
/* Removes the smallest entry: its item, or NULL when the queue is empty. */
void *mt_pqueue__pop(struct mt_pqueue *q);
/* The smallest entry (there is one) gets key instead, and its place again, after the entries of that key in. */
void mt_pqueue__rekey_top(struct mt_pqueue *q, uint64_t key);
/* Frees the entries (not their items); the queue is empty again. */
void mt_pqueue__release(struct mt_pqueue *q);

#endif /* MEMTRACK_PQUEUE_H */
