// SPDX-License-Identifier: GPL-2.0-only
/* bpf_warm.c — a warm start: the programs and maps of a cold load kept in bpffs, taken back reset by the next run. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/log.h"
#include "common/sha256.h"
#include "tracer/bpf_reset.h"
#include "tracer/bpf_warm.h"
#include "tracer/closer.h"

#define WARM_BPFFS "/sys/fs/bpf"
#define WARM_ROOT "memtrack"
#define WARM_BPFFS_MAGIC 0xcafe4a11	/* the kernel's BPF_FS_MAGIC */
#define WARM_READY "ready"	/* pinned last: the directory's pins are complete */
#define WARM_MAX 64		/* programs, maps, links */
#define WARM_SLOTS 2		/* sets per setting: a run beside another, or its closer, is warm */
#define WARM_LOCK_WAIT_MS 20	/* for a closer to let a set go when every set is busy (warm__lock) */
#define WARM_HEX 32		/* the hash's hex digits in a set's name, HASH-SLOT */
#define WARM_LOCK_STEP_NS 1000000l

struct mt_bpf_warm {
	int dir;		/* WARM_BPFFS/WARM_ROOT/HASH-SLOT, locked */
	int root;		/* WARM_BPFFS/WARM_ROOT, for the sweep of other settings' sets */
	char hex[2 * 16 + 1];	/* HASH */
	char path[64];		/* /proc/self/fd/DIR: BPF_OBJ_PIN and BPF_OBJ_GET by name in the locked directory */
	bool taken;
	struct bpf_object *obj;	/* taken: whose programs progs[] are */
	int progs[WARM_MAX];	/* taken: by the program's index in the object, -1 when not loaded */
	size_t nprogs;
	int links[WARM_MAX];
	size_t nlinks;
};

/* The object's bytes, in 64-bit words, two lanes: they change with each build, and SHA-256 over 1.5 MB would
 * cost milliseconds of every start. Not against an adversary: only root writes the object and the pins. */
static void hash__object(struct mt_sha256 *h, const void *elf, size_t n)
{
	uint64_t a = 0x9e3779b97f4a7c15ull, b = 0xc2b2ae3d27d4eb4full, w;
	const unsigned char *p = elf;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		a = (a ^ w) * 0x100000001b3ull;
		b = ((b + w) ^ (b >> 29)) * 0xff51afd7ed558ccdull;
	}
	for (; i < n; i++)
		a = (a ^ p[i]) * 0x100000001b3ull;
	mt_sha256__update(h, &n, sizeof(n));
	mt_sha256__update(h, &a, sizeof(a));
	mt_sha256__update(h, &b, sizeof(b));
}

/* What the programs and maps were made from: the object, its .rodata, each program's autoload and attach type,
 * each map's definition, libbpf's version and the boot (the kernel and its BTF: pins do not outlive it). */
static int hash__settings(struct bpf_object *obj, const void *elf, size_t elf_bytes, char hex[2 * 16 + 1])
{
	uint32_t version[2] = { libbpf_major_version(), libbpf_minor_version() };
	struct bpf_program *prog;
	struct bpf_map *map;
	struct mt_sha256 h;
	uint8_t out[MT_SHA256_LEN];
	char boot[64] = "";
	size_t n = 0;
	FILE *f;

	mt_sha256__init(&h);
	hash__object(&h, elf, elf_bytes);
	mt_sha256__update(&h, version, sizeof(version));
	f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (!f || !fgets(boot, sizeof(boot), f)) {
		if (f)
			fclose(f);
		return -ENOENT;
	}
	fclose(f);
	mt_sha256__update(&h, boot, strlen(boot));
	bpf_object__for_each_program(prog, obj) {
		uint32_t v[2] = { bpf_program__autoload(prog), bpf_program__expected_attach_type(prog) };

		mt_sha256__update(&h, bpf_program__name(prog), strlen(bpf_program__name(prog)) + 1);
		mt_sha256__update(&h, v, sizeof(v));
	}
	bpf_object__for_each_map(map, obj) {
		uint32_t v[5] = { bpf_map__type(map), bpf_map__key_size(map), bpf_map__value_size(map),
				  bpf_map__max_entries(map), bpf_map__map_flags(map) };
		const void *image = bpf_map__initial_value(map, &n);

		mt_sha256__update(&h, bpf_map__name(map), strlen(bpf_map__name(map)) + 1);
		mt_sha256__update(&h, v, sizeof(v));
		if (image && strstr(bpf_map__name(map), ".rodata"))
			mt_sha256__update(&h, image, n);
	}
	mt_sha256__final(&h, out);
	for (size_t i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", out[i]);
	return 0;
}

/* A directory memtrack made: root's, 0700, on bpffs (dev: bpffs's device). Anything else is not followed. */
static int dir__ours(int fd, dev_t dev)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 07777) != 0700 || st.st_dev != dev)
		return -EPERM;
	return 0;
}

