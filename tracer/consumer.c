// SPDX-License-Identifier: GPL-2.0-only
/* consumer.c — drains the BPF ring buffer into the artifact and learns from fork records which pids are processes. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "artifact/artifact.h"
#include "bpf/memtrack.h"
#include "common/log.h"
#include "common/u64map.h"
#include "tracer/attach.h"
#include "tracer/bpf_session.h"
#include "tracer/consumer.h"
#include "tracer/order.h"
#include "tracer/ring.h"

#define MT_STACK_PACK_MAX (UINT16_MAX + 1)

struct mt_consumer {
	struct mt_bpf_session *bpf;
	struct mt_ring *events;	/* the records: read in place (ring.c) */
	struct mt_order *order;	/* puts them back in order before they are written */
	uint64_t waiting_ns;	/* since when records wait for waiting_for (0: none wait) */
	uint32_t waiting_for;
	uint64_t asked_ns;	/* when the CPUs were last asked for their batches */
	uint64_t asks, timeouts;	/* for -v: flushes while records waited, numbers passed over after WAIT_SKIP_NS */
	struct ring_buffer *rb;	/* attach requests, few: libbpf's reader */
	int epfd;		/* ready when either has data */
	__u8 *pack;		/* a record as written: a stack definition packed to its documented layout */
	struct mt_writer *w;
	struct mt_attach_worker *attach;
	struct mt_u64map procs;	/* pid -> proc__entry of each process seen: is an exiting pid one, whose child is it */
	void (*untraced_fork)(void *ctx, pid_t parent, pid_t child);
	void *untraced_ctx;
	uint64_t malformed;	/* records not written: the end record counts them as drops */
	bool paused;		/* between a stop mark (or --paused's start) and a start mark, in the records' order */
	bool was_on;		/* recording was on at some point: a release while off may be of a block it saw */
	uint64_t after_stop;	/* allocator records of calls that found recording on, numbered after a stop */
	int err;		/* the first writer failure, said once: recording goes on */
};

/* A process's entry in procs: its parent (0 for the command itself) and its fork's MT_FORK_* flags. */
static uint64_t proc__entry(pid_t parent, uint32_t flags)
{
	return (uint32_t)parent | (uint64_t)flags << 32;
}

/*
 * BPF reserves a stack definition at its largest, each part at a fixed offset (stacks.bpf.h, MT_STACK_RESERVE; a
 * brief one, MT_STACK_F_BRIEF, has its CFI chain right after the record): pack it to the documented layout (nfp
 * addresses, nbytes raw bytes, then the CFI chain) so that the artifact carries no empty space.
 */
static const void *stack__pack(struct mt_consumer *c, const struct mt_stack *s, size_t size)
{
	bool brief = s->flags & MT_STACK_F_BRIEF;
	size_t fp = s->nfp < MT_FP_MAX ? s->nfp : MT_FP_MAX, kc = sizeof(*s) + (brief ? 0 : MT_FP_MAX * 8);
	size_t raw = kc + sizeof(struct mt_kchain) + (MT_KCHAIN_MAX + 1) * 8, off;
	const struct mt_kchain *k = (const void *)((const __u8 *)s + kc);
	struct mt_stack *p = (struct mt_stack *)c->pack;
	size_t nk;

	if (size < raw || s->nbytes > size - raw || !c->pack || (brief && (s->nfp || s->nbytes)))
		return NULL;
	nk = k->n < MT_KCHAIN_MAX ? k->n : MT_KCHAIN_MAX;
	memcpy(p, s, sizeof(*s) + fp * 8);
	off = sizeof(*s) + fp * 8;
	memcpy(c->pack + off, (const __u8 *)s + raw, s->nbytes);
	off += s->nbytes;
	memcpy(c->pack + off, k, sizeof(*k) + nk * 8);
	((struct mt_kchain *)(c->pack + off))->n = nk;
	off += sizeof(*k) + nk * 8;
	p->nfp = fp;
	p->hdr.size = off;
	return p;
}

/* Said once: a kernel side that disagrees with this tracer makes every record of a kind malformed. */
static void consumer__malformed(struct mt_consumer *c, const void *data, size_t size)
{
	const struct mt_rec_hdr *h = data;

	if (!c->malformed++)
		pr_warn("a malformed record (type %u, %zu bytes) from the kernel was not written; the end record counts "
			"all such as dropped (malformed)\n", size >= sizeof(*h) ? h->type : 0, size);
}

