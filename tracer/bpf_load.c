// SPDX-License-Identifier: GPL-2.0-only
/* bpf_load.c — one BPF object's maps made once and shared by the instances that load its programs side by side. */
#include <errno.h>
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

/* Map i of every instance is map i of the same ELF. */
static int maps__reuse(struct bpf_object *const *objs, size_t n, size_t i, int fd)
{
	struct bpf_map *map;
	size_t j, k;
	int err;

	for (j = 0; j < n; j++) {
		k = 0;
		bpf_object__for_each_map(map, objs[j])
			if (k++ == i)
				break;
		err = map ? bpf_map__reuse_fd(map, fd) : -ENOENT;
		if (err)
			return err;
	}
	return 0;
}

int mt_bpf_load__share_maps(struct bpf_object *const *objs, size_t n)
{
	struct btf *btf = object__btf_loaded(objs[0]);
	struct bpf_map *map;
	size_t i = 0;
	int fd, err = 0;

	bpf_object__for_each_map(map, objs[0]) {
		fd = map__create(map, btf ? btf__fd(btf) : -1);
		err = fd < 0 ? fd : maps__reuse(objs, n, i++, fd);
		if (fd >= 0)
			close(fd);
		if (err) {
			pr_err("cannot create the BPF map %s: %s\n", bpf_map__name(map), strerror(-err));
			break;
		}
	}
	btf__free(btf);
	return err;
}
