// SPDX-License-Identifier: GPL-2.0-only
/* module_files.c — module metadata for offline analysis: a file record per file, and with --stacks the ELF files
 * kept: in the module cache by build-id, or copied into DIR/modules (--portable, or a file without a build-id). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "artifact/artifact.h"
#include "bpf/memtrack.h"
#include "common/array.h"
#include "common/elf.h"
#include "common/filecopy.h"
#include "common/log.h"
#include "common/modcache.h"
#include "common/sha256.h"
#include "tracer/module_files.h"
#include "tracer/outdir.h"
#include "tracer/user.h"

#define MT_DEBUG_DIR "/usr/lib/debug/.build-id"

struct module {
	int fd;			/* kept open: the file may be gone (deleted, unmapped) when the copies are made */
	bool cached;		/* its build-id entry is in the module cache: DIR/modules needs no copy */
	struct mt_file rec;
};

struct mt_module_files {
	const struct mt_outdir *out;	/* DIR (the caller's): DIR/modules is made and written through its fd */
	enum mt_module_keep keep;
	bool as_user;		/* the cache is user's and written as user: sudo's user, or --user */
	struct mt_user user;	/* a copy, groups included */
	struct module *v;
	size_t n, cap;
};

struct mt_module_files *mt_module_files__new(const struct mt_outdir *out, enum mt_module_keep keep,
					     const struct mt_user *user)
{
	struct mt_module_files *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->out = out;
	m->keep = keep;
	m->as_user = user && user->set;
	if (m->as_user) {
		m->user = *user;
		m->user.groups = malloc((user->ngroups ? user->ngroups : 1) * sizeof(gid_t));
		if (!m->user.groups) {
			free(m);
			return NULL;
		}
		memcpy(m->user.groups, user->groups, user->ngroups * sizeof(gid_t));
	}
	return m;
}

/* With modules kept: the content's hash, so that readers know a copy for the file; and whether the user may have
 * a copy at all (C11: an execute-only program is not theirs to read). */
static void file__check(const struct mt_module_files *m, int fd, struct mt_file *f)
{
	if (!mt_sha256__fd(fd, f->sha256))
		f->flags |= MT_FILE_HASHED;
	if (mt_user__may_read(&m->user, fd))
		return;
	f->flags |= MT_FILE_WITHHELD;
	pr_warn("%s: withheld from DIR and the module cache: uid %u may not read it (its path and build-id are "
		"recorded)\n", f->path, (unsigned int)m->user.uid);
}

void mt_module_files__add(struct mt_module_files *m, struct mt_writer *w, int fd, const struct mt_attach *rec,
			  uint8_t kind)
{
	struct mt_file f = { .hdr = rec->hdr };
	int len;

	f.hdr.type = MT_REC_FILE;
	f.hdr.size = sizeof(f);
	f.dev = rec->dev;
	f.ino = rec->ino;
	f.kind = kind;
	memcpy(f.path, rec->path, sizeof(f.path));
	len = mt_elf__fd_build_id(fd, f.build_id, sizeof(f.build_id));
	f.build_id_len = len > 0 ? len : 0;
	if (m->keep != MT_MODULES_NONE)
		file__check(m, fd, &f);
	mt_writer__append(w, &f, sizeof(f));
	if (m->keep == MT_MODULES_NONE || (f.flags & MT_FILE_WITHHELD) ||
	    mt_array__grow((void **)&m->v, &m->cap, m->n, sizeof(*m->v)))
		return;
	m->v[m->n].fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	m->v[m->n].rec = f;
	m->v[m->n].cached = false;
	if (m->v[m->n].fd >= 0)
		m->n++;
}

#define MODULE_MODE 0600	/* copies sit beside stack bytes that may hold secrets: the user's alone */

/* One copy, created through DIR's descriptors and given to DIR's user (outdir.c); one there already is the same
 * content, named by it. */
static int module__copy_one(const struct mt_module_files *m, int mdir, const char *name, int in)
{
	int err = mt_outdir__copy(m->out, mdir, name, in, MODULE_MODE);

	return err == -EEXIST ? 0 : err;
}

/* The system's debug file of build-id hex, when the user may read it (opened as memtrack: the check is the user's).
 * Its descriptor, or -1. */
static int debug__open(const struct mt_module_files *m, const char *hex)
{
	char debug[PATH_MAX];
	struct stat st;
	int fd;

	snprintf(debug, sizeof(debug), MT_DEBUG_DIR "/%.2s/%s.debug", hex, hex + 2);
	fd = open(debug, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && mt_user__may_read(&m->user, fd))
		return fd;
	close(fd);
	return -1;
}

/* DIR/modules/<build-id>, or dev<dev>-ino<ino> without one; <build-id>.debug when the system has debug info. */
static int module__copy(const struct mt_module_files *m, int mdir, const struct module *mod)
{
	char hex[2 * MT_BUILD_ID_MAX + 1], name[2 * MT_BUILD_ID_MAX + 64];
	int fd, err;

	mt_elf__build_id_hex(mod->rec.build_id, mod->rec.build_id_len, hex);
	if (hex[0])
		snprintf(name, sizeof(name), "%s", hex);
	else
		snprintf(name, sizeof(name), "dev%llu-ino%llu", (unsigned long long)mod->rec.dev,
			 (unsigned long long)mod->rec.ino);
	err = module__copy_one(m, mdir, name, mod->fd);
	if (err || !hex[0])
		return err;
	fd = debug__open(m, hex);
	if (fd < 0)
		return 0;
	snprintf(name, sizeof(name), "%s.debug", hex);
	err = module__copy_one(m, mdir, name, fd);
	close(fd);
	return err;
}

