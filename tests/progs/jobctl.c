// SPDX-License-Identifier: GPL-2.0-only
/* jobctl.c — a parent stops and continues its child: both transitions must be seen, and the stop must hold. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Returns 0 when stop and continue behave as without a tracer, else which step failed. */
static int stop_and_continue(pid_t child, volatile unsigned long *counter, int stopsig)
{
	unsigned long before;
	int status;

	if (kill(child, stopsig) || waitpid(child, &status, WUNTRACED) != child)
		return 10;
	if (!WIFSTOPPED(status) || WSTOPSIG(status) != stopsig)
		return 11;
	nap_ms(50);
	before = *counter;
	nap_ms(300);
	if (*counter != before)		/* the stop did not hold */
		return 12;
	if (kill(child, SIGCONT) || waitpid(child, &status, WCONTINUED) != child || !WIFCONTINUED(status))
		return 13;
	for (int i = 0; i < 200 && *counter == before; i++)	/* a loaded machine may take a while */
		nap_ms(10);
	if (*counter == before)		/* SIGCONT did not resume it */
		return 14;
	return 0;
}

int main(void)
{
	volatile unsigned long *counter = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status, err;
	pid_t child, parent;

	alarm(20);
	if (counter == MAP_FAILED)
		return 2;
	parent = getpid();
	child = fork();
	if (child == 0) {
		/* Its own process group, with its parent outside it: never orphaned, so SIGTSTP is never ignored. */
		setpgid(0, 0);
		for (;;)	/* it does not outlive a parent that failed */
			if (!(++*counter & 0xfffff) && getppid() != parent)
				_exit(1);
	}
	nap_ms(50);
	err = stop_and_continue(child, counter, SIGSTOP);
	if (!err)
		err = stop_and_continue(child, counter, SIGTSTP) ? 20 : 0;
	kill(child, SIGTERM);
	if (waitpid(child, &status, 0) != child || !WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM)
		return err ? err : 30;
	return err;
}
