// SPDX-License-Identifier: GPL-2.0-only
/* capture_stub.c — fake_alloc's entry: saves the registers an allocator uprobe would see, before anything moves. */
/* Top-level asm, with CFI so DWARF unwinding can start at fake_alloc's first instruction as it does at malloc's. */
__asm__(
	"	.text\n"
	"	.globl	fake_alloc\n"
	"	.type	fake_alloc, @function\n"
	"fake_alloc:\n"
	"	.cfi_startproc\n"
	"	movq	%rsp, capture_regs+8(%rip)\n"
	"	movq	%rbp, capture_regs+16(%rip)\n"
	"	movq	%rbx, capture_regs+24(%rip)\n"
	"	movq	%r12, capture_regs+32(%rip)\n"
	"	movq	%r13, capture_regs+40(%rip)\n"
	"	movq	%r14, capture_regs+48(%rip)\n"
	"	movq	%r15, capture_regs+56(%rip)\n"
	"	leaq	fake_alloc(%rip), %rax\n"
	"	movq	%rax, capture_regs(%rip)\n"
	/* rdi (the size) is untouched; the extra 8 bytes realign the stack for the C call */
	"	subq	$8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call	capture_take\n"
	"	addq	$8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size	fake_alloc, .-fake_alloc\n");
