// SPDX-License-Identifier: GPL-2.0-only
/* pprof.c — profile.proto written by a small protobuf encoder (varints, length-delimited fields), gzipped by zlib. */
/*
 * Field numbers from pprof's proto/profile.proto. Repeated numbers are written unpacked, which every protobuf
 * parser accepts, so that `protoc --decode_raw` shows each value as itself.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/elf.h"
#include "common/array.h"
#include "common/strmap.h"
#include "common/u64map.h"
#include "report/metadata.h"
#include "report/pprof.h"
#include "report/sites.h"

enum { PB_VARINT = 0, PB_LEN = 2 };

/* Profile */
enum { P_SAMPLE_TYPE = 1, P_SAMPLE, P_MAPPING, P_LOCATION, P_FUNCTION, P_STRING_TABLE, P_TIME_NANOS = 9,
       P_COMMENT = 13, P_DEFAULT_SAMPLE_TYPE };
enum { VT_TYPE = 1, VT_UNIT };						/* ValueType */
enum { S_LOCATION_ID = 1, S_VALUE, S_LABEL };				/* Sample */
enum { LB_KEY = 1, LB_STR, LB_NUM };					/* Label */
enum { M_ID = 1, M_START, M_LIMIT, M_OFFSET, M_FILENAME, M_BUILD_ID, M_HAS_FUNCTIONS, M_HAS_FILENAMES,
       M_HAS_LINES, M_HAS_INLINES };					/* Mapping */
enum { L_ID = 1, L_MAPPING_ID, L_ADDRESS, L_LINE };			/* Location */
enum { LN_FUNCTION_ID = 1, LN_LINE };					/* Line */
enum { F_ID = 1, F_NAME, F_SYSTEM_NAME, F_FILENAME };			/* Function */

#define PPROF_NOT_RECORDED "[stack not recorded]"

/* ---- the encoder ---- */

struct pb {
	uint8_t *p;
	size_t len;
	size_t cap;
	bool oom;		/* sticky: checked once at the end */
};

