/* SPDX-License-Identifier: GPL-2.0-only */
/* filter.h — what a report or dump is narrowed to: processes by pid, images by exe, a time window. */
#ifndef MEMTRACK_FILTER_H
#define MEMTRACK_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MT_FILTER_END UINT64_MAX	/* to_ns of a window that runs to the end of the recording */

/*
 * Zero-initialised with to_ns = MT_FILTER_END: everything. mt_filter__option grows the arrays (mt_filter__release
 * frees them; the exe strings are the caller's); a filter must outlive the model or dump that uses it.
 */
struct mt_filter {
	uint32_t *pids;			/* only these processes (npids 0: every one) */
	size_t npids, cap_pids;
	const char **exes;		/* only images whose exe is one of these: a path ('/' in it) or a basename */
	size_t nexes, cap_exes;
	uint64_t from_ns;		/* the time window [from_ns, to_ns), nanoseconds since the session start */
	uint64_t to_ns;
	const char *between[2];		/* --between A B: the window from the first mark A to the next mark B, in the
					 * records' order (from_ns and to_ns are the model's then); NULL: none */
};

/* Some pid or exe is asked for. */
bool mt_filter__selects(const struct mt_filter *f);
/* A window narrower than the whole recording. */
bool mt_filter__has_window(const struct mt_filter *f);
/* pid passes --pid (f may be NULL). */
bool mt_filter__pid(const struct mt_filter *f, uint32_t pid);
/* An image of exe passes --exe (f may be NULL); one without exe is matched by its comm. */
bool mt_filter__exe(const struct mt_filter *f, const char *exe, const char *comm);
/* Both. */
bool mt_filter__matches(const struct mt_filter *f, uint32_t pid, const char *exe, const char *comm);
/* rel_ns (since the session start) lies in the window. */
bool mt_filter__in_window(const struct mt_filter *f, uint64_t rel_ns);
/*
 * The seconds given to cmd's option opt ("2", "0.25", ".5"; no sign, no exponent): nanoseconds into *ns, else one
 * error line and -EINVAL.
 */
int mt_filter__seconds(const char *cmd, const char *opt, const char *arg, uint64_t *ns);
/*
 * One of cmd's --pid P (repeatable), --exe NAME (repeatable), --from T, --to T, opt naming it ("--pid"): 0, or
 * -EINVAL after one error line, -ENOMEM.
 */
int mt_filter__option(struct mt_filter *f, const char *cmd, const char *opt, const char *arg);
/* --between A B (the labels of `mark` lines): 0, or -EINVAL after one error line. */
int mt_filter__between(struct mt_filter *f, const char *cmd, const char *a, const char *b);
/* rec is the mark of a `mark LABEL` line (MT_REC_MARK) with that label. */
struct mt_rec_hdr;
bool mt_filter__is_mark(const struct mt_rec_hdr *rec, const char *label);
/* After the options: the window is not empty. 0, or -EINVAL after one error line. */
int mt_filter__check(const struct mt_filter *f, const char *cmd);
void mt_filter__release(struct mt_filter *f);

#endif /* MEMTRACK_FILTER_H */