/* DIR/modules, made (0700: it holds private copies) or there already; its fd, or -errno. */
static int modules__dir(const struct mt_module_files *m)
{
	bool made;

	return mt_outdir__mkdir(m->out, m->out->fd, "modules", 0700, &made);
}

/* Each file not cached copied while the disk has room: a full disk (or quota) stops the copies, and says how many
 * were made. */
static void modules__copy_all(const struct mt_module_files *m, int mdir, size_t want)
{
	size_t i, copied = 0;
	int err = 0;

	for (i = 0; i < m->n && err != -ENOSPC && err != -EDQUOT; i++) {
		if (m->v[i].cached)
			continue;
		err = module__copy(m, mdir, &m->v[i]);
		copied += !err;
		if (err)
			pr_warn("cannot copy %s into DIR/modules: %s\n", m->v[i].rec.path, strerror(-err));
	}
	if (err == -ENOSPC || err == -EDQUOT)
		pr_warn("DIR/modules keeps %zu of the %zu module files: %s\n", copied, want, strerror(-err));
}

/* This thread's file accesses as the cache's user, when there is one (the kernel checks what the user may do). */
static int fs__enter(const struct mt_module_files *m, struct mt_user_fs *saved)
{
	saved->groups = NULL;
	return m->as_user ? mt_user__fs_enter(&m->user, saved) : 0;
}

static void fs__leave(const struct mt_module_files *m, struct mt_user_fs *saved)
{
	if (m->as_user)
		mt_user__fs_leave(saved);
}

/*
 * The module and its system debug file (opened before, as memtrack: it may be readable by root only) as cache
 * entries, written as the cache's user: under sudo or --user the cache is in that user's home, where root would
 * follow whatever symlinks the user made; as the user, the kernel checks what the user may do.
 */
static int module__cache(const struct mt_module_files *m, int cache_fd, const struct module *mod)
{
	char hex[2 * MT_BUILD_ID_MAX + 1];
	struct mt_user_fs saved;
	int fd, err;

	mt_elf__build_id_hex(mod->rec.build_id, mod->rec.build_id_len, hex);
	fd = debug__open(m, hex);
	err = fs__enter(m, &saved);
	if (!err && (mod->rec.flags & MT_FILE_HASHED) &&
	    mt_modcache__evict_other(cache_fd, hex, MT_MODCACHE_FILE, mod->rec.sha256) == 1)
		pr_warn("the module cache's entry of %s (build-id %s) was not the module (other content): replaced\n",
			mod->rec.path, hex);
	if (!err)
		err = mt_modcache__insert(cache_fd, hex, MT_MODCACHE_FILE, mod->fd);
	if (!err && fd >= 0)
		err = mt_modcache__insert(cache_fd, hex, MT_MODCACHE_DEBUG, fd);
	fs__leave(m, &saved);
	if (fd >= 0)
		close(fd);
	return err;
}

/* The cache directory, made as its user when missing; its fd, or -errno with the reason said. */
static int modules__cache_dir(const struct mt_module_files *m)
{
	char cache[PATH_MAX];
	struct mt_user_fs saved;
	int fd = mt_modcache__dir(m->as_user ? &m->user.uid : NULL, cache, sizeof(cache));

	if (fd) {
		pr_warn("no module cache (%s): the modules are copied into DIR/modules\n",
			fd == -ENOENT ? "no home directory" : strerror(-fd));
		return fd;
	}
	fd = fs__enter(m, &saved);
	if (!fd)
		fd = mt_modcache__open(cache);
	fs__leave(m, &saved);
	if (fd < 0)
		pr_warn("no module cache (%s: %s): the modules are copied into DIR/modules\n", cache, strerror(-fd));
	return fd;
}

/* Each file with a build-id into the cache; those it cannot take are copied into DIR. The count left for DIR. */
static size_t modules__cache_all(struct mt_module_files *m)
{
	size_t i, left = m->n;
	int cache_fd = modules__cache_dir(m), err;

	for (i = 0; cache_fd >= 0 && i < m->n; i++) {
		if (!m->v[i].rec.build_id_len)
			continue;
		err = module__cache(m, cache_fd, &m->v[i]);
		m->v[i].cached = !err;
		left -= !err;
		if (err)
			pr_warn("cannot add %s to the module cache: %s: copied into DIR/modules\n", m->v[i].rec.path,
				strerror(-err));
	}
	if (cache_fd >= 0)
		close(cache_fd);
	return left;
}

int mt_module_files__finish(struct mt_module_files *m)
{
	size_t i, left;
	int mdir = 0;

	if (!m)
		return 0;
	left = m->keep == MT_MODULES_CACHE && m->n ? modules__cache_all(m) : m->n;
	if (left)
		mdir = modules__dir(m);
	if (left && mdir >= 0)
		modules__copy_all(m, mdir, left);
	for (i = 0; i < m->n; i++)
		close(m->v[i].fd);
	if (left && mdir >= 0)
		close(mdir);
	free(m->v);
	free(m->user.groups);
	free(m);
	return mdir < 0 ? mdir : 0;
}
