/* SPDX-License-Identifier: GPL-2.0-only */
/* pmap.h — a persistent u64 → u64 map: a copy costs O(1) and shares every node until one side changes it. */
#ifndef MEMTRACK_PMAP_H
#define MEMTRACK_PMAP_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A hash array mapped trie (32 ways a level) with reference-counted nodes. A holder owns one reference to its
 * root; NULL is the empty map. A change copies the shared nodes on the key's path (copy on write) and changes
 * unshared ones in place, so a fork child can hold its parent's blocks at the cost of one reference, and each
 * later change of either costs a path, not a table.
 */
struct mt_pmap;

/* Another holder of m (NULL stays NULL): the two evolve apart from now on. */
struct mt_pmap *mt_pmap__share(struct mt_pmap *m);
/* true (and *val when not NULL) when key is present. */
bool mt_pmap__find(const struct mt_pmap *m, uint64_t key, uint64_t *val);
/* Sets key → val in *m. 0 or -ENOMEM (then *m is still a valid map, without the change). */
int mt_pmap__put(struct mt_pmap **m, uint64_t key, uint64_t val);
/* Removes key from *m: 1 when it was there, 0 when not, -ENOMEM (then *m still holds it). */
int mt_pmap__del(struct mt_pmap **m, uint64_t key);
/* Visits every key and its value (order unspecified); fn must not change the map. */
void mt_pmap__for_each(const struct mt_pmap *m, void (*fn)(uint64_t key, uint64_t val, void *ctx), void *ctx);
/* Drops the holder's reference; nodes no other holder shares are freed. */
void mt_pmap__release(struct mt_pmap *m);

#endif /* MEMTRACK_PMAP_H */
