// SPDX-License-Identifier: GPL-2.0-only
/* fp_f10.c — the middle of fp_chain's chain; in fp_chain_omit it is built -fomit-frame-pointer, so it never sets
 * rbp and the frame-pointer chain skips its caller f9 (check-fp must name f10). */
#include "fp_chain.h"
NOIPA int f10(int n)
{
	return f11(n + 1) + 1;
}
