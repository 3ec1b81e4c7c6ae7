/* SPDX-License-Identifier: GPL-2.0-only */
/* cmd_capture.h — runs a memtrack subcommand in-process with one of its output streams captured, for unit tests. */
#ifndef MEMTRACK_CMD_CAPTURE_H
#define MEMTRACK_CMD_CAPTURE_H

#include <stdarg.h>

/*
 * cmd("name", args..., NULL) with fd (1: stdout, 2: stderr) captured and the other stream sent to /dev/null.
 * Returns what was written there (malloc'd, NUL-terminated); *ret gets the command's return value.
 */
char *mt_test__vcapture(int (*cmd)(int, char **), int fd, int *ret, va_list ap);
char *mt_test__capture(int (*cmd)(int, char **), int fd, int *ret, ...);

#endif /* MEMTRACK_CMD_CAPTURE_H */
