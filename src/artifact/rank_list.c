// SPDX-License-Identifier: GPL-2.0-only
/* rank_list.c — a bitmap with counts per word and per block of words: rank and select from the newest end. */
#include <errno.h>
#include <stdlib.h>

#include "artifact/rank_list.h"

int mt_rank_list__init(struct mt_rank_list *l, size_t cap)
{
	__u64 *bits = realloc(l->bits, (cap / MT_RANK_WORD_BITS + 1) * sizeof(*bits));
	__u8 *count64;
	__u16 *count512;

	if (bits)
		l->bits = bits;
	count64 = realloc(l->count64, cap / MT_RANK_WORD_BITS + 1);
	if (count64)
		l->count64 = count64;
	count512 = realloc(l->count512, (cap / MT_RANK_BLOCK_BITS + 1) * sizeof(*count512));
	if (count512)
		l->count512 = count512;
	if (!bits || !count64 || !count512)
		return -ENOMEM;
	l->cap = cap;
	mt_rank_list__clear(l);
	return 0;
}

void mt_rank_list__free(struct mt_rank_list *l)
{
	free(l->count512);
	free(l->count64);
	free(l->bits);
}

