// SPDX-License-Identifier: GPL-2.0-only
/* codec.c — reading LEB128 numbers (any length up to 10 bytes, none past 64 bits), and CRC-32. */
#include "artifact/codec.h"

#define CRC32_POLY 0xedb88320u	/* 0x04c11db7 bit-reversed: the reflected CRC-32 of zlib, gzip and PNG */

/* A bit at a time: it checks a 32-byte header, and a table would be the larger code. */
__u32 mt_crc32(__u32 crc, const void *p, size_t n)
{
	const __u8 *b = p;
	int k;

	crc = ~crc;
	while (n--) {
		crc ^= *b++;
		for (k = 0; k < 8; k++)
			crc = crc >> 1 ^ (CRC32_POLY & -(crc & 1));
	}
	return ~crc;
}

__u64 mt_cursor__varint(struct mt_cursor *k, bool *bad)
{
	unsigned int shift;
	__u64 v = 0;
	__u8 b;

	for (shift = 0; shift < 64 && k->pos < k->len; shift += MT_VARINT_BITS) {
		b = k->p[k->pos++];
		if (shift == 63 && b > 1)
			break;
		v |= (__u64)(b & (MT_VARINT_MORE - 1)) << shift;
		if (!(b & MT_VARINT_MORE))
			return v;
	}
	*bad = true;	/* ran out, or more than 64 bits */
	return 0;
}
