/* spawn.c — starts the command without a shell: held in a TRACEME stop before exec, then seized for job control. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "tracer/spawn.h"

#define MT_PTRACE_OPTIONS \
	(PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC)

/* A message on the child's channel: the step that failed and its errno. */
struct spawn_msg {
	int32_t step;		/* enum mt_spawn_step */
	int32_t err;
};

static void child__send(int sock, int step, int err)
{
	struct spawn_msg m = { .step = step, .err = err };

	if (send(sock, &m, sizeof(m), MSG_NOSIGNAL) < 0)
		return;	/* memtrack is gone: the exit status alone tells */
}

/* The command never runs untraced: a step that fails ends the child before its exec. */
static void __attribute__((noreturn)) child__fail(int sock, int step, int err)
{
	child__send(sock, step, err);
	_exit(step == MT_SPAWN_EXEC && (err == EACCES || err == ENOEXEC) ? 126 : 127);
}

/* Runs in the forked child: only async-signal-safe calls until exec. */
static void __attribute__((noreturn)) child__run(const struct mt_spawn *sp, char *const *argv,
						 const sigset_t *orig_mask, int sock)
{
	sigprocmask(SIG_SETMASK, orig_mask, NULL);
	if (sp->restore_nofile)
		setrlimit(RLIMIT_NOFILE, &sp->nofile);
	if (sp->restore_nice)
		setpriority(PRIO_PROCESS, 0, sp->nice);
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		child__fail(sock, MT_SPAWN_TRACEME, errno);
	if (raise(SIGSTOP))
		child__fail(sock, MT_SPAWN_STOP, errno);
	execvp(argv[0], argv);
	child__fail(sock, MT_SPAWN_EXEC, errno);
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

int mt_spawn__read(int fd, int *step, int *err)
{
	struct spawn_msg m;
	ssize_t n = recv(fd, &m, sizeof(m), MSG_DONTWAIT);

	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (n == 0)
		return 0;
	if (n != sizeof(m))
		return -EPROTO;
	*step = m.step;
	*err = m.err;
	return 1;
}

static const char *step__name(int step)
{
	switch (step) {
	case MT_SPAWN_EXEC: return "exec";
	case MT_SPAWN_TRACEME: return "PTRACE_TRACEME";
	case MT_SPAWN_STOP: return "the stop before exec";
	}
	return "set-up";
}

void mt_spawn__describe(int step, int err, char *buf, size_t len)
{
	const char *hint = "";

	if (step == MT_SPAWN_TRACEME && err == EPERM)
		hint = " (is memtrack itself traced?)";
	snprintf(buf, len, "%s: %s%s", step__name(step), strerror(err), hint);
}

/* The child is gone before its stop: what it said (nothing when it was killed). */
static int start__failed(struct mt_spawn *sp)
{
	int step = 0, err = 0;

	sp->pid = 0;	/* reaped */
	if (mt_spawn__read(sp->err_fd, &step, &err) != 1)
		return -ECHILD;
	sp->fail_step = step;
	sp->fail_errno = err;
	return -ECANCELED;
}

int mt_spawn__start(struct mt_spawn *sp, char *const *argv, const sigset_t *orig_mask)
{
	int fds[2], status;

	/* Datagrams in order: each message whole; close-on-exec, so EOF tells that the exec went through. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds))
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
	if (status == -ECHILD)
		return start__failed(sp);
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
