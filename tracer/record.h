/* SPDX-License-Identifier: GPL-2.0-only */
/* record.h — one recording, from spawning the command to the finished artifact in DIR. */
#ifndef MEMTRACK_TRACER_RECORD_H
#define MEMTRACK_TRACER_RECORD_H

#include "artifact/artifact.h"
#include "tracer/cmdlines.h"
#include "tracer/outdir.h"
#include "tracer/options.h"

#define MT_EXIT_SETUP 2		/* memtrack could not trace */
#define MT_EXIT_STRICT 3	/* --strict: the artifact was written, but events were dropped or an attach failed */

struct mt_record_hooks {
	mt_record_fn tap;	/* each record as the writer takes it, or NULL */
	/* After a finished artifact (not when the command could not run): DIR (files made in it go through
	 * mt_outdir__create), events.mtz's descriptor as memtrack made it (read it back through /proc/self/fd, never
	 * by its name in DIR, which the command could have replaced) and the command lines read. */
	void (*conclude)(void *ctx, const struct mt_outdir *dir, int events_fd, const struct mt_cmdlines *cmdlines);
	void *ctx;
};
/* The command's exit code (128 + N for signal N), 126/127 when it could not run, MT_EXIT_SETUP. */
int mt_record__run(const struct mt_options *o, const struct mt_record_hooks *hooks);

#endif /* MEMTRACK_TRACER_RECORD_H */
