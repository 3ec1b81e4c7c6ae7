// SPDX-License-Identifier: GPL-2.0-only
/* subreaper_exec.c — execs argv[1...] as a child subreaper, as a service manager may start memtrack. */
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	if (argc < 2 || prctl(PR_SET_CHILD_SUBREAPER, 1))
		return 2;
	execvp(argv[1], argv + 1);
	perror("execvp");
	return 127;
}
