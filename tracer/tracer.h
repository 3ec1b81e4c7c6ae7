/* tracer.h — the pieces of `memtrack record`: privileges, BPF session, spawn, ring consumer, ptrace loop. */
#ifndef MEMTRACK_TRACER_H
#define MEMTRACK_TRACER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "artifact/artifact.h"

struct mt_options {
	const char *out_dir;	/* NULL: memtrack.<pid> */
	char *const *argv;	/* the command */
	size_t ring_bytes;	/* BPF ring buffer size, a power of two */
	uint32_t stack_bytes;	/* --stacks: raw stack bytes per definition (a multiple of 512); 0: no stacks */
	bool exit_with_command;	/* --exit-with-command */
	bool syscall_tracepoints;	/* --syscall-tracepoints: per-syscall tracepoints instead of the raw ones */
	bool precise_time;	/* --precise-time: bpf_ktime_get_ns instead of the kernel's tick */
	uint64_t ts_resolution;	/* --ts-resolution: allocation timestamps rounded to this many ns (1: exact) */
	bool quiet;
};

/* heap.c: the malloc heap's next bytes in transparent huge pages (0, -EOPNOTSUPP without THP); heap__trim undoes it
 * and gives the freed heap back. */
int heap__prefer_huge_pages(size_t bytes);
void heap__trim(void);

/* privileges.c: 0, or -EPERM / -ENOENT with the reason already printed. */
int privileges__check(void);

/* elf_symbols.c: defined function symbols of an ELF file (.dynsym and .symtab), with their file offsets. */
typedef void (*elf_symbol_fn)(const char *name, uint64_t offset, void *ctx);
int elf_symbols__each(const char *path, elf_symbol_fn fn, void *ctx);
/* File offsets of the named symbols (0 where a name is absent). 0 or -errno. */
int elf_symbols__offsets(const char *path, const char *const *names, size_t n, uint64_t *offsets);
/* The GNU build-id note: its length (0: none), or -errno. */
int elf_symbols__build_id(const char *path, uint8_t *id, size_t max);

/* modules.c: one MT_REC_FILE per file looked at; with --stacks a copy of each in DIR/modules by build-id. */
struct modules;
struct modules *modules__new(const char *dir, bool copy);
void modules__add(struct modules *m, struct mt_writer *w, const char *open_path, const struct mt_attach *rec,
		  uint8_t kind);
int modules__finish(struct modules *m);

/* metadata.c: DIR/memory_metadata.json, per process: name, exe, cmdline, ppid, start and exit times. */
struct metadata;
struct metadata *metadata__new(void);
void metadata__on_exec(struct metadata *md, pid_t pid);
/* The command line of pid as read at its last exec (NUL-separated), or NULL. */
const char *metadata__cmdline(const struct metadata *md, pid_t pid, size_t *len);
void metadata__free(struct metadata *md);

/* allocators.c: what to probe in a file: its allocator kind and one site per entry point (deduplicated). */
#define MT_PLAN_MAX 96
struct alloc_site {
	uint64_t entry;		/* file offset of the function */
	uint64_t offset;	/* file offset of the probe: the entry, or the first emulated instruction after it */
	uint64_t cookie;	/* MT_COOKIE(args, func, allocator) */
	bool ret;		/* needs the return probe too */
};
struct alloc_plan {
	uint8_t kind;		/* enum mt_allocator, 0: no allocator here */
	int fd;			/* the file, while the plan is made */
	size_t n;
	struct alloc_site sites[MT_PLAN_MAX];
};
int allocators__plan(const char *path, struct alloc_plan *plan);
/* probe_site.c: where in a function whose first bytes are code (len of them) its probe goes: the offset of the first
 * instruction the kernel emulates when only harmless ones come before it, else 0. args: enum mt_args; *regs: 0, or
 * where the arguments are at the site (MT_COOKIE_REGS). */
uint64_t allocators__site(const uint8_t *code, size_t len, uint8_t args, uint16_t *regs);

/* bpf_session.c: the loaded and attached BPF programs. */
struct bpf_session;
struct bpf_session *bpf_session__open(const struct mt_options *o);
/* A uprobe_multi link (made with the bpf syscall: libbpf 1.1 has no API for it): n sites of path, entries or
 * returns, bound to process pid (0: every process). The link's fd, or -errno. */
#define MT_BPF_TRACE_UPROBE_MULTI 48	/* enum bpf_attach_type in kernels 6.6+; Debian 12's uapi predates it */
int uprobe_multi__link(int prog_fd, const char *path, const unsigned long *offs, const __u64 *cookies, size_t n,
		       bool ret, pid_t pid);
