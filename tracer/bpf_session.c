// SPDX-License-Identifier: GPL-2.0-only
/* bpf_session.c — the BPF programs' lifecycle: open, size the ring, load, attach, track pids, read drops, destroy. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/log.h"
#include "memtrack.skel.h"
#include "tracer/allocators.h"
#include "tracer/bpf_load.h"
#include "tracer/bpf_session.h"
#include "tracer/bpf_warm.h"
#include "tracer/closer.h"
#include "tracer/kernel_caps.h"
#include "tracer/thp.h"

#define MT_MAX_LINKS 32	/* the session's tracepoint links */
#define SESSION_WAKEUP_PARTS 16	/* the consumer wakes at a sixteenth of the ring filled, shared by the CPUs */
#define MT_BPF_F_UPROBE_MULTI_RETURN 1	/* BPF_F_UPROBE_MULTI_RETURN of 6.6+'s uapi */

struct mt_bpf_session {
	struct memtrack_bpf *skel;	/* the maps the tracer reads and writes, the tracepoints' programs, the clock */
	struct memtrack_bpf *half;	/* or NULL; the same object and maps: the programs prog__in_half names */
	struct mt_bpf_maps *maps;	/* during the load: the maps a thread makes for both (tracer/bpf_load.c) */
	struct mt_bpf_warm *warm;	/* or NULL: the programs kept for a warm start, taken or to pin */
	struct bpf_link *links[MT_MAX_LINKS];
	size_t nlinks;
	uint64_t tick_ns;	/* the records' clock ticks this often; 0: the precise clock */
	uint64_t last_now;	/* mt_bpf_session__now's last reading */
	bool per_probe;		/* a perf-event uprobe link per site: no uprobe_multi with a process filter */
	int uprobe_pmu;		/* with per_probe: the uprobe PMU's perf type */
};

/* libbpf speaks through the same pr_* family; its debug chatter only with -v. */
static int libbpf__print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	enum mt_log_level l = level == LIBBPF_WARN ? MT_LOG_WARN : MT_LOG_DEBUG;

	if (l > mt_log_max)
		return 0;
	fputs("memtrack: libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

static int session__add_link(struct mt_bpf_session *s, struct bpf_link *link)
{
	int err;

	if (!link) {
		err = -errno;
		return err ? err : -EINVAL;
	}
	if (s->nlinks == MT_MAX_LINKS) {
		bpf_link__destroy(link);
		return -E2BIG;
	}
	s->links[s->nlinks++] = link;
	return 0;
}

/* prog's name is one of names (NULL-terminated). */
static bool prog__named(const struct bpf_program *prog, const char *const *names)
{
	for (; *names; names++)
		if (!strcmp(bpf_program__name(prog), *names))
			return true;
	return false;
}

/* Linked by the attach worker per file and process (the uprobes), or run by the tracer itself (test runs). */
static bool prog__unattached(const struct bpf_program *prog)
{
	static const char *const names[] = { "alloc_enter", "alloc_return", "clock_now", "batch_flush", "pidns_find",
					     "slots_zero", NULL };

	return prog__named(prog, names);
}

/* Every loaded program of both instances but those. */
static int session__attach_tracepoints(struct mt_bpf_session *s)
{
	struct bpf_object *objs[] = { s->skel->obj, s->half ? s->half->obj : NULL };
	struct bpf_program *prog;
	int err;

	if (mt_bpf_warm__taken(s->warm))
		return mt_bpf_warm__attach(s->warm, s->skel->obj);
	for (size_t i = 0; i < 2 && objs[i]; i++)
		bpf_object__for_each_program(prog, objs[i]) {
			if (!bpf_program__autoload(prog) || prog__unattached(prog))
				continue;
			err = session__add_link(s, bpf_program__attach(prog));
			if (err) {
				pr_err("cannot attach %s: %s\n", bpf_program__name(prog), strerror(-err));
				return err;
			}
		}
	return 0;
}

#define MT_TRACEFS "/sys/kernel/tracing"

/* tracefs is not mounted on a fresh machine: mount it, so that only the memory syscalls' tracepoints fire. */
static bool tracefs__ready(void)
{
	if (!access(MT_TRACEFS "/events/syscalls/sys_exit_mmap/id", R_OK))
		return true;
	if (mount("tracefs", MT_TRACEFS, "tracefs", 0, NULL) && errno != EBUSY)
		pr_warn("cannot mount tracefs at " MT_TRACEFS " (%s): using the raw syscall tracepoints\n",
			strerror(errno));
	return !access(MT_TRACEFS "/events/syscalls/sys_exit_mmap/id", R_OK);
}

/*
 * The BTF raw syscall exit tracepoint by default: one link, but every syscall of the machine runs a few BPF
 * instructions to be told apart. The per-syscall exit tracepoints (tracefs) spare untracked processes that, but
 * for write's (the control FIFO's), and each of their six links takes long to detach, one after another in the
 * kernel (bench/README.md).
 */
static void session__choose_syscall_hooks(struct mt_bpf_session *s, bool per_syscall)
{
	struct bpf_program *prog;
	const char *sec;

	per_syscall = per_syscall && tracefs__ready();
	bpf_object__for_each_program(prog, s->skel->obj) {
		sec = bpf_program__section_name(prog);
		if (!strncmp(sec, "tracepoint/syscalls/", 20))
			bpf_program__set_autoload(prog, per_syscall);
		else if (!strncmp(sec, "tp_btf/sys_", 11))
			bpf_program__set_autoload(prog, !per_syscall);
	}
}

/* Without --stacks no stack code runs: its maps shrink to one entry, which the kernel need not set up. */
static void session__size_maps(struct mt_bpf_session *s, const struct mt_options *o)
{
	bpf_map__set_max_entries(s->skel->maps.rb, o->ring_bytes);
	if (o->stack_bytes)
		return;
	bpf_map__set_max_entries(s->skel->maps.stacks_seen, 1);
	bpf_map__set_max_entries(s->skel->maps.exec_ranges, 1);
	bpf_map__set_max_entries(s->skel->maps.unwind_rows, 1);
	bpf_map__set_max_entries(s->skel->maps.unwind_pages, 1);
	bpf_map__set_max_entries(s->skel->maps.unwind_modules, 1);
}

/* The tick, unless --precise-time or the kernel's tick is unknown (then the precise clock, with a note). */
static void session__choose_clock(struct mt_bpf_session *s, const struct mt_options *o)
{
	unsigned int hz = o->precise_time ? 0 : mt_kernel__hz();

	if (!o->precise_time && !hz)
		pr_info("the kernel's CONFIG_HZ is unknown (no /proc/config.gz or /boot/config-*): precise timestamps\n");
	s->tick_ns = hz ? 1000000000u / hz : 0;
	s->skel->rodata->cfg_tick_ns = s->tick_ns;
}

static int session__read_clock(const struct mt_bpf_session *s, struct mt_clock *c)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = c, .ctx_size_in = sizeof(*c));
	int err;

	memset(c, 0, sizeof(*c));
	err = bpf_prog_test_run_opts(mt_bpf_warm__prog_fd(s->warm, s->skel->progs.clock_now), &opts);
	return err ? -errno : 0;
}

