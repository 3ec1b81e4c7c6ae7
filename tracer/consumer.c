/* consumer.c — drains the BPF ring buffer into the artifact and learns from fork records which pids are processes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "log.h"
#include "tracer.h"

#define PIDSET_MIN 64
#define MT_STACK_PACK_MAX (UINT16_MAX + 1)

/* Open-addressing table of process pids (tgids) with their fork: the ptrace loop asks it whether an exiting pid
 * is a process, and who a new child's parent is. */
struct pidset {
	struct proc_slot {
		pid_t pid;	/* 0 = empty; entries are never deleted: pids are few */
		pid_t parent;	/* 0 for the command itself */
		uint32_t flags;	/* MT_FORK_* */
	} *slots;
	size_t cap, used;
};

struct consumer {
	struct ring *events;	/* the records: read in place (ring.c) */
	struct ring_buffer *rb;	/* attach requests, few: libbpf's reader */
	int epfd;		/* ready when either has data */
	__u8 *pack;		/* a stack definition packed to its documented layout */
	struct mt_writer *w;
	struct attach *attach;
	struct pidset procs;
	uint64_t records;
	uint64_t malformed;	/* records not written: the end record counts them as drops */
	int err;		/* first writer failure: recording goes on, the end says so */
};

static int pidset__grow(struct pidset *s);

static struct proc_slot *pidset__slot(const struct pidset *s, pid_t pid)
{
	size_t i;

	for (i = (size_t)pid * 2654435761u % s->cap; s->slots[i].pid; i = (i + 1) % s->cap)
		if (s->slots[i].pid == pid)
			break;
	return &s->slots[i];
}

static int pidset__add(struct pidset *s, pid_t pid, pid_t parent, uint32_t flags)
{
	struct proc_slot *slot;

	if ((s->used + 1) * 2 > s->cap && pidset__grow(s))
		return -ENOMEM;
	slot = pidset__slot(s, pid);
	if (!slot->pid)
		s->used++;
	*slot = (struct proc_slot){ pid, parent, flags };
	return 0;
}

static int pidset__grow(struct pidset *s)
{
	struct pidset n = { .cap = s->cap ? s->cap * 2 : PIDSET_MIN };
	size_t i;

	n.slots = calloc(n.cap, sizeof(*n.slots));
	if (!n.slots)
		return -ENOMEM;
	for (i = 0; i < s->cap; i++)
		if (s->slots[i].pid)
			pidset__add(&n, s->slots[i].pid, s->slots[i].parent, s->slots[i].flags);
	free(s->slots);
	*s = n;
	return 0;
}

static const struct proc_slot *pidset__find(const struct pidset *s, pid_t pid)
{
	const struct proc_slot *slot;

	if (!s->cap)
		return NULL;
	slot = pidset__slot(s, pid);
	return slot->pid ? slot : NULL;
}

/*
 * BPF reserves a stack definition at its largest, the chain at a fixed offset: pack it to the documented layout
 * (nfp addresses, then nbytes raw bytes) so that the artifact carries no empty space.
 */
static const void *stack__pack(struct consumer *c, const struct mt_stack *s, size_t size)
{
	size_t fp = s->nfp < MT_FP_MAX ? s->nfp : MT_FP_MAX, raw = sizeof(*s) + MT_FP_MAX * 8;
	struct mt_stack *p = (struct mt_stack *)c->pack;

	if (size < raw || s->nbytes > size - raw || !c->pack)
		return NULL;
	memcpy(p, s, sizeof(*s) + fp * 8);
	memcpy(c->pack + sizeof(*s) + fp * 8, (const __u8 *)s + raw, s->nbytes);
	p->nfp = fp;
	p->hdr.size = sizeof(*s) + fp * 8 + s->nbytes;
	return p;
}

/* Said once: a kernel side that disagrees with this tracer makes every record of a kind malformed. */
static void consumer__malformed(struct consumer *c, const void *data, size_t size)
{
	const struct mt_rec_hdr *h = data;

	if (!c->malformed++)
		pr_warn("a malformed record (type %u, %zu bytes) from the kernel was not written; the end record counts "
			"all such as dropped (malformed)\n", size >= sizeof(*h) ? h->type : 0, size);
}

