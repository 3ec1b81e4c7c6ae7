// SPDX-License-Identifier: GPL-2.0-only
/* proc.c — /proc/PID/maps lines, /proc/TID/status fields and /proc/TID/stat, for the tracer's readers of them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bpf/memtrack.h"
#include "common/proc.h"

bool mt_proc__maps_line(const char *line, struct mt_proc_map *m)
{
	unsigned long long start, end, pgoff, ino;
	unsigned int major, minor;
	char perms[5];

	if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu", &start, &end, perms, &pgoff, &major, &minor, &ino) != 7)
		return false;
	*m = (struct mt_proc_map){ .start = start, .end = end, .pgoff = pgoff, .ino = ino,
				   .dev = (uint64_t)major << MT_KDEV_MINOR_BITS | minor };
	m->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
		  (perms[2] == 'x' ? PROT_EXEC : 0);
	return true;
}

int mt_proc__status_text(const char *path, const char *name, char *line, size_t size, const char **text)
{
	size_t len = strlen(name);
	int err = -ENOENT;
	FILE *f = fopen(path, "re");

	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (err && fgets(line, size, f))
		if (!strncmp(line, name, len)) {
			*text = line + len;
			err = 0;
		}
	fclose(f);
	return err;
}

int mt_proc__status_field(const char *path, const char *name, int base, unsigned long long *v)
{
	const char *text = NULL;
	char line[256];
	int err = mt_proc__status_text(path, name, line, sizeof(line), &text);

	if (!err)
		*v = strtoull(text, NULL, base);
	return err;
}

int mt_proc__stat(const char *path, struct mt_proc_stat *st)
{
	char buf[1024], *p;
	size_t n;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');	/* comm's end: the fields after it are numbers */
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu %lu",
			 &st->state, &st->starttime, &st->vsize) != 3)
		return -EINVAL;
	return 0;
}