/* name in at, made 0700 if it is not there (whatever the umask), opened without following a symlink, checked. */
static int dir__make(int at, const char *name, dev_t dev)
{
	bool made = !mkdirat(at, name, 0700);
	int fd, err;

	if (!made && errno != EEXIST)
		return -errno;
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = made && fchmod(fd, 0700) ? -errno : dir__ours(fd, dev);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* WARM_BPFFS/WARM_ROOT, made or checked: its fd, or -errno (said with -v). bpffs is never mounted here. */
static int warm__root(void)
{
	int bpffs = open(WARM_BPFFS, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), root;
	struct statfs sfs;
	struct stat st;

	if (bpffs < 0 || fstatfs(bpffs, &sfs) || fstat(bpffs, &st) || (unsigned long)sfs.f_type != WARM_BPFFS_MAGIC) {
		pr_info("warm start: no bpffs at " WARM_BPFFS ": loading cold\n");
		root = -ENODEV;
		goto close_bpffs;
	}
	root = dir__make(bpffs, WARM_ROOT, st.st_dev);
	if (root < 0)
		pr_info("warm start: " WARM_BPFFS "/" WARM_ROOT " is not memtrack's (%s): loading cold\n",
			strerror(-root));
close_bpffs:
	if (bpffs >= 0)
		close(bpffs);
	return root;
}

/* Set `slot` of the settings hex: WARM_ROOT/HASH-SLOT, made (make) or opened, checked. fd or -errno. */
static int set__open(int root, const char *hex, int slot, bool make)
{
	char name[2 * 16 + 16];
	struct stat st;
	int fd, err;

	if (fstat(root, &st))
		return -errno;
	snprintf(name, sizeof(name), "%s-%d", hex, slot);
	if (make)
		return dir__make(root, name, st.st_dev);
	fd = openat(root, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = dir__ours(fd, st.st_dev);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* A set kept whole (not read under its lock: warm__take checks it again). */
static bool set__ready(int fd)
{
	struct stat st;

	return !fstatat(fd, WARM_READY, &st, AT_SYMLINK_NOFOLLOW);
}

/*
 * One try at a set to lock: a kept one that is free, else a free slot to keep one in (made). Its fd, locked;
 * -EWOULDBLOCK when every slot is busy, another -errno when none is memtrack's.
 */
static int set__lock_one(int root, const char *hex)
{
	int fd, err = -EPERM;

	for (int make = 0; make < 2; make++)
		for (int slot = 0; slot < WARM_SLOTS; slot++) {
			fd = set__open(root, hex, slot, make);
			if (fd < 0) {
				err = make && err != -EWOULDBLOCK ? fd : err;
				continue;
			}
			if (!make && !set__ready(fd)) {
				close(fd);
				continue;
			}
			if (!flock(fd, LOCK_EX | LOCK_NB))
				return fd;
			if (errno == EWOULDBLOCK)
				err = -EWOULDBLOCK;
			close(fd);
		}
	return err;
}

/*
 * A set of these settings, locked for this run (the closer lets the lock go once the run's last link is closed:
 * their detach waits for RCU grace periods, after the run has exited). With every slot busy, it waits up to
 * WARM_LOCK_WAIT_MS for a closer; a set still held is taken to be running. fd or -errno.
 */
static int warm__lock(int root, const char *hex)
{
	struct timespec step = { .tv_nsec = WARM_LOCK_STEP_NS };
	long waited = 0;
	int fd;

	while ((fd = set__lock_one(root, hex)) == -EWOULDBLOCK && waited < WARM_LOCK_WAIT_MS * 1000000l) {
		nanosleep(&step, NULL);
		waited += WARM_LOCK_STEP_NS;
	}
	if (waited && fd >= 0)
		pr_debug("warm start: waited %ld ms for a closer\n", waited / 1000000);
	return fd;
}

/* Every program the run links is a tp_btf one (tracepoint/ ones would need tracefs's perf events). */
static bool object__warmable(struct bpf_object *obj)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj)
		if (bpf_program__autoload(prog) && !strncmp(bpf_program__section_name(prog), "tracepoint/", 11))
			return false;
	return true;
}

int mt_bpf_warm__asked(void)
{
	const char *env = getenv("MEMTRACK_WARM");

	if (!env || !*env || !strcmp(env, "1"))
		return 1;
	if (!strcmp(env, "0"))
		return 0;
	pr_err("MEMTRACK_WARM=%s: expected 0 or 1\n", env);
	return -EINVAL;
}

struct mt_bpf_warm *mt_bpf_warm__open(struct bpf_object *obj, const void *elf, size_t elf_bytes, bool stacks,
				      int closer)
{
	char hex[2 * 16 + 1];
	struct mt_bpf_warm *w;
	int root, fd, err;

	if (mt_bpf_warm__asked() != 1)
		return NULL;
	if (stacks || closer < 0 || !object__warmable(obj)) {
		pr_info("warm start: not with %s: loading cold\n", stacks ? "--stacks" : closer < 0 ?
			 "no closer process" : "--syscall-tracepoints");
		return NULL;
	}
	if (hash__settings(obj, elf, elf_bytes, hex) || (root = warm__root()) < 0)
		return NULL;
	fd = warm__lock(root, hex);
	if (fd < 0) {
		if (fd == -EWOULDBLOCK)
			pr_info("warm start: every set of programs kept is another memtrack's: loading cold\n");
		else
			pr_info("warm start: no set of programs can be kept (%s): loading cold\n", strerror(-fd));
		goto close_root;
	}
	err = mt_closer__keep_warm(closer, fd);	/* the lock until the run's last link is closed */
	if (err) {
		pr_info("warm start: the closer cannot keep the lock (%s): loading cold\n", strerror(-err));
		goto close_fd;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		goto close_fd;
	w->dir = fd;
	w->root = root;
	memcpy(w->hex, hex, sizeof(hex));
	snprintf(w->path, sizeof(w->path), "/proc/self/fd/%d", fd);
	memset(w->progs, -1, sizeof(w->progs));
	return w;
close_fd:
	close(fd);	/* with the closer's copy gone too, the lock is let go */
close_root:
	close(root);
	return NULL;
}

/* The pin's name for a program ('p') or a map ('m'); bpffs refuses dots (memtrack.bss). */
static void pin__name(char *buf, size_t size, char kind, const char *name)
{
	snprintf(buf, size, "%c_%s", kind, name);
	for (char *dot = strchr(buf, '.'); dot; dot = strchr(dot, '.'))
		*dot = '_';
}

/* The object pinned at name in w's directory: a pin root made there (no symlink, nothing foreign). fd or -errno. */
static int pin__get(const struct mt_bpf_warm *w, const char *name)
{
	char path[PATH_MAX * 2];
	struct stat st;
	int fd;

	if (fstatat(w->dir, name, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 077))
		return -EPERM;
	snprintf(path, sizeof(path), "%s/%s", w->path, name);
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

/* A map's pin matches the object's definition (the hash says it should: this says it is). */
static int pin__map_fits(int fd, const struct bpf_map *map)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.type != bpf_map__type(map) || info.key_size != bpf_map__key_size(map) ||
	    info.value_size != bpf_map__value_size(map) || info.max_entries != bpf_map__max_entries(map) ||
	    info.map_flags != bpf_map__map_flags(map))
		return -ESTALE;
	return 0;
}

static int pin__prog_fits(int fd, const struct bpf_program *prog)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.type != bpf_program__type(prog) || strncmp(info.name, bpf_program__name(prog), sizeof(info.name) - 1))
		return -ESTALE;
	return 0;
}

