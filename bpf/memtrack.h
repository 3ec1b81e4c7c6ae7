/* SPDX-License-Identifier: GPL-2.0-only */
/* memtrack.h — the records and constants shared by the BPF programs, the tracer and the artifact. */
#ifndef MEMTRACK_SHARED_H
#define MEMTRACK_SHARED_H

#ifdef __bpf__
#include "vmlinux.h"	/* the BPF programs' kernel types, __u64 among them */
#else
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
	MT_REC_ATTACH = 8,	/* struct mt_attach: one on-demand attach request, mapped to resumed (tracer) */
	MT_REC_MAPPING = 9,	/* struct mt_mapping: an executable file mapping of a tracked process (BPF) */
	MT_REC_FILE = 10,	/* struct mt_file: a mapped file's path, build-id and kind, once per file (tracer) */
	MT_REC_STACK = 11,	/* struct mt_stack + FP chain + raw stack bytes: a stack definition (BPF) */
	MT_REC_BATCH = 12,	/* ring only, never in the artifact: a header, then mt_alloc records of one CPU */
	MT_REC_THREAD_EXIT = 13,	/* struct mt_thread_exit: a thread of a tracked process ended (BPF) */
	MT_REC_MARK = 14,	/* struct mt_mark: a line written to the control FIFO: start, stop, mark LABEL (BPF) */
	MT_REC_RSS = 15,	/* struct mt_rss: a process's resident memory, at a bounded rate (BPF) */
	MT_REC_SEIZED = 16,	/* struct mt_seized: record --pid attached to a running process; counts exact from here
				 * (tracer) */
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
	MT_FN_NEW,		/* operator new, every variant */
	MT_FN_NEW_ARRAY,	/* operator new[] */
	MT_FN_DELETE,		/* operator delete, every variant; size is the sized variants' size */
	MT_FN_DELETE_ARRAY,
	MT_FN_MALLOCX,		/* jemalloc's non-standard API */
	MT_FN_RALLOCX,
	MT_FN_XALLOCX,		/* resizes in place: addr = the block, size = the size it now has */
	MT_FN_DALLOCX,
	MT_FN_SDALLOCX,
	MT_FN__COUNT,
};

/* Calls that release their block (addr); size, when not 0, is the size the caller said it had. */
static inline int mt_func__is_free(unsigned int f)
{
	return f == MT_FN_FREE || f == MT_FN_DELETE || f == MT_FN_DELETE_ARRAY || f == MT_FN_DALLOCX ||
	       f == MT_FN_SDALLOCX;
}

/* Calls that take a block (old_addr) and give one back (addr). */
static inline int mt_func__is_realloc(unsigned int f)
{
	return f == MT_FN_REALLOC || f == MT_FN_REALLOCARRAY || f == MT_FN_RALLOCX || f == MT_FN_XALLOCX;
}

enum mt_sys {
	MT_SYS_MMAP = 1,
	MT_SYS_MUNMAP,
	MT_SYS_MREMAP,
	MT_SYS_BRK,
};

/* mt_syscall.origin: whether the thread was inside an allocator call (calls.bpf.h's call in flight) at the syscall.
 * A mapping made there is the allocator's, for its heap: glibc's arenas and large blocks, jemalloc's, mimalloc's
 * and tcmalloc's extents. */
enum mt_sys_origin {
	MT_SYS_ORIGIN_UNKNOWN = 0,	/* an earlier writer's record: counted as the program's */
	MT_SYS_ORIGIN_PROGRAM,
	MT_SYS_ORIGIN_ALLOCATOR,
};

/* The mmap and mremap flags the books of anonymous private mappings read (x86-64's uapi values). */
#define MT_MAP_TYPE 0x0f		/* MAP_SHARED 1, MAP_PRIVATE 2, MAP_SHARED_VALIDATE 3 */
#define MT_MAP_PRIVATE 0x02
#define MT_MAP_ANONYMOUS 0x20
#define MT_MREMAP_DONTUNMAP 4		/* the old range stays mapped (emptied) */

enum mt_allocator {
	MT_ALLOCATOR_GLIBC = 1,
	MT_ALLOCATOR_JEMALLOC,
	MT_ALLOCATOR_MIMALLOC,
	MT_ALLOCATOR_TCMALLOC,
	MT_ALLOCATOR_LIBSTDCXX,
	MT_ALLOCATOR_LIBCXX,
	MT_ALLOCATOR_WRAPPER,	/* defines malloc/free (or operator new/delete) and forwards them to another allocator
				 * (__libc_malloc, dlsym(RTLD_NEXT)): a leak checker, libmemusage.so */
	MT_ALLOCATOR__COUNT,
};

