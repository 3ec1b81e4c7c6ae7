/* SPDX-License-Identifier: GPL-2.0-only */
/* bpf_load.h — one BPF object's maps made in a thread, while libbpf parses the kernel's BTF, for its instances. */
#ifndef MEMTRACK_TRACER_BPF_LOAD_H
#define MEMTRACK_TRACER_BPF_LOAD_H

struct bpf_object;
struct mt_bpf_maps;

/*
 * obj: opened, not loaded, its sizes and .rodata settings final. Its maps are made in a thread (the kernel's work:
 * the ring's pages, the hash tables' buckets) while the caller parses the kernel's BTF (mt_bpf_load__kernel_btf),
 * which is user space's. NULL (errno) when it cannot start.
 */
struct mt_bpf_maps *mt_bpf_load__maps_start(struct bpf_object *obj);
/* Waits for the maps, then obj (the same ELF's instance, not loaded) reuses them: 0 or -errno, said. */
int mt_bpf_load__maps_reuse(struct mt_bpf_maps *m, struct bpf_object *obj);
/* After every instance's load: the thread joined, the maker's copies closed. NULL is fine. */
void mt_bpf_load__maps_free(struct mt_bpf_maps *m);
/* libbpf's parse of the kernel's BTF, which the load needs for its tp_btf programs, done now: their targets found
 * as the load would (libbpf keeps the BTF for the load). 0 or -errno, said. */
int mt_bpf_load__kernel_btf(struct bpf_object *obj);

#endif /* MEMTRACK_TRACER_BPF_LOAD_H */
