/* SPDX-License-Identifier: GPL-2.0-only */
/* control.bpf.h — BPF-only: the control FIFO's lines (start, stop, mark LABEL), acted on in the writer's syscall. */
#ifndef MEMTRACK_CONTROL_BPF_H
#define MEMTRACK_CONTROL_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "core.bpf.h"

#define MT_CONTROL_READ (MT_MARK_LABEL_MAX + 8)	/* "mark " + the label + "\n", rounded up */

/* Allocation records off: set by the tracer before the command runs (--paused), then by BPF at each start and stop
 * line (live: both write it while the command runs). The allocator probes test it first: while it is set, only
 * releases go on (control__passes). */
__u64 live_paused = 0;	/* 64 bits: clang 14 has BPF atomics of that width only */

/*
 * While recording is off the releases still go out, and realloc-like calls given a block (their return: the tracer
 * keeps only their free side): a block allocated while recording was on may end while it is off, and without its
 * free the window would leak it. Allocations stop here; so does a realloc of NULL (checked at its entry, once its
 * arguments are read). The model drops the releases of blocks it never saw (allocated while off).
 */
static __always_inline bool control__passes(__u64 cookie)
{
	switch (MT_COOKIE_ARGS(cookie)) {
	case MT_ARGS_FREE:
	case MT_ARGS_FREE_SIZED:
	case MT_ARGS_PTR_SIZE:
	case MT_ARGS_PTR_NMEMB_SIZE:
	case MT_ARGS_PTR_SIZE_ALIGN:
		return true;
	default:
		return false;
	}
}

/* The control FIFO's file (its s_dev and inode number): set by the tracer before the command runs; 0: none. */
__u64 live_control_dev = 0;
__u64 live_control_ino = 0;

/* Writes to the FIFO, or lines in them, that switched nothing: not a control line, too long, too many in one write.
 * BPF counts them as they come; the tracer reads it at the end and says so. */
__u64 live_control_ignored = 0;

/* fd of the current task is the control FIFO. */
static __always_inline bool control__is_fifo(struct task_struct *task, __u32 fd)
{
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds, *f = NULL;
	struct inode *inode;

	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return false;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return false;
	inode = BPF_CORE_READ(f, f_inode);
	return inode && BPF_CORE_READ(inode, i_ino) == live_control_ino &&
	       BPF_CORE_READ(inode, i_sb, s_dev) == live_control_dev;
}

/* The line's command (enum mt_mark_kind), 0 for none; a mark's label into label, its length into *len. */
static __always_inline __u32 control__parse(const char *b, __u32 n, char *label, __u32 *len)
{
	__u32 i;

	*len = 0;
	if (n >= 5 && b[0] == 's' && b[1] == 't' && b[2] == 'a' && b[3] == 'r' && b[4] == 't' &&
	    (n == 5 || b[5] == '\n'))
		return MT_MARK_START;
	if (n >= 4 && b[0] == 's' && b[1] == 't' && b[2] == 'o' && b[3] == 'p' && (n == 4 || b[4] == '\n'))
		return MT_MARK_STOP;
	if (n < 5 || b[0] != 'm' || b[1] != 'a' || b[2] != 'r' || b[3] != 'k' || b[4] != ' ')
		return 0;
	for (i = 0; i < MT_MARK_LABEL_MAX; i++) {
		if (5 + i >= n || b[5 + i] == '\n')
			break;
		label[i] = b[5 + i];
	}
	/* a longer label is a line past the limits: not acted on (and counted), never recorded cut */
	if (i == MT_MARK_LABEL_MAX && 5 + i < n && 5 + i < MT_CONTROL_READ && b[5 + i] != '\n')
		return 0;
	*len = i;
	return MT_MARK_LABEL;
}

/*
 * The record takes its number before the switch: a call of another thread that finds recording on has a higher
 * number than a start, and one with a lower number than a stop was started before it (the tracer drops the
 * records of calls that found it on but took their number after the stop). A mark the full ring refuses switches
 * nothing: BPF and the tracer stay agreed, and the drop is counted.
 */
static __always_inline void control__apply(const char *b, __u32 n)
{
	char label[MT_MARK_LABEL_MAX] = {};
	struct mt_mark *e;
	__u32 kind, len;

	kind = control__parse(b, n, label, &len);
	if (!kind) {
		__sync_fetch_and_add(&live_control_ignored, 1);
		return;
	}
	e = rec__reserve(sizeof(*e), MT_REC_MARK);
	if (!e)
		return;
	e->kind = kind;
	e->len = len;
	__builtin_memcpy(e->label, label, sizeof(e->label));
	rec__submit(e, sizeof(*e));
	if (kind != MT_MARK_LABEL)
		__sync_lock_test_and_set(&live_paused, kind == MT_MARK_STOP);
}

/* The bytes up to and including the first newline of b's n; past the write's end (ends the loop) when none. */
static __always_inline __u32 control__line_len(const char *b, __u32 n)
{
	__u32 i;

	for (i = 0; i < MT_CONTROL_READ; i++) {
		if (i >= n)
			break;
		if (b[i] == '\n')
			return i + 1;
	}
	return MT_CONTROL_WRITE_MAX;
}

/* Where a write's lines are read. */
struct control_walk {
	const char *buf;
	__u64 off;
	__u64 len;
};

/* The line of the write at w->off, acted on; w->off moves past it. 1: no line left. A global function, so the
 * verifier checks it once, not once for each line of the caller's loop. */
__noinline int control__line(struct control_walk *w)
{
	char b[MT_CONTROL_READ] = {};
	__u64 n;

	if (!w || w->off >= w->len)
		return 1;
	n = w->len - w->off;
	if (n > sizeof(b))
		n = sizeof(b);
	asm volatile("" : "+r"(n));	/* else clang may pass the verifier an unbounded copy of n */
	if (bpf_probe_read_user(b, n, w->buf + w->off))
		return 1;
	control__apply(b, n);
	w->off += control__line_len(b, n);
	return 0;
}

/* At the exit of write(fd, buf, n): the lines a tracked process wrote to the control FIFO, in their order (a stdio
 * stream flushed once writes several in one call). */
static __always_inline int control__write(struct pt_regs *regs, long ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct control_walk w = {};
	__u32 i;

	if (!live_control_ino || ret <= 0 || !proc__active(current__tgid_of(task)))
		return 0;
	if (!control__is_fifo(task, BPF_CORE_READ(regs, di)))
		return 0;
	if (ret > MT_CONTROL_WRITE_MAX) {
		__sync_fetch_and_add(&live_control_ignored, 1);
		return 0;
	}
	w.buf = (const char *)BPF_CORE_READ(regs, si);
	w.len = ret;
	for (i = 0; i < MT_CONTROL_LINES; i++)
		if (control__line(&w))
			break;
	if (w.off < w.len)
		__sync_fetch_and_add(&live_control_ignored, 1);
	return 0;
}

#endif /* MEMTRACK_CONTROL_BPF_H */
