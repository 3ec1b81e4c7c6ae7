// SPDX-License-Identifier: GPL-2.0-only
/* fp_f10_omit.c — fp_f10.c again, for the target that builds it with -fomit-frame-pointer. */
#include "fp_f10.c"