/* Shifts the tick by whole ticks so that it reads within a tick of CLOCK_MONOTONIC: times stay multiples of it. */
static int session__place_clock(struct mt_bpf_session *s)
{
	struct mt_clock c;
	int err;

	if (!s->tick_ns)
		return 0;
	err = session__read_clock(s, &c);
	if (err) {
		pr_err("cannot read the tick through BPF: %s\n", strerror(-err));
		return err;
	}
	s->skel->bss->live_tick_offset_ns = (c.jiffies - c.ktime_ns / s->tick_ns) * s->tick_ns;
	s->last_now = c.jiffies * s->tick_ns - s->skel->bss->live_tick_offset_ns;
	return 0;
}

#define MT_PID_NS_INIT_INO 0xeffffffcu	/* the kernel's PROC_PID_INIT_INO: the initial PID namespace */

/* memtrack's PID namespace, for BPF to give its pids (core.bpf.h): none to tell in the initial one. */
static void session__tell_pidns(struct mt_bpf_session *s)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) || st.st_ino == MT_PID_NS_INIT_INO)
		return;
	s->skel->rodata->cfg_pidns_dev = (uint64_t)major(st.st_dev) << MT_KDEV_MINOR_BITS | minor(st.st_dev);
	s->skel->rodata->cfg_pidns_ino = st.st_ino;
}

/* The namespace's depth, which it cannot see from inside: pidns_find reads it in this thread's context. */
static int session__find_pidns(struct mt_bpf_session *s)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int err = 0;

	if (!s->skel->rodata->cfg_pidns_ino)
		return 0;
	if (bpf_prog_test_run_opts(mt_bpf_warm__prog_fd(s->warm, s->skel->progs.pidns_find), &opts))
		err = -errno;
	else if (opts.retval)
		err = -ESRCH;
	if (err)
		pr_err("cannot find memtrack's PID namespace through BPF: %s\n", strerror(-err));
	return err;
}

uint64_t mt_bpf_session__monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

