/* exit_sites.c — where a function returns: its ret instructions, found by following its jumps from its entry. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/u64map.h"
#include "tracer/exit_sites.h"
#include "tracer/probe_site.h"

/*
 * An x86-64 instruction's length and what it does to the flow, from its prefixes, opcode map, ModRM and immediate:
 * enough for the general-purpose code of an allocator's fast and slow paths. VEX/EVEX (AVX) and the opcodes
 * invalid in 64-bit mode are not decoded: the walk gives up there, and the caller keeps its return probe.
 */
enum flow { F_NEXT, F_RET, F_BRANCH, F_JMP, F_JMP_INDIRECT, F_CALL, F_STOP, F_BAD };

struct insn {
	size_t len;
	enum flow flow;
	int64_t rel;		/* F_BRANCH, F_JMP, F_CALL: the target from the instruction's end (F_CALL: 0 indirect) */
};

static bool op1__invalid(uint8_t op)
{
	static const uint8_t bad[] = { 0x06, 0x07, 0x0e, 0x16, 0x17, 0x1e, 0x1f, 0x27, 0x2f, 0x37, 0x3f, 0x60, 0x61,
				       0x62, 0x82, 0x9a, 0xc4, 0xc5, 0xce, 0xd4, 0xd5, 0xd6, 0xea };

	return memchr(bad, op, sizeof(bad)) != NULL;
}

static bool op1__modrm(uint8_t op)
{
	if (op < 0x40)
		return (op & 7) < 4;
	return op == 0x63 || op == 0x69 || op == 0x6b || (op >= 0x80 && op <= 0x8f) || op == 0xc0 || op == 0xc1 ||
	       op == 0xc6 || op == 0xc7 || (op >= 0xd0 && op <= 0xd3) || (op >= 0xd8 && op <= 0xdf) || op == 0xf6 ||
	       op == 0xf7 || op == 0xfe || op == 0xff;
}

/* Immediate bytes of a one-byte opcode; z: an operand-size immediate (4, or 2 under 0x66). */
static size_t op1__imm(uint8_t op, size_t z, bool rex_w, bool addr32, uint8_t modrm)
{
	uint8_t reg = (modrm >> 3) & 7;

	if (op < 0x40)
		return (op & 7) == 4 ? 1 : (op & 7) == 5 ? z : 0;
	if ((op >= 0x70 && op <= 0x7f) || (op >= 0xb0 && op <= 0xb7) || (op >= 0xe0 && op <= 0xe7))
		return 1;
	if (op >= 0xb8 && op <= 0xbf)
		return rex_w ? 8 : z;
	if (op >= 0xa0 && op <= 0xa3)
		return addr32 ? 4 : 8;
	switch (op) {
	case 0x6a: case 0x6b: case 0x80: case 0x83: case 0xa8: case 0xc0: case 0xc1: case 0xc6: case 0xcd: case 0xeb:
		return 1;
	case 0x68: case 0x69: case 0x81: case 0xa9: case 0xc7:
		return z;
	case 0xc2: case 0xca:
		return 2;
	case 0xc8:
		return 3;
	case 0xe8: case 0xe9:
		return 4;
	case 0xf6:
		return reg < 2;
	case 0xf7:
		return reg < 2 ? z : 0;
	}
	return 0;
}

/* 0x0f xx: whether a ModRM follows, and the immediate bytes. */
static bool op2__modrm(uint8_t op, size_t *imm)
{
	static const uint8_t none[] = { 0x05, 0x06, 0x07, 0x08, 0x09, 0x0b, 0x0e, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35,
					0x37, 0x77, 0xa0, 0xa1, 0xa2, 0xa8, 0xa9, 0xaa };
	static const uint8_t imm8[] = { 0x0f, 0x70, 0x71, 0x72, 0x73, 0xa4, 0xac, 0xba, 0xc2, 0xc4, 0xc5, 0xc6 };

	*imm = memchr(imm8, op, sizeof(imm8)) ? 1 : (op >= 0x80 && op <= 0x8f) ? 4 : 0;
	return !memchr(none, op, sizeof(none)) && !(op >= 0x80 && op <= 0x8f) && !(op >= 0xc8 && op <= 0xcf);
}

static enum flow op1__flow(uint8_t op, uint8_t modrm)
{
	uint8_t reg = (modrm >> 3) & 7;

	if ((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3))
		return F_BRANCH;
	switch (op) {
	case 0xc2: case 0xc3: return F_RET;
	case 0xe9: case 0xeb: return F_JMP;
	case 0xe8: return F_CALL;
	case 0xcc: case 0xf4: return F_STOP;
	case 0xff: return reg == 2 || reg == 3 ? F_CALL : reg == 4 || reg == 5 ? F_JMP_INDIRECT : F_NEXT;
	}
	return F_NEXT;
}

static bool prefix__legacy(uint8_t b)
{
	return b == 0x66 || b == 0x67 || b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e || b == 0x36 || b == 0x3e ||
	       b == 0x26 || b == 0x64 || b == 0x65;
}

