// SPDX-License-Identifier: GPL-2.0-only
/* oracle.c — liboracle.so: an LD_PRELOAD counter of allocator calls per process image, apart from memtrack. */
/*
 * The rules memtrack's model states (docs/REPORT.md, "Semantics" and "The oracle"), counted at the source: each
 * outermost allocator call of a thread (a thread-local depth: calls made inside another are not counted) under one
 * lock that also covers the real call, so the order of calls is the order counted. A fork child starts with a copy
 * of its parent's table (fork copies it) and counts it as inherited; an exec ends an image (its file keeps what was
 * live); a vfork child counts apart, in its parent's memory, and writes DIR/PID.vfork before it execs; a
 * posix_spawn parent writes DIR/PID.spawn for its child. It never allocates: tables are mmap'd, image files are
 * mapped shared (current at every call, whatever ends the image), the environment comes from /proc/self/environ.
 *   MT_ORACLE_DIR       where the files go (without it the library only forwards)
 *   MT_ORACLE_SKIP_EXE  an executable the library only forwards in (memtrack itself, when preloaded with it)
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "oracle.h"

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void __libc_free(void *p);
void *__libc_memalign(size_t align, size_t size);
void *__libc_valloc(size_t size);
void *__libc_pvalloc(size_t size);
extern char **environ;

#define PATH_LEN 512
#define TABLE_MIN (1u << 14)
#define VFORK_MAX 256

struct ent {
	uint64_t addr;		/* 0: empty */
	uint64_t size;
};

struct table {
	struct ent *e;
	size_t mask;
	size_t count;
};

enum mode { UNINIT, ACTIVE, PASSIVE };
enum call { SKIP, COUNT, VFORK_CHILD };

static struct {
	atomic_flag lock;
	enum mode mode;
	pid_t pid;			/* whose image img is */
	struct oracle_image cur;	/* the counts, in the process's own memory (a fork child has them as they
					 * were at the fork, whatever its parent does since) */
	struct oracle_image *img;	/* DIR/PID.SEQ mapped shared: cur, copied after every call */
	struct table t;
	char dir[PATH_LEN];
} st = { .lock = ATOMIC_FLAG_INIT };

/* A vfork child (or a clone without atfork handlers): its parent's table and image are left alone. */
static struct {
	pid_t pid;
	struct oracle_image img;
	uint64_t addr[VFORK_MAX], size[VFORK_MAX];	/* its blocks; size UINT64_MAX: an inherited one it freed */
	int n;
} vf;

static __thread int depth __attribute__((tls_model("initial-exec")));

static int (*real_posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
			       char *const[], char *const[]);
static int (*real_posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *,
				const posix_spawnattr_t *, char *const[], char *const[]);
static int (*real_execvpe)(const char *, char *const[], char *const[]);

static pid_t pid_now(void)
{
	return syscall(SYS_getpid);
}

static void lock(void)
{
	while (atomic_flag_test_and_set_explicit(&st.lock, memory_order_acquire))
		__builtin_ia32_pause();
}

static void unlock(void)
{
	atomic_flag_clear_explicit(&st.lock, memory_order_release);
}

/* ---- the live table: open addressing, backward-shift deletion, in mmap'd memory ---- */

static size_t home(const struct table *t, uint64_t h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 31;
	return h & t->mask;
}

static size_t slot(const struct table *t, uint64_t addr)
{
	size_t i;

	for (i = home(t, addr); t->e[i].addr && t->e[i].addr != addr; i = (i + 1) & t->mask)
		;
	return i;
}