static int consumer__on_record(void *ctx, void *data, size_t size)
{
	struct consumer *c = ctx;
	const struct mt_rec_hdr *h = data;
	const void *packed;
	int err;

	if (size < sizeof(*h) || h->size > size) {
		consumer__malformed(c, data, size);
		return 0;
	}
	if (h->type == MT_REC_STACK) {
		packed = stack__pack(c, data, h->size);
		if (!packed) {
			consumer__malformed(c, data, size);
			return 0;
		}
		h = data = (void *)packed;
	}
	if (h->type == MT_REC_FORK && h->size >= sizeof(struct mt_fork))
		pidset__add(&c->procs, ((const struct mt_fork *)data)->child, h->pid, ((const struct mt_fork *)data)->flags);
	err = mt_writer__append(c->w, data, h->size);
	if (err == -EINVAL) {
		consumer__malformed(c, data, h->size);
	} else if (err && !c->err) {
		c->err = err;
		pr_err("cannot write the artifact: %s; events from now on are lost\n", strerror(-err));
	}
	c->records++;
	return 0;
}

static int consumer__on_attach(void *ctx, void *data, size_t size)
{
	struct consumer *c = ctx;

	if (size >= sizeof(struct mt_attach_req))
		attach__on_request(c->attach, data);
	return 0;
}

/* One descriptor for the ptrace loop's epoll: the events ring's and the attach ring's readiness together. */
static int consumer__open_epoll(struct consumer *c)
{
	struct epoll_event ev = { .events = EPOLLIN };

	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c->epfd < 0)
		return -errno;
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, ring__fd(c->events), &ev) ||
	    epoll_ctl(c->epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(c->rb), &ev))
		return -errno;
	return 0;
}

struct consumer *consumer__new(struct bpf_session *s, struct mt_writer *w, struct attach *a)
{
	struct consumer *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return NULL;
	c->w = w;
	c->attach = a;
	c->epfd = -1;
	c->pack = malloc(MT_STACK_PACK_MAX);
	c->events = c->pack ? ring__new(bpf_map__fd(bpf_session__ring_map(s))) : NULL;
	c->rb = c->events ? ring_buffer__new(bpf_map__fd(bpf_session__attach_map(s)), consumer__on_attach, c, NULL)
			  : NULL;
	if (!c->rb)
		goto free_consumer;
	err = consumer__open_epoll(c);
	if (!err)
		return c;
	errno = -err;
free_consumer:
	err = errno;
	consumer__free(c);
	errno = err;
	return NULL;
}

int consumer__fd(const struct consumer *c)
{
	return c->epfd;
}

static int consumer__drain_rings(struct consumer *c, bool past)
{
	long n = (past ? ring__consume_past : ring__consume)(c->events, consumer__on_record, c);
	int m = ring_buffer__consume(c->rb);

	return n < 0 ? (int)n : m < 0 ? m : 0;
}

int consumer__drain(struct consumer *c)
{
	return consumer__drain_rings(c, false);
}

int consumer__drain_past(struct consumer *c)
{
	return consumer__drain_rings(c, true);
}

void consumer__add_process(struct consumer *c, pid_t pid)
{
	pidset__add(&c->procs, pid, 0, 0);
}

bool consumer__is_process(const struct consumer *c, pid_t pid)
{
	return pidset__find(&c->procs, pid) != NULL;
}

pid_t consumer__parent(const struct consumer *c, pid_t pid, uint32_t *flags)
{
	const struct proc_slot *slot = pidset__find(&c->procs, pid);

	*flags = slot ? slot->flags : 0;
	return slot ? slot->parent : 0;
}

uint64_t consumer__records(const struct consumer *c)
{
	return c->records;
}

uint64_t consumer__malformed_records(const struct consumer *c)
{
	return c->malformed;
}

int consumer__error(const struct consumer *c)
{
	return c->err;
}

void consumer__free(struct consumer *c)
{
	if (!c)
		return;
	if (c->epfd >= 0)
		close(c->epfd);
	ring_buffer__free(c->rb);
	ring__free(c->events);
	free(c->pack);
	free(c->procs.slots);
	free(c);
}
