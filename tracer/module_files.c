/* modules.c — module metadata for offline analysis: a file record per file, and with --stacks the ELF files too. */
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
	char dir[PATH_MAX];	/* DIR/modules */
	bool copy;
	struct module *v;
	size_t n, cap;
};

struct mt_module_files *mt_module_files__new(const char *dir, bool copy)
{
	struct mt_module_files *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	snprintf(m->dir, sizeof(m->dir), "%s/modules", dir);
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

/* The copy is its owner's alone and never wider than the original: a module copy only goes with stack bytes. */
static mode_t file__copy_mode(int in)
{
	struct stat sb;

	return fstat(in, &sb) ? 0600 : (sb.st_mode & 0600);
}

static int file__copy(int in, const char *to)
{
	char buf[1 << 16];
	ssize_t n, w;
	off_t off = 0;
	int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, file__copy_mode(in)), err = 0;

	if (out < 0)
		return errno == EEXIST ? 0 : -errno;
	while ((n = pread(in, buf, sizeof(buf), off)) > 0) {
		w = write(out, buf, n);
		if (w != n) {
			err = w < 0 ? -errno : -ENOSPC;	/* a short write: the disk is full */
			break;
		}
		off += n;
	}
	if (n < 0)
		err = -errno;
	if (close(out) && !err)
		err = -errno;
	if (err)
		unlink(to);
	return err;
}

/* DIR/modules/<build-id>, or dev<dev>-ino<ino> without one; <build-id>.debug when the system has debug info. */
static int module__copy(const struct mt_module_files *m, const struct module *mod)
{
	char hex[2 * MT_BUILD_ID_MAX + 1], to[PATH_MAX + 64], debug[PATH_MAX];
	int fd, err;

	mt_elf__build_id_hex(mod->rec.build_id, mod->rec.build_id_len, hex);
	if (hex[0])
		snprintf(to, sizeof(to), "%s/%s", m->dir, hex);
	else
		snprintf(to, sizeof(to), "%s/dev%llu-ino%llu", m->dir, (unsigned long long)mod->rec.dev,
			 (unsigned long long)mod->rec.ino);
	err = file__copy(mod->fd, to);
	if (err || !hex[0])
		return err;
	snprintf(debug, sizeof(debug), MT_DEBUG_DIR "/%.2s/%s.debug", hex, hex + 2);
	fd = open(debug, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	snprintf(to, sizeof(to), "%s/%s.debug", m->dir, hex);
	err = file__copy(fd, to);
	close(fd);
	return err;
}

int mt_module_files__finish(struct mt_module_files *m)
{
	size_t i;
	int err = 0, e;

	if (!m)
		return 0;
	if (m->n && mkdir(m->dir, 0755) && errno != EEXIST)
		err = -errno;
	for (i = 0; i < m->n; i++) {
		e = err ? 0 : module__copy(m, &m->v[i]);
		if (e)
			pr_warn("cannot copy %s into %s: %s\n", m->v[i].rec.path, m->dir, strerror(-e));
		close(m->v[i].fd);
	}
	free(m->v);
	free(m);
	return err;
}
