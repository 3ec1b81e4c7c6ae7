/* SPDX-License-Identifier: GPL-2.0-only */
/* bpf_load.h — one BPF object's maps made once and shared by the instances that load its programs side by side. */
#ifndef MEMTRACK_TRACER_BPF_LOAD_H
#define MEMTRACK_TRACER_BPF_LOAD_H

#include <stddef.h>

struct bpf_object;

/*
 * objs: n instances of one ELF, opened, not loaded; objs[0]'s map definitions (sizes, .rodata settings) are the
 * ones made. Each map is created once and every instance reuses it, so that their loads (each program verified
 * once, in whichever instance loads it) can run side by side. 0 or -errno, the map that failed said.
 */
int mt_bpf_load__share_maps(struct bpf_object *const *objs, size_t n);

#endif /* MEMTRACK_TRACER_BPF_LOAD_H */
