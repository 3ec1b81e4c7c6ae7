/* test_sites.c — where a probe goes inside a function: moved onto an emulated instruction only when that is safe. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tracer.h"

#define SITE(args, ...) site((const uint8_t[]){ __VA_ARGS__, 0, 0, 0, 0, 0, 0, 0, 0 }, args)

static uint64_t site(const uint8_t *code, uint8_t args)
{
	return allocators__site(code, 24, args);
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

/* A branch a real allocation could take, or an instruction that writes an argument, keeps the probe at the entry. */
static void test_unsafe_stays(void **state)
{
	(void)state;
	/* the same test+je in malloc: malloc(0) would skip the site */
	assert_int_equal(SITE(MT_ARGS_SIZE, 0x48, 0x85, 0xff, 0x74, 0x20, 0x55), 0);
	/* mimalloc's free: mov %rdi,%rcx writes rcx, the fourth argument register */
	assert_int_equal(SITE(MT_ARGS_FREE, 0x48, 0x89, 0xf9, 0x48, 0x85, 0xff, 0x74, 0x5d, 0x55), 0);
	/* mov $imm32,%edi: the first argument */
	assert_int_equal(SITE(MT_ARGS_SIZE, 0xbf, 0x01, 0x00, 0x00, 0x00, 0x55), 0);
	/* jemalloc's malloc: cmp $0x1000,%rdi; ja */
	assert_int_equal(SITE(MT_ARGS_SIZE, 0x48, 0x81, 0xff, 0x00, 0x10, 0x00, 0x00, 0x77, 0x10, 0x55), 0);
}

/* Fewer bytes than an instruction may need: the entry. */
static void test_short_code(void **state)
{
	const uint8_t code[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x53 };

	(void)state;
	assert_int_equal(allocators__site(code, sizeof(code), MT_ARGS_SIZE), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_first),	 cmocka_unit_test(test_operator_new),
		cmocka_unit_test(test_tail_call),	 cmocka_unit_test(test_free_null_branch),
		cmocka_unit_test(test_unsafe_stays),	 cmocka_unit_test(test_short_code),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