/* mt_alloc.func and .allocator fit in 5 and 3 bits: the artifact codes both in one byte (docs/FORMAT.md). */
#define MT_FUNC_MASK 0x1f
#define MT_ALLOCATOR_MASK 0x07
_Static_assert(MT_FN__COUNT - 1 <= MT_FUNC_MASK, "enum mt_func fits MT_FUNC_MASK");
_Static_assert(MT_ALLOCATOR__COUNT - 1 <= MT_ALLOCATOR_MASK, "enum mt_allocator fits MT_ALLOCATOR_MASK");

/* Argument layouts of allocator entry points: how BPF reads (size, old pointer, alignment) from the registers. */
enum mt_args {
	MT_ARGS_SIZE = 1,		/* malloc(size), operator new(size[, nothrow]) */
	MT_ARGS_NMEMB_SIZE,		/* calloc(nmemb, size) */
	MT_ARGS_PTR_SIZE,		/* realloc(ptr, size), rallocx, xallocx */
	MT_ARGS_PTR_NMEMB_SIZE,		/* reallocarray(ptr, nmemb, size) */
	MT_ARGS_ALIGN_SIZE,		/* memalign(align, size), aligned_alloc */
	MT_ARGS_SIZE_ALIGN,		/* mi_malloc_aligned(size, align), operator new(size, align_val_t) */
	MT_ARGS_PTR_SIZE_ALIGN,		/* mi_realloc_aligned(ptr, size, align) */
	MT_ARGS_MEMPTR_ALIGN_SIZE,	/* posix_memalign(&ptr, align, size) */
	MT_ARGS_FREE,			/* free(ptr), operator delete(ptr[, ...]) */
	MT_ARGS_FREE_SIZED,		/* sdallocx(ptr, size, flags), operator delete(ptr, size) */
	MT_ARGS_THROW,			/* __cxa_allocate_exception: an MT_COOKIE_THROWS call in flight is failing */
};

/* A probe's BPF cookie, set by the tracer per probe site: what the entry point is and whose. */
#define MT_COOKIE(args, func, allocator) ((__u64)(args) | (__u64)(func) << 8 | (__u64)(allocator) << 16)
#define MT_COOKIE_ARGS(c) ((c) & 0xff)
#define MT_COOKIE_FUNC(c) (((c) >> 8) & 0xff)
#define MT_COOKIE_ALLOCATOR(c) (((c) >> 16) & 0xff)
/* A release entry point's place in the chains of calls one makes into another: each calls only lower ranks
 * (tracer/allocators.c). 0 for the allocating ones. CHAINS: it may call another probed release of its block. */
#define MT_COOKIE_RANK_SHIFT 24
#define MT_COOKIE_RANK(c) (((c) >> MT_COOKIE_RANK_SHIFT) & 0xf)
#define MT_COOKIE_CHAINS_SHIFT 28
#define MT_COOKIE_CHAINS(c) (((c) >> MT_COOKIE_CHAINS_SHIFT) & 1)
/* 0: the arguments are in rdi, rsi, rdx, as at the entry. Else the probe sits past a move of one
 * (tracer/probe_site.c), and nibble k is the x86 register number (0 rax ... 7 rdi, 8-15 r8-r15) of argument k. */
#define MT_COOKIE_REGS_SHIFT 32
#define MT_COOKIE_REGS(c) (((c) >> MT_COOKIE_REGS_SHIFT) & 0xfff)
/* INFLIGHT: a release whose return is probed too (a wrapper's): it is a call in flight from its entry to its
 * return, and any probed call it makes meanwhile is its own business, whatever the ranks. */
#define MT_COOKIE_INFLIGHT_SHIFT 44
#define MT_COOKIE_INFLIGHT(c) (((c) >> MT_COOKIE_INFLIGHT_SHIFT) & 1)
/* MARK: an allocating entry point probed at its entry only, because all it does is jump to another (libstdc++'s
 * operator new[] jumps to operator new): it names the thread's next allocation call (func, size). */
#define MT_COOKIE_MARK_SHIFT 45
#define MT_COOKIE_MARK(c) (((c) >> MT_COOKIE_MARK_SHIFT) & 1)
/* THROWS: a return-probed allocating entry point that may throw (an allocator's operator new). A C++ exception
 * thrown through a frame whose return address a uretprobe replaced finds no unwind data there, which ends the
 * program: its entry keeps the return address, and the tracer puts it back when an exception begins inside the
 * call (struct mt_ret_restore). */
