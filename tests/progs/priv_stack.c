// SPDX-License-Identifier: GPL-2.0-only
/* priv_stack.c — reads a file onto its stack, then allocates from two call sites (see test_privstacks.c). With a
 * second argument, it creates that file once it has read, and waits for SIGUSR1 to allocate (for record --pid). */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
static volatile sig_atomic_t got;

static void on_usr1(int sig)
{
	got = sig;
}

/* Ready once the handler is set; no allocation before the signal. */
static int wait_usr1(const char *ready)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigset_t none, usr1;

	sigemptyset(&none);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	if (sigaction(SIGUSR1, &sa, NULL) || sigprocmask(SIG_BLOCK, &usr1, NULL))	/* sigsuspend unblocks it */
		return -1;
	close(open(ready, O_CREAT | O_WRONLY, 0644));
	alarm(60);
	while (!got)
		sigsuspend(&none);
	return 0;
}

/* Through volatile pointers so that the compiler cannot pair and drop malloc/free. */
void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

/* Call site one: three blocks of 1000 bytes, freed. */
static void site_one(void)
{
	void *p[3];
	int i;

	for (i = 0; i < 3; i++)
		p[i] = v_malloc(1000);
	for (i = 0; i < 3; i++)
		v_free(p[i]);
}

/* Call site two: two blocks of 2000 bytes, freed. */
static void site_two(void)
{
	void *p[2];
	int i;

	for (i = 0; i < 2; i++)
		p[i] = v_malloc(2000);
	for (i = 0; i < 2; i++)
		v_free(p[i]);
}

/* argv[1]: the file whose bytes stay on the stack (in main's frame, above both sites') while they allocate;
 * argv[2], if any: the file that says it waits for SIGUSR1. */
int main(int argc, char **argv)
{
	volatile char bytes[128];
	ssize_t n;
	int fd;

	if (argc < 2 || argc > 3 || (fd = open(argv[1], O_RDONLY)) < 0)
		return 2;
	n = read(fd, (char *)bytes, sizeof(bytes));
	close(fd);
	if (n <= 0)
		return 3;
	if (argc == 3 && wait_usr1(argv[2]))
		return 4;
	site_one();
	site_two();
	return bytes[0] == 0;
}
