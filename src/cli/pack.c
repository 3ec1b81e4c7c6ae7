// SPDX-License-Identifier: GPL-2.0-only
/* pack.c — `memtrack pack DIR`: the module files DIR references copied into DIR/modules, to read DIR elsewhere. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/args.h"
#include "common/array.h"
#include "common/elf.h"
#include "common/filecopy.h"
#include "common/log.h"
#include "common/plural.h"
#include "report/report.h"
#include "unwind/module.h"
#include "stacks/stacks.h"
#include "tracer/outdir.h"

#define PACK_USAGE "memtrack pack DIR"
#define PACK_MODE 0600	/* as record's copies: the user's alone, never wider than the original */

static void pack_usage(FILE *f)
{
	fputs("usage: " PACK_USAGE "\n"
	      "Copies the module files (executables, libraries, and their debug files) a run recorded with --stacks\n"
	      "references into DIR/modules, so that DIR can be analysed on another machine. record keeps them once\n"
	      "per machine in the module cache ($MEMTRACK_CACHE, else ~/.cache/memtrack) unless it was given\n"
	      "--portable. Each is looked for in DIR/modules, the cache, then at its original path when its build-id\n"
	      "and content match. Running it again copies nothing more. A file withheld at recording (its user may\n"
	      "not read it) is not copied.\n"
	      "  -h, --help  this text\n"
	      "Exit status: 0; 1 when some module was found nowhere (each is named) or DIR is damaged;\n"
	      "2 when DIR cannot be read or written, a cache entry cannot be read, or the command line is wrong.\n", f);
}

struct devino {
	uint64_t dev, ino;
};

struct pack {
	const char *dir;
	struct mt_modules *ms;
	struct devino *v;	/* the modules, in the order the artifact names them */
	size_t n, cap;
	int mdir;		/* DIR/modules */
	struct stat owner;	/* DIR's: the copies become its owner's when root packs */
	size_t missing, withheld, copied;
};

static int pack__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	const struct mt_file *f = (const struct mt_file *)h;
	struct pack *p = ctx;
	struct mt_module *m;

	if (h->type != MT_REC_FILE)
		return 0;
	m = mt_modules__get(p->ms, f->dev, f->ino);
	if (!m || mt_array__grow((void **)&p->v, &p->cap, p->n, sizeof(*p->v)))
		return -ENOMEM;
	if (!m->described)
		p->v[p->n++] = (struct devino){ f->dev, f->ino };
	return mt_modules__describe_rec(p->ms, h);
}

/* Whether DIR/modules/name is the very file chosen (found: m->file or m->debug_file): opened without following a
 * link, its build-id and content checked. */
static bool pack__is_entry(const struct pack *p, const char *found, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/" MT_MODULES_SUBDIR "/%s", p->dir, name);
	return found && !strcmp(found, path);
}

/*
 * fd into DIR/modules/name (atomically: a pack cut short leaves no partial copy behind), then DIR's owner's. An entry
 * there already counts when it is the verified file found; anything else under that name (a symlink, other content)
 * is said and replaced: the link goes, never followed.
 */