/* What a record's turn does with it. */
enum window_verdict {
	WINDOW_KEEP,
	WINDOW_DROP,
	WINDOW_FREE_OLD,	/* recording off: a realloc-like call given a block is kept as its free side */
};

/*
 * While recording is off BPF also sends the releases and the realloc-like calls given a block (control.bpf.h): a
 * block allocated while it was on may end while it is off, and without its free the window would leak it. A realloc
 * is kept as a free of its old block (the new one is not recorded); a failed one released nothing. Before recording
 * was ever on (--paused) no block is known: nothing is kept.
 */
static enum window_verdict consumer__paused_alloc(const struct mt_consumer *c, const struct mt_alloc *a)
{
	if (!c->was_on || a->hdr.size < sizeof(*a))
		return WINDOW_DROP;
	if (mt_func__is_free(a->func))
		return WINDOW_KEEP;
	return a->old_addr && (a->addr || !a->size) ? WINDOW_FREE_OLD : WINDOW_DROP;
}

/*
 * The recording window in the records' order: BPF tests its switch before it takes a record's number, so a call on
 * another thread that found recording on may be numbered after the stop. Its allocation goes, so that the window is
 * exact in the kernel's order (a start takes its number before it switches: none comes too early).
 */
static enum window_verdict consumer__window(struct mt_consumer *c, const struct mt_rec_hdr *h)
{
	const struct mt_mark *mk = (const void *)h;
	enum window_verdict v;

	if (h->type == MT_REC_MARK && h->size >= sizeof(*mk) && mk->kind != MT_MARK_LABEL) {
		c->paused = mk->kind == MT_MARK_STOP;
		c->was_on |= !c->paused;
	}
	if (h->type != MT_REC_ALLOC || !c->paused)
		return WINDOW_KEEP;
	v = consumer__paused_alloc(c, (const void *)h);
	c->after_stop += v == WINDOW_DROP;
	return v;
}

/* A record in its turn: written with its number cleared (the artifact has 0 there). */
static void consumer__emit(void *ctx, const void *data, size_t size)
{
	struct mt_consumer *c = ctx;
	const struct mt_rec_hdr *h = data;
	struct mt_rec_hdr *out = (struct mt_rec_hdr *)c->pack;
	enum window_verdict v = consumer__window(c, h);
	struct mt_alloc *a = (struct mt_alloc *)out;
	int err;

	if (v == WINDOW_DROP)
		return;
	if (h->type == MT_REC_STACK) {
		if (!stack__pack(c, data, h->size)) {
			consumer__malformed(c, data, size);
			return;
		}
	} else {
		memcpy(out, data, h->size);
	}
	if (v == WINDOW_FREE_OLD)
		*a = (struct mt_alloc){ .hdr = a->hdr, .addr = a->old_addr, .func = MT_FN_FREE, .allocator = a->allocator };
	out->seq = 0;
	err = mt_writer__append(c->w, out, out->size);
	if (err == -EINVAL) {
		consumer__malformed(c, data, out->size);
	} else if (err && !c->err) {
		c->err = err;
		pr_err("cannot write the artifact: %s; events from now on are lost\n", strerror(-err));
	}
}

/* A batch: a header, then batch_count allocator records of one CPU. */
static void consumer__on_batch(struct mt_consumer *c, const __u8 *data, size_t size)
{
	const struct mt_rec_hdr *h = (const void *)data;
	size_t n = h->batch_count, i;

	if (h->size != sizeof(*h) || size < sizeof(*h) + n * sizeof(struct mt_alloc)) {
		consumer__malformed(c, data, size);
		return;
	}
	for (i = 0; i < n; i++) {
		h = (const void *)(data + sizeof(*h) + i * sizeof(struct mt_alloc));
		if (h->type != MT_REC_ALLOC || h->size != sizeof(struct mt_alloc)) {
			consumer__malformed(c, h, sizeof(struct mt_alloc));
			c->malformed += n - 1;	/* the whole batch is not written */
			return;
		}
	}
	mt_order__push(c->order, data + sizeof(*h), n * sizeof(struct mt_alloc), sizeof(struct mt_alloc));
}

/* An untraced child has no first stop to get its probes at: it gets them now, which is as soon as can be. */
static void consumer__on_fork(struct mt_consumer *c, const struct mt_fork *f)
{
	mt_u64map__put(&c->procs, f->child, proc__entry(f->hdr.pid, f->flags), NULL);
	if ((f->flags & MT_FORK_UNTRACED) && c->untraced_fork)
		c->untraced_fork(c->untraced_ctx, f->hdr.pid, f->child);
}

