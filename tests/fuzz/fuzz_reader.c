// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_reader.c — libFuzzer target: any bytes through the artifact reader, which must never crash or misreport.
 * An input that starts with MEMTRACK is read as a file. Any other is frame contents, so that mutations get past zstd's
 * checksums to the decoder: byte 0 picks the version (1 to 4), then each frame is a u16 length and that many bytes,
 * compressed here into a checksummed zstd frame behind a valid header.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "artifact/artifact.h"

#define HEADER_SIZE 32
#define CONTENT_VERSIONS 4
#define FRAME_LEN_BYTES 2

/* Each record handed over must be whole, aligned and within what the status then says. */
static int check_record(const struct mt_rec_hdr *rec, void *ctx)
{
	uint64_t *n = ctx;
	volatile uint8_t sink = 0;
	size_t i;

	if ((uintptr_t)rec % 8 || rec->size < sizeof(*rec) || rec->size < mt_rec__min_size(rec->type))
		abort();
	for (i = 0; i < rec->size; i++)	/* every byte readable: ASan finds a record that overruns its buffer */
		sink ^= ((const uint8_t *)rec)[i];
	(void)sink;
	(*n)++;
	return 0;
}

/* A version's header, its checksum computed as docs/FORMAT.md says (zlib's CRC-32, bytes 24-27 as 0). */
static void put_header(uint8_t *h, uint32_t version)
{
	uint32_t size = HEADER_SIZE, crc;

	memset(h, 0, HEADER_SIZE);
	memcpy(h, MT_ARTIFACT_MAGIC, 8);
	memcpy(h + 8, &version, 4);
	memcpy(h + 12, &size, 4);
	if (version < 4)
		return;
	crc = crc32(0, h, HEADER_SIZE);
	memcpy(h + 24, &crc, 4);
}

/* The length of the frame whose u16 is at data + at: as it says, or what is left when the input ends first. */
static size_t frame_len(const uint8_t *data, size_t size, size_t at)
{
	size_t left = size - at - FRAME_LEN_BYTES, len;

	if (size - at <= FRAME_LEN_BYTES)
		return 0;
	len = data[at] | data[at + 1] << 8;
	return len < left ? len : left;
}

/* Frame contents into a file; returns its length, or 0 when it cannot be made. */
static size_t contents_to_file(const uint8_t *data, size_t size, uint8_t **out)
{
	static ZSTD_CCtx *cctx;
	size_t cap = HEADER_SIZE, at, len, n, pos;
	uint8_t *file;

	if (!cctx) {
		cctx = ZSTD_createCCtx();
		if (!cctx || ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1)))
			abort();
	}
	for (at = 1; at < size; at += FRAME_LEN_BYTES + frame_len(data, size, at))
		cap += ZSTD_compressBound(frame_len(data, size, at));
	file = malloc(cap);
	if (!file)
		return 0;
	put_header(file, 1 + data[0] % CONTENT_VERSIONS);
	for (at = 1, pos = HEADER_SIZE; at < size; at += FRAME_LEN_BYTES + len, pos += n) {
		len = frame_len(data, size, at);
		n = ZSTD_compress2(cctx, file + pos, cap - pos, len ? data + at + FRAME_LEN_BYTES : data, len);
		if (ZSTD_isError(n))
			abort();
	}
	*out = file;
	return pos;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mt_read_status st;
	uint8_t *file = NULL;
	uint64_t n = 0;
	int err;

	if (size && (size < 8 || memcmp(data, MT_ARTIFACT_MAGIC, 8))) {
		size = contents_to_file(data, size, &file);
		if (!size)
			return 0;
		data = file;
	}
	err = mt_artifact__read_buffer(data, size, check_record, &n, &st);
	free(file);
	if (err && err != -EBADMSG && err != -EINVAL && err != -EPROTONOSUPPORT && err != -ENOMEM)
		abort();
	/* What the status says agrees with what was delivered, and damage lies within the input. */
	if (st.records != n || st.damaged != (err == -EBADMSG) || st.good_bytes > size)
		abort();
	if (st.damaged && (st.bad_offset != st.good_bytes || st.bad_offset >= size))
		abort();
	if (!err && (st.good_bytes != size || st.reason[0]))
		abort();
	if (err && err != -EBADMSG && n)
		abort();
	if (!memchr(st.reason, 0, sizeof(st.reason)))
		abort();
	return 0;
}