uint64_t mt_bpf_session__now(struct mt_bpf_session *s)
{
	struct mt_clock c;
	int err = 0;

	if (!s->tick_ns)
		return mt_bpf_session__monotonic_ns();
	for (int i = 0; i < 3; i++) {
		err = session__read_clock(s, &c);
		if (!err)
			return s->last_now = c.ts_ns;
	}
	/* Never seen: the program ran at start. CLOCK_MONOTONIC would not be on the records' counter. */
	pr_warn("cannot read the tick through BPF: %s; a record gets the last time read\n", strerror(-err));
	return s->last_now;
}

uint64_t mt_bpf_session__tick_ns(const struct mt_bpf_session *s)
{
	return s->tick_ns;
}

/*
 * uprobe_multi links where the kernel has them, else one perf-event uprobe link per site. MEMTRACK_ATTACH=legacy
 * forces the latter (the tests run both here), =multi the former.
 */
static int session__choose_links(struct mt_bpf_session *s)
{
	const char *mode = getenv("MEMTRACK_ATTACH");

	if (mode && *mode && strcmp(mode, "legacy") && strcmp(mode, "multi")) {
		pr_err("MEMTRACK_ATTACH=%s: expected legacy or multi\n", mode);
		return -EINVAL;
	}
	s->per_probe = mode && *mode ? !strcmp(mode, "legacy") : !mt_kernel__has_uprobe_multi();
	if (!s->per_probe) {
		bpf_program__set_expected_attach_type(s->skel->progs.alloc_enter, MT_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(s->skel->progs.alloc_return, MT_BPF_TRACE_UPROBE_MULTI);
		return 0;
	}
	s->uprobe_pmu = mt_kernel__uprobe_pmu_type();
	if (s->uprobe_pmu < 0) {
		pr_err("the kernel has neither uprobe_multi links nor the uprobe perf PMU: %s\n",
		       strerror(-s->uprobe_pmu));
		return s->uprobe_pmu;
	}
	pr_info("allocator probes: one perf-event uprobe link per site (%s)\n", mode && *mode ?
		"MEMTRACK_ATTACH=legacy" : "this kernel has no uprobe_multi links with a process filter");
	return 0;
}

bool mt_bpf_session__per_probe(const struct mt_bpf_session *s)
{
	return s->per_probe;
}

/*
 * The programs the second instance loads: about half of the verifier's work, which is most of the start-up
 * (bench/README.md, "Start-up"). The kernel verifies programs of different loads side by side.
 */
static bool prog__in_half(const struct bpf_program *prog)
{
	static const char *const names[] = { "alloc_enter", "alloc_return", "rss_stat", "process_exec", NULL };

	return prog__named(prog, names);
}

/* The programs this recording uses (the options chose them in s->skel) go to one instance or the other. */
static void session__split(struct mt_bpf_session *s)
{
	struct bpf_program *p = NULL, *q = NULL;
	bool used, half;

	while ((p = bpf_object__next_program(s->skel->obj, p)) && (q = bpf_object__next_program(s->half->obj, q))) {
		used = bpf_program__autoload(p);
		half = prog__in_half(p);
		bpf_program__set_expected_attach_type(q, bpf_program__expected_attach_type(p));
		bpf_program__set_autoload(q, used && half);
		bpf_program__set_autoload(p, used && !half);
	}
}

/* An instance's load: the kernel's BTF parsed while the maps are made, then the maps reused, the programs loaded. */
static int instance__load(struct memtrack_bpf *skel, struct mt_bpf_maps *maps)
{
	int err = mt_bpf_load__kernel_btf(skel->obj);

	if (!err)
		err = mt_bpf_load__maps_reuse(maps, skel->obj);
	return err ? err : memtrack_bpf__load(skel);
}

static void *half__load(void *arg)
{
	struct mt_bpf_session *s = arg;

	mt_thp__prefer_thread();
	return (void *)(long)instance__load(s->half, s->maps);
}

/* Each instance's programs, the second's in a thread: on two CPUs the loads overlap. */
static int session__load_halves(struct mt_bpf_session *s)
{
	int err, half_err;
	pthread_t thread;
	void *ret;
	bool threaded;

	session__split(s);
	threaded = !pthread_create(&thread, NULL, half__load, s);
	err = instance__load(s->skel, s->maps);
	if (threaded && !pthread_join(thread, &ret))
		half_err = (int)(long)ret;
	else
		half_err = instance__load(s->half, s->maps);
	return err ? err : half_err;
}

/*
 * Two loads side by side only when a CPU is free for the second now: on a busy machine they would take turns on
 * one and parse the kernel's BTF twice for nothing (bench/README.md). MEMTRACK_LOAD=parallel or =serial decides
 * instead (the tests record both ways). 1: side by side, 0: one load, or -EINVAL.
 */
static int session__load_mode(void)
{
	const char *mode = getenv("MEMTRACK_LOAD");
	cpu_set_t cpus;

	if (mode && *mode) {
		if (strcmp(mode, "parallel") && strcmp(mode, "serial")) {
			pr_err("MEMTRACK_LOAD=%s: expected parallel or serial\n", mode);
			return -EINVAL;
		}
		return !strcmp(mode, "parallel");
	}
	if (sched_getaffinity(0, sizeof(cpus), &cpus) || CPU_COUNT(&cpus) < 2)
		return 0;
	return mt_kernel__runnable() < (unsigned int)CPU_COUNT(&cpus);
}

/* The maps are made in a thread while each instance has libbpf parse the kernel's BTF (tracer/bpf_load.c). */
static int session__load(struct mt_bpf_session *s)
{
	uint64_t t0 = mt_bpf_session__monotonic_ns();
	int err;

	s->maps = mt_bpf_load__maps_start(s->skel->obj);
	if (!s->maps)
		return -errno;
	err = s->half ? session__load_halves(s) : instance__load(s->skel, s->maps);
	mt_bpf_load__maps_free(s->maps);
	s->maps = NULL;
	pr_debug("start-up: BPF object loaded in %.1f ms (%s)\n", (mt_bpf_session__monotonic_ns() - t0) / 1e6,
		 s->half ? "two loads side by side" : "one load");
	return err;
}

/* The load-time settings (.rodata): the options, the owner, the machine. */
static void session__configure(struct mt_bpf_session *s, const struct mt_options *o, uid_t owner_uid,
			       gid_t owner_gid)
{
	int ncpus = libbpf_num_possible_cpus();

	session__size_maps(s, o);
	session__choose_syscall_hooks(s, o->syscall_tracepoints);
	bpf_program__set_autoload(s->skel->progs.rss_stat, !o->no_rss);
	s->skel->rodata->cfg_wakeup_bytes = o->ring_bytes / SESSION_WAKEUP_PARTS / (ncpus > 0 ? ncpus : 1);
	s->skel->rodata->cfg_ring_high = o->drop_when_full ? 0 : o->ring_bytes / 2;
	s->skel->rodata->cfg_stack_bytes = o->stack_bytes;
	s->skel->rodata->cfg_stack_sample = o->stack_sample ? o->stack_sample : MT_STACK_SAMPLE_DEFAULT;
	s->skel->rodata->cfg_withhold = o->stack_bytes && owner_uid != 0;
	if (!s->skel->rodata->cfg_withhold)	/* nothing is withheld: BPF never looks in it */
		bpf_map__set_max_entries(s->skel->maps.privileged, 1);
	s->skel->rodata->cfg_owner_uid = owner_uid;
	s->skel->rodata->cfg_owner_gid = owner_gid;
	s->skel->rodata->cfg_page_size = sysconf(_SC_PAGESIZE);	/* the unit of the kernel's rss counters */
	s->skel->bss->live_tracer_tgid = getpid();	/* tells memtrack's tracees from the threads handed off */
	session__tell_pidns(s);
	session__choose_clock(s, o);
}

/* The clock placed, the namespace found, the batches flushed once, the tracepoints attached. */
static int session__start(struct mt_bpf_session *s)
{
	int err = session__place_clock(s);

	if (!err)
		err = session__find_pidns(s);
	/* Once now, on empty batches: a kernel that cannot run it would hold records in them for ever. */
	if (!err && (err = mt_bpf_session__flush_batches(s)) < 0)
		pr_err("cannot run the BPF batch flush on each CPU: %s\n", strerror(-err));
	err = err > 0 ? 0 : err;	/* busy: nothing runs yet, but a retry would do */
	if (!err)
		err = session__attach_tracepoints(s);
	return err;
}

/* The programs kept by a past run when they serve (unless MEMTRACK_WARM=0), else a cold load, its programs kept. */
static int session__load_or_take(struct mt_bpf_session *s, const struct mt_options *o, int closer, int mode)
{
	struct bpf_object *objs[2];
	size_t elf_bytes;
	const void *elf = memtrack_bpf__elf_bytes(&elf_bytes);
	int err;

	s->warm = mt_bpf_warm__open(s->skel->obj, elf, elf_bytes, o->stack_bytes != 0, closer);
	if (s->warm && !mt_bpf_warm__take(s->warm, s->skel->obj)) {
		pr_info("warm start: the programs kept by a past run taken\n");
		return 0;
	}
	/* Only a run that keeps its programs needs the warm start's reset; a cold run is spared its verification. */
	bpf_program__set_autoload(s->skel->progs.slots_zero, s->warm != NULL);
	s->half = mode ? memtrack_bpf__open() : NULL;
	if (mode && !s->half) {
		err = -errno;
		pr_err("cannot open the BPF object: %s\n", strerror(-err));
		return err;
	}
	err = session__load(s);
	if (err) {
		pr_err("cannot load the BPF programs: %s (libbpf's reason is above)\n", strerror(-err));
		return err;
	}
	objs[0] = s->skel->obj;
	objs[1] = s->half ? s->half->obj : NULL;
	mt_bpf_warm__pin(s->warm, objs, s->half ? 2 : 1);
	return 0;
}

struct mt_bpf_session *mt_bpf_session__open(const struct mt_options *o, uid_t owner_uid, gid_t owner_gid, int closer)
{
	struct mt_bpf_session *s = calloc(1, sizeof(*s));
	int err, mode;

	if (!s)
		return NULL;
	libbpf_set_print(libbpf__print);
	err = mode = session__load_mode();
	if (err >= 0)
		err = mt_bpf_warm__asked();
	if (err < 0)
		goto destroy_skel;
	s->skel = memtrack_bpf__open();
	if (!s->skel) {
		err = -errno;
		pr_err("cannot open the BPF object: %s\n", strerror(-err));
		goto destroy_skel;
	}
	err = session__choose_links(s);
	if (err)
		goto destroy_skel;
	session__configure(s, o, owner_uid, owner_gid);
	err = session__load_or_take(s, o, closer, mode);
	if (err)
		goto destroy_skel;
	err = session__start(s);
	if (err)
		goto destroy_skel;
	return s;

destroy_skel:
	mt_bpf_session__close(s, -1);
	errno = -err;
	return NULL;
}

/* libbpf 1.1 has no uprobe_multi API: the link is made with the bpf syscall; this is the uapi layout of 6.6+. */
struct uprobe_multi_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 um_flags;
	__u32 pid;
};