/* Each loaded program's pin, by index. */
static int warm__get_progs(struct mt_bpf_warm *w, struct bpf_object *obj)
{
	struct bpf_program *prog;
	char name[128];
	int fd;

	w->nprogs = 0;
	bpf_object__for_each_program(prog, obj) {
		if (w->nprogs == WARM_MAX)
			return -E2BIG;
		if (!bpf_program__autoload(prog)) {
			w->progs[w->nprogs++] = -1;
			continue;
		}
		pin__name(name, sizeof(name), 'p', bpf_program__name(prog));
		fd = pin__get(w, name);
		w->progs[w->nprogs++] = fd;
		if (fd < 0 || (fd = pin__prog_fits(fd, prog)))
			return fd;
	}
	return 0;
}

/* Each map's pin, checked: fds[] by index. */
static int warm__get_maps(struct mt_bpf_warm *w, struct bpf_object *obj, int *fds, size_t *n)
{
	struct bpf_map *map;
	char name[128];
	int fd;

	*n = 0;
	bpf_object__for_each_map(map, obj) {
		if (*n == WARM_MAX)
			return -E2BIG;
		pin__name(name, sizeof(name), 'm', bpf_map__name(map));
		fd = pin__get(w, name);
		fds[(*n)++] = fd;
		if (fd < 0 || (fd = pin__map_fits(fd, map)))
			return fd;
	}
	return 0;
}

