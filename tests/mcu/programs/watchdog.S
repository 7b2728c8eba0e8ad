/* The watchdog: never kicked, it warns once (an external interrupt, noted
 * in SRAM, which a warm reset keeps) and then resets the MCU; after the
 * reset the program finds one reset and the warning, and passes. */
#include "test.h"
#define WDT TRN3_MCU_WDT_BASE
    .section .text.start
    .globl _start
_start:
    li s1, WDT
    lw a0, TRN3_MCU_WDT_RESETS(s1)
    bnez a0, after_reset
    TEST 1      /* arm it: 200 ticks (20 us), warnings as interrupts */
    la t0, handler
    csrw mtvec, t0
    li t0, TRN3_MCU_INTC_BASE
    li t1, 1 << TRN3_MCU_IRQ_WATCHDOG
    sw t1, TRN3_MCU_INTC_ENABLE(t0)
    li t0, 0x800
    csrw mie, t0
    csrsi mstatus, 8
    li t0, 200
    sw t0, TRN3_MCU_WDT_TIMEOUT(s1)
    li t0, TRN3_MCU_WDT_CTRL_ENABLE
    sw t0, TRN3_MCU_WDT_CTRL(s1)
1:  j 1b              /* a hung firmware: no kick */
after_reset:
    TEST 2
    EXPECT a0, 1
    la t0, warned
    lw t1, 0(t0)
    EXPECT t1, 1      /* the warning came before the reset */
    lw t2, TRN3_MCU_WDT_CTRL(s1)
    EXPECT t2, 0      /* and the reset disabled the watchdog */
    j pass
    END_TESTS

    .balign 4
handler:
    la t0, warned
    li t1, 1
    sw t1, 0(t0)
    li t0, TRN3_MCU_INTC_BASE
    sw zero, TRN3_MCU_INTC_ENABLE(t0)  /* the warning line stays high until a kick */
    mret

    .data
    .balign 4
warned:
    .word 0
