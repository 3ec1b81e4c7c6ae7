// SPDX-License-Identifier: GPL-2.0-only
/* cmd_capture.c — in-process runs of subcommands with stdout or stderr captured into a string. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd_capture.h"

char *mt_test__vcapture(int (*cmd)(int, char **), int fd, int *ret, va_list ap)
{
	char *argv[8], *out;
	int argc = 0, saved_out, saved_err, null;
	FILE *tmp = tmpfile();
	long n;

	while (argc < 7 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	argv[argc] = NULL;
	assert_non_null(tmp);
	fflush(stdout);
	fflush(stderr);
	saved_out = dup(1);
	saved_err = dup(2);
	null = open("/dev/null", O_WRONLY);
	assert_true(saved_out >= 0 && saved_err >= 0 && null >= 0);
	dup2(fd == 1 ? fileno(tmp) : null, 1);
	dup2(fd == 2 ? fileno(tmp) : null, 2);
	close(null);
	*ret = cmd(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	n = ftell(tmp);
	out = calloc(1, n + 1);
	assert_non_null(out);
	rewind(tmp);
	assert_int_equal(fread(out, 1, n, tmp), (size_t)n);
	fclose(tmp);
	return out;
}

char *mt_test__capture(int (*cmd)(int, char **), int fd, int *ret, ...)
{
	va_list ap;
	char *out;

	va_start(ap, ret);
	out = mt_test__vcapture(cmd, fd, ret, ap);
	va_end(ap);
	return out;
}