/*
 * One multi-uprobe link per file, direction and process: its detach waits for RCU grace periods once however many
 * sites it holds, where one perf-event uprobe per site waited once each; its pid filter keeps the breakpoints out
 * of every process that is not the tracked one (it follows the process's exec).
 */
int mt_bpf_session__uprobe_multi(int prog_fd, const char *path, const unsigned long *offs, const __u64 *cookies,
				 size_t n, enum mt_uprobe_kind kind, pid_t pid)
{
	union bpf_attr attr;
	struct uprobe_multi_attr *um = (void *)&attr.link_create;
	int fd;

	_Static_assert(sizeof(struct uprobe_multi_attr) <= sizeof(attr) - offsetof(union bpf_attr, link_create),
		       "uprobe_multi attr fits");
	memset(&attr, 0, sizeof(attr));
	um->prog_fd = prog_fd;
	um->attach_type = kind == MT_UPROBE_SESSION ? MT_BPF_TRACE_UPROBE_SESSION : MT_BPF_TRACE_UPROBE_MULTI;
	um->path = (unsigned long)path;
	um->offsets = (unsigned long)offs;
	um->cookies = (unsigned long)cookies;
	um->cnt = n;
	um->um_flags = kind == MT_UPROBE_RETURN ? MT_BPF_F_UPROBE_MULTI_RETURN : 0;
	um->pid = pid;
	fd = syscall(SYS_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

/* The allocator programs: the entry's or the return's, in whichever instance loaded them. */
static int session__alloc_fd(const struct mt_bpf_session *s, bool ret)
{
	const struct memtrack_bpf *skel = s->half ? s->half : s->skel;

	return mt_bpf_warm__prog_fd(s->warm, ret ? skel->progs.alloc_return : skel->progs.alloc_enter);
}

/* The callers say which file failed for which process, and why; only this cause needs more words. */
static void plan__explain(const char *path, int err)
{
	if (err == -EINVAL)
		pr_err("cannot attach uprobes to %s: %s (another tool's uprobe at one of these offsets with a "
		       "different ref_ctr_offset does this: dmesg says \"ref_ctr_offset mismatch\")\n",
		       path, strerror(-err));
}

/*
 * Kernels before 6.6: a perf-event uprobe on one site, for process pid (its perf filter plants the breakpoint only
 * in that process's memory), as libbpf's bpf_program__attach_uprobe_opts makes it. The BPF link holds the perf
 * event: its fd alone is the probe, which the closer can take like a uprobe_multi link's.
 */
static int uprobe__perf_link(const struct mt_bpf_session *s, int prog_fd, const char *path, unsigned long off,
			     __u64 cookie, bool ret, pid_t pid)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .type = s->uprobe_pmu, .config = ret,
					.config1 = (unsigned long)path, .config2 = off };
	LIBBPF_OPTS(bpf_link_create_opts, opts, .perf_event.bpf_cookie = cookie);
	int pfd, fd;

	pfd = syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0)
		return -errno;
	fd = bpf_link_create(prog_fd, pfd, BPF_PERF_EVENT, &opts);
	fd = fd < 0 ? -errno : fd;
	close(pfd);
	return fd;
}

