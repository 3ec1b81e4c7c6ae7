/* SPDX-License-Identifier: GPL-2.0-only */
/* bpf_warm.h — a warm start: the programs and maps of a cold load kept in bpffs, taken back reset by the next run. */
#ifndef MEMTRACK_TRACER_BPF_WARM_H
#define MEMTRACK_TRACER_BPF_WARM_H

#include <stdbool.h>
#include <stddef.h>

struct bpf_object;
struct bpf_program;
struct mt_bpf_warm;

/* MEMTRACK_WARM: unset (or 1) on, 0 off; any other value is refused, said. 1, 0 or -EINVAL. */
int mt_bpf_warm__asked(void);
/*
 * obj: opened from elf and configured, not loaded (its .rodata, sizes and autoloads final). Unless MEMTRACK_WARM=0,
 * with a closer and no --stacks (stacks: whether the run has them), a pin directory of obj's settings (one of a few
 * slots: a kept set if one is free, else a free one to keep a set in), made or checked, locked for this run and its
 * lock given to the closer. NULL when the run loads cold without pinning: turned off (MEMTRACK_WARM=0), or (said
 * with -v) --stacks, every slot busy (other runs), foreign or not on bpffs.
 */
struct mt_bpf_warm *mt_bpf_warm__open(struct bpf_object *obj, const void *elf, size_t elf_bytes, bool stacks,
				      int closer);
/* The pins of a past cold load, if there are, checked against obj's definitions, every map reset as a cold load
 * leaves it, obj's maps on them (obj stays unloaded, its .bss mapped). 0: taken; -errno: load cold (said). */
int mt_bpf_warm__take(struct mt_bpf_warm *w, struct bpf_object *obj);
/* After a cold load of objs (the same object's instances, each program loaded in one): each loaded program and
 * obj[0]'s maps pinned for the next run. Nothing is taken back on failure but the marker (said with -v). Then the
 * sets other settings kept, when free, removed. */
void mt_bpf_warm__pin(struct mt_bpf_warm *w, struct bpf_object *const *objs, size_t n);
/* prog's fd: the pinned one when the pins were taken, else libbpf's. w may be NULL. */
int mt_bpf_warm__prog_fd(const struct mt_bpf_warm *w, const struct bpf_program *prog);
bool mt_bpf_warm__taken(const struct mt_bpf_warm *w);
/* Taken pins: each tracepoint program of obj linked (tp_btf: a raw tracepoint link on the program's fd). */
int mt_bpf_warm__attach(struct mt_bpf_warm *w, struct bpf_object *obj);
/* The links to the closer (or closed), the pins' fds closed; the lock stays with the closer. NULL is fine. */
void mt_bpf_warm__free(struct mt_bpf_warm *w, int closer);

#endif /* MEMTRACK_TRACER_BPF_WARM_H */
