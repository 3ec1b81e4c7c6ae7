/* SPDX-License-Identifier: GPL-2.0-only */
/* control.h — the control FIFO the command writes start, stop and mark lines to (MEMTRACK_CONTROL). */
#ifndef MEMTRACK_TRACER_CONTROL_H
#define MEMTRACK_TRACER_CONTROL_H

#include <stdint.h>
#include <sys/types.h>

#define MT_CONTROL_ENV "MEMTRACK_CONTROL"

struct mt_control;

/* A private directory (0700) with the FIFO (0600) in it, both uid's; opened for reading. NULL + errno. */
struct mt_control *mt_control__new(uid_t uid, gid_t gid);
const char *mt_control__path(const struct mt_control *c);
/* The FIFO's file as BPF sees it: its superblock's s_dev (the kernel's dev_t) and inode number. */
void mt_control__file(const struct mt_control *c, uint64_t *dev, uint64_t *ino);
/* A thread reads what the tree writes and drops it (BPF acted on it already): writers never block. */
int mt_control__start(struct mt_control *c);
/* The reader stopped, the FIFO and its directory removed. NULL-safe. */
void mt_control__free(struct mt_control *c);
/* The directory the FIFO is in, for the closer (mt_closer__keep_control). */
int mt_control__dir_fd(const struct mt_control *c);
/* The FIFO and the directory that dir_fd holds, removed if they are still there (a killed memtrack's). */
void mt_control__remove(int dir_fd);

#endif /* MEMTRACK_TRACER_CONTROL_H */