#define MT_COOKIE_THROWS_SHIFT 46
#define MT_COOKIE_THROWS(c) (((c) >> MT_COOKIE_THROWS_SHIFT) & 1)
/* SHARED: the probe is a file's shared link (pid 0, every process: BPF keeps the tree's hits). SLOT: the file's
 * index in BPF's shared_files (1 to MT_SHARED_SLOTS - 1), in every link the tracer makes for it; 0: none. */
#define MT_COOKIE_SHARED_SHIFT 47
#define MT_COOKIE_SHARED(c) (((c) >> MT_COOKIE_SHARED_SHIFT) & 1)
#define MT_COOKIE_SLOT_SHIFT 48
#define MT_COOKIE_SLOT(c) (((c) >> MT_COOKIE_SLOT_SHIFT) & 0xffff)
#define MT_SHARED_SLOTS 1024

/*
 * An allocator file that has (or had) a shared link: BPF's shared_files[slot], set by the tracer before it makes
 * that link (tracer/links.c). DEDUP: a process may have its own links and the shared one at once, each of which
 * the kernel runs at a hit: a thread's hit that repeats its previous one (same site, stack pointer and argument or
 * result) is the same hit seen again, and is passed over.
 */
#define MT_SHARED_DEDUP 1u

struct mt_shared_file {
	__u64 dev, ino;
	__u32 flags;		/* MT_SHARED_* */
	__u32 _pad;
};
_Static_assert(sizeof(struct mt_shared_file) == 24, "mt_shared_file layout");

/* Values of BPF's proc_files: the process's probes are in (its own links, or the file's shared link), or memtrack
 * refused to probe the file for it (its leader had exited, tracer/links.c): not asked again, not counted. */
#define MT_PROC_FILE_LINKED 1
#define MT_PROC_FILE_REFUSED 2

/*
 * Where a malloc's caller says what the call was: the code of a C++ runtime's operator new, which is not probed
 * (its malloc is, and one trap less is what a new costs more than a malloc). Per process, the tracer writes one
 * when it probes such a file for it (tracer/callers.c), BPF copies it at fork and drops it at exec and exit.
 */
#define MT_CALLERS_MAX 8

struct mt_caller {
	__u64 lo, hi;		/* the function's addresses in the process: [lo, hi) */
	__u64 dev, ino;		/* its file (the kernel's s_dev), so that a file is entered once */
	__u8 func;		/* enum mt_func the malloc it calls is recorded as */
	__u8 allocator;		/* enum mt_allocator */
	__u8 _pad[6];
};

struct mt_callers {
	struct mt_caller c[MT_CALLERS_MAX];
	__u32 n;
	__u32 _pad;
};

/* Why a file was looked at by the attach worker (mt_attach.reason). */
enum mt_attach_reason {
	MT_ATTACH_EXEC = 1,	/* the new executable of an exec */
	MT_ATTACH_INTERP,	/* its program interpreter (ld.so) */
	MT_ATTACH_MMAP,		/* an mmap/mprotect with PROT_EXEC */
	MT_ATTACH_INHERIT,	/* no request: a fork child bound to its parent's files, or a process bound again after
				 * a thread that is not its leader exec'd (written only when that fails) */
	MT_ATTACH_SEIZE,	/* mapped already when record --pid attached: bound before the recording counted */
};

/* x86-64 registers captured with a stack, in mt_stack.regs order: what DWARF unwinding needs to start. */
enum mt_reg {
	MT_REG_IP, MT_REG_SP, MT_REG_BP, MT_REG_BX, MT_REG_R12, MT_REG_R13, MT_REG_R14, MT_REG_R15,
	MT_REG__COUNT,
};

#define MT_FP_MAX 127			/* frame-pointer chain entries walked in the kernel */
#define MT_STACK_BYTES_DEFAULT 8192	/* raw stack bytes copied from sp upward */
#define MT_STACK_BYTES_MAX 32768	/* cap: a definition must fit a record (hdr.size is 16 bits) */
#define MT_STACK_CHUNK 512		/* BPF copies the raw stack in chunks of this many bytes: --stack-bytes is a
					 * multiple of it */
/* A call path's hash (mt_stack.hash, mt_alloc.stack) has 53 bits, exact as a JSON number in any reader; 0 means
 * "no stack". */
