// SPDX-License-Identifier: GPL-2.0-only
/* f10.c — the middle of the chain, built -O2 -fomit-frame-pointer: it never sets rbp, so the FP chain skips f9. */
#include "chain.h"
NOIPA int f10(int n)
{
	return f11(n + 1) + 1;
}
