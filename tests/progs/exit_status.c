// SPDX-License-Identifier: GPL-2.0-only
/* exit_status.c — ends as told: `exit N` exits with N, `signal N` dies of signal N. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	if (argc != 3)
		return 100;
	if (!strcmp(argv[1], "signal")) {
		signal(atoi(argv[2]), SIG_DFL);
		raise(atoi(argv[2]));
		pause();
	}
	return atoi(argv[2]);
}
