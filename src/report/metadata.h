/* SPDX-License-Identifier: GPL-2.0-only */
/* metadata.h — DIR/memory_metadata.json, from the model and the command lines the tracer read. */
#ifndef MEMTRACK_METADATA_H
#define MEMTRACK_METADATA_H

#include <stddef.h>
#include <stdint.h>

#include "common/json.h"
#include "model/model.h"

/* `record --label KEY=VALUE`: what the user says the recording is (commit, branch, benchmark, host), for exports. */
#define MT_LABELS_MAX 32
#define MT_LABEL_KEY_MAX 64		/* [A-Za-z0-9_.-]+ */
#define MT_LABEL_VALUE_MAX 256		/* printable ASCII, may be empty */

struct mt_label {
	char *key, *value;
};

struct mt_labels {
	struct mt_label v[MT_LABELS_MAX];
	size_t n;			/* in the order given */
};

/* One --label argument "KEY=VALUE" into l (cmd names the command in messages). 0, or -EINVAL after one error line,
 * or -ENOMEM. */
int mt_labels__add(struct mt_labels *l, const char *cmd, const char *arg);
void mt_labels__release(struct mt_labels *l);
/* "KEY=VALUE KEY=VALUE", malloc'd ("" for none); NULL + errno (ENOMEM). */
char *mt_labels__text(const struct mt_labels *l);
/* The key "labels" and the object {"KEY": "VALUE", ...}, in l's order. */
void mt_labels__json(struct mt_json *j, const struct mt_labels *l);

/* Where the command lines come from: NUL-separated as in /proc/PID/cmdline, NULL when unknown. */
struct mt_metadata_src {
	const char *(*cmdline)(void *ctx, uint32_t pid, size_t *len);
	void *ctx;
	/* NULL, or the one read at pid's k-th exec stop (0: the first), NULL past the last: "exec_cmdlines" */
	const char *(*exec_cmdline)(void *ctx, uint32_t pid, size_t k, size_t *len);
	const struct mt_labels *labels;	/* NULL or none: no "labels" key */
};

#define MT_METADATA_FILE "memory_metadata.json"

/* The JSON written to fd, a file the caller made (and whose fd this closes). Times are nanoseconds since the session
 * started, like the report's. 0 or -errno. */
int mt_metadata__write(int fd, const struct mt_model *m, const struct mt_metadata_src *src);

/* The command lines of a DIR/memory_metadata.json, read back. */
struct mt_metadata;
/* NULL + errno: ENOENT (none), EBADMSG (not the JSON this file's writer makes), ENOMEM, ... */
struct mt_metadata *mt_metadata__read(const char *dir);
/* The same for the DIR of a command line's path (DIR or DIR/events.mtz), for a command that goes on without it:
 * NULL when it is missing, or after a warning ending in without ("the rows have no command lines"). */
struct mt_metadata *mt_metadata__load(const char *path, const char *without);
/*
 * The command line it has for pid (the last entry with that pid; the tracer reads one a pid, at its last exec
 * stop), *argc strings then NULL; NULL when it has none (md may be NULL).
 */
const char *const *mt_metadata__cmdline(const struct mt_metadata *md, uint32_t pid, size_t *argc);
/*
 * The command line read at one of pid's exec stops, back from its last (0: the last), from the last entry with that
 * pid: each image's own. NULL when the file has none that far back (older files have no "exec_cmdlines").
 */
const char *const *mt_metadata__exec_cmdline(const struct mt_metadata *md, uint32_t pid, size_t back, size_t *argc);
/* Its "labels" (none in files of earlier writers, or recorded without --label); md may be NULL. Never NULL. */
const struct mt_labels *mt_metadata__labels(const struct mt_metadata *md);
/* Its "realtime_ns": when the session started, in nanoseconds since the Unix epoch; 0 when unknown (md may be NULL). */
uint64_t mt_metadata__realtime_ns(const struct mt_metadata *md);
void mt_metadata__free(struct mt_metadata *md);

#endif /* MEMTRACK_METADATA_H */