/* Probes of a plan bound to process pid (uprobe_multi links, returns first): fds[] gets the links, *n their count. */
int bpf_session__link_plan(struct bpf_session *s, const char *path, const struct alloc_plan *plan, pid_t pid,
			   int fds[2], int *n);
int bpf_session__file_state(struct bpf_session *s, uint64_t dev, uint64_t ino, uint32_t state);
int bpf_session__proc_file(struct bpf_session *s, pid_t pid, uint64_t dev, uint64_t ino, bool linked);
struct bpf_map *bpf_session__attach_map(const struct bpf_session *s);
int bpf_session__track(struct bpf_session *s, pid_t pid);
struct bpf_map *bpf_session__ring_map(const struct bpf_session *s);
int bpf_session__drops(const struct bpf_session *s, __u64 drops[MT_DROP__COUNT]);
int bpf_session__flush_batches(struct bpf_session *s);
uint32_t bpf_session__next_seq(struct bpf_session *s);
uint32_t bpf_session__seq_now(struct bpf_session *s);	/* the next number, not taken */
void bpf_session__close(struct bpf_session *s, int closer);	/* closer: its socket, or -1 */
/* CLOCK_MONOTONIC in ns: the precise clock, which bpf_ktime_get_ns reads too. */
uint64_t clock__monotonic_ns(void);
/* Now, on the records' clock (the tick or CLOCK_MONOTONIC), for the records the tracer writes itself. */
uint64_t bpf_session__now(struct bpf_session *s);
/* The records' clock's step in ns: the tick's length, or 0 for the precise clock. */
uint64_t bpf_session__tick_ns(const struct bpf_session *s);

/* links.c: which allocator files each process has probes for; their links, given to the closer at exit. */
struct link_file {
	size_t index;		/* the attach worker's number for the file */
	uint64_t dev, ino;
	const char *path;	/* for the kernel to find the inode: /proc/self/fd/N of an fd kept open */
	const struct alloc_plan *plan;
};
/* closer.c: link fds closed in the background, where their RCU grace periods hold no one. */
struct close_pool {
	pthread_mutex_t lock;
	pthread_cond_t idle;
	int running;		/* threads still closing */
	uint64_t closed;	/* closes the threads finished */
};
void close_pool__init(struct close_pool *p);
void close_pool__close(struct close_pool *p, int fd);	/* in a thread of its own, else at once */
void close_pool__drain(struct close_pool *p);
uint64_t close_pool__closed(struct close_pool *p);
int closer__start(void);				/* the closer process's socket, or -errno */
int fd_limit__raise(struct rlimit *old);		/* -EEXIST: soft is hard already */
int closer__give(int sock, int fd);			/* closes fd when it returns 0 */
/* closer__give in two steps, for a caller with more copies of what fd refers to: the closer holds fd (sent, not
 * closed) until the ack, which the caller sends once it has closed all of its own. */
int closer__send(int sock, int fd);
void closer__ack(int sock);

struct links;
struct links *links__new(struct bpf_session *s, int closer);	/* closer: closer__start's socket, or -1 */
bool links__has(const struct links *l, pid_t pid, size_t file);
int links__check_leader(struct links *l, pid_t pid, const struct link_file *f);
int links__bind(struct links *l, pid_t pid, const struct link_file *f);
size_t links__files(const struct links *l, pid_t pid, size_t *out, size_t max);
void links__release(struct links *l, pid_t pid);
/* Every link goes to the closer (or, without one, starts closing in a thread: links__free waits for those). */
void links__release_all(struct links *l);
void links__free(struct links *l);

/* attach.c: the attach worker: looks at each requested file once, probes it, lets its held threads go. */
struct attach;
struct attach *attach__new(struct bpf_session *s, struct mt_writer *w, struct modules *mods, int closer);
int attach__on_request(struct attach *a, const struct mt_attach_req *r);
bool attach__on_hold_stop(struct attach *a, pid_t tid);
void attach__on_exec_stop(struct attach *a, pid_t pid, pid_t former_tid);
void attach__on_fork(struct attach *a, pid_t parent, pid_t child);
void attach__on_exit(struct attach *a, pid_t tid);
/* The last log records written and every link given up (see links__release_all); after a flush it uses neither
 * the writer nor the BPF session. */
void attach__flush(struct attach *a);
void attach__free(struct attach *a);

/* ring.c: a BPF ring buffer map read in place; ring__consume hands each record to cb, returns how many or an error. */
struct ring;
typedef int (*ring_cb)(void *ctx, void *data, size_t size);
struct ring *ring__new(int map_fd);
int ring__fd(const struct ring *r);
long ring__consume(struct ring *r, ring_cb cb, void *ctx);
/* Consumes until every record reserved before the call has been handed, past any another CPU still fills. */
long ring__consume_past(struct ring *r, ring_cb cb, void *ctx, bool *reached);	/* reached: may be NULL */
void ring__free(struct ring *r);

