// SPDX-License-Identifier: GPL-2.0-only
/* capture.c — the fake tracer: /proc/self/maps → mapping and file records + DIR/modules, stacks at fake_alloc. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "artifact/artifact.h"
#include "capture.h"

#define SEEN_MAX 4096

uint64_t capture_regs[8];

static struct mt_writer *w;
static uint32_t budget;
static uint64_t stack_top;
static uint64_t seen[SEEN_MAX];
static size_t nseen;
static uint8_t rec_buf[65536];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void hdr_init(struct mt_rec_hdr *h, uint16_t type, size_t size)
{
	h->ts_ns = now_ns();
	h->pid = getpid();
	h->tid = getpid();
	h->type = type;
	h->size = size;
}

static int put(const void *rec)
{
	return mt_writer__append(w, rec, ((const struct mt_rec_hdr *)rec)->size);
}

static size_t build_id_of(const char *path, uint8_t *id)
{
	size_t off, next, name_off, desc_off, n = 0;
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Shdr sh;
	GElf_Nhdr nh;
	Elf *elf;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && !n && (scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(data = elf_getdata(scn, NULL)))
			continue;
		for (off = 0; !n && (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0; off = next)
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz <= MT_BUILD_ID_MAX)
				memcpy(id, (char *)data->d_buf + desc_off, n = nh.n_descsz);
	}
	elf_end(elf);
	close(fd);
	return n;
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n;
	int in, out, err = 0;

	in = open(from, O_RDONLY);
	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		close(in);
		return -errno;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			err = -EIO;
	close(in);
	close(out);
	return n < 0 ? -EIO : err;
}

static void hex(const uint8_t *id, size_t len, char *out)
{
	size_t i;

	for (i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * len] = '\0';
}

/* The file record, once per file, and its copy under DIR/modules (the debug file too when one exists). */
static int put_file(const char *dir, const char *path, const struct stat *sb, int copy_modules)
{
	struct mt_file f = { .dev = sb->st_dev, .ino = sb->st_ino };
	char h[2 * MT_BUILD_ID_MAX + 1], to[4096], dbg[4096];
	const char *root = getenv("CAPTURE_DEBUG_ROOT");

	hdr_init(&f.hdr, MT_REC_FILE, sizeof(f));
	f.build_id_len = build_id_of(path, f.build_id);
	strncpy(f.path, path, sizeof(f.path) - 1);
	if (!copy_modules)
		return put(&f);
	snprintf(to, sizeof(to), "%s/modules", dir);
	mkdir(to, 0755);
	if (f.build_id_len) {
		hex(f.build_id, f.build_id_len, h);
		snprintf(to, sizeof(to), "%s/modules/%s", dir, h);
		snprintf(dbg, sizeof(dbg), "%s/.build-id/%.2s/%s.debug", root ? root : "/usr/lib/debug", h, h + 2);
		if (!access(dbg, R_OK)) {
			char dto[4200];

			snprintf(dto, sizeof(dto), "%s.debug", to);
			copy_file(dbg, dto);
		}
	} else {
		snprintf(to, sizeof(to), "%s/modules/dev%llu-ino%llu", dir, (unsigned long long)f.dev,
			 (unsigned long long)f.ino);
	}
	if (copy_file(path, to))
		return -EIO;
	return put(&f);
}

static int put_maps(const char *dir, int copy_modules)
{
	unsigned long long start, end, off, ino, files[64][2];
	char perms[8], devs[16], path[4096], line[4600];
	size_t nfiles = 0, i;
	struct mt_mapping m;
	struct stat sb;
	FILE *maps = fopen("/proc/self/maps", "r");
	int err = 0;

	if (!maps)
		return -errno;
	while (!err && fgets(line, sizeof(line), maps)) {
		path[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %15s %llu %4095s", &start, &end, perms, &off, devs, &ino,
			   path) < 6)
			continue;
		if (!strcmp(path, "[stack]"))
			stack_top = end;
		if (!strchr(perms, 'x') || path[0] != '/' || stat(path, &sb))
			continue;
		for (i = 0; i < nfiles && !(files[i][0] == sb.st_dev && files[i][1] == sb.st_ino); i++)
			;
		if (i == nfiles && nfiles < 64) {
			files[nfiles][0] = sb.st_dev;
			files[nfiles++][1] = sb.st_ino;
			err = put_file(dir, path, &sb, copy_modules);
		}
		memset(&m, 0, sizeof(m));
		hdr_init(&m.hdr, MT_REC_MAPPING, sizeof(m));
		m.start = start;
		m.end = end;
		m.pgoff = off;
		m.dev = sb.st_dev;
		m.ino = sb.st_ino;
		m.prot = 4 | (perms[0] == 'r') | (perms[1] == 'w') << 1;
		if (!err)
			err = put(&m);
	}
	fclose(maps);
	return err;
}

