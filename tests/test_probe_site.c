// SPDX-License-Identifier: GPL-2.0-only
/* test_probe_site.c — tracer/probe_site.c: where a probe goes in a function, moved onto an emulated instruction only
 * when that is safe. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "bpf/memtrack.h"
#include "tracer/probe_site.h"

/* The bytes, then 8 zero bytes (`add %al,(%rax)`, a memory write: no walk goes past them). */
#define CODE(...) ((const uint8_t[]){ __VA_ARGS__, 0, 0, 0, 0, 0, 0, 0, 0 })
#define SITE(args, ...) site(CODE(__VA_ARGS__), sizeof(CODE(__VA_ARGS__)), args, NULL)
#define SITE_REGS(args, regs, ...) site(CODE(__VA_ARGS__), sizeof(CODE(__VA_ARGS__)), args, regs)

/* The site; *regs (when asked) where the arguments are there: 0, or nibbles of register numbers. */
static uint64_t site(const uint8_t *code, size_t len, uint8_t args, uint16_t *regs)
{
	uint16_t r;
	uint64_t off = mt_probe_site__place(code, len, args, &r);

	if (regs)
		*regs = r;
	else
		assert_int_equal(r, 0);
	return off;
}

/* glibc's malloc: push %r12 first, already emulated. */
static void test_push_first(void **state)
{
	(void)state;
	assert_int_equal(SITE(MT_ARGS_SIZE, 0x41, 0x54, 0x55, 0x53, 0x48, 0x89, 0xfb), 0);
}

/* libstdc++'s operator new: endbr64; test %rdi,%rdi; mov $1,%eax; push %rbx. */
static void test_operator_new(void **state)
{
	(void)state;
	assert_int_equal(SITE(MT_ARGS_SIZE, 0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x85, 0xff, 0xb8, 0x01, 0x00, 0x00, 0x00, 0x53,
			      0x48, 0x0f, 0x45, 0xc7), 12);
}

/* libstdc++'s operator delete: endbr64; jmp free@plt (a tail call the kernel emulates). */
static void test_tail_call(void **state)
{
	(void)state;
	assert_int_equal(SITE(MT_ARGS_FREE_SIZED, 0xf3, 0x0f, 0x1e, 0xfa, 0xe9, 0x87, 0x2f, 0xff, 0xff), 4);
	assert_int_equal(SITE(MT_ARGS_FREE, 0xf3, 0x0f, 0x1e, 0xfa, 0xeb, 0x10), 4);
}

/* glibc's free: test %rdi,%rdi; je (only free(NULL) skips the site); posix_memalign: cmpb $0, disp32(%rip). */
static void test_free_null_branch(void **state)
{
	(void)state;
	assert_int_equal(SITE(MT_ARGS_FREE, 0x48, 0x85, 0xff, 0x0f, 0x84, 0x10, 0x01, 0x00, 0x00, 0x55), 9);
	assert_int_equal(SITE(MT_ARGS_FREE, 0x48, 0x85, 0xff, 0x74, 0x20, 0x55), 5);
	assert_int_equal(SITE(MT_ARGS_MEMPTR_ALIGN_SIZE, 0x80, 0x3d, 0x11, 0x22, 0x33, 0x00, 0x00, 0x41, 0x55), 7);
}

/* Leaf fast paths start with moves and compares; their first emulated instruction is a conditional branch, which
 * every call reaches (the probe fires before it branches). */
static void test_leaf_prologues(void **state)
{
	(void)state;
	/* jemalloc's malloc: cmp $0x1000,%rdi; ja */
	assert_int_equal(SITE(MT_ARGS_SIZE, 0x48, 0x81, 0xff, 0x00, 0x10, 0x00, 0x00, 0x0f, 0x87, 0x93, 0x00, 0x00, 0x00),
			 7);
	/* jemalloc's free: ten moves, shifts, ands and adds (rdx, rcx: not free's argument) before cmp; jne */
	assert_int_equal(SITE(MT_ARGS_FREE, 0x48, 0x89, 0xf8, 0x48, 0x8b, 0x15, 0x0e, 0x53, 0x0a, 0x00, 0x48, 0x89, 0xf9,
			      0x48, 0xc1, 0xe8, 0x1a, 0x48, 0x81, 0xe1, 0x00, 0x00, 0x00, 0xc0, 0x25, 0xf0, 0x00, 0x00, 0x00,
			      0x64, 0x48, 0x03, 0x04, 0x25, 0x00, 0x00, 0x00, 0x00, 0x48, 0x01, 0xd0, 0x48, 0x3b, 0x88, 0xb0,
			      0x01, 0x00, 0x00, 0x0f, 0x85, 0x8a, 0x00, 0x00, 0x00),
			 48);
	/* tcmalloc's malloc: mov disp32(%rip),%rax; mov %rdi,%r8; test %rax,%rax; jne */
	assert_int_equal(SITE(MT_ARGS_SIZE, 0x48, 0x8b, 0x05, 0xf9, 0x32, 0x01, 0x00, 0x49, 0x89, 0xf8, 0x48, 0x85, 0xc0,
			      0x0f, 0x85, 0x8e, 0x00, 0x00, 0x00),
			 13);
	/* tcmalloc's calloc: mov disp32(%rip),%rcx; cmpb $0,%fs:0x10(%rcx); jne */
	assert_int_equal(SITE(MT_ARGS_NMEMB_SIZE, 0x48, 0x8b, 0x0d, 0x19, 0x39, 0x01, 0x00, 0x64, 0x80, 0x79, 0x10, 0x00,
			      0x0f, 0x85, 0x6d, 0x01, 0x00, 0x00),
			 12);
	/* mimalloc's free: mov %rdi,%rcx; test %rdi,%rdi; je; then lea -1(%rdi),%rdi: the je, reached by every call */
	assert_int_equal(SITE(MT_ARGS_FREE, 0x48, 0x89, 0xf9, 0x48, 0x85, 0xff, 0x74, 0x5d, 0x48, 0x8d, 0x7f, 0xff), 6);
	/* a malloc that tests its size first: the je itself, which malloc(0) reaches too */
	assert_int_equal(SITE(MT_ARGS_SIZE, 0x48, 0x85, 0xff, 0x74, 0x20, 0x55), 3);
}

