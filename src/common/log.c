// SPDX-License-Identifier: GPL-2.0-only
/* log.c — writes pr_* messages to stderr with the program's prefix. */
#include <stdarg.h>
#include <stdio.h>

#include "common/log.h"

enum mt_log_level mt_log_max = MT_LOG_WARN;

void mt_log(enum mt_log_level level, const char *fmt, ...)
{
	va_list ap;

	if (level > mt_log_max)
		return;
	fputs("memtrack: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}