static int pack__copy(struct pack *p, int fd, const char *found, const char *name)
{
	struct stat st;
	int err;

	if (!fstatat(p->mdir, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (pack__is_entry(p, found, name))
			return 0;
		pr_warn("pack: %s/" MT_MODULES_SUBDIR "/%s is not the module recorded (%s): replaced by %s\n", p->dir,
			name, S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISREG(st.st_mode) ? "other content" :
			"not a regular file", found);
		if (unlinkat(p->mdir, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0))
			return -errno;
	}
	err = mt_filecopy__copy(fd, p->mdir, name, PACK_MODE, true, geteuid() == 0 ? &p->owner : NULL);
	p->copied += !err;
	return err;
}

/* One module and its debug file, wherever they are found. 0, or -errno after the error line (exit 2). */
static int pack__module(struct pack *p, struct mt_module *m)
{
	char hex[2 * MT_BUILD_ID_MAX + 1], name[2 * MT_BUILD_ID_MAX + 16];
	int err;

	mt_elf__build_id_hex(m->build_id, m->build_id_len, hex);
	if (m->withheld) {	/* root may read it; the user DIR is for may not: the recording kept it from them */
		pr_warn("pack: %s (build-id %s): withheld at recording, its user may not read it: not copied\n",
			m->path[0] ? m->path : m->name, hex[0] ? hex : "none");
		p->withheld++;
		return 0;
	}
	err = mt_module__find(m);
	if (err == -ENOENT) {
		pr_err("pack: %s (build-id %s): not in %s/" MT_MODULES_SUBDIR ", the module cache or at its path\n",
		       m->path[0] ? m->path : m->name, hex[0] ? hex : "none", p->dir);
		p->missing++;
		return 0;
	}
	if (err) {
		pr_err("pack: %s: its entry in the module cache %s cannot be read: %s\n", m->path, m->cache,
		       strerror(-err));
		return err;
	}
	snprintf(name, sizeof(name), "%s", hex[0] ? hex : m->devino_name);
	err = pack__copy(p, m->fd, m->file, name);
	snprintf(name, sizeof(name), "%s.debug", hex);
	if (!err && m->debug_fd >= 0)
		err = pack__copy(p, m->debug_fd, m->debug_file, name);
	if (err)
		pr_err("pack: cannot copy %s into %s/" MT_MODULES_SUBDIR ": %s\n", m->file, p->dir, strerror(-err));
	return err;
}

/* DIR/modules, made 0700 when missing and given to DIR's owner by its descriptor (outdir.c: never what the owner
 * put at its name meanwhile): its fd, or -errno after the error line. */
static int pack__modules_dir(struct pack *p)
{
	int dfd = open(p->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;
	struct mt_outdir d = { .fd = dfd };
	bool made;

	if (dfd < 0 || fstat(dfd, &p->owner))
		err = -errno;
	if (!err) {
		d.uid = p->owner.st_uid;
		d.gid = p->owner.st_gid;
		d.give = geteuid() == 0;
		p->mdir = mt_outdir__mkdir(&d, dfd, MT_MODULES_SUBDIR, 0700, &made);
		err = p->mdir < 0 ? p->mdir : 0;
	}
	if (dfd >= 0)
		close(dfd);
	if (err)
		pr_err("pack: %s/" MT_MODULES_SUBDIR ": %s\n", p->dir, strerror(-err));
	return err;
}

static int pack__all(struct pack *p)
{
	char withheld[64] = "";
	size_t i;
	int err = pack__modules_dir(p);

	for (i = 0; !err && i < p->n; i++)
		err = pack__module(p, mt_modules__get(p->ms, p->v[i].dev, p->v[i].ino));
	if (p->mdir >= 0)
		close(p->mdir);
	if (p->withheld)
		snprintf(withheld, sizeof(withheld), ", %zu withheld", p->withheld);
	if (!err)
		printf("%s: %zu %s of %zu in %s/" MT_MODULES_SUBDIR " (%zu %s now%s)\n", p->dir,
		       p->n - p->missing - p->withheld, mt_plural__of(p->n - p->missing - p->withheld, "module",
		       "modules"), p->n, p->dir, p->copied, mt_plural__of(p->copied, "file copied", "files copied"),
		       withheld);
	return err;
}

/* 0, 1 (a module missing, or DIR damaged), 2 (DIR, DIR/modules or the cache unusable). */
static int pack__run(struct pack *p)
{
	struct mt_read_status st = { 0 };
	int err, ret, stacks = mt_stacks__probe(p->dir);

	if (!stacks) {
		printf("%s: recorded without --stacks: no module to pack\n", p->dir);
		return 0;
	}
	p->ms = mt_modules__new(p->dir);
	if (!p->ms) {
		pr_err("pack: %s\n", strerror(errno));
		return 2;
	}
	err = mt_artifact__read(p->dir, pack__on_record, p, &st);
	ret = mt_report__exit_status(p->dir, err, &st, "pack");
	if (ret < 2 && pack__all(p))
		ret = 2;
	if (ret < 2 && p->missing)
		ret = 1;
	return ret;
}

int mt_cmd_pack(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct pack p = { .mdir = -1 };
	const char *arg;
	char *dir;
	int ret = mt_args__parse("pack", argc, argv, opts, false, NULL, NULL, pack_usage);

	if (!ret)
		ret = mt_args__one_dir("pack", PACK_USAGE, argc, argv, &arg);
	if (ret)
		return ret > 0 ? 0 : 2;
	dir = mt_stacks__dir_of(arg);
	if (!dir) {
		pr_err("pack: %s\n", strerror(ENOMEM));
		return 2;
	}
	p.dir = dir;
	ret = pack__run(&p);
	if (fflush(stdout) && ret < 2) {
		pr_err("pack: writing to stdout: %s\n", strerror(errno));
		ret = 2;
	}
	mt_modules__free(p.ms);
	free(p.v);
	free(dir);
	return ret;
}
