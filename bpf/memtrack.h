/* memtrack.h — the records shared by the BPF programs, the tracer and the artifact (includes nothing). */
#ifndef MEMTRACK_SHARED_H
#define MEMTRACK_SHARED_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define MT_PATH_MAX 256
#define MT_COMM_MAX 16

/* Record types: the first field of every record in the ring and in the artifact. */
enum mt_rec_type {
	MT_REC_ALLOC = 1,	/* struct mt_alloc: an allocator call (BPF) */
	MT_REC_SYSCALL = 2,	/* struct mt_syscall: mmap/munmap/mremap/brk (BPF) */
	MT_REC_FORK = 3,	/* struct mt_fork: a new process in the tree (BPF) */
	MT_REC_EXEC = 4,	/* struct mt_exec: a tracked process exec'd (BPF) */
	MT_REC_EXIT = 5,	/* struct mt_exit: a process ended (tracer, from waitpid) */
	MT_REC_SESSION = 6,	/* struct mt_session + argv strings: first record (tracer) */
	MT_REC_END = 7,		/* struct mt_end: last record, drop counters (tracer) */
};

/* Allocator entry points; "event" names in dump follow this order. */
enum mt_func {
	MT_FN_MALLOC = 1,
	MT_FN_CALLOC,
	MT_FN_REALLOC,
	MT_FN_REALLOCARRAY,
	MT_FN_ALIGNED_ALLOC,
	MT_FN_MEMALIGN,
	MT_FN_POSIX_MEMALIGN,
	MT_FN_VALLOC,
	MT_FN_PVALLOC,
	MT_FN_FREE,
	MT_FN__COUNT,
};

enum mt_sys {
	MT_SYS_MMAP = 1,
	MT_SYS_MUNMAP,
	MT_SYS_MREMAP,
	MT_SYS_BRK,
};

enum mt_allocator {
	MT_ALLOCATOR_GLIBC = 1,
};

/* States of a process in the BPF map of tracked processes. */
#define MT_PROC_PENDING_EXEC 0	/* the tracer's child before its exec: memtrack's own pre-exec code is not counted */
#define MT_PROC_ACTIVE 1

/* Why an event could not be delivered; index into mt_end.drops and the BPF drop counters. */
enum mt_drop {
	MT_DROP_RINGBUF = 0,	/* bpf_ringbuf_reserve failed: ring full */
	MT_DROP_CALLSTATE,	/* per-thread call state map full: an entry went unpaired */
	MT_DROP_READ,		/* bpf_probe_read_user of posix_memalign's *memptr failed */
	MT_DROP_TRACKED,	/* a new process could not be added to the tracked map: its events are lost */
	MT_DROP__COUNT = 8,
};

/* Common head of every record; size covers the whole record, so readers skip unknown types. */
struct mt_rec_hdr {
	__u64 ts_ns;		/* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u32 pid;		/* thread group id */
	__u32 tid;
	__u16 type;		/* enum mt_rec_type */
	__u16 size;		/* bytes, this header included */
	__u32 _pad;
};

struct mt_alloc {
	struct mt_rec_hdr hdr;
	__u64 addr;		/* result (free: the pointer freed) */
	__u64 size;		/* bytes asked for; calloc/reallocarray: nmemb * size */
	__u64 old_addr;		/* realloc/reallocarray: the pointer passed in */
	__u64 align;		/* aligned_alloc/memalign/posix_memalign */
	__u8 func;		/* enum mt_func */
	__u8 allocator;		/* enum mt_allocator */
	__u8 _pad[6];
};

struct mt_syscall {
	struct mt_rec_hdr hdr;
	__u64 addr;		/* result: mapped/new address; munmap: the address */
	__u64 size;		/* length (mremap: new length; brk: requested break) */
	__u64 old_addr;		/* mremap */
	__u64 old_size;		/* mremap */
	__u32 prot;		/* mmap */
	__u32 flags;		/* mmap, mremap */
	__s64 ret;		/* raw syscall return (negative errno on failure) */
	__u8 sys;		/* enum mt_sys */
	__u8 _pad[7];
};

struct mt_fork {
	struct mt_rec_hdr hdr;	/* pid: the parent */
	__u32 child;
	__u32 _pad;
};

struct mt_exec {
	struct mt_rec_hdr hdr;
	__u32 old_pid;		/* tid that called execve (differs when a non-leader thread exec'd) */
	__u32 _pad;
	char comm[MT_COMM_MAX];
	char path[MT_PATH_MAX];	/* NUL-terminated */
};

struct mt_exit {
	struct mt_rec_hdr hdr;
	__s32 status;		/* wait status, as waitpid gives it */
	__u32 _pad;
};

/* Followed by argc NUL-terminated strings; hdr.size covers them. */
struct mt_session {
	struct mt_rec_hdr hdr;	/* pid: the command's pid */
	__u64 realtime_ns;	/* CLOCK_REALTIME at start, to place ts_ns on a calendar */
	__u32 tracer_pid;
	__u32 argc;
};

struct mt_end {
	struct mt_rec_hdr hdr;	/* pid: the command's pid */
	__s32 status;		/* the command's wait status */
	__u32 _pad;
	__u64 drops[MT_DROP__COUNT];
};

_Static_assert(sizeof(struct mt_rec_hdr) == 24, "mt_rec_hdr size");
_Static_assert(sizeof(struct mt_alloc) == 64, "mt_alloc size");
_Static_assert(sizeof(struct mt_syscall) == 80, "mt_syscall size");
_Static_assert(sizeof(struct mt_fork) == 32, "mt_fork size");
_Static_assert(sizeof(struct mt_exec) == 304, "mt_exec size");
_Static_assert(sizeof(struct mt_exit) == 32, "mt_exit size");
_Static_assert(sizeof(struct mt_session) == 40, "mt_session size");
_Static_assert(sizeof(struct mt_end) == 96, "mt_end size");

#endif /* MEMTRACK_SHARED_H */