/* A prologue that copies an argument and then overwrites its register: the site says where the copy is. */
static void test_moved_arguments(void **state)
{
	uint16_t regs;

	(void)state;
	/* mimalloc's malloc: mov disp32(%rip),%rax; mov %rdi,%rsi; mov %fs:(%rax),%rdi; cmp $0x400,%rsi; ja: the
	 * size is in rsi (6); the unused nibbles name rsi and rdx */
	assert_int_equal(SITE_REGS(MT_ARGS_SIZE, &regs, 0x48, 0x8b, 0x05, 0x49, 0xb4, 0x00, 0x00, 0x48, 0x89, 0xfe, 0x64,
				   0x48, 0x8b, 0x38, 0x48, 0x81, 0xfe, 0x00, 0x04, 0x00, 0x00, 0x77, 0x29),
			 21);
	assert_int_equal(regs, 0x266);
	/* mimalloc's calloc: mov disp32(%rip),%rdx; mov %rdi,%rax; mov %fs:(%rdx),%rdi; cmp $1,%rax; je: nmemb in rax
	 * (0), size still in rsi (6) */
	assert_int_equal(SITE_REGS(MT_ARGS_NMEMB_SIZE, &regs, 0x48, 0x8b, 0x15, 0xc9, 0xad, 0x00, 0x00, 0x48, 0x89, 0xf8,
				   0x64, 0x48, 0x8b, 0x3a, 0x48, 0x83, 0xf8, 0x01, 0x74, 0x0a),
			 18);
	assert_int_equal(regs, 0x260);
	/* the same through 8b (mov r/m64 to r64): mov %rdi,%r9 written as 4c 8b cf, then xor %edi,%edi */
	assert_int_equal(SITE_REGS(MT_ARGS_SIZE, &regs, 0x4c, 0x8b, 0xcf, 0x31, 0xff, 0x55), 5);
	assert_int_equal(regs, 0x269);
	/* a 32-bit move truncates: no copy */
	assert_int_equal(SITE(MT_ARGS_SIZE, 0x89, 0xfe, 0x31, 0xff, 0x55), 0);
}

/* An instruction that writes what the BPF program reads, or memory, or one not decoded keeps the probe at the entry. */
static void test_unsafe_stays(void **state)
{
	uint16_t regs;

	(void)state;
	/* mov $imm32,%edi: the first argument */
	assert_int_equal(SITE(MT_ARGS_SIZE, 0xbf, 0x01, 0x00, 0x00, 0x00, 0x55), 0);
	/* mov %rdi,%rsi; mov $0,%edi: the size survives in rsi, but the next write loses it */
	assert_int_equal(SITE(MT_ARGS_SIZE, 0x48, 0x89, 0xfe, 0xbf, 0x00, 0x00, 0x00, 0x00, 0x31, 0xf6, 0x55), 0);
	/* realloc: mov %rdi,%rsi writes its second argument */
	assert_int_equal(SITE(MT_ARGS_PTR_SIZE, 0x48, 0x89, 0xfe, 0x55), 0);
	/* sized free: xor %esi,%esi */
	assert_int_equal(SITE(MT_ARGS_FREE_SIZED, 0x31, 0xf6, 0x55), 0);
	/* mov %rdi,%rbx: a callee-saved register (--stacks unwinds from the site) */
	assert_int_equal(SITE(MT_ARGS_SIZE, 0x48, 0x89, 0xfb, 0x55), 0);
	/* sub $8,%rsp; mov %rax,(%rsp): the stack pointer, memory */
	assert_int_equal(SITE(MT_ARGS_SIZE, 0x48, 0x83, 0xec, 0x08, 0x55), 0);
	assert_int_equal(SITE(MT_ARGS_SIZE, 0x48, 0x89, 0x04, 0x24, 0x55), 0);
	/* addl $1, disp32(%rip): a memory write; ret: not decoded */
	assert_int_equal(SITE(MT_ARGS_SIZE, 0x83, 0x05, 0x10, 0x20, 0x30, 0x00, 0x01, 0x55), 0);
	assert_int_equal(SITE(MT_ARGS_SIZE, 0xc3, 0x55), 0);
	/* a NULL check of rdi after the pointer left it: an ordinary test, and the je is the site */
	assert_int_equal(SITE_REGS(MT_ARGS_FREE, &regs, 0x48, 0x89, 0xf8, 0x31, 0xff, 0x48, 0x85, 0xff, 0x74, 0x05, 0x55),
			 8);
	assert_int_equal(regs, 0x260);
	/* lea with a register operand is no instruction */
	assert_int_equal(SITE(MT_ARGS_SIZE, 0x48, 0x8d, 0xc7, 0x55), 0);
	/* free's NULL check, then an argument written: back on the je */
	assert_int_equal(SITE(MT_ARGS_FREE, 0x48, 0x85, 0xff, 0x0f, 0x84, 0x10, 0x01, 0x00, 0x00, 0x31, 0xff, 0x55), 3);
}