static bool table_grow(struct table *t)
{
	size_t cap = t->e ? (t->mask + 1) * 2 : TABLE_MIN, i;
	struct ent *e = mmap(NULL, cap * sizeof(*e), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct table old = *t;

	if (e == MAP_FAILED)
		return false;
	t->e = e;
	t->mask = cap - 1;
	for (i = 0; old.e && i <= old.mask; i++)
		if (old.e[i].addr)
			t->e[slot(t, old.e[i].addr)] = old.e[i];
	if (old.e)
		munmap(old.e, (old.mask + 1) * sizeof(*e));
	return true;
}

/* 1: addr was live (*old its size), 0: added, -1: no room. */
static int table_put(struct table *t, uint64_t addr, uint64_t size, uint64_t *old)
{
	size_t i;

	if ((t->count + 1) * 10 > (t->mask + 1) * 7 && !table_grow(t))
		return -1;
	i = slot(t, addr);
	if (t->e[i].addr) {
		*old = t->e[i].size;
		t->e[i].size = size;
		return 1;
	}
	t->e[i].addr = addr;
	t->e[i].size = size;
	t->count++;
	return 0;
}

static const struct ent *table_find(const struct table *t, uint64_t addr)
{
	const struct ent *e = &t->e[slot(t, addr)];

	return e->addr ? e : NULL;
}

static bool table_del(struct table *t, uint64_t addr, uint64_t *size)
{
	size_t i = slot(t, addr), j, h;

	if (!t->e[i].addr)
		return false;
	*size = t->e[i].size;
	for (j = (i + 1) & t->mask; t->e[j].addr; j = (j + 1) & t->mask) {
		h = home(t, t->e[j].addr);
		/* the entry at j moves into the hole unless its home lies cyclically in (i, j] */
		if (i < j ? (h <= i || h > j) : (h <= i && h > j)) {
			t->e[i] = t->e[j];
			i = j;
		}
	}
	t->e[i].addr = 0;
	t->count--;
	return true;
}

/* ---- files ---- */

static char *put_str(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	*p = 0;
	return p;
}

static char *put_u(char *p, uint64_t v)
{
	char buf[24];
	int n = 0;

	do
		buf[n++] = '0' + v % 10;
	while (v /= 10);
	while (n)
		*p++ = buf[--n];
	*p = 0;
	return p;
}

static void image_init(struct oracle_image *img, uint32_t pid, uint32_t ppid, uint32_t kind)
{
	ssize_t n;

	memset(img, 0, sizeof(*img));
	img->magic = ORACLE_MAGIC;
	img->pid = pid;
	img->ppid = ppid;
	img->kind = kind;
	n = readlink("/proc/self/exe", img->exe, sizeof(img->exe) - 1);
	img->exe[n > 0 ? n : 0] = 0;
}

/* DIR/PID.SEQ with the next free SEQ, mapped shared. */
static struct oracle_image *image_create(uint32_t kind)
{
	char path[PATH_LEN + 64], *p = put_u(put_str(put_str(path, st.dir), "/"), st.pid);
	struct oracle_image *img;
	uint32_t seq;
	int fd = -1;

	for (seq = 0; seq < 4096 && fd < 0; seq++) {
		put_u(put_str(p, "."), seq);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			return NULL;
	}
	if (fd < 0 || ftruncate(fd, sizeof(*img))) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	img = mmap(NULL, sizeof(*img), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (img == MAP_FAILED)
		return NULL;
	image_init(&st.cur, st.pid, getppid(), kind == ORACLE_FRESH && seq > 1 ? ORACLE_EXEC : kind);
	st.cur.seq = seq - 1;
	*img = st.cur;
	return img;
}

/* DIR/PID.suffix, written whole (a vfork or spawn child's image before its exec). */
static void image_write(const struct oracle_image *img, const char *suffix)
{
	char path[PATH_LEN + 64];
	int fd;

	put_str(put_u(put_str(put_str(path, st.dir), "/"), img->pid), suffix);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, img, sizeof(*img)) != sizeof(*img))
		unlink(path);	/* the driver then misses the image: a difference it reports */
	close(fd);
}

/* ---- per process state ---- */

static bool env_get(const char *env, size_t len, const char *name, char *out, size_t outlen)
{
	size_t i, n = strlen(name), l;

	for (i = 0; i < len; i += l + 1) {
		l = strnlen(env + i, len - i);
		if (l > n && env[i + n] == '=' && !memcmp(env + i, name, n) && l - n - 1 < outlen) {
			memcpy(out, env + i + n + 1, l - n - 1);
			out[l - n - 1] = 0;
			return true;
		}
	}
	return false;
}

static void atfork_prepare(void)
{
	lock();
}

static void atfork_parent(void)
{
	unlock();
}

/* A fork child: the table is its copy; a new image file counts what it inherited. */
static void atfork_child(void)
{
	uint64_t n = st.cur.live_allocations, bytes = st.cur.live_bytes;

	if (st.mode == ACTIVE) {
		munmap(st.img, sizeof(*st.img));
		st.pid = pid_now();
		st.img = image_create(ORACLE_FORK);
		if (st.img) {
			st.cur.inherited_allocations = st.cur.live_allocations = n;
			st.cur.inherited_bytes = st.cur.live_bytes = st.cur.peak_live_bytes = bytes;
			*st.img = st.cur;
		} else {
			st.mode = PASSIVE;
		}
	}
	unlock();
}

/* The first counted call of an image (the lock held): active, or only forwarding. */
static void init(void)
{
	static char env[1 << 16];
	char skip[PATH_LEN] = "", exe[PATH_LEN] = "";
	ssize_t n, len = 0;
	int fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC);

	st.mode = PASSIVE;
	while (fd >= 0 && len < (ssize_t)sizeof(env) && (n = read(fd, env + len, sizeof(env) - len)) > 0)
		len += n;
	if (fd >= 0)
		close(fd);
	if (!env_get(env, len, "MT_ORACLE_DIR", st.dir, sizeof(st.dir)))
		return;
	env_get(env, len, "MT_ORACLE_SKIP_EXE", skip, sizeof(skip));
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	if (skip[0] && !strcmp(skip, exe))
		return;
	st.pid = pid_now();
	if (!table_grow(&st.t))
		return;
	st.img = image_create(ORACLE_FRESH);
	if (!st.img)
		return;
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	st.mode = ACTIVE;
}

