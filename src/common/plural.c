// SPDX-License-Identifier: GPL-2.0-only
/* plural.c — English plurals for counts in the commands' output. */
#include "common/plural.h"

const char *mt_plural__of(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}
