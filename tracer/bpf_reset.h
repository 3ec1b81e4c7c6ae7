/* SPDX-License-Identifier: GPL-2.0-only */
/* bpf_reset.h — kept BPF maps put back as a cold load leaves them, for a warm start (tracer/bpf_warm.c). */
#ifndef MEMTRACK_TRACER_BPF_RESET_H
#define MEMTRACK_TRACER_BPF_RESET_H

struct bpf_map;
struct bpf_object;

/*
 * fds[i]: the kept map of obj's i-th map definition (obj opened and configured, not loaded). Each reset: hash maps
 * emptied, arrays zeroed (call_slots by zero_prog, the program slots_zero), rings' consumers moved to their
 * producers, .bss rewritten from obj's image with the next session number (the task storage's entries of past runs
 * compare it), .rodata compared with obj's. A map of any other kind cannot be proved reset: -EOPNOTSUPP. Only while
 * no program of theirs can run (no links).
 */
int mt_bpf_reset__maps(struct bpf_object *obj, const int *fds, int zero_prog);
/* map (obj's .bss, its fd the kept map's) mapped where the skeleton reads and writes it. 0 or -errno. */
int mt_bpf_reset__map_bss(struct bpf_map *map);

#endif /* MEMTRACK_TRACER_BPF_RESET_H */