static enum call call_begin(void)
{
	pid_t pid;

	if (depth++)
		return SKIP;
	lock();
	if (st.mode == UNINIT)
		init();
	if (st.mode != ACTIVE) {
		unlock();
		return SKIP;
	}
	pid = pid_now();
	if (pid == st.pid)
		return COUNT;
	if (vf.pid != pid) {
		memset(&vf, 0, sizeof(vf));
		vf.pid = pid;
		image_init(&vf.img, pid, st.pid, ORACLE_VFORK);
		vf.img.inherited_allocations = vf.img.live_allocations = st.cur.live_allocations;
		vf.img.inherited_bytes = vf.img.live_bytes = vf.img.peak_live_bytes = st.cur.live_bytes;
	}
	return VFORK_CHILD;
}

static void call_end(enum call c)
{
	if (c == COUNT)
		*st.img = st.cur;
	if (c != SKIP)
		unlock();
	depth--;
}

/* ---- counting ---- */

static int vfork_find(uint64_t addr)
{
	int i;

	for (i = 0; i < vf.n; i++)
		if (vf.addr[i] == addr)
			return i;
	return -1;
}

static void vfork_alloc(uint64_t addr, uint64_t size)
{
	int i = vfork_find(addr);

	if (i < 0 && vf.n == VFORK_MAX) {
		vf.img.lost++;
		return;
	}
	if (i < 0)
		i = vf.n++;
	vf.addr[i] = addr;
	vf.size[i] = size;
	vf.img.allocations++;
	vf.img.allocated_bytes += size;
	vf.img.live_allocations++;
	vf.img.live_bytes += size;
	if (vf.img.live_bytes > vf.img.peak_live_bytes)
		vf.img.peak_live_bytes = vf.img.live_bytes;
}

static void vfork_free(uint64_t addr)
{
	const struct ent *e = table_find(&st.t, addr);
	int i = vfork_find(addr);
	uint64_t size;

	if (i >= 0 && vf.size[i] != UINT64_MAX) {
		size = vf.size[i];
		vf.size[i] = UINT64_MAX;
	} else if (i < 0 && e && vf.n < VFORK_MAX) {
		size = e->size;
		vf.addr[vf.n] = addr;
		vf.size[vf.n++] = UINT64_MAX;
	} else {
		vf.img.unknown_frees++;
		return;
	}
	vf.img.frees++;
	vf.img.freed_bytes += size;
	vf.img.live_allocations--;
	vf.img.live_bytes -= size;
}

static void count_alloc(enum call c, void *p, uint64_t size)
{
	struct oracle_image *img = &st.cur;
	uint64_t old;
	int r;

	if (c == SKIP)
		return;
	if (!p) {
		(c == VFORK_CHILD ? &vf.img : img)->failed++;
		return;
	}
	if (c == VFORK_CHILD) {
		vfork_alloc((uintptr_t)p, size);
		return;
	}
	r = table_put(&st.t, (uintptr_t)p, size, &old);
	if (r < 0) {
		img->lost++;
		return;
	}
	if (r) {
		img->live_allocations--;	/* its free was not seen */
		img->live_bytes -= old;
	}
	img->allocations++;
	img->allocated_bytes += size;
	img->live_allocations++;
	img->live_bytes += size;
	if (img->live_bytes > img->peak_live_bytes)
		img->peak_live_bytes = img->live_bytes;
}

static void count_free(enum call c, void *p)
{
	struct oracle_image *img = &st.cur;
	uint64_t size;

	if (c == SKIP || !p)
		return;
	if (c == VFORK_CHILD) {
		vfork_free((uintptr_t)p);
		return;
	}
	if (!table_del(&st.t, (uintptr_t)p, &size)) {
		img->unknown_frees++;
		return;
	}
	img->frees++;
	img->freed_bytes += size;
	img->live_allocations--;
	img->live_bytes -= size;
}

/* ---- the allocator entry points ---- */

void *malloc(size_t size)
{
	enum call c = call_begin();
	void *p = __libc_malloc(size);

	count_alloc(c, p, size);
	call_end(c);
	return p;
}

void *calloc(size_t n, size_t size)
{
	enum call c = call_begin();
	void *p = __libc_calloc(n, size);

	count_alloc(c, p, n * size);
	call_end(c);
	return p;
}

