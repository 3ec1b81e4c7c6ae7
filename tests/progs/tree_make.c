// SPDX-License-Identifier: GPL-2.0-only
/* tree_make.c — a make-like tree, built three times (ROLE): make runs 3 jobs (fork, 77 bytes, exec sh with a long
 * argument), sh allocates 2 x 200 bytes and execs cc, cc allocates 5 x 300 and leaks one; make also runs /bin/true
 * and a child that only exits, and leaks 1 of its 4 x 1000 bytes. No stdio: nothing else is allocated. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

#define ROLE_MAKE 0
#define ROLE_SH 1
#define ROLE_CC 2
#ifndef ROLE
#define ROLE ROLE_MAKE
#endif

/* n blocks of size, all live at once, then all but keep freed. */
static void blocks(int n, size_t size, int keep)
{
	void *p[8];
	int i;

	for (i = 0; i < n; i++)
		p[i] = v_malloc(size);
	for (i = keep; i < n; i++)
		v_free(p[i]);
}

#if ROLE == ROLE_MAKE
/* Forks a child that runs argv (NULL: exits at once) after allocating pre bytes (0: none); waits for it. */
static int job(char **argv, size_t pre)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		if (pre)
			v_malloc(pre);
		if (argv)
			execv(argv[0], argv);
		_exit(argv ? 127 : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}
#endif

int main(int argc, char **argv)
{
#if ROLE == ROLE_MAKE
	static char arg[301];
	char *sh[] = { MT_PROGS "/tree_make_sh", "-c", arg, NULL };
	char *tru[] = { "/bin/true", NULL };
	int i, err = 0;

	(void)argc;
	(void)argv;
	memset(arg, 'x', sizeof(arg) - 1);	/* a command line longer than the report's column */
	blocks(4, 1000, 1);
	for (i = 0; i < 3; i++)
		err |= job(sh, 77);
	err |= job(tru, 0);
	err |= job(NULL, 0);
	return err;
#elif ROLE == ROLE_SH
	char *cc[] = { MT_PROGS "/tree_make_cc", argc > 1 ? argv[1] : "-c", NULL };

	blocks(2, 200, 1);
	execv(cc[0], cc);
	return 127;
#else
	(void)argc;
	(void)argv;
	blocks(5, 300, 1);
	return 0;
#endif
}