#define MT_STACK_HASH_MASK ((1ull << 53) - 1)
/* mt_stack.truncated: why the definition holds less than the whole stack. */
#define MT_STACK_TRUNC_BYTES 1		/* the raw bytes stopped at the budget (or below the FP chain's top) */
#define MT_STACK_TRUNC_FP 2		/* the FP chain stopped at MT_FP_MAX */
#define MT_STACK_TRUNC_READ 4		/* a read failed before the budget (the stack's end, or a page of it that
					 * was not resident) */
#define MT_STACK_WITHHELD 8		/* a privileged process's (a setuid, setgid or file-capability exec, when
					 * the recording user is not root): no raw bytes, no registers but ip, and
					 * the chain stops at its first word that is not a code address */
#define MT_BUILD_ID_MAX 20

/* dev fields hold the kernel's dev_t (a superblock's s_dev, as BPF reads it): major << 20 | minor. */
#define MT_KDEV_MINOR_BITS 20

/* States of a process in the BPF map of tracked processes. */
#define MT_PROC_PENDING_EXEC 0	/* the tracer's child before its exec: memtrack's own pre-exec code is not counted */
#define MT_PROC_ACTIVE 1

/* Why an event could not be delivered; index into mt_end.drops and the BPF drop counters. */
enum mt_drop {
	MT_DROP_RINGBUF = 0,	/* bpf_ringbuf_reserve failed: ring full */
	MT_DROP_CALLSTATE,	/* per-thread call state (slot, else task storage) not to be had: a call unrecorded */
	MT_DROP_READ,		/* bpf_probe_read_user of posix_memalign's *memptr failed */
	MT_DROP_TRACKED,	/* a new process could not be added to the tracked map: its events are lost; or a
				 * process's entry (its mm's) in rss_mms, exec_ranges or callers: its RSS records, its stacks'
				 * scan or its C++ new classification are lost */
	MT_DROP_ATTACH,		/* an attach request was lost (attach ring full): that file's calls may be missed */
	MT_DROP_HOLD,		/* a thread could not be held (signal failed, or another tracer has it): a mapping's
				 * first calls may be missed, or a C++ exception thrown inside a return-probed new
				 * finds no unwind data at the uretprobe trampoline (MT_COOKIE_THROWS) */
	MT_DROP_MALFORMED,	/* counted by the tracer: a ring record it could not write (shorter than its type, or
				 * a stack definition that does not add up); 0 unless the kernel and tracer disagree */
	MT_DROP_HANDOFF,	/* counted by the tracer: an allocator file bound to a process that another tracer had
				 * (handed off, or born to one) only after it could run: its first calls may be missed */
	MT_DROP__COUNT = 8,
};

/* Common head of every record; size covers the whole record, so readers skip unknown types. */
struct mt_rec_hdr {
	__u64 ts_ns;		/* the records' clock: CLOCK_MONOTONIC, or its tick (see ts__now) */
	__u32 pid;		/* thread group id */
	__u32 tid;
	__u16 type;		/* enum mt_rec_type */
	__u16 size;		/* bytes, this header included */
	union {
		__u32 seq;		/* in the ring, the record's sequence number (see rec_seq); 0 in the artifact */
		__u32 batch_count;	/* MT_REC_BATCH: the mt_alloc records that follow this header */
	};
};

struct mt_alloc {
	struct mt_rec_hdr hdr;
	__u64 addr;		/* result (free: the pointer freed) */
	__u64 size;		/* bytes asked for; calloc/reallocarray: nmemb * size (UINT64_MAX when that overflows);
				 * addr 0 with an allocating func: the call failed (NULL, posix_memalign's error) */
	__u64 old_addr;		/* realloc/reallocarray: the pointer passed in */
	__u64 align;		/* aligned_alloc/memalign/posix_memalign */
	__u64 stack;		/* hash of the call path (MT_REC_STACK), 0 without --stacks */
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
	__u8 origin;		/* enum mt_sys_origin: who made the call (0 in artifacts of earlier writers) */
	__u8 _pad[6];
	__u64 stack;		/* with --stacks, a program's call that makes, moves or ends anonymous private memory
				 * (mmap of it, mremap, munmap, brk setting the break): its call path's hash
				 * (MT_REC_STACK); else 0; absent from records of MT_SYSCALL_SIZE_V1 bytes */
};

/* An MT_REC_SYSCALL record of earlier writers: no stack. Readers take either size. */
#define MT_SYSCALL_SIZE_V1 80