static int consumer__on_record(void *ctx, void *data, size_t size)
{
	struct mt_consumer *c = ctx;
	const struct mt_rec_hdr *h = data;

	if (size < sizeof(*h) || h->size > size || h->size < sizeof(*h)) {
		consumer__malformed(c, data, size);
		return 0;
	}
	if (h->type == MT_REC_BATCH) {
		consumer__on_batch(c, data, size);
		return 0;
	}
	/* Known on arrival: the ptrace loop asks about a child before its fork record's turn may have come. */
	if (h->type == MT_REC_FORK && h->size >= sizeof(struct mt_fork))
		consumer__on_fork(c, data);
	mt_order__push(c->order, data, size, 0);	/* failing, it writes the record at once: late, not lost */
	return 0;
}

static int consumer__on_attach(void *ctx, void *data, size_t size)
{
	struct mt_consumer *c = ctx;

	if (size >= sizeof(struct mt_attach_req))
		mt_attach__on_request(c->attach, data);
	return 0;
}

/* One descriptor for the ptrace loop's epoll: the events ring's and the attach ring's readiness together. */
static int consumer__open_epoll(struct mt_consumer *c)
{
	struct epoll_event ev = { .events = EPOLLIN };

	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c->epfd < 0)
		return -errno;
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, mt_ring__fd(c->events), &ev) ||
	    epoll_ctl(c->epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(c->rb), &ev))
		return -errno;
	return 0;
}

static int consumer__sink(void *ctx, struct mt_rec_hdr *rec)
{
	return mt_consumer__append(ctx, rec);
}

struct mt_consumer *mt_consumer__new(struct mt_bpf_session *s, struct mt_writer *w, struct mt_attach_worker *a)
{
	struct mt_consumer *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return NULL;
	c->bpf = s;
	c->w = w;
	c->attach = a;
	c->epfd = -1;
	c->pack = malloc(MT_STACK_PACK_MAX);
	c->order = c->pack ? mt_order__new(consumer__emit, c) : NULL;
	c->events = c->order ? mt_ring__new(bpf_map__fd(mt_bpf_session__ring_map(s))) : NULL;
	c->rb = c->events ? ring_buffer__new(bpf_map__fd(mt_bpf_session__attach_map(s)), consumer__on_attach, c, NULL)
			  : NULL;
	if (!c->rb)
		goto free_consumer;
	err = consumer__open_epoll(c);
	if (!err) {
		mt_attach__set_sink(a, consumer__sink, c);
		return c;
	}
	errno = -err;
free_consumer:
	err = errno;
	mt_consumer__free(c);
	errno = err;
	return NULL;
}

int mt_consumer__fd(const struct mt_consumer *c)
{
	return c->epfd;
}

#define BATCH_FLUSH_TRIES 1000	/* a CPU's batch is busy while a program writes it: microseconds */

/*
 * Every CPU's batch into the ring, then the ring drained past them. When every CPU gave its batch and the ring was
 * drained, each number taken before the flush has come or never will (its batch was refused by a full ring, or it
 * was malformed): the records waiting behind those are written.
 */
static long consumer__flush_batches(struct mt_consumer *c)
{
	uint32_t before = mt_bpf_session__seq_now(c->bpf);
	int busy, tries = 0;
	bool reached = false;
	long n;

	while ((busy = mt_bpf_session__flush_batches(c->bpf)) > 0 && ++tries < BATCH_FLUSH_TRIES)
		mt_ring__let_writers_run();
	if (busy)
		pr_debug("cannot flush the CPUs' batches: %s\n", busy < 0 ? strerror(-busy) : "busy");
	n = mt_ring__consume_past(c->events, consumer__on_record, c, &reached);
	if (n >= 0 && !busy && reached)
		mt_order__lost_before(c->order, before);
	return n;
}

/*
 * Records that wait for a number another CPU's batch holds: that batch is asked for after WAIT_FLUSH_NS (a CPU
 * that went idle leaves its batch unsent), and past() asks at once. A number still missing after WAIT_SKIP_NS,
 * which no complete flush has explained, is passed over all the same: the records behind it are written.
 */
#define WAIT_FLUSH_NS 2000000ull
#define WAIT_SKIP_NS 1000000000ull

