// SPDX-License-Identifier: GPL-2.0-only
/* spawn.c — starts the command without a shell: held in a TRACEME stop before exec, then seized for job control. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "tracer/seccomp.h"
#include "tracer/spawn.h"
#include "tracer/user.h"

/* A message on the child's channel: the step that failed and its errno. */
struct spawn_msg {
	int32_t step;		/* enum mt_spawn_step */
	int32_t err;
};

/* A message, with fd when fd >= 0. 0 or -errno (memtrack is gone: the exit status alone tells). */
static int child__send(int sock, int step, int err, int fd)
{
	struct spawn_msg msg = { .step = step, .err = err };
	char ctl[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec io = { .iov_base = &msg, .iov_len = sizeof(msg) };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (fd >= 0) {
		m.msg_control = ctl;
		m.msg_controllen = sizeof(ctl);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	}
	return sendmsg(sock, &m, MSG_NOSIGNAL) == sizeof(msg) ? 0 : -errno;
}

/* The command never runs untraced: a step that fails ends the child before its exec. */
static void __attribute__((noreturn)) child__fail(int sock, int step, int err)
{
	child__send(sock, step, err, -1);
	_exit(step == MT_SPAWN_EXEC && (err == EACCES || err == ENOEXEC) ? 126 : 127);
}

/*
 * The hand-off's filter: after PTRACE_TRACEME, which it would hold too, and while the child may still install one
 * without no_new_privs (it has memtrack's privileges). Without one the command is traced all the same, and memtrack
 * says why there is none. The listener is memtrack's alone: the child keeps no copy.
 */
static void child__filter(int sock)
{
	int fd = mt_seccomp__install(), err;

	if (fd < 0) {
		child__send(sock, MT_SPAWN_SECCOMP, -fd, -1);
		return;
	}
	err = child__send(sock, MT_SPAWN_SECCOMP, 0, fd);
	if (err)
		child__fail(sock, MT_SPAWN_LISTENER, -err);
	close(fd);
}

/*
 * The user's groups, then its gid, then its uid, all three of each, so that nothing can switch back; after the
 * filter, which needs memtrack's privileges. Raw syscalls: the child has one thread, and glibc's wrappers would
 * signal the parent's others. A failure ends the child: the command never runs as root by mistake.
 */
static void child__become(int sock, const struct mt_user *u)
{
	if (!u || !u->set)
		return;
	if (syscall(SYS_setgroups, u->ngroups, u->groups))
		child__fail(sock, MT_SPAWN_GROUPS, errno);
	if (syscall(SYS_setresgid, u->gid, u->gid, u->gid))
		child__fail(sock, MT_SPAWN_GID, errno);
	if (syscall(SYS_setresuid, u->uid, u->uid, u->uid))
		child__fail(sock, MT_SPAWN_UID, errno);
}

/* Killed if memtrack dies before the exec: held in its stop, this copy of memtrack would wait for ever. A change of
 * credentials clears the setting: it is made again after child__become. */
static void child__tie(int sock, pid_t tracer)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != tracer)	/* memtrack died before the prctl */
		child__fail(sock, MT_SPAWN_STOP, ESRCH);
}

/* Runs in the forked child: only async-signal-safe calls until exec. */
static void __attribute__((noreturn)) child__run(const struct mt_spawn *sp, char *const *argv,
						 const sigset_t *orig_mask, int sock, pid_t tracer)
{
	child__tie(sock, tracer);
	sigprocmask(SIG_SETMASK, orig_mask, NULL);
	if (sp->restore_nofile)
		setrlimit(RLIMIT_NOFILE, &sp->nofile);
	if (sp->restore_nice)
		setpriority(PRIO_PROCESS, 0, sp->nice);
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		child__fail(sock, MT_SPAWN_TRACEME, errno);
	if (sp->handoff)
		child__filter(sock);
	child__become(sock, sp->user);
	child__tie(sock, tracer);
	if (raise(SIGSTOP))
		child__fail(sock, MT_SPAWN_STOP, errno);
	prctl(PR_SET_PDEATHSIG, 0);	/* the command is traced now: it goes on when memtrack ends */
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

/* A message and the fd it carries (-1: none). 1, 0 at EOF, -EAGAIN when none is there yet, else -errno. */
static int spawn__recv(int sock, int *step, int *err, int *fd)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct spawn_msg msg;
	struct iovec io = { .iov_base = &msg, .iov_len = sizeof(msg) };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c;
	ssize_t n = recvmsg(sock, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	*fd = -1;
	c = n > 0 ? CMSG_FIRSTHDR(&m) : NULL;
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
		memcpy(fd, CMSG_DATA(c), sizeof(*fd));
	if (n == 0)
		return 0;
	if (n != sizeof(msg))
		return -EPROTO;
	*step = msg.step;
	*err = msg.err;
	return 1;
}

int mt_spawn__read(int fd, int *step, int *err)
{
	int n, passed;

	n = spawn__recv(fd, step, err, &passed);
	if (n == 1 && passed >= 0)
		close(passed);
	return n;
}

/* What the child said before its stop (or its exit): its listener or why it has none, and the step that failed. */
static void start__messages(struct mt_spawn *sp)
{
	int step = 0, err = 0, fd;

	while (spawn__recv(sp->err_fd, &step, &err, &fd) == 1) {
		if (step == MT_SPAWN_SECCOMP && fd >= 0 && sp->listener < 0) {
			sp->listener = fd;
		} else if (step == MT_SPAWN_SECCOMP) {
			sp->listener_errno = err;
			if (fd >= 0)
				close(fd);
		} else {
			sp->fail_step = step;
			sp->fail_errno = err;
		}
	}
}

static const char *step__name(int step)
{
	switch (step) {
	case MT_SPAWN_EXEC: return "exec";
	case MT_SPAWN_TRACEME: return "PTRACE_TRACEME";
	case MT_SPAWN_SECCOMP: return "the hand-off's seccomp filter";
	case MT_SPAWN_LISTENER: return "passing the seccomp listener";
	case MT_SPAWN_GROUPS: return "setgroups";
	case MT_SPAWN_GID: return "setresgid";
	case MT_SPAWN_UID: return "setresuid";
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

int mt_spawn__fork(struct mt_spawn *sp, char *const *argv, const sigset_t *orig_mask)
{
	pid_t tracer = getpid();
	int fds[2], err;

	sp->listener = -1;
	/* Datagrams in order: each message whole; close-on-exec, so EOF tells that the exec went through. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds))
		return -errno;
	sp->pid = fork();
	if (sp->pid < 0) {
		err = -errno;
		sp->pid = 0;
		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (sp->pid == 0)
		child__run(sp, argv, orig_mask, fds[1], tracer);
	close(fds[1]);
	sp->err_fd = fds[0];
	return 0;
}

int mt_spawn__held(struct mt_spawn *sp)
{
	int status = wait__stopped(sp->pid, 0);

	start__messages(sp);
	if (status == -ECHILD) {
		sp->pid = 0;	/* reaped: gone before its stop, and nothing said when it was killed */
		return sp->fail_step ? -ECANCELED : -ECHILD;
	}
	if (status < 0 || WSTOPSIG(status) != SIGSTOP)
		return status < 0 ? status : -ECHILD;	/* it did not reach its pre-exec stop */
	return 0;
}

int mt_spawn__start(struct mt_spawn *sp, char *const *argv, const sigset_t *orig_mask)
{
	int err = mt_spawn__fork(sp, argv, orig_mask);

	return err ? err : mt_spawn__held(sp);
}

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
