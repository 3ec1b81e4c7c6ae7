// SPDX-License-Identifier: GPL-2.0-only
/* bpf_load.c — one BPF object's maps made in a thread, while libbpf parses the kernel's BTF, for its instances. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "common/log.h"
#include "tracer/bpf_load.h"

/* As libbpf's populate step: the initial image (the .rodata settings), then .rodata frozen for the verifier. */
static int map__populate(struct bpf_map *map, int fd)
{
	const char *name = bpf_map__name(map);
	size_t size;
	const void *image = bpf_map__initial_value(map, &size);
	int zero = 0;

	if (!image || bpf_map_update_elem(fd, &zero, image, 0))
		return image ? -errno : -EINVAL;
	if ((strstr(name, ".rodata") || strstr(name, ".kconfig")) && bpf_map_freeze(fd))
		return -errno;
	return 0;
}

/* The map as libbpf's create step would make it from its definition (sizes as set after open). */
static int map__create(struct bpf_map *map, int btf_fd)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = bpf_map__map_flags(map),
		    .numa_node = bpf_map__numa_node(map), .map_extra = bpf_map__map_extra(map));
	int fd, err;

	if (btf_fd >= 0) {
		opts.btf_fd = btf_fd;
		opts.btf_key_type_id = bpf_map__btf_key_type_id(map);
		opts.btf_value_type_id = bpf_map__btf_value_type_id(map);
	}
	fd = bpf_map_create(bpf_map__type(map), bpf_map__name(map), bpf_map__key_size(map), bpf_map__value_size(map),
			    bpf_map__max_entries(map), &opts);
	if (fd < 0)
		return -errno;
	err = bpf_map__is_internal(map) ? map__populate(map, fd) : 0;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* The object's own BTF (maps of task storage need their key's and value's types), a copy: libbpf loads the
 * original itself for the programs. */
static struct btf *object__btf_loaded(struct bpf_object *obj)
{
	const struct btf *btf = bpf_object__btf(obj);
	const void *raw;
	struct btf *copy;
	__u32 size;

	if (!btf)
		return NULL;
	raw = btf__raw_data(btf, &size);
	copy = raw ? btf__new(raw, size) : NULL;
	if (copy && btf__load_into_kernel(copy)) {
		btf__free(copy);
		copy = NULL;
	}
	return copy;
}

/* The maps made from one instance's definitions, in a thread, while the instances parse the kernel's BTF. */
struct mt_bpf_maps {
	struct bpf_object *obj;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t made;
	bool done;		/* under lock: fds and err are final */
	int err;
	int *fds;		/* map i of obj's, -1 when not made */
	size_t n;
};

static int maps__make(struct mt_bpf_maps *m)
{
	struct btf *btf = object__btf_loaded(m->obj);
	struct bpf_map *map;
	size_t i = 0;
	int fd, err = 0;

	bpf_object__for_each_map(map, m->obj) {
		fd = map__create(map, btf ? btf__fd(btf) : -1);
		if (fd < 0) {
			err = fd;
			pr_err("cannot create the BPF map %s: %s\n", bpf_map__name(map), strerror(-err));
			break;
		}
		m->fds[i++] = fd;
	}
	btf__free(btf);
	return err;
}

static void *maps__thread(void *arg)
{
	struct mt_bpf_maps *m = arg;
	int err = maps__make(m);

	pthread_mutex_lock(&m->lock);
	m->err = err;
	m->done = true;
	pthread_cond_broadcast(&m->made);
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

struct mt_bpf_maps *mt_bpf_load__maps_start(struct bpf_object *obj)
{
	struct mt_bpf_maps *m = calloc(1, sizeof(*m));
	struct bpf_map *map;
	int err;

	if (!m)
		return NULL;
	m->obj = obj;
	bpf_object__for_each_map(map, obj)
		m->n++;
	m->fds = malloc(m->n * sizeof(*m->fds));
	if (!m->fds) {
		free(m);
		return NULL;
	}
	memset(m->fds, -1, m->n * sizeof(*m->fds));
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->made, NULL);
	err = pthread_create(&m->thread, NULL, maps__thread, m);
	if (err) {	/* made here, then */
		m->thread = pthread_self();
		maps__thread(m);
	}
	return m;
}

int mt_bpf_load__maps_reuse(struct mt_bpf_maps *m, struct bpf_object *obj)
{
	struct bpf_map *map;
	size_t i = 0;
	int err;

	pthread_mutex_lock(&m->lock);
	while (!m->done)
		pthread_cond_wait(&m->made, &m->lock);
	err = m->err;
	pthread_mutex_unlock(&m->lock);
	bpf_object__for_each_map(map, obj) {
		if (err)
			break;
		err = i < m->n ? bpf_map__reuse_fd(map, m->fds[i++]) : -ENOENT;
		if (err)
			pr_err("cannot reuse the BPF map %s: %s\n", bpf_map__name(map), strerror(-err));
	}
	return err;
}

void mt_bpf_load__maps_free(struct mt_bpf_maps *m)
{
	if (!m)
		return;
	if (!pthread_equal(m->thread, pthread_self()))
		pthread_join(m->thread, NULL);
	for (size_t i = 0; i < m->n; i++)
		if (m->fds[i] >= 0)
			close(m->fds[i]);
	pthread_cond_destroy(&m->made);
	pthread_mutex_destroy(&m->lock);
	free(m->fds);
	free(m);
}

/* As libbpf's load finds a tp_btf program's target; libbpf keeps the kernel's BTF it parsed for the load. */
int mt_bpf_load__kernel_btf(struct bpf_object *obj)
{
	struct bpf_program *prog;
	const char *sec;
	int err;

	bpf_object__for_each_program(prog, obj) {
		sec = bpf_program__section_name(prog);
		if (!bpf_program__autoload(prog) || strncmp(sec, "tp_btf/", 7))
			continue;
		err = bpf_program__set_attach_target(prog, 0, sec + 7);
		if (err) {
			pr_err("cannot find the kernel's tracepoint %s: %s\n", sec + 7, strerror(-err));
			return err;
		}
	}
	return 0;
}
