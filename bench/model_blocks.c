// SPDX-License-Identifier: GPL-2.0-only
/* model_blocks.c — the model's memory per live block (the recorder's live model), N blocks held (no kernel). */
/*
 * A synthetic record stream straight into mt_model__add, as the recorder feeds it: one process allocates N blocks of
 * 32 bytes at heap-like addresses (16-byte steps over a few regions) and holds them. Prints the process's peak RSS
 * (VmHWM, all of it: the tables' growths included) before and after, and the bytes per live block.
 *   usage: model_blocks [N]   (default 4000000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/model.h"

/* A field of /proc/self/status in KiB, or -1. */
static long status_kb(const char *field)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, strlen(field)))
			kb = atol(line + strlen(field) + 1);
	if (f)
		fclose(f);
	return kb;
}

static void add(struct mt_model *m, const struct mt_rec_hdr *h)
{
	if (mt_model__add(m, h)) {
		fprintf(stderr, "model_blocks: the model failed\n");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 4000000, i, hwm0, hwm1;
	struct mt_model *m = mt_model__new();
	struct mt_alloc a = { .size = 32, .func = MT_FN_MALLOC, .allocator = MT_ALLOCATOR_GLIBC };
	struct mt_syscall c = { .ret = -1, .sys = MT_SYS_MMAP };

	if (!m || n <= 0) {
		fputs("usage: model_blocks [N]\n", stderr);
		return 2;
	}
	a.hdr = (struct mt_rec_hdr){ .pid = 10, .tid = 10, .type = MT_REC_ALLOC, .size = sizeof(a) };
	c.hdr = (struct mt_rec_hdr){ .pid = 10, .tid = 10, .type = MT_REC_SYSCALL, .size = sizeof(c) };
	/* the reorder window full of records that count nowhere, so that only the blocks grow from here */
	for (i = 0; i < 2 * MT_REORDER_WINDOW; i++) {
		c.hdr.ts_ns++;
		add(m, &c.hdr);
	}
	hwm0 = status_kb("VmHWM:");
	a.hdr.ts_ns = c.hdr.ts_ns;
	for (i = 0; i < n; i++) {
		a.hdr.ts_ns++;
		a.addr = 0x555555560000ull + ((uint64_t)(i & 3) << 36) + 48 * (uint64_t)(i >> 2);
		add(m, &a.hdr);
	}
	c.hdr.ts_ns = a.hdr.ts_ns;
	for (i = 0; i < 2 * MT_REORDER_WINDOW; i++) {
		c.hdr.ts_ns++;
		add(m, &c.hdr);
	}
	hwm1 = status_kb("VmHWM:");
	printf("blocks %ld live %llu: peak RSS %.1f MiB before, %.1f MiB after: %.1f bytes per live block\n", n,
	       (unsigned long long)mt_model__totals(m)->heap.live_allocations, hwm0 / 1024.0, hwm1 / 1024.0,
	       (hwm1 - hwm0) * 1024.0 / n);
	mt_model__free(m);
	return 0;
}
