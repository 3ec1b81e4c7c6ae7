/* SPDX-License-Identifier: GPL-2.0-only */
/* module_files.h — the files the tree mapped: one MT_REC_FILE each, and with --stacks each kept for symbolizing. */
#ifndef MEMTRACK_TRACER_MODULE_FILES_H
#define MEMTRACK_TRACER_MODULE_FILES_H

#include <stdbool.h>
#include <stdint.h>

struct mt_attach;
struct mt_user;
struct mt_writer;

/* Where the files are kept at the end, for offline symbolizing: copies are 0600 at most, never wider than the
 * original's mode. */
enum mt_module_keep {
	MT_MODULES_NONE,	/* a file record each, nothing kept (no stacks) */
	MT_MODULES_CACHE,	/* in the module cache by build-id (common/modcache.h); DIR/modules what it cannot take */
	MT_MODULES_DIR,		/* copied into DIR/modules by build-id: DIR is self-contained (--portable) */
};

struct mt_module_files;
struct mt_outdir;
/* out: DIR (kept open by the caller until the finish; copies are made through it and given to its user); user:
 * whose cache it is (sudo's or --user's, when set). NULL + errno. */
struct mt_module_files *mt_module_files__new(const struct mt_outdir *out, enum mt_module_keep keep,
					     const struct mt_user *user);
/*
 * The MT_REC_FILE of a file looked at (fd: the mapped file itself, opened once, never again by name; rec: its attach
 * record), and its copy to come. With modules kept the record holds the content's hash, and a file the recording
 * user may not read is withheld (MT_FILE_WITHHELD): recorded, never copied.
 */
void mt_module_files__add(struct mt_module_files *m, struct mt_writer *w, int fd, const struct mt_attach *rec,
			  uint8_t kind);
/* The copies made, and m freed (NULL: nothing). 0 or -errno. */
int mt_module_files__finish(struct mt_module_files *m);

#endif /* MEMTRACK_TRACER_MODULE_FILES_H */