static void fds__close(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	memset(fds, -1, n * sizeof(*fds));
}

/* obj's maps on the pins (libbpf takes copies); the .bss mapped where the skeleton looks. */
static int warm__reuse_maps(struct bpf_object *obj, const int *fds)
{
	struct bpf_map *map;
	size_t i = 0;
	int err;

	bpf_object__for_each_map(map, obj) {
		err = bpf_map__reuse_fd(map, fds[i++]);
		if (!err && strstr(bpf_map__name(map), ".bss"))
			err = mt_bpf_reset__map_bss(map);
		if (err)
			return err;
	}
	return 0;
}

/* The kept program of that name, -1 without one. */
static int warm__prog_named(const struct mt_bpf_warm *w, struct bpf_object *obj, const char *name)
{
	struct bpf_program *prog;
	size_t i = 0;

	bpf_object__for_each_program(prog, obj) {
		if (i < w->nprogs && !strcmp(bpf_program__name(prog), name))
			return w->progs[i];
		i++;
	}
	return -1;
}

int mt_bpf_warm__take(struct mt_bpf_warm *w, struct bpf_object *obj)
{
	int maps[WARM_MAX];
	struct stat st;
	size_t n = 0;
	int err;

	if (fstatat(w->dir, WARM_READY, &st, AT_SYMLINK_NOFOLLOW)) {
		pr_info("warm start: no programs kept yet: loading cold, then keeping them\n");
		return -ENOENT;
	}
	memset(maps, -1, sizeof(maps));
	err = warm__get_progs(w, obj);
	err = err ? : warm__get_maps(w, obj, maps, &n);
	err = err ? : mt_bpf_reset__maps(obj, maps, warm__prog_named(w, obj, "slots_zero"));
	err = err ? : warm__reuse_maps(obj, maps);
	fds__close(maps, n);
	if (err) {
		pr_info("warm start: the programs kept do not serve (%s): loading cold\n", strerror(-err));
		fds__close(w->progs, w->nprogs);
		return err;
	}
	w->taken = true;
	w->obj = obj;
	return 0;
}

/* fd pinned at name in w's directory, in place of whatever memtrack pinned there before. */
static int pin__put(const struct mt_bpf_warm *w, const char *name, int fd)
{
	char path[PATH_MAX * 2];

	if (unlinkat(w->dir, name, 0) && errno != ENOENT)
		return -errno;
	snprintf(path, sizeof(path), "%s/%s", w->path, name);
	return bpf_obj_pin(fd, path) ? -errno : 0;
}

static int warm__pin_all(struct mt_bpf_warm *w, struct bpf_object *const *objs, size_t n)
{
	struct bpf_program *prog;
	struct bpf_map *map;
	char name[128];
	int err = 0;

	for (size_t i = 0; i < n && !err; i++)
		bpf_object__for_each_program(prog, objs[i]) {
			if (bpf_program__fd(prog) < 0)
				continue;
			pin__name(name, sizeof(name), 'p', bpf_program__name(prog));
			err = pin__put(w, name, bpf_program__fd(prog));
			if (err)
				return err;
		}
	bpf_object__for_each_map(map, objs[0]) {
		pin__name(name, sizeof(name), 'm', bpf_map__name(map));
		err = pin__put(w, name, bpf_map__fd(map));
		if (err)
			return err;
	}
	map = bpf_object__next_map(objs[0], NULL);
	return map ? pin__put(w, WARM_READY, bpf_map__fd(map)) : -ENOENT;
}

/* A name memtrack gives a set: WARM_HEX hex digits, '-', a slot. The sets of builds before the slots (a bare
 * hash) are not: those builds pinned by path, which a sweep would race; rm -r or the package's removal takes them. */
static bool set__named(const char *name)
{
	size_t i;

	for (i = 0; i < WARM_HEX && name[i] && strchr("0123456789abcdef", name[i]); i++)
		;
	return i == WARM_HEX && name[i] == '-' && name[i + 1] >= '0' && name[i + 1] < '0' + WARM_SLOTS &&
	       !name[i + 2];
}

