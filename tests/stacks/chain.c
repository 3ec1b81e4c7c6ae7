// SPDX-License-Identifier: GPL-2.0-only
/* chain.c — f1 … f20 except f10, with frame pointers (-O1 -fno-omit-frame-pointer); f20 allocates 100 bytes. */
/* Also a frame whose rbp points at data (a broken FP chain) and a recursion deeper than MT_FP_MAX frames. */
#include <stdlib.h>
#include "capture.h"
#include "chain.h"

/* The addition after each call keeps it from becoming a tail call, so each fN keeps a frame of its own. */
NOIPA int f1(int n) { return f2(n + 1) + 1; }
NOIPA int f2(int n) { return f3(n + 1) + 1; }
NOIPA int f3(int n) { return f4(n + 1) + 1; }
NOIPA int f4(int n) { return f5(n + 1) + 1; }
NOIPA int f5(int n) { return f6(n + 1) + 1; }
NOIPA int f6(int n) { return f7(n + 1) + 1; }
NOIPA int f7(int n) { return f8(n + 1) + 1; }
NOIPA int f8(int n) { return f9(n + 1) + 1; }
NOIPA int f9(int n) { return f10(n + 1) + 1; }
NOIPA int f11(int n) { return f12(n + 1) + 1; }
NOIPA int f12(int n) { return f13(n + 1) + 1; }
NOIPA int f13(int n) { return f14(n + 1) + 1; }
NOIPA int f14(int n) { return f15(n + 1) + 1; }
NOIPA int f15(int n) { return f16(n + 1) + 1; }
NOIPA int f16(int n) { return f17(n + 1) + 1; }
NOIPA int f17(int n) { return f18(n + 1) + 1; }
NOIPA int f18(int n) { return f19(n + 1) + 1; }
NOIPA int f19(int n) { return f20(n + 1) + 1; }

NOIPA int f20(int n)
{
	chain_keep(fake_alloc(100));
	return n;
}

static void *kept[256];
static size_t nkept, nfreed;

NOIPA void chain_keep(void *p)
{
	if (nkept < sizeof(kept) / sizeof(kept[0]))
		kept[nkept++] = p;
}

NOIPA void chain_free_one(void)
{
	if (nfreed < nkept)
		fake_free(kept[nfreed++]);
}

#define CALLER(i) NOIPA void caller_##i(void) { chain_keep(fake_alloc(i + 1)); }
#define CALLERS8(a, b, c, d, e, f, g, h) CALLER(a) CALLER(b) CALLER(c) CALLER(d) CALLER(e) CALLER(f) CALLER(g) CALLER(h)
CALLERS8(0, 1, 2, 3, 4, 5, 6, 7)
CALLERS8(8, 9, 10, 11, 12, 13, 14, 15)
CALLERS8(16, 17, 18, 19, 20, 21, 22, 23)
CALLERS8(24, 25, 26, 27, 28, 29, 30, 31)
CALLERS8(32, 33, 34, 35, 36, 37, 38, 39)
CALLERS8(40, 41, 42, 43, 44, 45, 46, 47)
CALLERS8(48, 49, 50, 51, 52, 53, 54, 55)
CALLERS8(56, 57, 58, 59, 60, 61, 62, 63)

#define REF8(a, b, c, d, e, f, g, h) caller_##a, caller_##b, caller_##c, caller_##d, \
	caller_##e, caller_##f, caller_##g, caller_##h
static void (*const callers[64])(void) = {
	REF8(0, 1, 2, 3, 4, 5, 6, 7), REF8(8, 9, 10, 11, 12, 13, 14, 15),
	REF8(16, 17, 18, 19, 20, 21, 22, 23), REF8(24, 25, 26, 27, 28, 29, 30, 31),
	REF8(32, 33, 34, 35, 36, 37, 38, 39), REF8(40, 41, 42, 43, 44, 45, 46, 47),
	REF8(48, 49, 50, 51, 52, 53, 54, 55), REF8(56, 57, 58, 59, 60, 61, 62, 63),
};

NOIPA void callers_run(void)
{
	size_t i;

	for (i = 0; i < 64; i++)
		callers[i]();
}

static int compared;

NOIPA static int cmp(const void *a, const void *b)
{
	if (!compared++)
		chain_keep(fake_alloc(77));
	return *(const int *)a - *(const int *)b;
}

NOIPA void qsort_run(void)
{
	int v[16] = { 9, 3, 14, 1, 7, 12, 5, 0, 15, 2, 11, 6, 13, 4, 10, 8 };

	qsort(v, 16, sizeof(v[0]), cmp);
}

/*
 * broken_frame(word), as a function built without frame pointers may leave things: its rbp points at two words on its
 * stack, the caller's saved rbp (so the walk goes on to real frames above) and word where the return address would
 * be. Its CFI is right: DWARF unwinding goes through it.
 */
__asm__(
	"	.text\n"
	"	.globl	broken_frame\n"
	"	.type	broken_frame, @function\n"
	"broken_frame:\n"
	"	.cfi_startproc\n"
	"	pushq	%rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	subq	$16, %rsp\n"
	"	.cfi_def_cfa_offset 32\n"
	"	movq	16(%rsp), %rax\n"
	"	movq	%rax, (%rsp)\n"
	"	movq	%rdi, 8(%rsp)\n"
	"	movq	%rsp, %rbp\n"
	"	movl	$55, %edi\n"
	"	call	fake_alloc\n"
	"	movq	%rax, %rdi\n"
	"	call	chain_keep\n"
	"	addq	$16, %rsp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	popq	%rbp\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size	broken_frame, .-broken_frame\n");

NOIPA int deep(int n)
{
	if (!n) {
		chain_keep(fake_alloc(33));
		return 0;
	}
	return deep(n - 1) + 1;
}

/* The peak fixture: each site allocates from its own function. */
NOIPA static void *peak_a(void) { return fake_alloc(1000); }
NOIPA static void *peak_b(void) { return fake_alloc(500); }
NOIPA static void *peak_c(void) { return fake_alloc(1500); }

static volatile int peak_as = 3, peak_bs = 2;	/* volatile: one call site in a loop each, not unrolled */

NOIPA void peak_run(void)
{
	void *a[3], *b[2];
	int i;

	for (i = 0; i < peak_as; i++)
		a[i] = peak_a();
	for (i = 0; i < peak_bs; i++)
		b[i] = peak_b();	/* the peak: 4000 bytes, peak_a 3 x 1000, peak_b 2 x 500 */
	fake_free(a[0]);
	fake_free(a[1]);
	(void)peak_c();			/* 3500 bytes: under the peak */
	fake_free(b[0]);
}

NOIPA static void *temp_keep(void) { return fake_alloc(16); }
NOIPA static void *temp_one(void) { return fake_alloc(32); }
NOIPA static void *temp_not(void) { return fake_alloc(48); }

NOIPA void temps_run(void)
{
	void *p;
	int i;

	for (i = 0; i < 100; i++) {
		(void)temp_keep();
		fake_free(temp_one());	/* freed before the thread's next allocation: temporary */
	}
	p = temp_not();
	(void)temp_keep();
	fake_free(p);			/* an allocation came between: not temporary */
}

NOIPA static void *size_one(size_t n) { return fake_alloc(n); }

NOIPA void sizes_run(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 4, 7, 8, 100, 1000, 4096, 65536, 1 << 20 };
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		(void)size_one(sizes[i]);
}
