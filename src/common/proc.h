/* SPDX-License-Identifier: GPL-2.0-only */
/* proc.h — the /proc files memtrack parses in more than one place: PID/maps lines, TID/status fields, TID/stat. */
#ifndef MEMTRACK_PROC_H
#define MEMTRACK_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One line of /proc/PID/maps, as BPF's vma__read sees the mapping. */
struct mt_proc_map {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint64_t ino;
	uint64_t dev;		/* the kernel's dev_t (bpf/memtrack.h's MT_KDEV_MINOR_BITS), as BPF reads s_dev */
	uint32_t prot;		/* PROT_READ, PROT_WRITE, PROT_EXEC */
};

/* Parses "start-end perms pgoff major:minor ino ..." into m; false when the line is not one. */
bool mt_proc__maps_line(const char *line, struct mt_proc_map *m);

/*
 * The numeric field name ("Tgid:", "SigPnd:") of a status file (/proc/TID/status, /proc/PID/task/TID/status), in
 * base. 0; -ESRCH when the file is gone (so is the task); -ENOENT without the field; another -errno.
 */
int mt_proc__status_field(const char *path, const char *name, int base, unsigned long long *v);

/* The text of field name ("State:") of a status file, in line (size bytes), from *text on; errors as above. */
int mt_proc__status_text(const char *path, const char *name, char *line, size_t size, const char **text);

/* What memtrack reads of a stat file (/proc/PID/stat, /proc/PID/task/TID/stat). */
struct mt_proc_stat {
	unsigned long long starttime;	/* field 22: clock ticks from boot to the task's start */
	unsigned long vsize;		/* field 23: 0 once the task has let its memory go */
	char state;			/* field 3: R, S, D, T, Z, X, ... */
};

/* The stat file at path, read whole (comm may hold ')' or spaces). 0, -errno when it cannot be opened, -EINVAL. */
int mt_proc__stat(const char *path, struct mt_proc_stat *st);

#endif /* MEMTRACK_PROC_H */
