// SPDX-License-Identifier: GPL-2.0-only
/* format.c — the tables docs/FORMAT.md defines: record types' minimum sizes, column names. */
#include <stddef.h>

#include "artifact/codec.h"
#include "artifact/format.h"

const char *const mt_col_names[COL__COUNT] = {
	"tag", "flags_free", "flags_alloc", "extra", "thread", "thread_new", "stack_new", "verbatim",
	"ts_free_lo", "ts_free_hi", "ts_alloc_lo", "ts_alloc_hi", "size_lo", "size_hi", "live_lo", "live_hi",
	"freed_lo", "freed_hi", "after_lo", "after_hi", "delta_lo", "delta_hi", "align_lo", "align_hi",
	"stack_lo", "stack_hi", "more", "class", "small_lo", "small_hi",
};

__u32 mt_file_header__crc(const __u8 *header, size_t header_size)
{
	static const __u8 zero[sizeof(((struct mt_file_header *)0)->checksum)];
	size_t at = offsetof(struct mt_file_header, checksum), after = at + sizeof(zero);
	__u32 crc;

	crc = mt_crc32(0, header, at);
	crc = mt_crc32(crc, zero, sizeof(zero));
	return mt_crc32(crc, header + after, header_size - after);
}

/* The reader, the writer and the model share this rule: a record may be longer than its type's struct, never shorter. */
size_t mt_rec__min_size(unsigned int type)
{
	switch (type) {
	case MT_REC_ALLOC: return sizeof(struct mt_alloc);
	case MT_REC_SYSCALL: return MT_SYSCALL_SIZE_V1;	/* stack is read when the record has it */
	case MT_REC_FORK: return sizeof(struct mt_fork);
	case MT_REC_EXEC: return sizeof(struct mt_exec);
	case MT_REC_EXIT: return sizeof(struct mt_exit);
	case MT_REC_THREAD_EXIT: return sizeof(struct mt_thread_exit);
	case MT_REC_SESSION: return sizeof(struct mt_session);
	case MT_REC_END: return sizeof(struct mt_end);
	case MT_REC_ATTACH: return sizeof(struct mt_attach);
	case MT_REC_MAPPING: return sizeof(struct mt_mapping);
	case MT_REC_FILE: return MT_FILE_SIZE_V1;	/* a later field is read when the record has it */
	case MT_REC_STACK: return sizeof(struct mt_stack);
	case MT_REC_MARK: return sizeof(struct mt_mark);
	case MT_REC_RSS: return sizeof(struct mt_rss);
	case MT_REC_SEIZED: return sizeof(struct mt_seized);
	default: return 0;
	}
}