/* The plan's sites, one link each, returns first: fds[] gets them (at most MT_LINK_FDS_MAX), *nfds their count. */
static int plan__link_per_probe(struct mt_bpf_session *s, const char *path, const struct mt_probe_plan *plan,
				pid_t pid, uint64_t cookie_bits, int *fds, int *nfds)
{
	int enter = session__alloc_fd(s, false), ret = session__alloc_fd(s, true);
	const struct mt_probe_site *site;
	int pass, fd;
	size_t i;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < plan->n; i++) {
			site = &plan->sites[i];
			if (!pass && !site->ret)
				continue;
			fd = uprobe__perf_link(s, pass ? enter : ret, path, site->offset, site->cookie | cookie_bits, !pass,
					      pid);
			if (fd < 0)
				return fd;
			fds[(*nfds)++] = fd;
		}
	return 0;
}

int mt_bpf_session__link_plan(struct mt_bpf_session *s, const char *path, const struct mt_probe_plan *plan,
			      pid_t pid, uint64_t cookie_bits, int *fds, int *nfds)
{
	unsigned long offs[MT_PROBE_PLAN_MAX], roffs[MT_PROBE_PLAN_MAX];
	__u64 cookies[MT_PROBE_PLAN_MAX], rcookies[MT_PROBE_PLAN_MAX];
	size_t i, n = 0, rn = 0;
	int fd;

	*nfds = 0;
	if (s->per_probe) {
		fd = plan__link_per_probe(s, path, plan, pid, cookie_bits, fds, nfds);
		if (fd < 0)
			goto fail;
		return 0;
	}
	for (i = 0; i < plan->n; i++) {
		offs[n] = plan->sites[i].offset;
		cookies[n++] = plan->sites[i].cookie | cookie_bits;
		if (plan->sites[i].ret) {
			roffs[rn] = plan->sites[i].offset;
			rcookies[rn++] = plan->sites[i].cookie | cookie_bits;
		}
	}
	/* Returns first: an entry must never save a call whose return nobody sees. */
	if (rn) {
		fd = mt_bpf_session__uprobe_multi(session__alloc_fd(s, true), path, roffs, rcookies, rn, MT_UPROBE_RETURN,
						  pid);
		if (fd < 0)
			goto fail;
		fds[(*nfds)++] = fd;
	}
	if (n) {
		fd = mt_bpf_session__uprobe_multi(session__alloc_fd(s, false), path, offs, cookies, n, MT_UPROBE_ENTRY,
						  pid);
		if (fd < 0)
			goto fail;
		fds[(*nfds)++] = fd;
	}
	return 0;
fail:
	plan__explain(path, fd);
	return fd;
}

