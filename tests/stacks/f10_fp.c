// SPDX-License-Identifier: GPL-2.0-only
/* f10_fp.c — f10 again, built with frame pointers like the rest, for the program that has them everywhere. */
#include "f10.c"