/* Exceptions: illegal instruction, misaligned and faulting loads and
 * stores, fetch faults, ecall, ebreak; mepc, mcause, mtval, mstatus. */
#include "test.h"
    .section .text.start
    .globl _start
_start:
    la t0, handler
    csrw mtvec, t0
    li s5, 0
    TEST 1      /* illegal instruction */
1:  .word 0xffffffff
    EXPECT s2, 2
    la t0, 1b
    bne s3, t0, fail
    EXPECT s5, 1
    TEST 2      /* misaligned load: cause 4, mtval the address */
    la a1, buffer
    lw a0, 1(a1)
    EXPECT s2, 4
    addi t0, a1, 1
    bne s4, t0, fail
    lh a0, 3(a1)
    EXPECT s2, 4
    TEST 3      /* misaligned store: cause 6 */
    sw a0, 2(a1)
    EXPECT s2, 6
    addi t0, a1, 2
    bne s4, t0, fail
    TEST 4      /* ecall: cause 11, mepc at the ecall */
1:  ecall
    EXPECT s2, 11
    la t0, 1b
    bne s3, t0, fail
    TEST 5      /* ebreak: cause 3 */
    ebreak
    EXPECT s2, 3
    TEST 6      /* access faults: a load from nowhere, a store to ROM */
    li a1, 0x30000000
    lw a0, 0(a1)
    EXPECT s2, 5
    bne s4, a1, fail
    sw a0, 0(zero)
    EXPECT s2, 7
    TEST 7      /* fetch fault: cause 1, mepc the target */
    la ra, 1f
    li t0, 0x30000000
    jr t0
1:  EXPECT s2, 1
    li t0, 0x30000000
    bne s3, t0, fail
    TEST 8      /* the trap saved MIE into MPIE and cleared it; MPP is machine */
    csrsi mstatus, 8
    ecall
    csrr a0, mstatus
    andi a1, a0, 8        /* mret restored MIE */
    EXPECT a1, 8
    srli a2, s6, 7        /* mstatus seen in the handler: MPIE 1, MIE 0 */
    andi a2, a2, 1
    EXPECT a2, 1
    andi a3, s6, 8
    EXPECT a3, 0
    li t0, 0x1800
    and a4, a0, t0
    EXPECT a4, 0x1800
    csrci mstatus, 8
    EXPECT s5, 10
    j pass
    END_TESTS

/* Records mcause (s2), mepc (s3), mtval (s4), mstatus (s6), counts (s5),
 * and resumes after the trapping instruction (at ra for a fetch fault). */
    .balign 4
handler:
    csrr s2, mcause
    csrr s3, mepc
    csrr s4, mtval
    csrr s6, mstatus
    addi s5, s5, 1
    li t5, 1
    beq s2, t5, 2f        /* a fetch fault resumes at ra */
    lhu t4, 0(s3)         /* the trapping instruction's length */
    andi t4, t4, 3
    li t5, 3
    addi t3, s3, 2
    bne t4, t5, 1f
    addi t3, t3, 2
1:  csrw mepc, t3
    mret
2:  csrw mepc, ra
    mret

    .data
    .balign 4
buffer:
    .word 0x11223344, 0x55667788
