/* spawn.c — starts the command without a shell: held in a TRACEME stop before exec, then seized for job control. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "tracer/spawn.h"

#define MT_PTRACE_OPTIONS \
	(PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC)

/* Runs in the forked child: only async-signal-safe calls until exec. */
static void __attribute__((noreturn)) child__run(const struct mt_spawn *sp, char *const *argv,
						 const sigset_t *orig_mask, int err_fd)
{
	int err;

	sigprocmask(SIG_SETMASK, orig_mask, NULL);
	if (sp->restore_nofile)
		setrlimit(RLIMIT_NOFILE, &sp->nofile);
	if (sp->restore_nice)
		setpriority(PRIO_PROCESS, 0, sp->nice);
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0)
		raise(SIGSTOP);
	execvp(argv[0], argv);
	err = errno;
	if (write(err_fd, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(err == EACCES || err == ENOEXEC ? 126 : 127);
}

static int wait__stopped(pid_t pid, int flags)
{
	int status;

	while (waitpid(pid, &status, flags) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFSTOPPED(status))
		return -ECHILD;
	return status;
}

int mt_spawn__start(struct mt_spawn *sp, char *const *argv, const sigset_t *orig_mask)
{
	int fds[2], status;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	sp->pid = fork();
	if (sp->pid < 0) {
		status = -errno;
		close(fds[0]);
		close(fds[1]);
		return status;
	}
	if (sp->pid == 0)
		child__run(sp, argv, orig_mask, fds[1]);
	close(fds[1]);
	sp->err_fd = fds[0];
	status = wait__stopped(sp->pid, 0);
	if (status < 0 || WSTOPSIG(status) != SIGSTOP)
		return status < 0 ? status : -ECHILD;	/* it did not reach its pre-exec stop */
	return 0;
}

/*
 * Job control needs PTRACE_LISTEN, which needs a seized tracee. The TRACEME tracee is detached with SIGSTOP: it
 * cannot run past that stop, so waiting for the group-stop and seizing it leaves no window in which the command
 * runs untraced. SIGCONT then ends the stop; its signal-delivery-stop is suppressed by the loop (spawn's own).
 */
int mt_spawn__seize(struct mt_spawn *sp)
{
	int status;

	if (ptrace(PTRACE_DETACH, sp->pid, NULL, (void *)(long)SIGSTOP))
		return -errno;
	status = wait__stopped(sp->pid, WUNTRACED);
	if (status < 0)
		return status;
	if (ptrace(PTRACE_SEIZE, sp->pid, NULL, (void *)(long)MT_PTRACE_OPTIONS))
		return -errno;
	status = wait__stopped(sp->pid, __WALL);
	if (status < 0)
		return status;
	if (kill(sp->pid, SIGCONT))
		return -errno;
	if (ptrace(PTRACE_CONT, sp->pid, NULL, NULL))
		return -errno;
	return 0;
}
