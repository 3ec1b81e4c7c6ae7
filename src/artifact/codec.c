/* codec.c — reading LEB128 numbers, any length up to 10 bytes, none past 64 bits. */
#include "artifact/codec.h"

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
