/* SPDX-License-Identifier: GPL-2.0-only */
/* chain.h — the call paths of the stack test program: f1 → … → f20 → fake_alloc, 64 callers, a qsort comparator. */
#ifndef MT_TEST_CHAIN_H
#define MT_TEST_CHAIN_H

#include <stddef.h>

/* noipa: no inlining, no cloning, no interprocedural shortcuts: every call in the source stays a call (clang has
 * no noipa: noinline there). */
#ifdef __clang__
#define NOIPA __attribute__((noinline))
#else
#define NOIPA __attribute__((noipa))
#endif

int f1(int n);
int f2(int n);
int f3(int n);
int f4(int n);
int f5(int n);
int f6(int n);
int f7(int n);
int f8(int n);
int f9(int n);
int f10(int n);
int f11(int n);
int f12(int n);
int f13(int n);
int f14(int n);
int f15(int n);
int f16(int n);
int f17(int n);
int f18(int n);
int f19(int n);
int f20(int n);

/* Calls caller_0 … caller_63, each allocating i + 1 bytes from its own call site. */
void callers_run(void);
/* Sorts a small array with a comparator that allocates 77 bytes on its first call. */
void qsort_run(void);
/* Allocates 55 bytes with rbp pointing at a fake frame whose return address is word (chain.c). */
void broken_frame(const void *word);
/* Recurses n times, then allocates 33 bytes: n + 1 deep frames. */
int deep(int n);
/* 3 x 1000 bytes, 2 x 500 (the peak, 4000 bytes), two of the first freed, 1500 more, one of the 500 freed. */
void peak_run(void);
/* 100 x (16 bytes kept, 32 bytes freed at once: temporary), then 48 bytes freed after another 16: not temporary. */
void temps_run(void);
/* One site allocating 0, 1, 2, 3, 4, 7, 8, 100, 1000, 4096, 65536 and 1 MiB bytes, all kept. */
void sizes_run(void);
/* Keeps p for chain_free_one() / leaks. */
void chain_keep(void *p);
/* Frees the first block kept. */
void chain_free_one(void);

#endif /* MT_TEST_CHAIN_H */