/* The opcode after the prefixes at c[p], its ModRM and immediate: the instruction's length, flow and target. */
static void insn__body(const uint8_t *c, size_t len, size_t p, bool opsz16, bool addr32, bool rex_w, struct insn *in)
{
	size_t imm = 0, m = 0, z = opsz16 ? 2 : 4;
	uint8_t op = c[p++], op2 = 0;
	bool modrm;

	if (op == 0x0f) {
		op2 = c[p++];
		modrm = op2 == 0x38 || op2 == 0x3a || op2__modrm(op2, &imm);
		if (op2 == 0x38 || op2 == 0x3a) {
			p++;			/* the three-byte maps: ModRM always, imm8 for 0x3a */
			imm = op2 == 0x3a;
		}
	} else {
		if (op1__invalid(op))
			return;
		modrm = op1__modrm(op);
	}
	if (p >= len)
		return;
	if (modrm && !(m = mt_probe_site__modrm_len(c + p, len - p)))
		return;
	if (op != 0x0f)
		imm = op1__imm(op, z, rex_w, addr32, modrm ? c[p] : 0);
	if (p + m + imm > len)
		return;
	in->len = p + m + imm;
	in->flow = op == 0x0f ? (op2 >= 0x80 && op2 <= 0x8f ? F_BRANCH : op2 == 0x0b ? F_STOP : F_NEXT)
			      : op1__flow(op, modrm ? c[p] : 0);
	if (imm == 1 && (in->flow == F_BRANCH || in->flow == F_JMP))
		in->rel = (int8_t)c[in->len - 1];
	else if (imm == 4 && (in->flow == F_BRANCH || in->flow == F_JMP || in->flow == F_CALL)) {
		int32_t rel;

		memcpy(&rel, c + in->len - 4, 4);
		in->rel = rel;
	}
}

static void insn__decode(const uint8_t *c, size_t len, struct insn *in)
{
	bool opsz16 = false, addr32 = false, rex_w = false;
	size_t p = 0;

	*in = (struct insn){ .flow = F_BAD };
	while (p < len && p < 14 && prefix__legacy(c[p])) {
		opsz16 |= c[p] == 0x66;
		addr32 |= c[p] == 0x67;
		p++;
	}
	if (p < len && (c[p] & 0xf0) == 0x40)
		rex_w = c[p++] & 8;
	if (p + 1 >= len)
		return;
	insn__body(c, len, p, opsz16, addr32, rex_w, in);
}

#define WALK_INSNS 8192		/* instructions looked at, in all */
#define WALK_TODO 512		/* paths not yet followed */
#define WALK_NEAR 16384		/* symbol-less code farther from the function than this: a cold path, not followed */

struct walk {
	const struct mt_exit_walk *w;
	uint64_t entry, end;	/* the function asked about */
	struct mt_u64map seen;	/* instruction offset -> 1 */
	struct span { uint64_t at, lo, end; } todo[WALK_TODO];	/* at, in the code [lo, end) */
	size_t ntodo, insns;
	uint64_t *sites;
	size_t nsites, max;
};

static int walk__push(struct walk *k, uint64_t at, uint64_t lo, uint64_t end)
{
	if (mt_u64map__find(&k->seen, at))
		return 0;
	if (k->ntodo == WALK_TODO)
		return -E2BIG;
	k->todo[k->ntodo++] = (struct span){ at, lo, end };
	return 0;
}

/* A jump or a branch to t from the code of s: within it, through the PLT, into a function, or not followed. */
static int walk__jump(struct walk *k, uint64_t t, const struct span *s)
{
	uint64_t target, tend;
	bool noreturn;

	if (t >= s->lo && t < s->end)
		return walk__push(k, t, s->lo, s->end);
	if (k->w->plt(t, &target, &noreturn, k->w->ctx)) {
		if (noreturn)
			return 0;
		if (!target)
			return -ENOTSUP;	/* a tail call into another file */
		t = target;
	} else if ((t + WALK_NEAR < k->entry || t > k->end + WALK_NEAR)) {
		return 0;
	}
	if (!k->w->end_of(t, &tend, k->w->ctx))
		return -ENOTSUP;
	return walk__push(k, t, t, tend);
}

static int walk__site(struct walk *k, uint64_t at)
{
	if (k->nsites == k->max)
		return -E2BIG;
	k->sites[k->nsites++] = at;
	return 0;
}

/* The instruction at s->at. */
static int walk__step(struct walk *k, const struct span *s)
{
	uint64_t at = s->at, target;
	uint8_t code[16];
	ssize_t n = pread(k->w->fd, code, sizeof(code), at);
	struct insn in;
	bool noreturn;

	if (n <= 0 || mt_u64map__put(&k->seen, at, 1, NULL) < 0)
		return -EIO;
	if (++k->insns > WALK_INSNS)
		return -E2BIG;
	insn__decode(code, n, &in);
	switch (in.flow) {
	case F_BAD:
	case F_JMP_INDIRECT:
		return -ENOTSUP;
	case F_RET:
		return walk__site(k, at);
	case F_STOP:
		return 0;
	case F_JMP:
		return walk__jump(k, at + in.len + in.rel, s);
	case F_BRANCH: {
		int err = walk__jump(k, at + in.len + in.rel, s);

		if (err)
			return err;
		break;
	}
	case F_CALL:
		if (in.rel && k->w->plt(at + in.len + in.rel, &target, &noreturn, k->w->ctx) && noreturn)
			return 0;
		break;
	case F_NEXT:
		break;
	}
	return at + in.len < s->end ? walk__push(k, at + in.len, s->lo, s->end) : 0;
}

int mt_exit_sites__find(const struct mt_exit_walk *w, uint64_t entry, uint64_t end, uint64_t *sites, size_t max)
{
	struct walk *k = calloc(1, sizeof(*k));
	int err = 0;

	if (!k)
		return -ENOMEM;
	*k = (struct walk){ .w = w, .entry = entry, .end = end, .sites = sites, .max = max };
	err = walk__push(k, entry, entry, end);
	while (!err && k->ntodo) {
		struct span s = k->todo[--k->ntodo];

		if (!mt_u64map__find(&k->seen, s.at))
			err = walk__step(k, &s);
	}
	if (!err && !k->nsites)
		err = -ENOTSUP;
	err = err ? err : (int)k->nsites;
	mt_u64map__release(&k->seen);
	free(k);
	return err;
}