/* Fewer bytes than an instruction may need: the entry. */
static void test_short_code(void **state)
{
	const uint8_t code[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x53 };

	(void)state;
	assert_int_equal(site(code, sizeof(code), MT_ARGS_SIZE, NULL), 0);
}

#define FORWARDS(...) forwards(CODE(__VA_ARGS__), sizeof(CODE(__VA_ARGS__)), NULL)
#define JUMPS_TO(to, ...) forwards(CODE(__VA_ARGS__), sizeof(CODE(__VA_ARGS__)), to)

static bool forwards(const uint8_t *code, size_t len, int64_t *to)
{
	int64_t t;
	bool f = mt_probe_site__forwards(code, len, &t);

	if (to)
		*to = t;
	return f;
}

/* A forwarder only moves registers and jumps: every call of it is a call of its target (an operator new that is
 * then marked, not return-probed). */
static void test_forwarders(void **state)
{
	(void)state;
	/* libstdc++'s new[]: endbr64; jmp _Znwm@plt */
	assert_true(FORWARDS(0xf3, 0x0f, 0x1e, 0xfa, 0xe9, 0xf7, 0x02, 0xff, 0xff));
	/* libstdc++'s sized aligned delete: endbr64; mov %rdx,%rsi; jmp */
	assert_true(FORWARDS(0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x89, 0xd6, 0xe9, 0x74, 0x12, 0xff, 0xff));
	/* jmp rel8; bnd jmp *disp32(%rip), as a PLT entry */
	assert_true(FORWARDS(0xeb, 0x10));
	assert_true(FORWARDS(0xf2, 0xff, 0x25, 0x10, 0x20, 0x30, 0x00));
	/* libstdc++'s new: endbr64; test; mov $1,%eax; push %rbx (then calls malloc): no */
	assert_false(FORWARDS(0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x85, 0xff, 0xb8, 0x01, 0x00, 0x00, 0x00, 0x53));
	/* its nothrow new: endbr64; sub $8,%rsp; call: no (the stack pointer moves) */
	assert_false(FORWARDS(0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x83, 0xec, 0x08, 0xe8, 0x10, 0x20, 0x30, 0x00));
	/* jemalloc's sized delete: test %rdi,%rdi; je: a branch first, no */
	assert_false(FORWARDS(0x48, 0x85, 0xff, 0x74, 0x13, 0x48, 0x83, 0xec, 0x08));
	/* call, ret, and nothing at all */
	assert_false(FORWARDS(0xe8, 0x10, 0x20, 0x30, 0x00));
	assert_false(FORWARDS(0xc3));
	assert_false(forwards(CODE(0xe9), 0, NULL));
}

/* Where a forwarder jumps, from its start: jemalloc's new[] jumps straight to its new; a PLT entry says nothing. */
static void test_forward_targets(void **state)
{
	int64_t to;

	(void)state;
	/* jemalloc's _Znam at 0xadf10: jmp 0xade30 (_Znwm), e9 1b ff ff ff */
	assert_true(JUMPS_TO(&to, 0xe9, 0x1b, 0xff, 0xff, 0xff));
	assert_int_equal(to, 0xade30 - 0xadf10);
	/* endbr64; jmp rel8 +0x10: from the start, 4 + 2 + 0x10 */
	assert_true(JUMPS_TO(&to, 0xf3, 0x0f, 0x1e, 0xfa, 0xeb, 0x10));
	assert_int_equal(to, 0x16);
	/* bnd jmp *disp32(%rip): through memory */
	assert_true(JUMPS_TO(&to, 0xf2, 0xff, 0x25, 0x10, 0x20, 0x30, 0x00));
	assert_int_equal(to, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_first),	 cmocka_unit_test(test_operator_new),
		cmocka_unit_test(test_tail_call),	 cmocka_unit_test(test_free_null_branch),
		cmocka_unit_test(test_leaf_prologues),	 cmocka_unit_test(test_moved_arguments),
		cmocka_unit_test(test_unsafe_stays),
		cmocka_unit_test(test_short_code),
		cmocka_unit_test(test_forwarders),	 cmocka_unit_test(test_forward_targets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
