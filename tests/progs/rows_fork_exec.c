// SPDX-License-Identifier: GPL-2.0-only
/* rows_fork_exec.c — one image row each: the parent (3 blocks), its fork child before and after it execs itself
 * with "--child" "x y". No stdio: nothing else is allocated. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

/* The exec'd image: 2 blocks, one freed, one leaked (22 bytes). */
static int child_image(void)
{
	void *a = v_malloc(11);

	v_malloc(22);
	v_free(a);
	return 0;
}

int main(int argc, char **argv)
{
	char *args[] = { argv[0], "--child", "x y", NULL };
	void *p[3];
	int status;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "--child"))
		return child_image();
	p[0] = v_malloc(100);
	p[1] = v_malloc(200);
	p[2] = v_malloc(300);
	pid = fork();
	if (pid == 0) {
		/* image 0 of the child: frees one inherited block, allocates one; its exec discards the rest */
		v_free(p[0]);
		v_malloc(4000);
		execv(argv[0], args);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	v_free(p[1]);
	v_free(p[2]);
	return 0;	/* p[0] leaks: 100 bytes */
}
