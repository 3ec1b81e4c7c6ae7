// SPDX-License-Identifier: GPL-2.0-only
/* fake_both.c — one test library holding two allocators' trigger symbols (mimalloc's and tcmalloc's). */
#define FAKE_PREFIX mi_
#include "fake_alloc.c"
#undef FAKE_PREFIX
#define FAKE_PREFIX tc_
#include "fake_alloc.c"