#define MT_FORK_SHARED_VM 1	/* vfork, posix_spawn: the child runs in its parent's memory until it execs */
#define MT_FORK_UNTRACED 2	/* the child is no tracee of memtrack's: its parent was handed off to another tracer,
				 * or it was cloned CLONE_UNTRACED (LeakSanitizer's task) */

struct mt_fork {
	struct mt_rec_hdr hdr;	/* pid: the parent */
	__u32 child;
	__u32 flags;		/* MT_FORK_* */
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

/* Stamped at the thread's exit, after its last allocator record (a higher sequence number): the model ends the
 * thread's trailing releases of blocks never seen (glibc frees its tcache struct as a thread's last call). */
#define MT_THREAD_EXIT_GROUP 1	/* the thread died with its whole process (exit_group, a fatal signal): libc ran nothing */
#define MT_THREAD_EXIT_LAST 2	/* the process's last thread: its address space ends here (0 from earlier writers) */

struct mt_thread_exit {
	struct mt_rec_hdr hdr;
	__u32 flags;		/* MT_THREAD_EXIT_* */
	__u32 _pad;
};

/* Attach request, BPF -> tracer on the attach ring (not in the artifact): a file not known yet was mapped. */
struct mt_attach_req {
	__u64 ts_ns;		/* the records' clock */
	__u64 ktime_ns;		/* CLOCK_MONOTONIC: how long the thread is held is measured from here */
	__u64 dev;		/* dev and ino 0: BPF could not read the mapping; start is an address in it */
	__u64 ino;
	__u64 start;		/* the mapping, to open the file through /proc/TID/map_files even when deleted */
	__u64 end;
	__u32 pid;
	__u32 tid;
	__u8 reason;		/* enum mt_attach_reason */
	__u8 held;		/* 1: tid waits for the tracer: a hold signal was sent to it (suppressed at its
				 * delivery stop), or it is at its exec-event stop */
	__u8 foreign;		/* 1: tid is no tracee of memtrack's (handed off): nothing holds it */
	__u8 hold_sig;		/* the hold signal: SIGURG, SIGWINCH or SIGCHLD (ignored if delivered untraced), else
				 * SIGSTOP; 0 for none */
	__u8 _pad[4];
};

/* si_value of a hold signal (bpf_send_signal_task): the kernel's own SIGURG and SIGWINCH are SI_KERNEL too. */
#define MT_HOLD_COOKIE 0x6d74686f6c640000ull	/* "mthold" */

/* A return address to put back (BPF's map `ret_restore`, by tid): a C++ exception begins inside an MT_COOKIE_THROWS
 * call, whose return address at slot a uretprobe replaced; BPF holds the thread, and the tracer writes ret there. */
struct mt_ret_restore {
	__u64 slot;		/* the call's stack pointer at its entry: where its return address is */
	__u64 ret;		/* the return address, read at the entry */
};

/* A thread held with SIGSTOP and not resumed yet (BPF's map `held`): the closer SIGCONTs its process when memtrack
 * dies first. */
struct mt_held {
	__u32 tgid;
	__u32 _pad;
	__u64 start_ns;		/* the thread's start_boottime, /proc's starttime: a recycled tid is not it */
};

/* States of a file in the BPF map of known files. */
#define MT_FILE_PENDING 1	/* requested: mappers are held until the tracer has looked at it */
#define MT_FILE_NONE 2		/* no allocator in it: mappers go on */
#define MT_FILE_ALLOCATOR 3	/* an allocator: each process needs its own probes (map of linked files) */

/* Ts is when BPF saw the mapping (the thread was held from then); resumed_ns when the tracer let it go. */
struct mt_attach {
	struct mt_rec_hdr hdr;
	__u64 dev;		/* the kernel's s_dev of the file's superblock */
	__u64 ino;
	__u64 resumed_ns;
	__u32 probes;		/* uprobes attached to this file (0: no allocator, or attached already) */
	__u8 kind;		/* enum mt_allocator, 0 when the file holds none */
	__u8 reason;		/* enum mt_attach_reason */
	__s16 err;		/* 0, or the -errno that made the attach fail (the thread was resumed anyway) */
	char path[MT_PATH_MAX];
};

struct mt_mapping {
	struct mt_rec_hdr hdr;
	__u64 start;
	__u64 end;
	__u64 pgoff;		/* file offset of start, in bytes */
	__u64 dev;
	__u64 ino;
	__u32 prot;
	__u32 _pad;
};

struct mt_file {
	struct mt_rec_hdr hdr;
	__u64 dev;
	__u64 ino;
	__u8 build_id[MT_BUILD_ID_MAX];
	__u8 build_id_len;	/* 0: the file has no build-id note */
	__u8 kind;		/* enum mt_allocator, 0 when the file holds none */
	__u8 flags;		/* MT_FILE_* */
	__u8 _pad;
	char path[MT_PATH_MAX];
	__u8 sha256[32];	/* the content's hash, with MT_FILE_HASHED; absent from records of 320 bytes */
};

/* An MT_REC_FILE record of earlier writers: no sha256 (flags were 0). Readers take either size. */
#define MT_FILE_SIZE_V1 320

enum mt_file_flags {
	MT_FILE_HASHED = 1 << 0,	/* sha256 holds the content's hash: a copy of other content is not the file */
	MT_FILE_WITHHELD = 1 << 1,	/* the recording user may not read it: not copied into DIR or the cache */
};

/*
 * Followed by nfp __u64 return addresses (the frame-pointer chain, innermost first: [sp] at the allocator's entry,
 * then the chain from bp) and by nbytes raw bytes copied from regs[MT_REG_SP] upward. Allocation records name it
 * by hash; the same hash may be defined again (LRU eviction in the kernel), readers keep the first.
 */
struct mt_stack {
	struct mt_rec_hdr hdr;
	__u64 hash;
	__u64 regs[MT_REG__COUNT];	/* at the allocator's entry: ip is in the allocator, [sp] is its return address */
	__u32 nbytes;
	__u16 nfp;
	__u8 truncated;		/* MT_STACK_TRUNC_* */
	__u8 flags;		/* MT_STACK_F_*; 0 in artifacts before the in-kernel unwinder */
};

#define MT_STACK_F_KCHAIN 1	/* the raw bytes are followed by a struct mt_kchain and its return addresses */
#define MT_STACK_F_BRIEF 2	/* a whole kernel chain outside the raw-bytes sample: no FP chain, no raw bytes, no
				 * registers but ip (nfp = nbytes = 0) */
#define MT_STACK_SAMPLE_FIRST 1000	/* the first definitions of a recording keep their raw bytes... */
#define MT_STACK_SAMPLE_DEFAULT 100	/* ...then one in this many (--stack-sample N; 1: all) */
#define MT_KCHAIN_MAX 255	/* return addresses the in-kernel unwinder follows */

/* Why the in-kernel walk of a stack (mt_kchain.stop) ended. */
enum mt_kchain_stop {
	MT_KSTOP_END = 1,	/* the outermost frame: CFI says the return address is undefined, or it is 0 */
	MT_KSTOP_NO_INFO,	/* no CFI row for stop_pc, and no frame pointer to go on with */
	MT_KSTOP_LOADING,	/* stop_pc's module had no table yet (its file is still being read) */
	MT_KSTOP_NO_MAPPING,	/* stop_pc is in no executable file mapping, and no frame pointer to go on with */
	MT_KSTOP_DEPTH,		/* MT_KCHAIN_MAX return addresses */
	MT_KSTOP_READ,		/* a read of the stack failed (or the frame went below the stack pointer) */
	MT_KSTOP__COUNT,
};

/*
 * After a definition's raw bytes, when flags has MT_STACK_F_KCHAIN: the call path as the kernel unwound it with the
 * modules' CFI (stacks.bpf.h, unwind.bpf.h), followed by n return addresses, innermost first ([sp] at the
 * allocator's entry first, as the FP chain). The stack's hash is that of these addresses.
 */
struct mt_kchain {
	__u64 stop_pc;		/* the address the walk could not go past (MT_KSTOP_NO_*, LOADING); else 0 */
	__u64 fp_pc;		/* the first return address whose frame was unwound by its frame pointer; 0 if none */
	__u16 n;
	__u8 stop;		/* enum mt_kchain_stop */
	__u8 _pad;
	__u16 fp_frames;	/* frames unwound by the frame pointer (no CFI for them) */
	__u16 _pad2;
};

/*
 * The in-kernel unwinder's tables (unwind.bpf.h), filled by the tracer when it first looks at a file. A row holds
 * from its pc (a file offset, of the module's text) to the next row's: how to find the caller's frame.
 */
enum mt_urow_cfa {
	MT_UROW_NONE = 0,	/* no CFI here (a gap between FDEs, or a rule not supported): the frame pointer's walk */
	MT_UROW_SP,		/* CFA = rsp + cfa_off */
	MT_UROW_BP,		/* CFA = rbp + cfa_off */
	MT_UROW_END,		/* the outermost frame: the return address is undefined */
};

struct mt_urow {
	__u32 pc;		/* file offset of the first instruction the row describes */
	__s32 cfa_off;
	__s16 bp_off;		/* the caller's rbp is saved at CFA + bp_off; 0: rbp is unchanged */
	__u8 cfa;		/* enum mt_urow_cfa */
	__u8 _pad;
};

#define MT_UPAGE_SHIFT 12	/* the rows of a module are indexed by file offset >> MT_UPAGE_SHIFT */
#define MT_UROWS_MAX (1u << 21)	/* rows of all modules (24 MiB of kernel memory with --stacks) */
#define MT_UPAGES_MAX (1u << 18)
#define MT_UMODULES_MAX 4096
#define MT_USEARCH_STEPS 16	/* a page holds at most 2^16 rows */

/* (module id, page) -> its rows: from the one that covers the page's first byte, count rows. */
struct mt_upage_key {
	__u32 module;
	__u32 page;
};

struct mt_upage {
	__u32 first;
	__u32 count;
};

/* (dev, ino) -> a module's unwind state, set by the tracer once the file's rows are in. */
enum mt_umodule_state {
	MT_UMOD_READY = 1,	/* rows loaded */
	MT_UMOD_NO_CFI,		/* no usable CFI (stripped, or the tables are full): frame pointers for its frames */
};

struct mt_umodule {
	__u32 id;
	__u32 state;		/* enum mt_umodule_state */
};

/* What a line written to the control FIFO (MEMTRACK_CONTROL) asked for: mt_mark.kind. */
enum mt_mark_kind {
	MT_MARK_START = 1,	/* allocation records on from here */
	MT_MARK_STOP,		/* off from here */
	MT_MARK_LABEL,		/* a named point: report --between A B */
};

#define MT_MARK_LABEL_MAX 64	/* label bytes at most; a line with a longer one is ignored (control_ignored) */
/* A write to the control FIFO longer than this is not acted on, nor lines past the first MT_CONTROL_LINES of one. */
#define MT_CONTROL_WRITE_MAX 256
#define MT_CONTROL_LINES 8

/* Stamped in the write syscall of the line, in the kernel's order of records: the writer's calls before its
 * write() sort before it, those after it after it. */
struct mt_mark {
	struct mt_rec_hdr hdr;	/* the writing thread */
	__u32 kind;		/* enum mt_mark_kind */
	__u32 len;		/* label bytes (MT_MARK_LABEL only; 0 for start and stop) */
	char label[MT_MARK_LABEL_MAX];	/* not NUL-terminated when len is MT_MARK_LABEL_MAX */
};

/*
 * A tracked process's resident memory, in bytes: the kernel's rss counters of its mm, summed over the CPUs as
 * /proc/PID/status reads them, times the kernel's page size. BPF writes one at a counter change when anon + file +
 * shmem moved by MT_RSS_STEP or more since the process's last record, or when MT_RSS_PERIOD_NS passed since it with
 * any change, and one at the process's exit when its last one differs: a record's value is within MT_RSS_STEP of
 * the true one until the next. A change any task makes is its mm's process's (a fork's copy into the child, reclaim,
 * another process's madvise); a fork child's first record is the copy of its parent's pages, at the fork.
 */
#define MT_RSS_STEP (1ull << 20)
#define MT_RSS_PERIOD_NS 100000000ull

/* Why an mt_rss record was written (mt_rss.why). */
enum mt_rss_why {
	MT_RSS_WHY_STEP = 1,	/* moved by MT_RSS_STEP or more (the process's first record too) */
	MT_RSS_WHY_PERIOD,	/* changed less, MT_RSS_PERIOD_NS after the last record */
	MT_RSS_WHY_EXIT,	/* the last value, at the process's exit */
};

struct mt_rss {
	struct mt_rec_hdr hdr;	/* pid: the process whose mm it is; tid: the task that changed a counter (a page
				 * fault, an unmap...), which may be another process's (the parent at a fork, a
				 * process_madvise, reclaim: a kernel thread), 0 when not in memtrack's namespace */
	__u64 anon;		/* MM_ANONPAGES */
	__u64 file;		/* MM_FILEPAGES */
	__u64 shmem;		/* MM_SHMEMPAGES */
	__u64 swap;		/* MM_SWAPENTS: swapped out, not resident */
	__u32 why;		/* enum mt_rss_why */
	__u32 _pad;
};

/* What the tracer's test run of clock_now reads: the records' clock, and what places it on CLOCK_MONOTONIC. */
struct mt_clock {
	__u64 ts_ns;
	__u64 ktime_ns;
	__u64 jiffies;
};

/* Followed by argc NUL-terminated strings; hdr.size covers them. */
struct mt_session {
	struct mt_rec_hdr hdr;	/* pid: the command's pid */
	__u64 realtime_ns;	/* CLOCK_REALTIME at start, to place ts_ns on a calendar */
	__u32 tracer_pid;
	__u32 argc;
};

#define MT_EXEC_RANGES 64		/* executable file mappings remembered per process for the in-kernel unwinder */

/* A process's executable file mappings (stacks.bpf.h's map exec_ranges): code addresses above a broken frame-pointer
 * chain tell call paths apart. The tracer adds those a process had when record --pid attached to it. */
struct mt_exec_ranges {
	__u64 lo[MT_EXEC_RANGES];
	__u64 hi[MT_EXEC_RANGES];
	__u64 pgoff[MT_EXEC_RANGES];	/* file offset of lo, in bytes */
	__u64 dev[MT_EXEC_RANGES];	/* the mapped file, for the in-kernel unwinder's tables */
	__u64 ino[MT_EXEC_RANGES];
	__u32 n;
	__u32 _pad;
};

/* Written once, after the session record, when record --pid has seized a running process and probed the files it
 * had mapped: blocks it allocated before are not in the recording, and their frees count apart. */
struct mt_seized {
	struct mt_rec_hdr hdr;	/* pid: the process attached to */
	__u32 threads;		/* its threads seized */
	__u32 ppid;		/* its parent then (not memtrack: the session's tracer_pid) */
	char comm[MT_COMM_MAX];	/* its command name, NUL-padded */
	char path[MT_PATH_MAX];	/* its executable (/proc/PID/exe), NUL-terminated; "" when unknown */
};

struct mt_end {
	struct mt_rec_hdr hdr;	/* pid: the command's pid */
	__s32 status;		/* the command's wait status */
	__u32 _pad;
	__u64 drops[MT_DROP__COUNT];
};

_Static_assert(sizeof(struct mt_rec_hdr) == 24, "mt_rec_hdr size");
_Static_assert(__builtin_offsetof(struct mt_rec_hdr, seq) == 20, "mt_rec_hdr.seq offset");
_Static_assert(__builtin_offsetof(struct mt_rec_hdr, batch_count) == 20, "mt_rec_hdr.batch_count offset");
_Static_assert(sizeof(struct mt_alloc) == 72, "mt_alloc size");
_Static_assert(sizeof(struct mt_attach) == 312, "mt_attach size");
_Static_assert(sizeof(struct mt_attach_req) == 64, "mt_attach_req size");
_Static_assert(sizeof(struct mt_held) == 16, "mt_held size");
_Static_assert(sizeof(struct mt_ret_restore) == 16, "mt_ret_restore size");
_Static_assert(sizeof(struct mt_mapping) == 72, "mt_mapping size");
_Static_assert(sizeof(struct mt_file) == 352, "mt_file size");
_Static_assert(sizeof(struct mt_stack) == 104, "mt_stack size");
_Static_assert(sizeof(struct mt_syscall) == 88, "mt_syscall size");
_Static_assert(sizeof(struct mt_fork) == 32, "mt_fork size");
_Static_assert(sizeof(struct mt_exec) == 304, "mt_exec size");
_Static_assert(sizeof(struct mt_exit) == 32, "mt_exit size");
_Static_assert(sizeof(struct mt_thread_exit) == 32, "mt_thread_exit size");
_Static_assert(sizeof(struct mt_mark) == 96, "mt_mark size");
_Static_assert(sizeof(struct mt_rss) == 64, "mt_rss size");
_Static_assert(sizeof(struct mt_clock) == 24, "mt_clock size");
_Static_assert(sizeof(struct mt_session) == 40, "mt_session size");
_Static_assert(sizeof(struct mt_end) == 96, "mt_end size");
_Static_assert(sizeof(struct mt_seized) == 304, "mt_seized size");
_Static_assert(sizeof(struct mt_exec_ranges) == 40 * MT_EXEC_RANGES + 8, "mt_exec_ranges size");
_Static_assert(sizeof(struct mt_kchain) == 24, "mt_kchain size");
_Static_assert(sizeof(struct mt_urow) == 12, "mt_urow size");
_Static_assert(sizeof(struct mt_upage) == 8, "mt_upage size");
_Static_assert(sizeof(struct mt_umodule) == 8, "mt_umodule size");
_Static_assert(sizeof(struct mt_caller) == 40, "mt_caller size");
_Static_assert(sizeof(struct mt_callers) == 8 + MT_CALLERS_MAX * 40, "mt_callers size");

#endif /* MEMTRACK_SHARED_H */
