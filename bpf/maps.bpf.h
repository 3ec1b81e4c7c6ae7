/* SPDX-License-Identifier: GPL-2.0-only */
/* maps.bpf.h — BPF-only: the one lookup-or-init of a map entry that threads may race to create (bcc's maps.bpf.h). */
#ifndef MEMTRACK_MAPS_BPF_H
#define MEMTRACK_MAPS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define MT_EEXIST 17	/* errno's EEXIST: vmlinux.h has no errno values */

/*
 * key's entry in map, made from init when there is none. Two threads that race to make it both get the one entry:
 * the loser's BPF_NOEXIST update fails with -EEXIST, and its lookup finds the winner's. NULL: the map is full (or
 * the entry went again in between); the caller counts the drop.
 */
static __always_inline void *map__lookup_or_try_init(void *map, const void *key, const void *init)
{
	void *val = bpf_map_lookup_elem(map, key);
	long err;

	if (val)
		return val;
	err = bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	if (err && err != -MT_EEXIST)
		return NULL;
	return bpf_map_lookup_elem(map, key);
}

#endif /* MEMTRACK_MAPS_BPF_H */
