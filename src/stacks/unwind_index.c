// SPDX-License-Identifier: GPL-2.0-only
/* unwind_index.c — DIR/unwind.mtz as a table by stack hash, for the readers that prefer DWARF chains. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "artifact/reader.h"
#include "common/log.h"
#include "common/openreg.h"
#include "stacks/stacks.h"

struct mt_unwind_index {
	struct mt_u64map by_hash;	/* hash → malloc'd copy of its first MT_REC_UNWIND */
	bool complete;			/* MT_REC_UNWIND_END was seen */
	uint64_t events_bytes;
};

struct mt_unwind_index *mt_unwind_index__new(void)
{
	struct mt_unwind_index *ix = calloc(1, sizeof(*ix));

	if (ix)
		ix->complete = true;	/* filled in memory: nothing is missing */
	return ix;
}

int mt_unwind_index__add(struct mt_unwind_index *ix, const struct mt_unwind_rec *u)
{
	void *copy;
	int ret;

	if (u->hdr.size < sizeof(*u) || !mt_unwind_rec__detail(u) || mt_u64map__find(&ix->by_hash, u->hash))
		return 0;
	copy = malloc(u->hdr.size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, u, u->hdr.size);
	ret = mt_u64map__put(&ix->by_hash, u->hash, (uintptr_t)copy, NULL);
	if (ret < 0)
		free(copy);
	return ret < 0 ? ret : 0;
}

static int index_record(const struct mt_rec_hdr *rec, void *ctx)
{
	struct mt_unwind_index *ix = ctx;

	if (rec->type == MT_REC_UNWIND_END && rec->size >= sizeof(struct mt_unwind_end)) {
		ix->complete = true;
		ix->events_bytes = ((const struct mt_unwind_end *)rec)->events_bytes;
		return 0;
	}
	if (rec->type != MT_REC_UNWIND || rec->size < sizeof(struct mt_unwind_rec))
		return 0;
	return mt_unwind_index__add(ix, (const struct mt_unwind_rec *)rec);
}

static void free_rec(uint64_t key, uint64_t val, void *ctx)
{
	(void)key;
	(void)ctx;
	free((void *)(uintptr_t)val);
}

void mt_unwind_index__free(struct mt_unwind_index *ix)
{
	if (!ix)
		return;
	mt_u64map__for_each(&ix->by_hash, free_rec, NULL);
	mt_u64map__release(&ix->by_hash);
	free(ix);
}

/* Why the file cannot be used, or NULL when it can: whole, finished, and made from this events.mtz (in dfd). */
static const char *index_problem(const struct mt_unwind_index *ix, int dfd, int err, const struct mt_read_status *st)
{
	struct stat sb;

	if (err)
		return st->reason[0] ? st->reason : strerror(-err);
	if (!ix->complete)
		return "incomplete";
	if (fstatat(dfd, MT_ARTIFACT_FILE, &sb, AT_SYMLINK_NOFOLLOW) || (uint64_t)sb.st_size != ix->events_bytes)
		return "made from another recording";
	return NULL;
}

/*
 * DIR/unwind.mtz through the one opener of files memtrack did not make: never through a symbolic link, never
 * waiting on a FIFO. Anything there but a regular file is said and unwound again (the new file replaces it). Its
 * descriptor, or -1.
 */
static int index_open(int dfd, const char *path)
{
	struct stat sb;
	char why[64];
	int fd = mt_openreg__at(dfd, MT_UNWIND_FILE, O_NOFOLLOW, &sb);

	if (fd < 0 && fd != -ENOENT)
		pr_warn("%s: %s: not read, unwinding again\n", path, mt_openreg__why(fd, &sb, why, sizeof(why)));
	return fd < 0 ? -1 : fd;
}

/* The index in fd (the reader closes it), kept in *out when it is good. 0 or -ENOMEM. */
static int index_load(int dfd, int fd, const char *path, struct mt_unwind_index **out)
{
	struct mt_unwind_index *ix = calloc(1, sizeof(*ix));
	struct mt_read_status st;
	const char *problem;
	int err;

	if (!ix) {
		close(fd);
		return -ENOMEM;
	}
	err = mt_artifact__read_fd(fd, path, index_record, ix, &st);
	if (err == -ENOMEM) {
		mt_unwind_index__free(ix);
		return err;
	}
	problem = index_problem(ix, dfd, err, &st);
	if (problem) {
		pr_debug("%s: %s: unwinding again\n", path, problem);
		mt_unwind_index__free(ix);
		return 0;
	}
	*out = ix;
	return 0;
}

int mt_unwind_index__read(const char *dir, struct mt_unwind_index **out)
{
	char path[4096];
	int dfd, fd, err = 0;

	*out = NULL;
	snprintf(path, sizeof(path), "%s/" MT_UNWIND_FILE, dir);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	fd = index_open(dfd, path);
	if (fd >= 0)
		err = index_load(dfd, fd, path, out);
	close(dfd);
	return err;
}

const struct mt_unwind_rec *mt_unwind_index__find(const struct mt_unwind_index *ix, uint64_t hash)
{
	uint64_t *u = ix ? mt_u64map__find(&ix->by_hash, hash) : NULL;

	return u ? (const struct mt_unwind_rec *)(uintptr_t)*u : NULL;
}
