/* Every RV32M instruction, with the division corner cases the ISA defines. */
#include "test.h"
    .section .text.start
    .globl _start
_start:
    TEST 1      /* mul: low 32 bits */
    li a0, 0x12345678
    li a1, 0x9abcdef0
    mul a2, a0, a1
    EXPECT a2, 0x242d2080
    TEST 2      /* mulh, mulhsu, mulhu */
    li a0, -2
    li a1, 3
    mulh a2, a0, a1       /* -6: high word all ones */
    EXPECT a2, -1
    mulhsu a3, a0, a1     /* signed -2 x unsigned 3 */
    EXPECT a3, -1
    mulhu a4, a0, a1      /* 0xfffffffe x 3 = 0x2_fffffffa */
    EXPECT a4, 2
    li a0, 0x80000000
    mulh a5, a0, a0       /* 2^62 */
    EXPECT a5, 0x40000000
    li a1, -1
    mulhsu a6, a0, a1     /* -2^31 x (2^32 - 1) */
    EXPECT a6, 0x80000000
    TEST 3      /* div, divu, rem, remu */
    li a0, -7
    li a1, 2
    div a2, a0, a1
    EXPECT a2, -3         /* rounds toward zero */
    rem a3, a0, a1
    EXPECT a3, -1         /* the sign of the dividend */
    divu a4, a0, a1
    EXPECT a4, 0x7ffffffc
    remu a5, a0, a1
    EXPECT a5, 1
    TEST 4      /* division by zero */
    li a1, 0
    div a2, a0, a1
    EXPECT a2, -1
    divu a3, a0, a1
    EXPECT a3, 0xffffffff
    rem a4, a0, a1
    EXPECT a4, -7
    remu a5, a0, a1
    EXPECT a5, -7
    TEST 5      /* overflow: -2^31 / -1 */
    li a0, 0x80000000
    li a1, -1
    div a2, a0, a1
    EXPECT a2, 0x80000000
    rem a3, a0, a1
    EXPECT a3, 0
    j pass
    END_TESTS
