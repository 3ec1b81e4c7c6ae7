/* SPDX-License-Identifier: GPL-2.0-only */
/* fp_chain.h — the chain of fp_chain.c, split so that one link can be built without frame pointers. */
#ifndef FP_CHAIN_H
#define FP_CHAIN_H

#ifdef __clang__
#define NOIPA __attribute__((noinline))	/* clang has no noipa */
#else
#define NOIPA __attribute__((noinline, noipa))
#endif

int f1(int n), f2(int n), f3(int n), f4(int n), f5(int n), f6(int n), f7(int n), f8(int n), f9(int n), f10(int n);
int f11(int n), f12(int n), f13(int n), f14(int n), f15(int n), f16(int n), f17(int n), f18(int n), f19(int n);
int f20(int n);

#endif
