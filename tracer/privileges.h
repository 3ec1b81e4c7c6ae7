/* SPDX-License-Identifier: GPL-2.0-only */
/* privileges.h — what recording needs of the machine, checked before anything is loaded. */
#ifndef MEMTRACK_TRACER_PRIVILEGES_H
#define MEMTRACK_TRACER_PRIVILEGES_H

/* 0, or -EPERM / -ENOENT / -EXDEV (/proc of another PID namespace) with the reason already printed. */
int mt_privileges__check(void);

#endif /* MEMTRACK_TRACER_PRIVILEGES_H */