static int map__set(struct bpf_map *map, const void *key, size_t klen, const void *val, size_t vlen, bool del)
{
	int err = del ? bpf_map__delete_elem(map, key, klen, 0) : bpf_map__update_elem(map, key, klen, val, vlen, 0);

	return err && errno != ENOENT ? -errno : 0;
}

int mt_bpf_session__file_state(struct mt_bpf_session *s, uint64_t dev, uint64_t ino, uint32_t state)
{
	__u64 key[2] = { dev, ino };

	return map__set(s->skel->maps.known_files, key, sizeof(key), &state, sizeof(state), false);
}

int mt_bpf_session__proc_file(struct mt_bpf_session *s, pid_t pid, uint64_t dev, uint64_t ino, uint8_t state)
{
	struct { __u32 tgid, pad; __u64 dev, ino; } key = { pid, 0, dev, ino };

	return map__set(s->skel->maps.proc_files, &key, sizeof(key), &state, sizeof(state), !state);
}

int mt_bpf_session__shared_file(struct mt_bpf_session *s, uint32_t slot, uint64_t dev, uint64_t ino, uint32_t flags)
{
	struct mt_shared_file f = { .dev = dev, .ino = ino, .flags = flags };

	return map__set(s->skel->maps.shared_files, &slot, sizeof(slot), &f, sizeof(f), false);
}

int mt_bpf_session__callers_get(struct mt_bpf_session *s, pid_t pid, struct mt_callers *c)
{
	__u32 key = pid;

	if (bpf_map__lookup_elem(s->skel->maps.callers, &key, sizeof(key), c, sizeof(*c), 0))
		return -errno;
	return 0;
}

int mt_bpf_session__caller_file(struct mt_bpf_session *s, uint64_t dev, uint64_t ino, const struct mt_callers *c)
{
	__u64 key[2] = { dev, ino };

	return map__set(s->skel->maps.caller_files, key, sizeof(key), c, sizeof(*c), false);
}

