/* SPDX-License-Identifier: GPL-2.0-only */
/* sha256.h — SHA-256 (FIPS 180-4) of a buffer or of a whole file: the content hash recordings keep of modules. */
#ifndef MEMTRACK_SHA256_H
#define MEMTRACK_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define MT_SHA256_LEN 32

struct mt_sha256 {
	uint32_t h[8];
	uint64_t len;		/* bytes hashed so far */
	uint8_t buf[64];	/* the partial block */
};

void mt_sha256__init(struct mt_sha256 *s);
void mt_sha256__update(struct mt_sha256 *s, const void *data, size_t n);
void mt_sha256__final(struct mt_sha256 *s, uint8_t out[MT_SHA256_LEN]);
/* The hash of the whole file of fd, read by pread from offset 0 (fd's offset is left alone). 0 or -errno. */
int mt_sha256__fd(int fd, uint8_t out[MT_SHA256_LEN]);

#endif /* MEMTRACK_SHA256_H */
