// SPDX-License-Identifier: GPL-2.0-only
/* unwind_index.c — DIR/unwind.mtz as a table by stack hash, for the readers that prefer DWARF chains. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/log.h"
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

/* Why the file cannot be used, or NULL when it can: whole, finished, and made from this events.mtz. */
static const char *index_problem(const struct mt_unwind_index *ix, const char *dir, int err,
				 const struct mt_read_status *st)
{
	char path[4096];
	struct stat sb;

	if (err)
		return st->reason[0] ? st->reason : strerror(-err);
	if (!ix->complete)
		return "incomplete";
	snprintf(path, sizeof(path), "%s/" MT_ARTIFACT_FILE, dir);
	if (stat(path, &sb) || (uint64_t)sb.st_size != ix->events_bytes)
		return "made from another recording";
	return NULL;
}

int mt_unwind_index__read(const char *dir, struct mt_unwind_index **out)
{
	struct mt_read_status st;
	struct mt_unwind_index *ix;
	const char *problem;
	char path[4096];
	struct stat sb;
	int err;

	*out = NULL;
	snprintf(path, sizeof(path), "%s/" MT_UNWIND_FILE, dir);
	if (stat(path, &sb))
		return 0;
	ix = calloc(1, sizeof(*ix));
	if (!ix)
		return -ENOMEM;
	err = mt_artifact__read(path, index_record, ix, &st);
	if (err == -ENOMEM) {
		mt_unwind_index__free(ix);
		return err;
	}
	problem = index_problem(ix, dir, err, &st);
	if (problem) {
		pr_debug("%s: %s: unwinding again\n", path, problem);
		mt_unwind_index__free(ix);
		return 0;
	}
	*out = ix;
	return 0;
}

const struct mt_unwind_rec *mt_unwind_index__find(const struct mt_unwind_index *ix, uint64_t hash)
{
	uint64_t *u = ix ? mt_u64map__find(&ix->by_hash, hash) : NULL;

	return u ? (const struct mt_unwind_rec *)(uintptr_t)*u : NULL;
}
