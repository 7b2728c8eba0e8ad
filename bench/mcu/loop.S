/* The MCU speed benchmark's compute loop: ALU work, a load and a store into
 * SRAM and a branch per iteration (10 instructions), N iterations, then tohost. */
#include "trn3/spec/mcu.h"
    .section .text.start
    .globl _start
_start:
    li a1, 20000000       /* iterations */
    li a0, 0
    li a2, 0x12345
    la a5, table
1:  add a0, a0, a2
    xor a2, a2, a0
    slli a3, a0, 3
    srli a4, a2, 5
    or a0, a3, a4
    andi a6, a0, 0x3c
    add a6, a6, a5
    lw a7, 0(a6)
    sw a0, 0(a6)
    addi a1, a1, -1
    bnez a1, 1b
    li t0, TRN3_MCU_SYSCTL_BASE + TRN3_MCU_SYSCTL_TOHOST
    li t1, 1
    sw t1, 0(t0)
2:  j 2b
    .data
    .balign 4
table:
    .space 64
