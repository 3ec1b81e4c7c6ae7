// SPDX-License-Identifier: GPL-2.0-only
/* dlopen_copies.c — dlopens DIR/lib0.so ... DIR/lib<N-1>.so, copies of one small library: each a file memtrack has
 * not seen, so a hold each, 5 ms apart. Its pid goes to PIDFILE first. FLAGS: f forks first (the parent exits at
 * once, the child outlives it), w waits for DIR/go before the first dlopen, b blocks SIGURG, SIGWINCH and SIGCHLD
 * (only a SIGSTOP can hold it then), - none. Prints how many it opened; exit 0 when all were.
 *   dlopen_copies PIDFILE FLAGS DIR N */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static void pid__write(const char *path)
{
	char tmp[512];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		exit(2);
	fprintf(f, "%d\n", getpid());
	fclose(f);
	rename(tmp, path);	/* whole, or not there */
}

int main(int argc, char **argv)
{
	char path[512];
	sigset_t set;
	int n, i, opened = 0;

	if (argc != 5)
		return 2;
	n = atoi(argv[4]);
	sigemptyset(&set);
	if (strchr(argv[2], 'b')) {
		sigaddset(&set, SIGURG);
		sigaddset(&set, SIGWINCH);
		sigaddset(&set, SIGCHLD);
	}
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (strchr(argv[2], 'f') && fork() > 0)
		return 0;
	pid__write(argv[1]);
	snprintf(path, sizeof(path), "%s/go", argv[3]);
	while (strchr(argv[2], 'w') && access(path, F_OK))
		usleep(10000);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/lib%d.so", argv[3], i);
		opened += dlopen(path, RTLD_NOW | RTLD_LOCAL) != NULL;
		usleep(5000);
	}
	printf("dlopen_copies: %d opened\n", opened);
	return opened == n ? 0 : 1;
}
