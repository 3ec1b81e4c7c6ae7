// SPDX-License-Identifier: GPL-2.0-only
/* probe_site.c — where in an allocator function its probe goes: past a straight-line prologue onto an emulated instruction. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/memtrack.h"
#include "tracer/probe_site.h"

/*
 * A uprobe on an instruction the kernel emulates (push, jmp, jcc, call) costs far less a hit than one on an
 * instruction it must single-step (mov, cmp, test, endbr64...; bench/README.md). jemalloc's, tcmalloc's and
 * mimalloc's fast paths are leaf code that starts with moves and compares, and whose first emulated instruction is
 * a conditional branch.
 *
 * The probe may sit on a later instruction when every path from the entry reaches it (nothing before it branches,
 * except free's test of its pointer against NULL: free(NULL) is no event), and when what the BPF program reads
 * there is what it would read at the entry: rsp and [rsp] (the return address, which the return probe replaces),
 * for --stacks the callee-saved registers, and the arguments of the entry point's kind — each still in some
 * register: mimalloc's malloc copies its size to rsi and loads rdi, and the cookie tells the program where to look.
 * So the instructions passed over may only read memory, write flags or other registers, and copy registers. The
 * decoder below knows the few forms such prologues use; anything else ends the walk and keeps the probe where the
 * walk last could.
 *
 * Assumed, not proved here: no branch from further in the function lands in the range passed over, or the probe
 * would fire twice in one call. None of the moved sites of Debian 12's glibc, libstdc++, jemalloc, tcmalloc and
 * mimalloc has one (every branch of each library checked with objdump), and a second hit would be absorbed
 * anyway: at a malloc-like site as a nested call (same stack pointer, return address already the trampoline),
 * at a free-like site by the marker of the block just released.
 */

enum {
	R_AX, R_CX, R_DX, R_BX, R_SP, R_BP, R_SI, R_DI,
	R_NONE = -1,	/* the instruction writes flags only */
	R_MEM = -2,	/* it writes memory: never passed over */
};

#define REG(r) (1u << (r))
/* rbx, rsp, rbp, r12-r15: what the return probe, the nesting check and the stack capture rely on. */
#define KEPT_ALWAYS (REG(R_BX) | REG(R_SP) | REG(R_BP) | 0xf000u)

struct insn {
	size_t len;
	int dst;	/* the register written, or R_NONE */
	int src;	/* a 64-bit register-to-register move: the register copied, else R_NONE */
};

/* The arguments the BPF program reads for an entry point of this kind. */
static unsigned int args__count(uint8_t args)
{
	switch (args) {
	case MT_ARGS_SIZE:
	case MT_ARGS_FREE:
		return 1;
	case MT_ARGS_PTR_NMEMB_SIZE:
	case MT_ARGS_PTR_SIZE_ALIGN:
	case MT_ARGS_MEMPTR_ALIGN_SIZE:
		return 3;
	default:
		return 2;
	}
}

/* The length of a ModRM operand (the ModRM byte, SIB, displacement) at c, 0 past len; *is_reg: a register. */
static size_t modrm__len(const uint8_t *c, size_t len, bool *is_reg)
{
	uint8_t mod = c[0] >> 6, rm = c[0] & 7;
	size_t n = 1;

	*is_reg = mod == 3;
	if (mod == 3)
		return 1;
	if (rm == 4 && len < 2)
		return 0;
	if (rm == 4)
		n += 1 + ((c[1] & 7) == 5 && mod == 0 ? 4 : 0);	/* SIB, and its base-less disp32 */
	else if (rm == 5 && mod == 0)
		n += 4;						/* disp32(%rip) */
	n += mod == 1 ? 1 : mod == 2 ? 4 : 0;
	return n <= len ? n : 0;
}

/* reg,r/m forms and group-1/2 immediates: which operand is written, and how many immediate bytes follow. */
enum form { F_NONE, F_TO_REG, F_TO_RM, F_FLAGS, F_GROUP };

static enum form opcode__form(uint8_t op, size_t *imm)
{
	*imm = 0;
	switch (op) {
	case 0x03: case 0x0b: case 0x13: case 0x1b: case 0x23: case 0x2b: case 0x33: case 0x8b: case 0x8d:
		return F_TO_REG;	/* add/or/adc/sbb/and/sub/xor/mov/lea r, r/m */
	case 0x01: case 0x09: case 0x11: case 0x19: case 0x21: case 0x29: case 0x31: case 0x89:
		return F_TO_RM;		/* add/or/adc/sbb/and/sub/xor/mov r/m, r */
	case 0x39: case 0x3b: case 0x85:
		return F_FLAGS;		/* cmp, test */
	case 0x81: *imm = 4; return F_GROUP;
	case 0x83: case 0xc1: *imm = 1; return F_GROUP;
	case 0xd1: return F_GROUP;
	}
	return F_NONE;
}