/* order.c: the ring's records in the order of their numbers (mt_rec_hdr._pad), whatever order their batches came
 * in. emit gets each record once, in order; one whose predecessors were skipped comes late. */
typedef void (*order_emit_fn)(void *ctx, const void *rec, size_t size);
struct order;
struct order *order__new(order_emit_fn emit, void *ctx);
/* len bytes of records of stride bytes each (0: one record of len bytes), their numbers rising. */
int order__push(struct order *o, const void *recs, size_t len, size_t stride);
bool order__waiting(const struct order *o);	/* records wait behind a number not seen yet */
void order__skip_gap(struct order *o);		/* that number will not come: write the records behind it */
uint32_t order__next(const struct order *o);	/* the number waited for */
void order__lost_before(struct order *o, uint32_t seq);	/* the numbers before seq not seen yet never come */
uint64_t order__late(const struct order *o);	/* records written after later ones */
void order__free(struct order *o);

/* consumer.c: moves ring records into the artifact and learns the process tree from them; feeds attach requests
 * from the attach ring to the worker. */
struct consumer;
struct consumer *consumer__new(struct bpf_session *s, struct mt_writer *w, struct attach *a);
int consumer__fd(const struct consumer *c);
int consumer__drain(struct consumer *c);
/* The same, and past records still being written: what was reserved before the call is all written after it.
 * Before a record the tracer stamps now (an exit, the end), which may share its tick with the last of them. */
int consumer__drain_past(struct consumer *c);
/* The same, with the records still in the CPUs' batches (a quiet process's last calls): before a periodic flush. */
int consumer__drain_batches(struct consumer *c);
/* A record the tracer writes among BPF's, in its place after everything BPF recorded before the call: an exit. */
int consumer__append(struct consumer *c, struct mt_rec_hdr *rec);
/* At the end: every CPU's batch drained and written, the records behind a lost number too. */
void consumer__finish(struct consumer *c);
void consumer__add_process(struct consumer *c, pid_t pid);
bool consumer__is_process(const struct consumer *c, pid_t pid);
/* The parent of a process seen forked (0: unknown or the command), and its MT_FORK_* flags. */
pid_t consumer__parent(const struct consumer *c, pid_t pid, uint32_t *flags);
uint64_t consumer__records(const struct consumer *c);
uint64_t consumer__malformed_records(const struct consumer *c);
int consumer__error(const struct consumer *c);
void consumer__free(struct consumer *c);

/* spawn.c: the command, held in its TRACEME stop before exec, then turned into a seized tracee. */
struct spawn {
	pid_t pid;
	int err_fd;		/* read end of the close-on-exec pipe that carries exec's errno */
	bool restore_nofile;	/* the tracer raised its open-file limit: the command gets nofile back */
	struct rlimit nofile;
	bool restore_nice;	/* the tracer raised its priority: the command gets its nice value back */
	int nice;
};
int spawn__start(struct spawn *sp, char *const *argv, const sigset_t *orig_mask);
int spawn__seize(struct spawn *sp);

/* ptrace_loop.c: runs the tree to its end. Returns the command's wait status, or -errno. */
struct trace_loop {
	struct spawn *sp;
	struct bpf_session *bpf;	/* the records' clock */
	struct consumer *cons;
	struct attach *attach;
	struct metadata *meta;
	struct mt_writer *w;
	int sig_fd;		/* signalfd: SIGCHLD, SIGINT, SIGTERM, SIGHUP */
	bool exit_with_command;	/* stop when the command exits, not when its last descendant does */
	bool quiet;
	int exec_errno;		/* set when the command could not be exec'd */
	int root_status;
};
int trace_loop__run(struct trace_loop *l);

/* record.c: one recording, from spawning the command to the finished artifact in DIR. */
#define MT_EXIT_SETUP 2		/* memtrack could not trace */
struct mt_record_hooks {
	mt_record_fn tap;	/* each record as the writer takes it, or NULL */
	/* After a finished artifact (not when the command could not run): DIR and the command lines read. */
	void (*conclude)(void *ctx, const char *dir, const struct metadata *md);
	void *ctx;
};
/* The command's exit code (128 + N for signal N), 126/127 when it could not run, MT_EXIT_SETUP. */
int mt_record__run(const struct mt_options *o, const struct mt_record_hooks *hooks);

#endif /* MEMTRACK_TRACER_H */
