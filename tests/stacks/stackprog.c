// SPDX-License-Identifier: GPL-2.0-only
/* stackprog.c — writes a stacks artifact the way `memtrack record --stacks` will, from known call paths. */
/*
 * stackprog DIR [-b BYTES] [-n] MODE...: MODE is chain (3 x 100 bytes through f1 … f20, one freed), callers (64
 * sites), qsort (a path through libc), broken (2 x 55 bytes under a frame whose rbp points at data), deep (33 bytes
 * under 200 frames of deep), peak, temps or sizes (chain.h); -b the stack bytes per capture, -n no DIR/modules
 * copies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "capture.h"
#include "chain.h"

static long broken_words[2];	/* data: in no executable mapping, where broken_frame's return address would be */
static volatile int chain_runs = 3;	/* volatile: one call site in a loop, not an unrolled three */

#define DEEP_FRAMES 200		/* more than MT_FP_MAX */

NOIPA static void run_chain(void)
{
	int i;

	for (i = 0; i < chain_runs; i++)
		f1(0);
}

int main(int argc, char **argv)
{
	uint32_t nbytes = 8192;
	int i = 2, copy = 1;

	if (argc < 3) {
		fprintf(stderr, "usage: stackprog DIR [-b BYTES] [-n] MODE...\n");
		return 2;
	}
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-b") && i + 1 < argc)
			nbytes = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "-n"))
			copy = 0;	/* no DIR/modules copies: symbolize from the original paths */
	}
	if (capture_begin(argv[1], argc, argv, nbytes, copy)) {
		perror("capture_begin");
		return 1;
	}
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "chain")) {
			run_chain();
			chain_free_one();
		} else if (!strcmp(argv[i], "callers")) {
			callers_run();
		} else if (!strcmp(argv[i], "qsort")) {
			qsort_run();
		} else if (!strcmp(argv[i], "broken")) {
			broken_frame(&broken_words[0]);	/* two call paths to the kernel, one site */
			broken_frame(&broken_words[1]);
		} else if (!strcmp(argv[i], "deep")) {
			deep(DEEP_FRAMES - 1);
		} else if (!strcmp(argv[i], "peak")) {
			peak_run();
		} else if (!strcmp(argv[i], "temps")) {
			temps_run();
		} else if (!strcmp(argv[i], "sizes")) {
			sizes_run();
		}
	}
	return capture_end(0) ? 1 : 0;
}