int capture_begin(const char *dir, int argc, char **argv, uint32_t nbytes, int copy_modules)
{
	struct mt_session *s = (struct mt_session *)rec_buf;
	size_t len = sizeof(*s);
	int i;

	w = mt_writer__open(dir);
	if (!w)
		return -errno;
	budget = nbytes;
	memset(s, 0, sizeof(*s));
	for (i = 0; i < argc && len + strlen(argv[i]) + 1 < 4096; i++) {
		strcpy((char *)rec_buf + len, argv[i]);
		len += strlen(argv[i]) + 1;
	}
	hdr_init(&s->hdr, MT_REC_SESSION, len);
	s->argc = i;
	s->tracer_pid = getppid();
	if (put(s))
		return -EIO;
	return put_maps(dir, copy_modules);
}

/* What a kernel frame-pointer walker does: [sp], then (rbp + 8) up the chain while rbp stays in the stack. */
static size_t walk_fp(uint64_t sp, uint64_t bp, uint64_t *fp, uint8_t *truncated)
{
	size_t n = 0;
	uint64_t ret, next;

	fp[n++] = *(uint64_t *)sp;
	while (bp >= sp && bp + 16 <= stack_top && !(bp & 7)) {
		if (n == MT_FP_MAX) {
			*truncated |= MT_STACK_TRUNC_FP;
			break;
		}
		ret = ((uint64_t *)bp)[1];
		next = ((uint64_t *)bp)[0];
		if (!ret)
			break;
		fp[n++] = ret;
		if (next <= bp)
			break;
		bp = next;
	}
	return n;
}

static uint64_t chain_hash(const uint64_t *fp, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i, k;

	for (i = 0; i < n; i++)
		for (k = 0; k < 8; k++) {
			h ^= (fp[i] >> (8 * k)) & 0xff;
			h *= 0x100000001b3ull;
		}
	return h ? h : 1;
}

static uint64_t put_stack(void)
{
	struct mt_stack *st = (struct mt_stack *)rec_buf;
	uint64_t *fp = (uint64_t *)(st + 1), sp = capture_regs[MT_REG_SP], hash;
	uint32_t nbytes = budget;
	size_t i, nfp;

	memset(st, 0, sizeof(*st));
	nfp = walk_fp(sp, capture_regs[MT_REG_BP], fp, &st->truncated);
	hash = chain_hash(fp, nfp);
	for (i = 0; i < nseen; i++)
		if (seen[i] == hash)
			return hash;	/* the kernel defines each stack once (until evicted) */
	if (nseen < SEEN_MAX)
		seen[nseen++] = hash;
	if (sp + nbytes > stack_top)
		nbytes = stack_top - sp;
	else
		st->truncated |= MT_STACK_TRUNC_BYTES;
	memcpy(fp + nfp, (void *)sp, nbytes);
	memcpy(st->regs, capture_regs, sizeof(st->regs));
	st->hash = hash;
	st->nfp = nfp;
	st->nbytes = nbytes;
	hdr_init(&st->hdr, MT_REC_STACK, sizeof(*st) + nfp * 8 + nbytes);
	put(st);
	return hash;
}

void *capture_take(size_t size);

void *capture_take(size_t size)
{
	struct mt_alloc a = { .size = size, .func = MT_FN_MALLOC, .allocator = MT_ALLOCATOR_GLIBC };

	a.stack = put_stack();
	a.addr = (uint64_t)(uintptr_t)malloc(size);
	hdr_init(&a.hdr, MT_REC_ALLOC, sizeof(a));
	put(&a);
	return (void *)(uintptr_t)a.addr;
}

void fake_free(void *p)
{
	struct mt_alloc a = { .addr = (uint64_t)(uintptr_t)p, .func = MT_FN_FREE, .allocator = MT_ALLOCATOR_GLIBC };

	hdr_init(&a.hdr, MT_REC_ALLOC, sizeof(a));
	put(&a);
	free(p);
}

int capture_end(int status)
{
	struct mt_exit x = { .status = status << 8 };
	struct mt_end e = { .status = status << 8 };

	hdr_init(&x.hdr, MT_REC_EXIT, sizeof(x));
	hdr_init(&e.hdr, MT_REC_END, sizeof(e));
	put(&x);
	put(&e);
	return mt_writer__close(w);
}
