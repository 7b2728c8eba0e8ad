/* Interrupts: the timer (mtimecmp), software (msip), wfi with and without
 * global enable, vectored mtvec. */
#include "test.h"
#define TIMER TRN3_MCU_TIMER_BASE
    .section .text.start
    .globl _start
_start:
    la t0, handler
    csrw mtvec, t0
    li s1, TIMER
    TEST 1      /* a timer interrupt wakes wfi and is taken */
    li s5, 0
    lw a0, TRN3_MCU_TIMER_MTIME(s1)
    addi a0, a0, 20
    sw zero, TRN3_MCU_TIMER_MTIMECMP_HI(s1)
    sw a0, TRN3_MCU_TIMER_MTIMECMP(s1)
    li t0, 0x80
    csrw mie, t0          /* MTIE */
    csrsi mstatus, 8
1:  wfi
    beqz s5, 1b
    li t0, 0x80000007
    bne s2, t0, fail
    lw a1, TRN3_MCU_TIMER_MTIME(s1)
    bltu a1, a0, fail     /* not before its time */
    TEST 2      /* a software interrupt, raised by writing msip */
    li s5, 0
    li t0, 0x8
    csrw mie, t0          /* MSIE */
    li t0, TRN3_MCU_TIMER_MSIP_PENDING
    sw t0, TRN3_MCU_TIMER_MSIP(s1)
    nop
    EXPECT s5, 1
    li t0, 0x80000003
    bne s2, t0, fail
    TEST 3      /* wfi with MIE clear: wakes on the pending interrupt, no trap */
    csrci mstatus, 8
    li s5, 0
    lw a0, TRN3_MCU_TIMER_MTIME(s1)
    addi a0, a0, 10
    sw zero, TRN3_MCU_TIMER_MTIMECMP_HI(s1)
    sw a0, TRN3_MCU_TIMER_MTIMECMP(s1)
    li t0, 0x80
    csrw mie, t0
    wfi
    csrr a1, mip
    andi a1, a1, 0x80
    EXPECT a1, 0x80
    EXPECT s5, 0
    TEST 4      /* vectored mtvec: the timer interrupt enters at base + 4 x 7 */
    la t0, vectors
    ori t0, t0, 1
    csrw mtvec, t0
    li s5, 0
    csrsi mstatus, 8      /* MTIP is still pending: taken at once */
    nop
    EXPECT s5, 7
    j pass
    END_TESTS

/* Direct handler: record mcause, count, and silence the source. */
    .balign 4
handler:
    csrr s2, mcause
    addi s5, s5, 1
    li t5, -1
    sw t5, TRN3_MCU_TIMER_MTIMECMP(s1)
    sw t5, TRN3_MCU_TIMER_MTIMECMP_HI(s1)
    sw zero, TRN3_MCU_TIMER_MSIP(s1)
    mret

/* Vectored: each entry records its cause number in s5. */
    .balign 64
vectors:
    .rept 16
    j vector_entry
    .endr
vector_entry:
    csrr s2, mcause
    andi s5, s2, 0x1f
    li t5, -1
    sw t5, TRN3_MCU_TIMER_MTIMECMP(s1)
    sw t5, TRN3_MCU_TIMER_MTIMECMP_HI(s1)
    csrci mstatus, 8      /* stays off after mret: MPIE cleared below */
    li t5, 0x80
    csrc mstatus, t5
    mret