/* realloc(p, n): a free of p and an allocation of the result (moving or not); realloc(p, 0) frees p only. */
static void *realloc_counted(void *p, size_t size)
{
	enum call c = call_begin();
	void *q = __libc_realloc(p, size);

	if (p && (q || !size))
		count_free(c, p);
	if (q || size || !p)
		count_alloc(c, q, size);
	call_end(c);
	return q;
}

void *realloc(void *p, size_t size)
{
	return realloc_counted(p, size);
}

void *reallocarray(void *p, size_t n, size_t size)
{
	enum call c;

	if (size && n > SIZE_MAX / size) {
		c = call_begin();
		count_alloc(c, NULL, 0);
		call_end(c);
		errno = ENOMEM;
		return NULL;
	}
	return realloc_counted(p, n * size);
}

void free(void *p)
{
	enum call c = call_begin();

	__libc_free(p);
	count_free(c, p);
	call_end(c);
}

static void *aligned_counted(size_t align, size_t size, void *(*fn)(size_t, size_t), void *(*fn1)(size_t))
{
	enum call c = call_begin();
	void *p = fn ? fn(align, size) : fn1(size);

	count_alloc(c, p, size);
	call_end(c);
	return p;
}

void *memalign(size_t align, size_t size)
{
	return aligned_counted(align, size, __libc_memalign, NULL);
}

/* glibc 2.36 makes aligned_alloc memalign. */
void *aligned_alloc(size_t align, size_t size)
{
	return aligned_counted(align, size, __libc_memalign, NULL);
}

void *valloc(size_t size)
{
	return aligned_counted(0, size, NULL, __libc_valloc);
}

void *pvalloc(size_t size)
{
	return aligned_counted(0, size, NULL, __libc_pvalloc);
}

int posix_memalign(void **out, size_t align, size_t size)
{
	enum call c = call_begin();
	void *p = NULL;
	int err = EINVAL;

	if (align && !(align % sizeof(void *)) && !(align & (align - 1))) {
		p = __libc_memalign(align, size);
		err = p ? 0 : ENOMEM;
	}
	if (p)
		*out = p;
	count_alloc(c, p, size);
	call_end(c);
	return err;
}

/* ---- exec and spawn: the images a vfork or spawn child had before its exec ---- */

static void before_exec(void)
{
	enum call c = call_begin();

	if (c == VFORK_CHILD)
		image_write(&vf.img, ".vfork");
	call_end(c);
}

int execve(const char *path, char *const argv[], char *const envp[])
{
	before_exec();
	return syscall(SYS_execve, path, argv, envp);
}

int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
	before_exec();
	if (!real_execvpe)
		real_execvpe = dlsym(RTLD_NEXT, "execvpe");
	return real_execvpe(file, argv, envp);
}

int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* The parent's live blocks when it spawns: the child's, until its exec discards them. */
static void spawn_note(enum call c, int err, const pid_t *pid, uint64_t n, uint64_t bytes)
{
	struct oracle_image img;

	if (c != COUNT || err)
		return;
	image_init(&img, *pid, st.pid, ORACLE_SPAWN);
	img.inherited_allocations = img.live_allocations = n;
	img.inherited_bytes = img.live_bytes = img.peak_live_bytes = bytes;
	image_write(&img, ".spawn");
}

typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
			char *const[], char *const[]);

static int spawn_counted(spawn_fn real, pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	enum call c = call_begin();
	uint64_t n = c == COUNT ? st.cur.live_allocations : 0, bytes = c == COUNT ? st.cur.live_bytes : 0;
	pid_t local;
	int err;

	call_end(c);
	if (!pid)
		pid = &local;
	err = real(pid, path, fa, attr, argv, envp);
	spawn_note(c, err, pid, n, bytes);
	return err;
}

int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
		char *const argv[], char *const envp[])
{
	if (!real_posix_spawn)
		real_posix_spawn = dlsym(RTLD_NEXT, "posix_spawn");
	return spawn_counted(real_posix_spawn, pid, path, fa, attr, argv, envp);
}

int posix_spawnp(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
		 char *const argv[], char *const envp[])
{
	if (!real_posix_spawnp)
		real_posix_spawnp = dlsym(RTLD_NEXT, "posix_spawnp");
	return spawn_counted(real_posix_spawnp, pid, path, fa, attr, argv, envp);
}

/*
 * At load: the image's file exists even when it makes no call (an exec after it is then seen), and the real
 * functions are resolved before any thread could be inside the loader with this library's lock held.
 */
__attribute__((constructor)) static void oracle_load(void)
{
	lock();
	if (st.mode == UNINIT)
		init();
	unlock();
	real_posix_spawn = dlsym(RTLD_NEXT, "posix_spawn");
	real_posix_spawnp = dlsym(RTLD_NEXT, "posix_spawnp");
	real_execvpe = dlsym(RTLD_NEXT, "execvpe");
}
