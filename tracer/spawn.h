/* spawn.h — the command, held in its TRACEME stop before exec, then turned into a seized tracee. */
#ifndef MEMTRACK_TRACER_SPAWN_H
#define MEMTRACK_TRACER_SPAWN_H

#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

/* The restore_* fields and what they restore are the caller's to set before mt_spawn__start. */
struct mt_spawn {
	pid_t pid;
	int err_fd;		/* read end of the close-on-exec pipe that carries exec's errno */
	bool restore_nofile;	/* the tracer raised its open-file limit: the command gets nofile back */
	struct rlimit nofile;
	bool restore_nice;	/* the tracer raised its priority: the command gets its nice value back */
	int nice;
};
/* Forked and held before exec; the child runs with orig_mask. 0 or -errno. */
int mt_spawn__start(struct mt_spawn *sp, char *const *argv, const sigset_t *orig_mask);
/* Seized with the fork, clone and exec events, and let go on to its exec. 0 or -errno. */
int mt_spawn__seize(struct mt_spawn *sp);

#endif /* MEMTRACK_TRACER_SPAWN_H */