static void pb_put(struct pb *b, const void *data, size_t n)
{
	uint8_t *p;
	size_t cap;

	if (b->oom || !n)	/* !n: data may be an empty buffer's NULL */
		return;
	if (b->len + n > b->cap) {
		cap = b->cap ? b->cap : 256;
		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t buf[10];
	size_t n = 0;

	do {
		buf[n++] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	pb_put(b, buf, n);
}

/* A varint field, written even when 0 (a repeated value counts). int64 fields take v as two's complement. */
static void pb_uint(struct pb *b, unsigned int field, uint64_t v)
{
	pb_varint(b, (uint64_t)field << 3 | PB_VARINT);
	pb_varint(b, v);
}

/* proto3 leaves a scalar at its default out. */
static void pb_opt(struct pb *b, unsigned int field, uint64_t v)
{
	if (v)
		pb_uint(b, field, v);
}

static void pb_bytes(struct pb *b, unsigned int field, const void *data, size_t n)
{
	pb_varint(b, (uint64_t)field << 3 | PB_LEN);
	pb_varint(b, n);
	pb_put(b, data, n);
}

/* An embedded message: sub's bytes, then sub is emptied for the next one. */
static void pb_msg(struct pb *b, unsigned int field, struct pb *sub)
{
	pb_bytes(b, field, sub->p, sub->len);
	b->oom |= sub->oom;
	sub->len = 0;
}

/* ---- the profile's tables ---- */

struct loc_key {
	const struct mt_module *mod;
	uint64_t addr;		/* vaddr in mod, else the address itself */
};

struct pprof {
	struct mt_stacks *s;
	enum mt_pprof_kind kind;
	const struct mt_labels *labels;
	uint64_t time_ns;		/* the session's start, wall clock; 0: unknown */
	int64_t keys[MT_LABELS_MAX], values[MT_LABELS_MAX];	/* the labels' string indices */
	int64_t key_pid, key_exe;
	struct pb chain;		/* the location ids of the entry being written */
	struct pb label;		/* a Label message, being built */
	struct pb out;			/* the Profile: sample types and samples, then the tables appended */
	struct pb maps, locs, funcs;	/* repeated Mapping, Location, Function fields */
	struct pb comments;		/* repeated comment: the labels as KEY=VALUE */
	struct pb sample, loc, line, fn, map;	/* one message each, being built */
	struct mt_strmap strs;		/* the string table */
	struct mt_u64map func_index;	/* name index << 32 | file index → Function id */
	uint64_t nfuncs;
	struct loc_key *loc_keys;
	size_t nlocs;
	size_t cap_locs;
	struct mt_u64map loc_index;	/* hash of loc_key → index in loc_keys (collisions: a scan) */
	struct mt_u64map map_index;	/* module address → Mapping id */
	uint64_t nmaps;
};

/* The string table index of s (0 is ""), added when new; -ENOMEM. */
static int64_t str_index(struct pprof *p, const char *s)
{
	return mt_strmap__intern(&p->strs, s, NULL);
}

/* The Function id of (name, file), its message written when new; on ENOMEM 0, and the profile fails. */
static uint64_t func_id(struct pprof *p, const char *name, const char *file)
{
	int64_t ni = str_index(p, name), fi = str_index(p, file ? file : "");
	uint64_t key, *id;

	if (ni < 0 || fi < 0) {
		p->out.oom = true;
		return 0;
	}
	key = (uint64_t)ni << 32 | (uint64_t)fi;
	id = mt_u64map__find(&p->func_index, key);
	if (id)
		return *id;
	if (mt_u64map__put(&p->func_index, key, ++p->nfuncs, NULL) < 0) {
		p->out.oom = true;
		return 0;
	}
	pb_uint(&p->fn, F_ID, p->nfuncs);
	pb_opt(&p->fn, F_NAME, ni);
	pb_opt(&p->fn, F_SYSTEM_NAME, ni);
	pb_opt(&p->fn, F_FILENAME, fi);
	pb_msg(&p->funcs, P_FUNCTION, &p->fn);
	return p->nfuncs;
}

/* The Mapping id of a module (0: none), its message written when new; on ENOMEM 0, and the profile fails. */
static uint64_t map_id(struct pprof *p, const struct mt_module *m)
{
	char hex[2 * MT_BUILD_ID_MAX + 1];
	uint64_t *id;
	int64_t file, bid;

	if (!m)
		return 0;
	id = mt_u64map__find(&p->map_index, (uintptr_t)m);
	if (id)
		return *id;
	file = str_index(p, m->path[0] ? m->path : m->name);
	bid = str_index(p, mt_elf__build_id_hex(m->build_id, m->build_id_len, hex));
	if (file < 0 || bid < 0 || mt_u64map__put(&p->map_index, (uintptr_t)m, ++p->nmaps, NULL) < 0) {
		p->out.oom = true;
		return 0;
	}
	pb_uint(&p->map, M_ID, p->nmaps);
	pb_opt(&p->map, M_START, m->min_vaddr);
	pb_opt(&p->map, M_LIMIT, m->max_vaddr);
	pb_opt(&p->map, M_FILENAME, file);
	pb_opt(&p->map, M_BUILD_ID, bid);
	pb_uint(&p->map, M_HAS_FUNCTIONS, 1);
	pb_uint(&p->map, M_HAS_FILENAMES, 1);
	pb_uint(&p->map, M_HAS_LINES, 1);
	pb_uint(&p->map, M_HAS_INLINES, 1);
	pb_msg(&p->maps, P_MAPPING, &p->map);
	return p->nmaps;
}

/* One Line of the Location being built: innermost first, as pprof wants them (the last is the caller). */
static int line_add(const struct mt_frame_line *fl, void *ctx)
{
	struct pprof *p = ctx;

	pb_uint(&p->line, LN_FUNCTION_ID, func_id(p, fl->name, fl->file));
	pb_opt(&p->line, LN_LINE, fl->line > 0 ? (uint64_t)fl->line : 0);
	pb_msg(&p->loc, L_LINE, &p->line);
	return p->out.oom || p->loc.oom ? -ENOMEM : 0;
}

static bool loc_is(const struct loc_key *k, const struct mt_module *mod, uint64_t addr)
{
	return k->mod == mod && k->addr == addr;
}

/* The Location id of a return address (or of the not-recorded marker, f NULL), its message written when new. */
static uint64_t loc_id(struct pprof *p, const struct mt_frame *f)
{
	const struct mt_module *mod = f ? f->mod : NULL;
	uint64_t addr = !f ? 0 : mod ? f->vaddr : f->addr, h = addr * 0x9e3779b97f4a7c15ull ^ (uintptr_t)mod, *idx;
	size_t i;

	idx = mt_u64map__find(&p->loc_index, h);
	if (idx && loc_is(&p->loc_keys[*idx], mod, addr))
		return *idx + 1;
	for (i = 0; idx && i < p->nlocs; i++)
		if (loc_is(&p->loc_keys[i], mod, addr))
			return i + 1;
	if (mt_array__grow((void **)&p->loc_keys, &p->cap_locs, p->nlocs, sizeof(*p->loc_keys)) ||
	    (!idx && mt_u64map__put(&p->loc_index, h, p->nlocs, NULL) < 0)) {
		p->out.oom = true;
		return 0;
	}
	p->loc_keys[p->nlocs++] = (struct loc_key){ mod, addr };
	pb_uint(&p->loc, L_ID, p->nlocs);
	pb_opt(&p->loc, L_MAPPING_ID, map_id(p, mod));
	pb_opt(&p->loc, L_ADDRESS, addr);
	if (f)
		mt_sites__expand_frame(p->s, f, false, line_add, p);
	else
		line_add(&(struct mt_frame_line){ .name = PPROF_NOT_RECORDED }, p);
	pb_msg(&p->locs, P_LOCATION, &p->loc);
	return p->nlocs;
}

/* A string Label (str >= 0) or a numeric one of the sample being built. */
static void label_add(struct pprof *p, int64_t key, int64_t str, uint64_t num)
{
	pb_opt(&p->label, LB_KEY, (uint64_t)key);
	if (str >= 0)
		pb_opt(&p->label, LB_STR, (uint64_t)str);
	else
		pb_uint(&p->label, LB_NUM, num);
	pb_msg(&p->sample, S_LABEL, &p->label);
}

/*
 * One Sample of the entry's chain (p->chain): its values, the recording's labels, and pid and exe when exe is not
 * NULL (the part of the entry no process can be named for has none).
 */
static void sample_put(struct pprof *p, const uint64_t v[4], uint32_t pid, const char *exe)
{
	int64_t ei = exe ? str_index(p, exe) : 0;
	size_t i;

	if (ei < 0) {
		p->out.oom = true;
		return;
	}
	pb_put(&p->sample, p->chain.p, p->chain.len);
	for (i = 0; i < 4; i++)
		pb_uint(&p->sample, S_VALUE, v[i]);
	for (i = 0; i < p->labels->n; i++)
		label_add(p, p->keys[i], p->values[i], 0);
	if (exe) {
		label_add(p, p->key_pid, -1, pid);
		label_add(p, p->key_exe, ei, 0);
	}
	pb_msg(&p->out, P_SAMPLE, &p->sample);
}

/* The executable a process made its allocations with the stack in: the image of the first, else its last one. */
static const char *pp_exe(const struct mt_stack_heap *h, const struct mt_proc_peak *pp)
{
	if (pp->image != UINT32_MAX)
		return mt_stack_heap__image(h, pp->image)->exe;
	return mt_stack_heap__proc(h, pp->proc)->exe;
}

/* The program's mappings of a stack (by no process: their books are per stack) added to a sample's values: mapping
 * calls, bytes mapped, and as in use the bytes still mapped when their process ended or at the end. */
static void sample_mapped(const struct pprof *p, const struct mt_stack_entry *e, uint64_t v[4])
{
	const struct mt_stack_mapped *m = mt_stacks__mapped_of(p->s, e);

	if (p->kind == MT_PPROF_HEAP)
		return;
	v[0] += m->calls;
	v[1] += m->bytes;
	v[3] += m->exited_bytes + m->live_bytes;
}

/* A sample per process that allocated with the stack or leaked its blocks, then one for what is left unnamed. */
static void sample_write(struct pprof *p, const struct mt_stack_entry *e, size_t idx)
{
	const struct mt_stack_heap *h = p->kind == MT_PPROF_MAPPED ? NULL : mt_stacks__heap(p->s);
	const struct mt_proc_peak *pp;
	size_t i, k, n = h ? mt_stack_heap__proc_peaks(h, (uint32_t)idx + 1, &pp) : 0;
	struct mt_stack_counts c;
	uint64_t rest[4], v[4];

	mt_stacks__counts(p->s, e, &c);
	rest[0] = c.allocations;
	rest[1] = c.bytes;
	rest[2] = c.leaked_allocations;
	rest[3] = c.leaked_bytes;
	if (!h)
		memset(rest, 0, sizeof(rest));

	if (!e->defined)
		pb_uint(&p->chain, S_LOCATION_ID, loc_id(p, NULL));
	for (i = 0; e->defined && i < e->nframes; i++)
		pb_uint(&p->chain, S_LOCATION_ID, loc_id(p, mt_stacks__frame(p->s, e->frames, i)));
	for (i = 0; i < n; i++) {
		v[0] = pp[i].made_allocations;
		v[1] = pp[i].made_bytes;
		v[2] = rest[2] ? pp[i].leaked_allocations : 0;	/* none when the stack's leaks are suppressed */
		v[3] = rest[2] ? pp[i].leaked_bytes : 0;
		for (k = 0; k < 4 && v[k] <= rest[k]; k++)
			;
		if (k < 4 || !(v[0] | v[1] | v[2] | v[3]))
			continue;	/* more than the entry's: not the same counts, leave them to the rest */
		for (k = 0; k < 4; k++)
			rest[k] -= v[k];
		sample_put(p, v, mt_stack_heap__proc(h, pp[i].proc)->pid, pp_exe(h, &pp[i]));
	}
	sample_mapped(p, e, rest);
	if (rest[0] | rest[1] | rest[2] | rest[3])
		sample_put(p, rest, 0, NULL);
	p->chain.len = 0;
}

/* The recording's labels and the two per-sample keys into the string table; its labels as comments too. */
static void labels_index(struct pprof *p)
{
	char line[MT_LABEL_KEY_MAX + MT_LABEL_VALUE_MAX + 2];
	int64_t c;
	size_t i;

	p->key_pid = str_index(p, "pid");
	p->key_exe = str_index(p, "exe");
	if (p->key_pid < 0 || p->key_exe < 0)
		p->out.oom = true;
	for (i = 0; !p->out.oom && i < p->labels->n; i++) {
		p->keys[i] = str_index(p, p->labels->v[i].key);
		p->values[i] = str_index(p, p->labels->v[i].value);
		snprintf(line, sizeof(line), "%s=%s", p->labels->v[i].key, p->labels->v[i].value);
		c = str_index(p, line);
		if (p->keys[i] < 0 || p->values[i] < 0 || c < 0)
			p->out.oom = true;
		else
			pb_uint(&p->comments, P_COMMENT, (uint64_t)c);
	}
}

/* Go's heap profiles' order; pprof shows alloc_space unless told otherwise (default_sample_type). */
static void sample_types(struct pprof *p)
{
	static const char *const types[][2] = { { "alloc_objects", "count" }, { "alloc_space", "bytes" },
						{ "inuse_objects", "count" }, { "inuse_space", "bytes" } };
	struct pb vt = { 0 };
	int64_t t, u;
	size_t i;

	for (i = 0; i < 4; i++) {
		t = str_index(p, types[i][0]);
		u = str_index(p, types[i][1]);
		if (t < 0 || u < 0) {
			p->out.oom = true;
			break;
		}
		pb_opt(&vt, VT_TYPE, t);
		pb_opt(&vt, VT_UNIT, u);
		pb_msg(&p->out, P_SAMPLE_TYPE, &vt);
	}
	free(vt.p);
}

/*
 * Whether a module's path is the executable a process ran: the exe is the path given to exec, which is relative when
 * the command was (`record -- build/prog`, `./prog`): then the module's path ends with it, its leading "./" and
 * "../" left out (the recording keeps no working directory to resolve it against).
 */
static bool is_exe(const char *path, const char *exe)
{
	size_t n, len = strlen(path);

	if (exe[0] == '/')
		return !strcmp(path, exe);
	while (!strncmp(exe, "./", 2) || !strncmp(exe, "../", 3))
		exe += exe[1] == '/' ? 2 : 3;
	n = strlen(exe);
	return n && n < len && path[len - n - 1] == '/' && !strcmp(path + len - n, exe);
}

/* Mapping 1 for the first process's executable, which pprof takes for the profile's main binary ("File:"): the
 * module of the first frame found in it, when any frame is. */
static void main_mapping(struct pprof *p)
{
	const struct mt_stack_heap *h = mt_stacks__heap(p->s);
	const struct mt_module *last = NULL, *mod;
	const struct mt_stack_entry *e;
	const char *exe;
	size_t i, k;

	if (!h || !mt_stack_heap__nr_procs(h))
		return;
	exe = mt_stack_heap__proc(h, 0)->exe;
	for (i = 0; i < mt_stacks__count(p->s); i++) {
		e = mt_stacks__entry(p->s, i);
		for (k = 0; k < e->nframes; k++) {
			mod = mt_stacks__frame(p->s, e->frames, k)->mod;
			if (!mod || mod == last)
				continue;
			last = mod;
			if (is_exe(last->path, exe)) {
				map_id(p, last);
				return;
			}
		}
	}
}

static int profile_build(struct pprof *p)
{
	const struct mt_stack_entry *e;
	struct mt_stack_counts c;
	int64_t def;
	size_t i;

	if (str_index(p, "") != 0)
		return -ENOMEM;
	sample_types(p);
	labels_index(p);
	main_mapping(p);
	for (i = 0; !p->out.oom && i < mt_stacks__count(p->s); i++) {
		e = mt_stacks__entry(p->s, i);
		mt_stacks__counts(p->s, e, &c);
		if ((p->kind != MT_PPROF_MAPPED && (c.allocations || c.leaked_allocations)) ||
		    (p->kind != MT_PPROF_HEAP && (mt_stacks__mapped_of(p->s, e)->bytes ||
					     mt_stacks__mapped_of(p->s, e)->inherited_bytes)))
			sample_write(p, e, i);
	}
	pb_put(&p->out, p->maps.p, p->maps.len);
	pb_put(&p->out, p->locs.p, p->locs.len);
	pb_put(&p->out, p->funcs.p, p->funcs.len);
	for (i = 0; i < p->strs.count; i++)
		pb_bytes(&p->out, P_STRING_TABLE, mt_strmap__str(&p->strs, i), strlen(mt_strmap__str(&p->strs, i)));
	pb_opt(&p->out, P_TIME_NANOS, p->time_ns);	/* Parca files a profile under it */
	pb_put(&p->out, p->comments.p, p->comments.len);
	def = str_index(p, "alloc_space");
	pb_opt(&p->out, P_DEFAULT_SAMPLE_TYPE, def > 0 ? (uint64_t)def : 0);
	return p->out.oom || p->maps.oom || p->locs.oom || p->funcs.oom || p->sample.oom || p->chain.oom ||
	       p->label.oom || p->comments.oom ? -ENOMEM : 0;
}

/* gzip (zlib's deflate with a gzip header: windowBits 15 + 16), as pprof reads profiles. */
static int gzip_write(FILE *f, const uint8_t *data, size_t len)
{
	uint8_t buf[65536];
	z_stream z = { 0 };
	int zr;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (uint8_t *)data;
	z.avail_in = (uInt)len;	/* profiles stay far below 4 GiB */
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR)
			break;
		if (fwrite(buf, 1, sizeof(buf) - z.avail_out, f) != sizeof(buf) - z.avail_out)
			break;
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return zr == Z_STREAM_END ? 0 : -EIO;
}

static void pprof_release(struct pprof *p)
{
	mt_strmap__release(&p->strs);
	free(p->loc_keys);
	mt_u64map__release(&p->func_index);
	mt_u64map__release(&p->loc_index);
	mt_u64map__release(&p->map_index);
	free(p->out.p);
	free(p->maps.p);
	free(p->locs.p);
	free(p->funcs.p);
	free(p->sample.p);
	free(p->loc.p);
	free(p->line.p);
	free(p->fn.p);
	free(p->map.p);
	free(p->chain.p);
	free(p->label.p);
	free(p->comments.p);
}

int mt_pprof__write(FILE *f, struct mt_stacks *s, const struct mt_metadata *md)
{
	return mt_pprof__write_kind(f, s, md, MT_PPROF_HEAP);
}

int mt_pprof__write_kind(FILE *f, struct mt_stacks *s, const struct mt_metadata *md, enum mt_pprof_kind kind)
{
	struct pprof p = { .s = s, .kind = kind, .labels = mt_metadata__labels(md), .time_ns = mt_metadata__realtime_ns(md) };
	int err;

	err = profile_build(&p);
	if (!err)
		err = gzip_write(f, p.out.p, p.out.len);
	pprof_release(&p);
	return err ? err : ferror(f) ? -EIO : 0;
}