/* 0x81 /7 and 0x83 /7 compare; the other group-1 and the shift (0xc1, 0xd1) digits write their operand. */
static bool group__is_cmp(uint8_t op, uint8_t modrm)
{
	return (op == 0x81 || op == 0x83) && ((modrm >> 3) & 7) == 7;
}

/* One instruction of the forms above (with REX and an fs/gs segment prefix), or 0 when it is not one of them. */
static size_t insn__decode(const uint8_t *c, size_t len, struct insn *in)
{
	size_t p = 0, imm, m;
	uint8_t rex = 0, op;
	enum form f;
	bool is_reg;

	*in = (struct insn){ 0, R_NONE, R_NONE };
	if (len >= 4 && c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa) {
		in->len = 4;						/* endbr64 */
		return 4;
	}
	if (p < len && (c[p] == 0x64 || c[p] == 0x65))
		p++;
	if (p < len && (c[p] & 0xf0) == 0x40)
		rex = c[p++];
	if (p + 1 >= len)
		return 0;
	op = c[p++];
	if (op == 0x80 && ((c[p] >> 3) & 7) == 7) {		/* cmpb $imm8, r/m8 */
		m = modrm__len(c + p, len - p, &is_reg);
		in->len = p + m + 1;
		return m && in->len <= len ? in->len : 0;
	}
	if (op >= 0xb8 && op <= 0xbf) {				/* mov $imm, %reg */
		in->len = p + (rex & 8 ? 8 : 4);
		in->dst = (op & 7) | (rex & 1) << 3;
		return in->len <= len ? in->len : 0;
	}
	if (op == 0x05 || op == 0x0d || op == 0x25 || op == 0x2d || op == 0x35 || op == 0x3d || op == 0xa9) {
		in->len = p + 4;					/* op $imm32, %eax */
		in->dst = op == 0x3d || op == 0xa9 ? R_NONE : R_AX;
		return in->len <= len ? in->len : 0;
	}
	f = opcode__form(op, &imm);
	m = f == F_NONE ? 0 : modrm__len(c + p, len - p, &is_reg);
	if (!m || p + m + imm > len || (op == 0x8d && is_reg))	/* lea of a register: not an instruction */
		return 0;
	in->len = p + m + imm;
	if (f == F_TO_REG)
		in->dst = ((c[p] >> 3) & 7) | (rex & 4) << 1;
	else if (f == F_TO_RM || (f == F_GROUP && !group__is_cmp(op, c[p])))
		in->dst = is_reg ? (c[p] & 7) | (rex & 1) << 3 : R_MEM;
	if (is_reg && (rex & 8) && op == 0x89)
		in->src = ((c[p] >> 3) & 7) | (rex & 4) << 1;		/* mov %src, %dst */
	else if (is_reg && (rex & 8) && op == 0x8b)
		in->src = (c[p] & 7) | (rex & 1) << 3;			/* mov r/m, reg: rm is the source */
	return in->dst == R_MEM ? 0 : in->len;
}

/* The kernel emulates these: a probe on one costs no single-step. */
static bool insn__emulated(const uint8_t *c)
{
	if ((c[0] >= 0x50 && c[0] <= 0x57) || (c[0] == 0x41 && c[1] >= 0x50 && c[1] <= 0x57))
		return true;					/* push %reg */
	if (c[0] == 0xe9 || c[0] == 0xeb || c[0] == 0xe8 || (c[0] >= 0x70 && c[0] <= 0x7f))
		return true;					/* jmp, call, jcc rel8 */
	return c[0] == 0x0f && c[1] >= 0x80 && c[1] <= 0x8f;	/* jcc rel32 */
}

/* free's test %rdi,%rdi; je: the one branch allowed before the site, since only free(NULL) takes it. */
static size_t insn__null_check(const uint8_t *c, size_t len, bool frees)
{
	if (!frees || len < 9 || c[0] != 0x48 || c[1] != 0x85 || c[2] != 0xff)
		return 0;
	return c[3] == 0x74 ? 5 : c[3] == 0x0f && c[4] == 0x84 ? 9 : 0;
}

