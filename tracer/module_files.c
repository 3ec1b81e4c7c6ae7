/* module_files.c — module metadata for offline analysis: a file record per file, and with --stacks the ELF files. */
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
#include "common/log.h"
#include "tracer/module_files.h"

#define MT_DEBUG_DIR "/usr/lib/debug/.build-id"

struct module {
	int fd;			/* kept open: the file may be gone (deleted, unmapped) when the copies are made */
	struct mt_file rec;
};

struct mt_module_files {
	int dir_fd;		/* DIR (the caller's): DIR/modules is made and written through it */
	bool copy;
	struct module *v;
	size_t n, cap;
};

struct mt_module_files *mt_module_files__new(int dir_fd, bool copy)
{
	struct mt_module_files *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->dir_fd = dir_fd;
	m->copy = copy;
	return m;
}

void mt_module_files__add(struct mt_module_files *m, struct mt_writer *w, const char *open_path,
			  const struct mt_attach *rec, uint8_t kind)
{
	struct mt_file f = { .hdr = rec->hdr };
	int len;

	f.hdr.type = MT_REC_FILE;
	f.hdr.size = sizeof(f);
	f.dev = rec->dev;
	f.ino = rec->ino;
	f.kind = kind;
	memcpy(f.path, rec->path, sizeof(f.path));
	len = mt_elf__file_build_id(open_path, f.build_id, sizeof(f.build_id));
	f.build_id_len = len > 0 ? len : 0;
	mt_writer__append(w, &f, sizeof(f));
	if (!m->copy || mt_array__grow((void **)&m->v, &m->cap, m->n, sizeof(*m->v)))
		return;
	m->v[m->n].fd = open(open_path, O_RDONLY | O_CLOEXEC);
	m->v[m->n].rec = f;
	if (m->v[m->n].fd >= 0)
		m->n++;
}

#define MODULE_MODE 0600	/* copies sit beside stack bytes that may hold secrets: the user's alone */

/* All of buf, or -errno (a short write is the disk being full). */
static int write__full(int fd, const char *buf, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -ENOSPC;
		buf += w;
		n -= w;
	}
	return 0;
}

/*
 * A new file in mdir (O_EXCL, no symlink followed), readable by no one its original was not: 0600 at most, and
 * never wider than the original's mode. A file of that name is there already: the same build-id, copied.
 */
static int file__copy(int in, int mdir, const char *name)
{
	char buf[1 << 16];
	struct stat st;
	ssize_t n;
	off_t off = 0;
	int out, err = 0;

	if (fstat(in, &st))
		return -errno;
	out = openat(mdir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, st.st_mode & MODULE_MODE);
	if (out < 0)
		return errno == EEXIST ? 0 : -errno;
	while (!err && (n = pread(in, buf, sizeof(buf), off)) > 0) {
		err = write__full(out, buf, n);
		off += n;
	}
	if (!err && n < 0)
		err = -errno;
	if (close(out) && !err)
		err = -errno;
	if (err)
		unlinkat(mdir, name, 0);
	return err;
}

/* DIR/modules/<build-id>, or dev<dev>-ino<ino> without one; <build-id>.debug when the system has debug info. */
static int module__copy(int mdir, const struct module *mod)
{
	char hex[2 * MT_BUILD_ID_MAX + 1], name[2 * MT_BUILD_ID_MAX + 64], debug[PATH_MAX];
	int fd, err;

	mt_elf__build_id_hex(mod->rec.build_id, mod->rec.build_id_len, hex);
	if (hex[0])
		snprintf(name, sizeof(name), "%s", hex);
	else
		snprintf(name, sizeof(name), "dev%llu-ino%llu", (unsigned long long)mod->rec.dev,
			 (unsigned long long)mod->rec.ino);
	err = file__copy(mod->fd, mdir, name);
	if (err || !hex[0])
		return err;
	snprintf(debug, sizeof(debug), MT_DEBUG_DIR "/%.2s/%s.debug", hex, hex + 2);
	fd = open(debug, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	snprintf(name, sizeof(name), "%s.debug", hex);
	err = file__copy(fd, mdir, name);
	close(fd);
	return err;
}

/* DIR/modules, made (0700: it holds private copies) or there already; its fd, or -errno. */
static int modules__dir(const struct mt_module_files *m)
{
	int fd;

	if (mkdirat(m->dir_fd, "modules", 0700) && errno != EEXIST)
		return -errno;
	fd = openat(m->dir_fd, "modules", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Each file copied while the disk has room: a full disk (or quota) stops the copies, and says how many were made. */
static void modules__copy_all(const struct mt_module_files *m, int mdir)
{
	size_t i, copied = 0;
	int err = 0;

	for (i = 0; i < m->n && err != -ENOSPC && err != -EDQUOT; i++) {
		err = module__copy(mdir, &m->v[i]);
		copied += !err;
		if (err)
			pr_warn("cannot copy %s into DIR/modules: %s\n", m->v[i].rec.path, strerror(-err));
	}
	if (err == -ENOSPC || err == -EDQUOT)
		pr_warn("DIR/modules keeps %zu of the %zu module files: %s\n", copied, m->n, strerror(-err));
}

int mt_module_files__finish(struct mt_module_files *m)
{
	int mdir = 0;
	size_t i;

	if (!m)
		return 0;
	if (m->n)
		mdir = modules__dir(m);
	if (m->n && mdir >= 0)
		modules__copy_all(m, mdir);
	for (i = 0; i < m->n; i++)
		close(m->v[i].fd);
	if (m->n && mdir >= 0)
		close(mdir);
	free(m->v);
	free(m);
	return mdir < 0 ? mdir : 0;
}
