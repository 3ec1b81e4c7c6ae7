/* SPDX-License-Identifier: GPL-2.0-only */
/* rank_list.h — the live and freed lists of the column codec: entries named by rank, newest first. */
#ifndef MEMTRACK_ARTIFACT_RANK_LIST_H
#define MEMTRACK_ARTIFACT_RANK_LIST_H

#include <stddef.h>
#include <linux/types.h>

/*
 * Entries numbered by insertion (seq), removable, named by rank (how many present entries are newer). A bit per
 * entry, a count per word of 64 and per block of 8 words; ranks are counted from the newest end, where blocks are
 * freed and taken again soonest, so a rank costs a few adds. Appending and removing cost one each. The struct is
 * here because the encoder and decoder hold lists by value; its fields are this module's.
 */
struct mt_rank_list {
	__u64 *bits;		/* bit seq % 64 of word seq / 64: the entry is present */
	__u8 *count64;		/* present entries of each word */
	__u16 *count512;	/* present entries of each block */
	__u32 cap;		/* appends a frame may make */
	__u32 n;		/* entries appended: the next seq */
	__u32 count;		/* entries present */
};

/* Sizes l (zero-initialised or already sized) for cap seqs, and empties it. 0 or -ENOMEM (l keeps what it had). */
int mt_rank_list__init(struct mt_rank_list *l, size_t cap);
void mt_rank_list__free(struct mt_rank_list *l);

/* Empties l, keeping its room. */
static inline void mt_rank_list__clear(struct mt_rank_list *l)
{
	l->n = l->count = 0;
}

#define MT_RANK_WORD_BITS 64		/* entries per word of bits, counted in count64 */
#define MT_RANK_BLOCK_BITS 512		/* entries per block, counted in count512 */
#define MT_RANK_BLOCK_WORDS (MT_RANK_BLOCK_BITS / MT_RANK_WORD_BITS)

/* The bit masks of a SWAR popcount: every other bit, pair of bits, nibble; and the byte sum's multiplier. */
#define MT_RANK_SWAR_1 0x5555555555555555ull
#define MT_RANK_SWAR_2 0x3333333333333333ull
#define MT_RANK_SWAR_4 0x0f0f0f0f0f0f0f0full
#define MT_RANK_SWAR_BYTES 0x0101010101010101ull

/* The set bits of each byte of x, in that byte. */
static inline __u64 mt_rank_byte_counts(__u64 x)
{
	x -= x >> 1 & MT_RANK_SWAR_1;
	x = (x & MT_RANK_SWAR_2) + (x >> 2 & MT_RANK_SWAR_2);
	return (x + (x >> 4)) & MT_RANK_SWAR_4;
}

/* __builtin_popcountll is a libgcc call unless the build targets POPCNT; this is a dozen plain instructions. */
static inline unsigned int mt_rank_popcount64(__u64 x)
{
	return mt_rank_byte_counts(x) * MT_RANK_SWAR_BYTES >> 56;
}

/* The bit number of set bit k of x, counting from bit 0; k < popcount(x). Bytes first, then bits. */
static inline unsigned int mt_rank_select64(__u64 x, unsigned int k)
{
	__u64 bytes = mt_rank_byte_counts(x);
	unsigned int at, n;

	for (at = 0; k >= (n = bytes >> at & 0xff); at += 8)
		k -= n;
	for (x >>= at; k; k--)
		x &= x - 1;
	return at + __builtin_ctzll(x);
}

/* Words and counts are cleared as the list reaches them, so that clearing a list costs nothing. */
static inline void mt_rank_list__add(struct mt_rank_list *l, __u32 seq)
{
	__u32 i;

	for (i = l->n ? (l->n - 1) / MT_RANK_WORD_BITS + 1 : 0; i <= seq / MT_RANK_WORD_BITS; i++) {
		l->bits[i] = 0;
		l->count64[i] = 0;
	}
	for (i = l->n ? (l->n - 1) / MT_RANK_BLOCK_BITS + 1 : 0; i <= seq / MT_RANK_BLOCK_BITS; i++)
		l->count512[i] = 0;
	l->n = seq + 1;
	l->bits[seq / MT_RANK_WORD_BITS] |= 1ull << seq % MT_RANK_WORD_BITS;
	l->count64[seq / MT_RANK_WORD_BITS]++;
	l->count512[seq / MT_RANK_BLOCK_BITS]++;
	l->count++;
}

static inline __u32 mt_rank_list__append(struct mt_rank_list *l)
{
	__u32 seq = l->n;

	mt_rank_list__add(l, seq);
	return seq;
}

static inline void mt_rank_list__remove(struct mt_rank_list *l, __u32 seq)
{
	l->bits[seq / MT_RANK_WORD_BITS] &= ~(1ull << seq % MT_RANK_WORD_BITS);
	l->count64[seq / MT_RANK_WORD_BITS]--;
	l->count512[seq / MT_RANK_BLOCK_BITS]--;
	l->count--;
}

/* The newer entries of seq's own word, then of the words after it in its block, then of the blocks after it. */
static inline __u32 mt_rank_list__rank(const struct mt_rank_list *l, __u32 seq)
{
	__u32 w = seq / MT_RANK_WORD_BITS, last = (l->n - 1) / MT_RANK_WORD_BITS, end = w | (MT_RANK_BLOCK_WORDS - 1), rank, i;

	rank = mt_rank_popcount64(l->bits[w] >> seq % MT_RANK_WORD_BITS >> 1);
	for (i = w + 1; i <= end && i <= last; i++)
		rank += l->count64[i];
	for (i = seq / MT_RANK_BLOCK_BITS + 1; i <= last / MT_RANK_BLOCK_WORDS; i++)
		rank += l->count512[i];
	return rank;
}

static inline __u32 mt_rank_list__find(const struct mt_rank_list *l, __u32 rank)
{
	__u32 last = (l->n - 1) / MT_RANK_WORD_BITS, b = last / MT_RANK_BLOCK_WORDS, w;

	while (rank >= l->count512[b])
		rank -= l->count512[b--];
	w = b * MT_RANK_BLOCK_WORDS + MT_RANK_BLOCK_WORDS - 1;
	for (w = w < last ? w : last; rank >= l->count64[w]; w--)
		rank -= l->count64[w];
	/* rank entries of its word are newer: it is the word's set bit count - 1 - rank from bit 0 */
	return w * MT_RANK_WORD_BITS + mt_rank_select64(l->bits[w], l->count64[w] - 1 - rank);
}

#endif /* MEMTRACK_ARTIFACT_RANK_LIST_H */