/* A new generation after the write: BPF's threads that found no entry before look again. */
int mt_bpf_session__callers_set(struct mt_bpf_session *s, pid_t pid, const struct mt_callers *c)
{
	__u32 key = pid;
	int err = map__set(s->skel->maps.callers, &key, sizeof(key), c, sizeof(*c), false);

	__atomic_fetch_add(&s->skel->bss->live_callers_gen, 1, __ATOMIC_SEQ_CST);
	return err;
}

struct bpf_map *mt_bpf_session__attach_map(const struct mt_bpf_session *s)
{
	return s->skel->maps.attach_rb;
}

static int session__track_state(struct mt_bpf_session *s, pid_t pid, __u32 state)
{
	__u32 key = pid;

	if (bpf_map__update_elem(s->skel->maps.tracked, &key, sizeof(key), &state, sizeof(state), BPF_ANY))
		return -errno;
	return 0;
}

int mt_bpf_session__track(struct mt_bpf_session *s, pid_t pid)
{
	return session__track_state(s, pid, MT_PROC_PENDING_EXEC);
}

int mt_bpf_session__track_running(struct mt_bpf_session *s, pid_t pid)
{
	return session__track_state(s, pid, MT_PROC_ACTIVE);
}

int mt_bpf_session__set_privileged(struct mt_bpf_session *s, pid_t pid)
{
	__u32 key = pid;
	__u8 one = 1;

	if (!s->skel->rodata->cfg_withhold)
		return 0;
	if (bpf_map__update_elem(s->skel->maps.privileged, &key, sizeof(key), &one, sizeof(one), BPF_ANY))
		return -errno;
	return 0;
}

int mt_bpf_session__exec_range(struct mt_bpf_session *s, pid_t pid, const struct mt_exec_range *m)
{
	struct mt_exec_ranges r = {};
	__u32 key = pid, i;

	if (!s->skel->rodata->cfg_stack_bytes)
		return 0;
	bpf_map__lookup_elem(s->skel->maps.exec_ranges, &key, sizeof(key), &r, sizeof(r), 0);	/* none yet: empty */
	for (i = 0; i < r.n; i++)	/* as BPF's ranges__slot: a mapping over an old one replaces it */
		if (m->lo < r.hi[i] && m->hi > r.lo[i])
			break;
	if (i >= MT_EXEC_RANGES)
		return -ENOSPC;
	r.lo[i] = m->lo;
	r.hi[i] = m->hi;
	r.pgoff[i] = m->pgoff;
	r.dev[i] = m->dev;
	r.ino[i] = m->ino;
	r.n = i >= r.n ? i + 1 : r.n;
	if (bpf_map__update_elem(s->skel->maps.exec_ranges, &key, sizeof(key), &r, sizeof(r), BPF_ANY))
		return -errno;
	return 0;
}

bool mt_bpf_session__stacks(const struct mt_bpf_session *s)
{
	return s->skel->rodata->cfg_stack_bytes != 0;
}

void mt_bpf_session__unwind_fds(const struct mt_bpf_session *s, int *modules, int *pages, int *rows)
{
	*modules = bpf_map__fd(s->skel->maps.unwind_modules);
	*pages = bpf_map__fd(s->skel->maps.unwind_pages);
	*rows = bpf_map__fd(s->skel->maps.unwind_rows);
}

int mt_bpf_session__held_fd(const struct mt_bpf_session *s)
{
	return bpf_map__fd(s->skel->maps.held);
}

void mt_bpf_session__allow_stop_hold(struct mt_bpf_session *s)
{
	s->skel->bss->live_hold_stop_ok = 1;
}

/* After the resume: memtrack dying between the two costs a spurious SIGCONT from the closer, not a stop. */
void mt_bpf_session__unhold(struct mt_bpf_session *s, pid_t tid)
{
	__u32 key = tid;

	bpf_map__delete_elem(s->skel->maps.held, &key, sizeof(key), 0);
}

int mt_bpf_session__ret_restore_take(struct mt_bpf_session *s, pid_t tid, struct mt_ret_restore *r)
{
	__u32 key = tid;

	if (bpf_map__lookup_and_delete_elem(s->skel->maps.ret_restore, &key, sizeof(key), r, sizeof(*r), 0))
		return -errno;
	return 0;
}

bool mt_bpf_session__pressure_take(struct mt_bpf_session *s, pid_t tid)
{
	__u32 key = tid, v;

	return !bpf_map__lookup_and_delete_elem(s->skel->maps.pressure_held, &key, sizeof(key), &v, sizeof(v), 0);
}

uint64_t mt_bpf_session__pressure_holds(const struct mt_bpf_session *s)
{
	return __atomic_load_n(&s->skel->bss->live_pressure_holds, __ATOMIC_RELAXED);
}

