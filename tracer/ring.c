// SPDX-License-Identifier: GPL-2.0-only
/* ring.c — reads the events ring buffer in place and hands the producer back its space once per batch, not per record. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "tracer/ring.h"

/*
 * libbpf 1.1 stores the consumer position after every record. Each BPF reserve reads that position, so while the
 * consumer drains on one CPU, every allocation probe on the other misses on its cache line. Publishing it after
 * RING_PUBLISH_BYTES (and at the end of each drain) keeps that line quiet; the producer only sees its free space
 * grow in steps, which a ring of megabytes does not notice.
 */
#define RING_PUBLISH_BYTES (256u << 10)

struct mt_ring {
	int fd;
	size_t page, data_bytes;
	unsigned long *consumer_pos;	/* the one page the consumer may write */
	unsigned long *producer_pos;	/* read-only: the producer page, then the data mapped twice */
	__u8 *data;
};

struct mt_ring *mt_ring__new(int map_fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct mt_ring *r;
	void *p;
	int err;

	if (bpf_obj_get_info_by_fd(map_fd, &info, &len))
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fd = map_fd;
	r->page = sysconf(_SC_PAGESIZE);
	r->data_bytes = info.max_entries;
	p = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED)
		goto free_ring;
	r->consumer_pos = p;
	/* The data follows twice, so that a record wrapping at the end reads as one piece. */
	p = mmap(NULL, r->page + 2 * r->data_bytes, PROT_READ, MAP_SHARED, map_fd, r->page);
	if (p != MAP_FAILED) {
		r->producer_pos = p;
		r->data = (__u8 *)p + r->page;
		return r;
	}
	err = errno;
	munmap(r->consumer_pos, r->page);
	errno = err;
free_ring:
	free(r);
	return NULL;
}

int mt_ring__fd(const struct mt_ring *r)
{
	return r->fd;
}

/*
 * Hands every committed record to cb (a discarded one is skipped); returns how many were handed, or cb's error.
 * One call takes at most a ring's worth, so that producers as fast as the consumer cannot keep the ptrace loop,
 * which calls it, from its stops.
 */
long mt_ring__consume(struct mt_ring *r, mt_ring_cb cb, void *ctx)
{
	unsigned long cons = *r->consumer_pos, published = cons, limit = cons + r->data_bytes, prod;
	long n = 0;
	int err = 0;

	while (!err && cons < limit && cons < (prod = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE))) {
		while (!err && cons < prod) {
			__u32 *hdr = (__u32 *)(r->data + (cons & (r->data_bytes - 1)));
			__u32 len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);

			if (len & BPF_RINGBUF_BUSY_BIT)
				goto publish;	/* not committed yet: the next drain takes it */
			cons += (BPF_RINGBUF_HDR_SZ + (len & ~BPF_RINGBUF_DISCARD_BIT) + 7) & ~7ul;
			if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
				err = cb(ctx, hdr + 2, len & ~BPF_RINGBUF_DISCARD_BIT);
				n++;
			}
			if (cons - published >= RING_PUBLISH_BYTES) {
				__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
				published = cons;
			}
		}
	}
publish:
	if (cons != published)
		__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
	return err ? err : n;
}

/* A reserved record that its program has not committed yet stops mt_ring__consume; a BPF program holds one for
 * microseconds (longer only when preempted), so yielding this many times outlasts any. */
#define RING_PAST_TRIES 100000

/* A program holds its CPU migrate-disabled: preempted under a real-time reader on that CPU, it runs again only when
 * the reader sleeps. */
#define RING_RT_PAUSE_NS 20000

void mt_ring__let_writers_run(void)
{
	struct timespec pause = { 0, RING_RT_PAUSE_NS };

	if ((sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) == SCHED_FIFO)
		nanosleep(&pause, NULL);
	else
		sched_yield();
}

long mt_ring__consume_past(struct mt_ring *r, mt_ring_cb cb, void *ctx, bool *reached)
{
	unsigned long target = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE);
	long n, total = 0;
	int tries = 0;

	for (;;) {
		n = mt_ring__consume(r, cb, ctx);
		if (n < 0)
			return n;
		total += n;
		if (*r->consumer_pos >= target || ++tries >= RING_PAST_TRIES)
			break;
		mt_ring__let_writers_run();
	}
	if (reached)
		*reached = *r->consumer_pos >= target;
	return total;
}

void mt_ring__free(struct mt_ring *r)
{
	if (!r)
		return;
	munmap(r->producer_pos, r->page + 2 * r->data_bytes);
	munmap(r->consumer_pos, r->page);
	free(r);
}