static long consumer__unblock(struct mt_consumer *c, bool past)
{
	uint64_t now;
	long n = 0;

	if (!mt_order__waiting(c->order)) {
		c->waiting_ns = 0;
		return 0;
	}
	now = mt_bpf_session__monotonic_ns();
	if (!c->waiting_ns || c->waiting_for != mt_order__next(c->order)) {
		c->waiting_ns = now;
		c->waiting_for = mt_order__next(c->order);
	}
	/* Again every WAIT_FLUSH_NS while it is missing: a CPU whose program held its batch (a vCPU paused by the
	 * host, say) made the last flush incomplete, and behind the gap the records pile up. */
	if (past || (now - c->waiting_ns >= WAIT_FLUSH_NS && now - c->asked_ns >= WAIT_FLUSH_NS)) {
		n = consumer__flush_batches(c);
		c->asked_ns = mt_bpf_session__monotonic_ns();	/* a flush behind a paused vCPU may take long itself */
		c->asks++;
	}
	if (mt_order__waiting(c->order) && now - c->waiting_ns >= WAIT_SKIP_NS) {
		mt_order__skip_gap(c->order);
		c->waiting_ns = 0;
		c->timeouts++;
	}
	return n;
}

static int consumer__drain_rings(struct mt_consumer *c, bool past)
{
	long n = past ? mt_ring__consume_past(c->events, consumer__on_record, c, NULL)
		      : mt_ring__consume(c->events, consumer__on_record, c);
	int m = ring_buffer__consume(c->rb);

	if (n >= 0)
		n = consumer__unblock(c, past);
	return n < 0 ? (int)n : m < 0 ? m : 0;
}

int mt_consumer__drain_batches(struct mt_consumer *c)
{
	long n = consumer__flush_batches(c);

	return n < 0 ? (int)n : 0;
}

int mt_consumer__append(struct mt_consumer *c, struct mt_rec_hdr *rec)
{
	rec->seq = mt_bpf_session__next_seq(c->bpf);
	return mt_order__push(c->order, rec, rec->size, 0);
}

void mt_consumer__finish(struct mt_consumer *c)
{
	uint64_t late;

	consumer__flush_batches(c);
	ring_buffer__consume(c->rb);
	while (mt_order__waiting(c->order))
		mt_order__skip_gap(c->order);
	/* Nothing is put in order after this: a number taken later may never come, and what waited behind it would
	 * be lost. The attach worker's last records (the requests just read) go straight to the writer. */
	mt_attach__set_sink(c->attach, NULL, NULL);
	late = mt_order__late(c->order);
	pr_debug("order: the CPUs asked for their batches %" PRIu64 " times while records waited; %" PRIu64
		 " missing numbers passed over after %llu ms\n", c->asks, c->timeouts, WAIT_SKIP_NS / 1000000);
	pr_debug("control: %" PRIu64 " allocator records numbered after a stop were not written\n", c->after_stop);
	if (late)
		pr_warn("%" PRIu64 " records were written after later ones: records between them were lost (see the "
			"drops)\n", late);
}

int mt_consumer__drain(struct mt_consumer *c)
{
	return consumer__drain_rings(c, false);
}

int mt_consumer__drain_past(struct mt_consumer *c)
{
	return consumer__drain_rings(c, true);
}

void mt_consumer__set_untraced_fork(struct mt_consumer *c, void (*fn)(void *ctx, pid_t parent, pid_t child),
				    void *ctx)
{
	c->untraced_fork = fn;
	c->untraced_ctx = ctx;
}

void mt_consumer__add_process(struct mt_consumer *c, pid_t pid)
{
	mt_u64map__put(&c->procs, pid, proc__entry(0, 0), NULL);
}

bool mt_consumer__is_process(const struct mt_consumer *c, pid_t pid)
{
	return mt_u64map__find(&c->procs, pid) != NULL;
}

pid_t mt_consumer__parent(const struct mt_consumer *c, pid_t pid, uint32_t *flags)
{
	const uint64_t *e = mt_u64map__find(&c->procs, pid);

	*flags = e ? *e >> 32 : 0;
	return e ? (pid_t)(uint32_t)*e : 0;
}

void mt_consumer__set_paused(struct mt_consumer *c, bool paused)
{
	c->paused = paused;
	c->was_on = !paused;
}

uint64_t mt_consumer__malformed_records(const struct mt_consumer *c)
{
	return c->malformed;
}

void mt_consumer__free(struct mt_consumer *c)
{
	if (!c)
		return;
	if (c->attach)
		mt_attach__set_sink(c->attach, NULL, NULL);	/* its last records go straight to the writer */
	if (c->epfd >= 0)
		close(c->epfd);
	ring_buffer__free(c->rb);
	mt_ring__free(c->events);
	mt_order__free(c->order);
	free(c->pack);
	mt_u64map__release(&c->procs);
	free(c);
}
