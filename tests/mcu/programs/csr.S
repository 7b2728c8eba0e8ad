/* Zicsr: every CSR instruction form, the machine CSRs, counters, and the
 * illegal cases (an unknown CSR, a write to a read-only one). */
#include "test.h"
    .section .text.start
    .globl _start
_start:
    la t0, handler
    csrw mtvec, t0
    TEST 1      /* csrrw, csrrs, csrrc and their immediate forms on mscratch */
    li a0, 0x0f0f
    csrrw a1, mscratch, a0
    EXPECT a1, 0
    li a0, 0xf000
    csrrs a1, mscratch, a0
    EXPECT a1, 0x0f0f
    li a0, 0x00ff
    csrrc a1, mscratch, a0
    EXPECT a1, 0xff0f
    csrr a1, mscratch
    EXPECT a1, 0xff00
    csrrwi a1, mscratch, 5
    EXPECT a1, 0xff00
    csrrsi a1, mscratch, 0x18
    EXPECT a1, 5
    csrrci a1, mscratch, 1
    EXPECT a1, 0x1d
    csrr a1, mscratch
    EXPECT a1, 0x1c
    TEST 2      /* identity: misa RV32IMC, mhartid 0 */
    csrr a0, misa
    EXPECT a0, 0x40001104
    csrr a1, mhartid
    EXPECT a1, 0
    TEST 3      /* counters advance; minstret is writable */
    csrr a0, minstret
    nop
    nop
    csrr a1, minstret
    sub a2, a1, a0
    EXPECT a2, 3
    csrr a0, mcycle
    csrr a1, cycle
    bltu a1, a0, fail
    li a0, 1000
    csrw minstret, a0
    csrr a1, minstret
    EXPECT a1, 1000
    csrr a2, instret
    EXPECT a2, 1003       /* 1000 after the csrw; then csrr, li and bne retired */
    TEST 4      /* time reads the timer's mtime, which moves with simulated time */
    csrr a0, time
    li t0, 2000
1:  addi t0, t0, -1
    bnez t0, 1b
    csrr a1, time
    bleu a1, a0, fail
    li t1, TRN3_MCU_TIMER_BASE + TRN3_MCU_TIMER_MTIME
    lw a2, 0(t1)
    bltu a2, a1, fail
    TEST 5      /* mtvec keeps direct and vectored modes; mepc drops bit 0 */
    li a0, 0x20001003
    csrrw a1, mtvec, a0
    csrr a2, mtvec
    EXPECT a2, 0x20001001
    csrw mtvec, a1
    li a0, 0x20000123
    csrw mepc, a0
    csrr a1, mepc
    EXPECT a1, 0x20000122
    TEST 6      /* an unknown CSR and a write to a read-only one are illegal */
    li s2, 0
    csrr a0, 0x7c0
    EXPECT s2, 2
    li s2, 0
    csrw mhartid, a0
    EXPECT s2, 2
    li s2, 0
    csrr a0, mhartid      /* reading it is fine */
    EXPECT s2, 0
    TEST 7      /* a write to a counter replaces the writing instruction's own increment */
    li t0, -1
    csrw minstret, t0
    csrw minstreth, t0    /* the counter is all ones after this instruction: no carry */
    nop                   /* retires: the counter wraps to 0 */
    csrr a0, minstret
    csrr a1, minstreth
    EXPECT a0, 0
    EXPECT a1, 0
    li t0, -1
    csrw minstreth, zero
    csrw minstret, t0     /* 0x0_ffffffff */
    csrwi minstret, 5     /* no increment on top of the write: minstreth stays 0 */
    csrr a1, minstreth
    EXPECT a1, 0
    csrw mcycleh, t0
    csrw mcycle, t0
    nop
    csrr a0, mcycle
    csrr a1, mcycleh
    EXPECT a0, 0
    EXPECT a1, 0
    j pass
    END_TESTS

    .balign 4
handler:
    csrr s2, mcause
    csrr t4, mepc
    addi t4, t4, 4
    csrw mepc, t4
    mret
