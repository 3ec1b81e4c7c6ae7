// SPDX-License-Identifier: GPL-2.0-only
/* stack_chain.c — call paths with known shapes for --stacks: `chain` f1 -> ... -> f20 -> malloc(6061) x 10;
 * `locals` one path 100,000 times with changing locals; `callers` 64 distinct callers of one allocating function;
 * `tree` the same from a fork child (f_child) and an exec'd child (f_exec). Built with frame pointers. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#define NOINLINE __attribute__((noinline))

void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;
volatile int sink;

NOINLINE void f20(void) { for (int i = 0; i < 10; i++) v_free(v_malloc(6061)); }
#define LINK(a, b) NOINLINE void a(void) { b(); sink++; }
LINK(f19, f20) LINK(f18, f19) LINK(f17, f18) LINK(f16, f17) LINK(f15, f16) LINK(f14, f15) LINK(f13, f14)
LINK(f12, f13) LINK(f11, f12) LINK(f10, f11) LINK(f9, f10) LINK(f8, f9) LINK(f7, f8) LINK(f6, f7) LINK(f5, f6)
LINK(f4, f5) LINK(f3, f4) LINK(f2, f3) LINK(f1, f2)

/* Locals that change on every call; the call path does not. */
NOINLINE void with_locals(int i)
{
	volatile char junk[256];

	memset((char *)junk, i, sizeof(junk));
	v_free(v_malloc(6062));
	sink += junk[i % 256];
}

NOINLINE void alloc_it(void) { v_free(v_malloc(6063)); }
#define C(n) NOINLINE void caller##n(void) { alloc_it(); sink++; }
#define C8(n) C(n##0) C(n##1) C(n##2) C(n##3) C(n##4) C(n##5) C(n##6) C(n##7)
C8(0) C8(1) C8(2) C8(3) C8(4) C8(5) C8(6) C8(7)
#define R(n) caller##n,
#define R8(n) R(n##0) R(n##1) R(n##2) R(n##3) R(n##4) R(n##5) R(n##6) R(n##7)
static void (*const callers[64])(void) = { R8(0) R8(1) R8(2) R8(3) R8(4) R8(5) R8(6) R8(7) };

NOINLINE void f_child(void) { v_free(v_malloc(6064)); }
NOINLINE void f_exec(void) { v_free(v_malloc(6065)); }

static int tree(char *self)
{
	char *args[] = { self, "exec", NULL };
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		f_child();
		_exit(0);
	}
	waitpid(pid, &status, 0);
	pid = fork();
	if (pid == 0) {
		execv(self, args);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 100;
	if (!strcmp(argv[1], "chain"))
		f1();
	else if (!strcmp(argv[1], "locals"))
		for (int i = 0; i < 100000; i++)
			with_locals(i);
	else if (!strcmp(argv[1], "callers"))
		for (int i = 0; i < 64; i++)
			callers[i]();
	else if (!strcmp(argv[1], "tree"))
		return tree(argv[0]);
	else if (!strcmp(argv[1], "exec"))
		f_exec();
	return 0;
}
