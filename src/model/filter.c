// SPDX-License-Identifier: GPL-2.0-only
/* filter.c — the pid, exe and time-window filters of report and dump. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/memtrack.h"
#include "common/args.h"
#include "common/array.h"
#include "common/log.h"
#include "model/filter.h"

bool mt_filter__selects(const struct mt_filter *f)
{
	return f && (f->npids || f->nexes);
}

bool mt_filter__has_window(const struct mt_filter *f)
{
	return f && (f->from_ns || f->to_ns != MT_FILTER_END || f->between[0]);
}

static bool exe_is(const char *want, const char *exe, const char *comm)
{
	const char *base;

	if (!exe[0])
		return comm && !strcmp(want, comm);
	if (strchr(want, '/'))
		return !strcmp(want, exe);
	base = strrchr(exe, '/');
	return !strcmp(want, base ? base + 1 : exe);
}

bool mt_filter__pid(const struct mt_filter *f, uint32_t pid)
{
	size_t i;

	for (i = 0; f && i < f->npids; i++)
		if (f->pids[i] == pid)
			return true;
	return !f || !f->npids;
}

bool mt_filter__exe(const struct mt_filter *f, const char *exe, const char *comm)
{
	size_t i;

	for (i = 0; f && i < f->nexes; i++)
		if (exe_is(f->exes[i], exe, comm))
			return true;
	return !f || !f->nexes;
}

bool mt_filter__matches(const struct mt_filter *f, uint32_t pid, const char *exe, const char *comm)
{
	return mt_filter__pid(f, pid) && mt_filter__exe(f, exe, comm);
}

bool mt_filter__in_window(const struct mt_filter *f, uint64_t rel_ns)
{
	return !f || (rel_ns >= f->from_ns && rel_ns < f->to_ns);
}

int mt_filter__seconds(const char *cmd, const char *opt, const char *arg, uint64_t *ns)
{
	uint64_t whole = 0, frac = 0, scale = 1000000000;
	const char *p = arg;

	for (; *p >= '0' && *p <= '9'; p++) {
		if (whole > (UINT64_MAX / 1000000000 - 9) / 10)
			goto bad;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++) {
			scale /= 10;
			frac += (uint64_t)(*p - '0') * scale;	/* digits past the nanosecond add 0 */
		}
	}
	if (*p || p == arg || !strcmp(arg, "."))
		goto bad;
	*ns = whole * 1000000000 + frac;
	return 0;
bad:
	pr_err("%s: %s takes seconds since the session start (decimals allowed), not '%s'\n", cmd, opt, arg);
	return -EINVAL;
}

int mt_filter__option(struct mt_filter *f, const char *cmd, const char *opt, const char *arg)
{
	unsigned long long pid;

	if (!strcmp(opt, "--from"))
		return mt_filter__seconds(cmd, opt, arg, &f->from_ns);
	if (!strcmp(opt, "--to"))
		return mt_filter__seconds(cmd, opt, arg, &f->to_ns);
	if (!strcmp(opt, "--exe")) {
		if (!*arg) {
			pr_err("%s: --exe takes an executable's path or name, not ''\n", cmd);
			return -EINVAL;
		}
		if (mt_array__grow((void **)&f->exes, &f->cap_exes, f->nexes, sizeof(*f->exes)))
			return -ENOMEM;
		f->exes[f->nexes++] = arg;
		return 0;
	}
	if (mt_args__number("pid", arg, 1, UINT32_MAX, false, &pid))
		return -EINVAL;
	if (mt_array__grow((void **)&f->pids, &f->cap_pids, f->npids, sizeof(*f->pids)))
		return -ENOMEM;
	f->pids[f->npids++] = (uint32_t)pid;
	return 0;
}

int mt_filter__between(struct mt_filter *f, const char *cmd, const char *a, const char *b)
{
	if (!a || !b || !*a || !*b || strlen(a) > MT_MARK_LABEL_MAX || strlen(b) > MT_MARK_LABEL_MAX) {
		pr_err("%s: --between takes two mark labels of 1 to %d bytes (the LABEL of `mark LABEL` lines)\n", cmd,
		       MT_MARK_LABEL_MAX);
		return -EINVAL;
	}
	f->between[0] = a;
	f->between[1] = b;
	return 0;
}

bool mt_filter__is_mark(const struct mt_rec_hdr *rec, const char *label)
{
	const struct mt_mark *k = (const void *)rec;
	size_t n = strlen(label);

	return rec->type == MT_REC_MARK && rec->size >= sizeof(*k) && k->kind == MT_MARK_LABEL && k->len == n &&
	       !memcmp(k->label, label, n);
}

int mt_filter__check(const struct mt_filter *f, const char *cmd)
{
	if (f->between[0] && (f->from_ns || f->to_ns != MT_FILTER_END)) {
		pr_err("%s: --between and --from/--to each make the window: one or the other\n", cmd);
		return -EINVAL;
	}
	if (f->from_ns < f->to_ns)
		return 0;
	pr_err("%s: --from %" PRIu64 ".%06" PRIu64 " s is not before --to %" PRIu64 ".%06" PRIu64 " s: the window is "
	       "empty\n", cmd, f->from_ns / 1000000000, f->from_ns % 1000000000 / 1000, f->to_ns / 1000000000,
	       f->to_ns % 1000000000 / 1000);
	return -EINVAL;
}

void mt_filter__release(struct mt_filter *f)
{
	free(f->pids);
	free(f->exes);
	f->pids = NULL;
	f->exes = NULL;
	f->npids = f->nexes = f->cap_pids = f->cap_exes = 0;
}