/* Where each argument the program reads is: a set of registers, which moves extend and other writes shrink. */
struct args_loc {
	unsigned int n;
	unsigned int in[3];
};

static const int arg_regs[3] = { R_DI, R_SI, R_DX };

/* Applies one instruction's write; false when it loses an argument or writes a register that must stay. */
static bool args_loc__write(struct args_loc *a, const struct insn *in)
{
	unsigned int i;
	bool copy;

	if (in->dst < 0)
		return true;
	if (KEPT_ALWAYS & REG(in->dst))
		return false;
	for (i = 0; i < a->n; i++) {
		copy = in->src >= 0 && (a->in[i] & REG(in->src));
		a->in[i] &= ~REG(in->dst);
		if (copy)
			a->in[i] |= REG(in->dst);
		if (!a->in[i])
			return false;
	}
	return true;
}

/* MT_COOKIE_REGS of the arguments' places: 0 when each is still in its own register. */
static uint16_t args_loc__regs(const struct args_loc *a)
{
	uint16_t regs = 0;
	bool moved = false;
	unsigned int i;
	int r;

	for (i = 0; i < 3; i++) {
		r = arg_regs[i];
		if (i < a->n && !(a->in[i] & REG(r))) {
			r = __builtin_ctz(a->in[i]);
			moved = true;
		}
		regs |= (uint16_t)(r << (4 * i));
	}
	return moved ? regs : 0;
}

/* The walk: over harmless instructions to the first emulated one. Past free's NULL check, a walk that fails
 * falls back on that check's branch, which is emulated and which every call reaches with its arguments in place. */
uint64_t mt_probe_site__place(const uint8_t *c, size_t len, uint8_t args, uint16_t *regs)
{
	bool frees = args == MT_ARGS_FREE || args == MT_ARGS_FREE_SIZED;
	struct args_loc loc = { args__count(args), { REG(arg_regs[0]), REG(arg_regs[1]), REG(arg_regs[2]) } };
	size_t pos = 0, n, fallback = 0;
	uint16_t fallback_regs = 0;
	struct insn in;

	while (pos + 8 <= len) {
		/* the NULL check proves nothing once rdi no longer holds the pointer */
		n = loc.in[0] & REG(R_DI) ? insn__null_check(c + pos, len - pos, frees) : 0;
		if (n) {
			fallback = pos + 3;	/* the je after the test */
			fallback_regs = args_loc__regs(&loc);
			pos += n;
			continue;
		}
		if (insn__emulated(c + pos)) {
			*regs = args_loc__regs(&loc);
			return pos;
		}
		n = insn__decode(c + pos, len - pos, &in);
		if (!n || !args_loc__write(&loc, &in))
			break;
		pos += n;
	}
	*regs = fallback_regs;
	return fallback;
}

/* jmp rel32, jmp rel8, jmp *disp32(%rip), each with a bnd prefix or not: a tail call, to a PLT entry mostly. Its
 * length, and in *to its target from c (0 through memory). */
static size_t insn__jumps_away(const uint8_t *c, size_t len, int64_t *to)
{
	size_t p = len > 0 && c[0] == 0xf2 ? 1 : 0;
	int32_t rel32;

	*to = 0;
	if (p + 2 > len)
		return 0;
	if (c[p] == 0xeb) {
		*to = (int64_t)(p + 2) + (int8_t)c[p + 1];
		return p + 2;
	}
	if (p + 6 > len || (c[p] != 0xe9 && (c[p] != 0xff || c[p + 1] != 0x25)))
		return 0;
	if (c[p] == 0xff)
		return p + 6;
	__builtin_memcpy(&rel32, c + p + 1, 4);
	*to = (int64_t)(p + 5) + rel32;
	return p + 5;
}

bool mt_probe_site__forwards(const uint8_t *c, size_t len, int64_t *to)
{
	size_t pos = 0, n;
	struct insn in;

	*to = 0;
	while (pos < len) {
		if (insn__jumps_away(c + pos, len - pos, to)) {
			*to += *to ? (int64_t)pos : 0;
			return true;
		}
		n = insn__decode(c + pos, len - pos, &in);
		if (!n || (in.dst >= 0 && (KEPT_ALWAYS & REG(in.dst))))
			return false;
		pos += n;
	}
	return false;
}

size_t mt_probe_site__modrm_len(const uint8_t *c, size_t len)
{
	bool is_reg;

	return modrm__len(c, len, &is_reg);
}