struct bpf_map *mt_bpf_session__ring_map(const struct mt_bpf_session *s)
{
	return s->skel->maps.rb;
}

int mt_bpf_session__drops(const struct mt_bpf_session *s, __u64 drops[MT_DROP__COUNT])
{
	int ncpu = libbpf_num_possible_cpus();
	__u32 key;
	int cpu;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	__u64 vals[ncpu];
	for (key = 0; key < MT_DROP__COUNT; key++) {
		drops[key] = 0;
		if (bpf_map__lookup_elem(s->skel->maps.drops, &key, sizeof(key), vals, sizeof(vals), 0))
			return -errno;
		for (cpu = 0; cpu < ncpu; cpu++)
			drops[key] += vals[cpu];
	}
	return 0;
}

/* Each CPU's batch of allocator records to the ring. Returns how many CPUs had theirs busy (ask again), or -errno. */
int mt_bpf_session__flush_batches(struct mt_bpf_session *s)
{
	int ncpu = libbpf_num_possible_cpus(), cpu, busy = 0;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU);

	if (ncpu < 0)
		return ncpu;
	for (cpu = 0; cpu < ncpu; cpu++) {
		opts.cpu = cpu;
		opts.retval = 0;
		/* An offline CPU (ENXIO) runs nothing: records it left in its batch (it went offline while a tracked
		 * thread ran there, rare) come when it is back, late. */
		if (!bpf_prog_test_run_opts(mt_bpf_warm__prog_fd(s->warm, s->skel->progs.batch_flush), &opts))
			busy += opts.retval != 0;
		else if (errno != ENXIO)
			return -errno;
	}
	return busy;
}

void mt_bpf_session__set_control(struct mt_bpf_session *s, uint64_t dev, uint64_t ino, bool paused)
{
	s->skel->bss->live_control_dev = dev;
	s->skel->bss->live_control_ino = ino;
	__atomic_store_n(&s->skel->bss->live_paused, paused, __ATOMIC_SEQ_CST);
}

void mt_bpf_session__set_paused(struct mt_bpf_session *s, bool paused)
{
	__atomic_store_n(&s->skel->bss->live_paused, paused, __ATOMIC_SEQ_CST);
}

uint64_t mt_bpf_session__control_ignored(const struct mt_bpf_session *s)
{
	return __atomic_load_n(&s->skel->bss->live_control_ignored, __ATOMIC_RELAXED);
}

/* The next record number, taken the way BPF takes it (see live_rec_seq): for a record the tracer writes. */
uint32_t mt_bpf_session__next_seq(struct mt_bpf_session *s)
{
	return (uint32_t)__atomic_fetch_add(&s->skel->bss->live_rec_seq, 1, __ATOMIC_SEQ_CST);
}

uint32_t mt_bpf_session__seq_now(struct mt_bpf_session *s)
{
	return (uint32_t)__atomic_load_n(&s->skel->bss->live_rec_seq, __ATOMIC_SEQ_CST);
}

static void *link__destroy_thread(void *link)
{
	bpf_link__destroy(link);
	return NULL;
}

/* The closer takes a copy of the link's fd: the copy holds the link (a perf link holds its perf event too), so
 * libbpf's detach here only closes memtrack's references, and the kernel's unregistering runs in the closer. */
static bool link__give(struct bpf_link *link, int closer)
{
	int fd = closer >= 0 ? fcntl(bpf_link__fd(link), F_DUPFD_CLOEXEC, 0) : -1;
	int err = fd < 0 ? -EBADF : mt_closer__send(closer, fd);

	if (fd >= 0)
		close(fd);
	if (err)
		return false;
	bpf_link__destroy(link);
	mt_closer__ack(closer);
	return true;
}

/* A tracepoint link's detach waits for RCU grace periods (the per-syscall ones one after another): without the
 * closer, detached side by side, they wait at least once. */
void mt_bpf_session__close(struct mt_bpf_session *s, int closer)
{
	pthread_t threads[MT_MAX_LINKS];
	bool started[MT_MAX_LINKS];
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nlinks; i++) {
		if (link__give(s->links[i], closer))
			s->links[i] = NULL;
		else
			started[i] = !pthread_create(&threads[i], NULL, link__destroy_thread, s->links[i]);
	}
	for (i = 0; i < s->nlinks; i++) {
		if (!s->links[i])
			continue;
		if (started[i])
			pthread_join(threads[i], NULL);
		else
			bpf_link__destroy(s->links[i]);
	}
	mt_bpf_warm__free(s->warm, closer);
	memtrack_bpf__destroy(s->half);
	memtrack_bpf__destroy(s->skel);
	free(s);
}
