/* Every RV32C instruction (assembled as the compressed forms). */
#include "test.h"
    .option rvc
    .section .text.start
    .globl _start
_start:
    la sp, __stack_top
    TEST 1      /* c.li, c.lui, c.addi, c.addi16sp, c.addi4spn, c.nop */
    c.li a0, -5
    EXPECT a0, -5
    c.lui a1, 0x1f
    EXPECT a1, 0x1f000
    c.lui a2, 0xfffe1    /* negative: sign-extended */
    EXPECT a2, 0xfffe1000
    c.addi a0, 7
    EXPECT a0, 2
    mv s0, sp
    c.addi16sp sp, -64
    addi s1, s0, -64
    bne sp, s1, fail
    c.addi4spn a3, sp, 16
    addi s1, sp, 16
    bne a3, s1, fail
    c.addi16sp sp, 64
    c.nop
    TEST 2      /* c.mv, c.add, c.sub, c.xor, c.or, c.and, c.andi */
    li a0, 12
    li a1, 10
    c.mv a2, a0
    EXPECT a2, 12
    c.add a2, a1
    EXPECT a2, 22
    c.sub a2, a1
    EXPECT a2, 12
    c.xor a2, a1
    EXPECT a2, 6
    c.or a2, a1
    EXPECT a2, 14
    c.and a2, a1
    EXPECT a2, 10
    c.andi a2, -3
    EXPECT a2, 8
    TEST 3      /* c.slli, c.srli, c.srai */
    li a0, 0x80000010
    c.slli a0, 1
    EXPECT a0, 0x20
    li a1, 0x80000010
    c.srli a1, 4
    EXPECT a1, 0x08000001
    li a2, 0x80000010
    c.srai a2, 4
    EXPECT a2, 0xf8000001
    TEST 4      /* c.lw, c.sw, c.lwsp, c.swsp */
    la a0, buffer
    li a1, 0x5a5a1234
    c.sw a1, 4(a0)
    c.lw a2, 4(a0)
    EXPECT a2, 0x5a5a1234
    c.addi16sp sp, -32
    c.swsp a1, 8(sp)
    c.lwsp a3, 8(sp)
    EXPECT a3, 0x5a5a1234
    c.addi16sp sp, 32
    TEST 5      /* c.j, c.jal, c.jr, c.jalr, c.beqz, c.bnez */
    c.j 1f
    j fail
1:  c.jal 2f
3:  j 4f
2:  la t0, 3b
    bne ra, t0, fail
    c.jr ra
4:  la a0, 5f
    c.jalr a0
6:  j 7f
5:  la t0, 6b
    bne ra, t0, fail
    ret
7:  li a0, 0
    c.beqz a0, 1f
    j fail
1:  c.bnez a0, fail
    li a0, 3
    c.bnez a0, 1f
    j fail
1:  c.beqz a0, fail
    j pass
    END_TESTS

    .data
    .balign 4
buffer:
    .word 0, 0
