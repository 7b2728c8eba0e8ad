/* Every RV32I instruction, with its corner cases. */
#include "test.h"
    .section .text.start
    .globl _start
_start:
    la sp, __stack_top
    TEST 1      /* lui, auipc */
    lui a0, 0x12345
    EXPECT a0, 0x12345000
1:  auipc a1, 0
    la a2, 1b
    bne a1, a2, fail
    auipc a3, 1           /* + 0x1000 */
    la a4, 2f
2:  sub a3, a3, a4
    EXPECT a3, 0xff4      /* auipc ran 12 bytes (itself and la) before label 2, plus 0x1000 */
    TEST 2      /* addi, slti, sltiu, xori, ori, andi */
    li a0, 5
    addi a1, a0, -7
    EXPECT a1, -2
    slti a2, a1, 0
    EXPECT a2, 1
    sltiu a3, a1, 5      /* -2 is a big unsigned number */
    EXPECT a3, 0
    sltiu a3, a0, -1     /* sltiu against 0xffffffff */
    EXPECT a3, 1
    xori a4, a0, -1
    EXPECT a4, -6
    ori a5, a0, 0x70
    EXPECT a5, 0x75
    andi a6, a5, 0x1c
    EXPECT a6, 0x14
    TEST 3      /* slli, srli, srai */
    li a0, 0x80000001
    slli a1, a0, 1
    EXPECT a1, 2
    srli a2, a0, 31
    EXPECT a2, 1
    srai a3, a0, 31
    EXPECT a3, -1
    srai a4, a0, 0
    EXPECT a4, 0x80000001
    TEST 4      /* add, sub, sll, slt, sltu, xor, srl, sra, or, and */
    li a0, 0x7fffffff
    li a1, 1
    add a2, a0, a1
    EXPECT a2, 0x80000000
    sub a3, a1, a0
    EXPECT a3, 0x80000002
    li a4, 33            /* shifts use the low 5 bits */
    sll a5, a1, a4
    EXPECT a5, 2
    slt a6, a2, a1
    EXPECT a6, 1
    sltu a7, a2, a1
    EXPECT a7, 0
    xor s2, a0, a2
    EXPECT s2, -1
    srl s3, a2, a4
    EXPECT s3, 0x40000000
    sra s4, a2, a4
    EXPECT s4, 0xc0000000
    or s5, a1, a4
    EXPECT s5, 33
    and s6, a0, a2
    EXPECT s6, 0
    TEST 5      /* x0 stays zero */
    addi zero, zero, 5
    EXPECT zero, 0
    TEST 6      /* branches, taken and not */
    li a0, -1
    li a1, 1
    beq a0, a1, fail
    bne a0, a0, fail
    blt a1, a0, fail
    bge a0, a1, fail
    bltu a0, a1, fail
    bgeu a1, a0, fail
    beq a0, a0, 1f
    j fail
1:  bne a0, a1, 1f
    j fail
1:  blt a0, a1, 1f
    j fail
1:  bge a1, a0, 1f
    j fail
1:  bltu a1, a0, 1f
    j fail
1:  bgeu a0, a1, 1f
    j fail
1:  bge a0, a0, 1f
    j fail
1:
    TEST 7      /* jal, jalr (the target's low bit is cleared; rd = rs1 works) */
    jal ra, 1f
2:  j 3f
1:  la a0, 2b
    bne ra, a0, fail
    la a1, 4f + 1
    jalr a1, 0(a1)
    j fail
4:  la a2, 4b - 4
    bne a1, a2, fail
3:
    TEST 8      /* stores and loads of every width, sign and zero extension */
    la a0, buffer
    li a1, 0x8899aabb
    sw a1, 0(a0)
    lw a2, 0(a0)
    EXPECT a2, 0x8899aabb
    lb a3, 0(a0)
    EXPECT a3, 0xffffffbb
    lbu a4, 3(a0)
    EXPECT a4, 0x88
    lh a5, 2(a0)
    EXPECT a5, 0xffff8899
    lhu a6, 2(a0)
    EXPECT a6, 0x8899
    li a1, 0x11
    sb a1, 1(a0)
    lw a2, 0(a0)
    EXPECT a2, 0x889911bb
    li a1, 0x7722
    sh a1, 2(a0)
    lw a2, 0(a0)
    EXPECT a2, 0x772211bb
    lw a3, -4(a0)        /* negative offsets */
    EXPECT a3, 0xcafef00d
    li t0, TRN3_MCU_UART_BASE   /* narrow loads from a device register: zero-extended */
    lbu a0, TRN3_MCU_UART_STATUS(t0)
    EXPECT a0, 1
    lhu a1, TRN3_MCU_UART_STATUS(t0)
    EXPECT a1, 1
    lb a2, TRN3_MCU_UART_STATUS(t0)
    EXPECT a2, 1
    TEST 9      /* fence, fence.i are accepted */
    fence
    fence.i
    TEST 10     /* a store into code is seen by the next fetch */
    la a0, patch
    li a1, 0x00700513    /* addi a0, zero, 7 */
    sw a1, 0(a0)
    fence.i
patch:
    addi a0, zero, 3
    EXPECT a0, 7
    j pass
    END_TESTS

    .data
    .word 0xcafef00d
buffer:
    .word 0
