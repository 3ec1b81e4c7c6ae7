// SPDX-License-Identifier: GPL-2.0-only
/* bpf_reset.c — kept BPF maps put back as a cold load leaves them, for a warm start (tracer/bpf_warm.c). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/log.h"
#include "memtrack.skel.h"
#include "tracer/bpf_reset.h"

#define RESET_ROUND8(n) (((n) + 7) & ~(size_t)7)

/* Every key read first, then deleted: a delete during the walk would restart it at the first bucket. */
static int hash__empty(int fd, size_t key_size)
{
	size_t n = 0, cap = 64;
	char *keys = malloc(cap * key_size), *grown;
	int err = 0;

	while (keys && !bpf_map_get_next_key(fd, n ? keys + (n - 1) * key_size : NULL, keys + n * key_size)) {
		if (++n < cap)
			continue;
		grown = realloc(keys, 2 * cap * key_size);
		if (!grown)
			break;
		keys = grown;
		cap *= 2;
	}
	if (!keys || (n == cap) || errno != ENOENT)
		err = keys ? -errno : -ENOMEM;
	for (size_t i = 0; !err && i < n; i++)
		if (bpf_map_delete_elem(fd, keys + i * key_size) && errno != ENOENT)
			err = -errno;
	free(keys);
	return err;
}

/* Every element zeroed in one batch (a per-CPU one on each CPU). */
static int array__zero(int fd, size_t value_size, uint32_t n, bool per_cpu)
{
	int ncpus = per_cpu ? libbpf_num_possible_cpus() : 1;
	size_t vsize = per_cpu ? RESET_ROUND8(value_size) * (ncpus > 0 ? ncpus : 1) : value_size;
	uint32_t *keys = malloc(n * sizeof(*keys)), count = n;
	void *zeros = calloc(n, vsize);
	int err = 0;

	if (!keys || !zeros || ncpus <= 0) {
		err = ncpus <= 0 ? ncpus : -ENOMEM;
		goto free_bufs;
	}
	for (uint32_t i = 0; i < n; i++)
		keys[i] = i;
	if (bpf_map_update_batch(fd, keys, zeros, &count, NULL) || count != n)
		err = errno ? -errno : -EIO;
free_bufs:
	free(zeros);
	free(keys);
	return err;
}

/* call_slots (5.5 MB) by the program slots_zero, in the kernel: a batch update from user space copies each
 * element in, and a mapping of it faults each page in (bench/README.md). */
static int slots__zero(int prog)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	if (prog < 0)
		return -ENOENT;
	return bpf_prog_test_run_opts(prog, &opts) ? -errno : 0;
}

/* The records a past run left unread are skipped: the consumer is where the producer is. */
static int ring__skip(int fd)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long *cons = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), *prod;
	int err = 0;

	if (cons == MAP_FAILED)
		return -errno;
	prod = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, page);
	if (prod == MAP_FAILED)
		err = -errno;
	else
		__atomic_store_n(cons, __atomic_load_n(prod, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
	if (prod != MAP_FAILED)
		munmap(prod, page);
	munmap(cons, page);
	return err;
}

/* The image the cold load would write (the tracer's settings in it), as the next session: past task storage
 * entries carry another number. */
static int bss__rewrite(struct bpf_map *map, int fd)
{
	size_t size, vsize = bpf_map__value_size(map);
	const void *image = bpf_map__initial_value(map, &size);
	struct memtrack_bpf__bss *b = calloc(1, vsize > sizeof(*b) ? vsize : sizeof(*b));
	uint32_t zero = 0, session;
	int err = 0;

	if (!b || !image || size < sizeof(*b) || size > vsize) {
		err = b ? -EINVAL : -ENOMEM;
		goto free_b;
	}
	if (bpf_map_lookup_elem(fd, &zero, b)) {
		err = -errno;
		goto free_b;
	}
	session = b->live_session + 1 ? b->live_session + 1 : 1;	/* 0 is a cold load's */
	memset(b, 0, vsize);
	memcpy(b, image, size);
	b->live_session = session;
	if (bpf_map_update_elem(fd, &zero, b, 0))
		err = -errno;
free_b:
	free(b);
	return err;
}

/* Frozen at load: it must be what obj's settings would make. */
static int rodata__same(struct bpf_map *map, int fd)
{
	size_t size, vsize = bpf_map__value_size(map);
	const void *image = bpf_map__initial_value(map, &size);
	void *now = calloc(1, vsize);
	uint32_t zero = 0;
	int err = 0;

	if (!now || !image || size != vsize)
		err = now ? -EINVAL : -ENOMEM;
	else if (bpf_map_lookup_elem(fd, &zero, now))
		err = -errno;
	else if (memcmp(now, image, size))
		err = -ESTALE;
	free(now);
	return err;
}

static int map__reset(struct bpf_map *map, int fd, int zero_prog)
{
	const char *name = bpf_map__name(map);

	switch (bpf_map__type(map)) {
	case BPF_MAP_TYPE_HASH:
		return hash__empty(fd, bpf_map__key_size(map));
	case BPF_MAP_TYPE_ARRAY:
		if (strstr(name, ".rodata"))
			return rodata__same(map, fd);
		if (strstr(name, ".bss"))
			return bss__rewrite(map, fd);
		if (strchr(name, '.'))	/* .data, .kconfig: none in the object today */
			return -EOPNOTSUPP;
		if (!strcmp(name, "call_slots"))
			return slots__zero(zero_prog);
		return array__zero(fd, bpf_map__value_size(map), bpf_map__max_entries(map), false);
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		return array__zero(fd, bpf_map__value_size(map), bpf_map__max_entries(map), true);
	case BPF_MAP_TYPE_RINGBUF:
		return ring__skip(fd);
	case BPF_MAP_TYPE_TASK_STORAGE:
		return 0;	/* entries of past sessions are taken as new by BPF (calls.bpf.h) */
	default:
		return -EOPNOTSUPP;
	}
}

int mt_bpf_reset__maps(struct bpf_object *obj, const int *fds, int zero_prog)
{
	struct bpf_map *map;
	size_t i = 0;
	int err;

	bpf_object__for_each_map(map, obj) {
		err = map__reset(map, fds[i++], zero_prog);
		if (err) {
			pr_debug("warm start: cannot reset the BPF map %s: %s\n", bpf_map__name(map), strerror(-err));
			return err;
		}
	}
	return 0;
}

int mt_bpf_reset__map_bss(struct bpf_map *map)
{
	size_t size, page = sysconf(_SC_PAGESIZE);
	void *at = (void *)bpf_map__initial_value(map, &size);
	size_t len = (RESET_ROUND8(bpf_map__value_size(map)) * bpf_map__max_entries(map) + page - 1) & ~(page - 1);

	if (!at)
		return -EINVAL;
	if (mmap(at, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, bpf_map__fd(map), 0) == MAP_FAILED)
		return -errno;
	return 0;
}
