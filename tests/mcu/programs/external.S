/* An external interrupt: a chip block raises interrupt-controller line 5
 * (the test bench does, at 2 us); the hart waits in wfi, takes it (mcause
 * 0x8000000b) and reads the pending line. */
#include "test.h"
    .section .text.start
    .globl _start
_start:
    la t0, handler
    csrw mtvec, t0
    li s5, 0
    li s1, TRN3_MCU_INTC_BASE
    li t0, 1 << 5
    sw t0, TRN3_MCU_INTC_ENABLE(s1)
    li t0, 0x800
    csrw mie, t0          /* MEIE */
    csrsi mstatus, 8
    TEST 1
1:  wfi
    beqz s5, 1b
    li t0, 0x8000000b
    bne s2, t0, fail
    andi s3, s3, 1 << 5
    EXPECT s3, 1 << 5
    j pass
    END_TESTS

    .balign 4
handler:
    csrr s2, mcause
    lw s3, TRN3_MCU_INTC_PENDING(s1)
    sw zero, TRN3_MCU_INTC_ENABLE(s1)   /* the line stays high: mask it */
    li s5, 1
    mret
