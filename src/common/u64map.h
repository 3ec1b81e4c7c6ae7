/* SPDX-License-Identifier: GPL-2.0-only */
/* u64map.h — the u64 → u64 hash table (open addressing) for live blocks, pids, stack hashes and module keys. */
#ifndef MEMTRACK_U64MAP_H
#define MEMTRACK_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 16 bytes an entry (millions of live blocks): key 0 marks an empty slot, so key 0 itself lives beside the table. */
struct mt_u64map_ent {
	uint64_t key;
	uint64_t val;
};

/* Zero-initialised is an empty map. Every key is allowed, 0 included. */
struct mt_u64map {
	struct mt_u64map_ent *ents;	/* NULL while empty */
	size_t mask;			/* capacity - 1, a power of two */
	size_t count;			/* entries, key 0 included */
	bool has_zero;
	uint64_t zero_val;
};

/* splitmix64's finalizer: addresses and hashes cluster in their low bits, so every bit is mixed in. The home slot
 * of key in a table of mask + 1 slots is mt_u64map__mix(key) & mask (tables that must visit keys in this map's order
 * use it too). */
static inline uint64_t mt_u64map__mix(uint64_t key)
{
	key ^= key >> 30;
	key *= 0xbf58476d1ce4e5b9ULL;
	key ^= key >> 27;
	key *= 0x94d049bb133111ebULL;
	return key ^ (key >> 31);
}

/* The value slot of key, or NULL. The pointer is valid until the next put or del. */
uint64_t *mt_u64map__find(const struct mt_u64map *m, uint64_t key);
/* Sets key → val. 1 when key was present (*old gets its value when old is not NULL), 0 when added, -ENOMEM. */
int mt_u64map__put(struct mt_u64map *m, uint64_t key, uint64_t val, uint64_t *old);
/* Removes key; true (and *val when not NULL) when it was present. */
bool mt_u64map__del(struct mt_u64map *m, uint64_t key, uint64_t *val);
/* Visits every entry (order unspecified); fn must not change the map. */
void mt_u64map__for_each(const struct mt_u64map *m, void (*fn)(uint64_t key, uint64_t val, void *ctx), void *ctx);
/* A copy of src into dst (dst is overwritten, not freed). 0 or -ENOMEM. */
int mt_u64map__copy(struct mt_u64map *dst, const struct mt_u64map *src);
void mt_u64map__release(struct mt_u64map *m);

#endif /* MEMTRACK_U64MAP_H */