/* What memtrack pins in a set: a program, a map, the marker. */
static bool pin__named(const char *name)
{
	return !strncmp(name, "p_", 2) || !strncmp(name, "m_", 2) || !strcmp(name, WARM_READY);
}

/*
 * Set name of another setting, if it is memtrack's, free, and still the directory of that name once locked (another
 * sweep may have removed it and a run made a new one): its marker first (a set cut short is never taken), then its
 * pins, then itself, under its lock.
 */
static void set__remove(int root, const char *name, dev_t dev)
{
	int fd = openat(root, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat locked, named;
	struct dirent *e;
	DIR *d;

	if (fd < 0)
		return;
	if (dir__ours(fd, dev) || flock(fd, LOCK_EX | LOCK_NB) || fstat(fd, &locked) ||
	    fstatat(root, name, &named, AT_SYMLINK_NOFOLLOW) || locked.st_ino != named.st_ino ||
	    locked.st_dev != named.st_dev || !(d = fdopendir(fd))) {
		close(fd);
		return;
	}
	unlinkat(fd, WARM_READY, 0);
	while ((e = readdir(d)))
		if (pin__named(e->d_name) && !fstatat(fd, e->d_name, &named, AT_SYMLINK_NOFOLLOW) &&
		    S_ISREG(named.st_mode) && !named.st_uid)
			unlinkat(fd, e->d_name, 0);
	if (unlinkat(root, name, AT_REMOVEDIR))
		pr_debug("warm start: cannot remove the set %s: %s\n", name, strerror(errno));
	closedir(d);	/* the lock let go */
}

/*
 * The sets other settings kept (another build of memtrack, other options), each removed when no run holds it: a new
 * set replaces them rather than adding to the kernel memory kept. Only what memtrack names and pins is removed.
 */
static void warm__sweep(const struct mt_bpf_warm *w)
{
	int fd = openat(w->root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *e;
	struct stat st;
	DIR *d;

	if (fd < 0 || fstat(fd, &st) || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d)))
		if (set__named(e->d_name) && strncmp(e->d_name, w->hex, WARM_HEX))
			set__remove(w->root, e->d_name, st.st_dev);
	closedir(d);
}

void mt_bpf_warm__pin(struct mt_bpf_warm *w, struct bpf_object *const *objs, size_t n)
{
	int err;

	if (!w || w->taken)
		return;
	if (unlinkat(w->dir, WARM_READY, 0) && errno != ENOENT)
		err = -errno;
	else
		err = warm__pin_all(w, objs, n);
	if (err) {
		pr_info("warm start: cannot keep the programs in " WARM_BPFFS "/" WARM_ROOT "/%s-*: %s\n", w->hex,
			strerror(-err));
		return;
	}
	pr_debug("warm start: programs kept in " WARM_BPFFS "/" WARM_ROOT "/%s-*\n", w->hex);
	warm__sweep(w);
}

bool mt_bpf_warm__taken(const struct mt_bpf_warm *w)
{
	return w && w->taken;
}

int mt_bpf_warm__prog_fd(const struct mt_bpf_warm *w, const struct bpf_program *prog)
{
	const struct bpf_program *p = NULL;
	size_t i = 0;

	if (!mt_bpf_warm__taken(w))
		return bpf_program__fd(prog);
	while ((p = bpf_object__next_program(w->obj, (struct bpf_program *)p)) && p != prog)
		i++;
	return p && i < w->nprogs ? w->progs[i] : -ENOENT;
}

int mt_bpf_warm__attach(struct mt_bpf_warm *w, struct bpf_object *obj)
{
	struct bpf_program *prog;
	size_t i = 0;
	int fd;

	bpf_object__for_each_program(prog, obj) {
		fd = i < w->nprogs ? w->progs[i] : -1;
		i++;
		if (fd < 0 || strncmp(bpf_program__section_name(prog), "tp_btf/", 7))
			continue;
		if (w->nlinks == WARM_MAX)
			return -E2BIG;
		fd = bpf_raw_tracepoint_open(NULL, fd);
		if (fd < 0) {
			fd = -errno;
			pr_err("cannot attach %s: %s\n", bpf_program__name(prog), strerror(-fd));
			return fd;
		}
		w->links[w->nlinks++] = fd;
	}
	return 0;
}

void mt_bpf_warm__free(struct mt_bpf_warm *w, int closer)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nlinks; i++)
		if (closer < 0 || mt_closer__give(closer, w->links[i]))
			close(w->links[i]);
	fds__close(w->progs, w->nprogs);
	close(w->dir);
	close(w->root);
	free(w);
}
