/* Self-checking MCU test programs: each test puts its number in gp, runs
 * instructions and compares results; the first mismatch reports
 * (gp << 1) | 1 to the tohost register, and reaching the end reports 1.
 * The register is on the system-control page (spec/mcu.h). */
#include "trn3/spec/mcu.h"

#define TOHOST (TRN3_MCU_SYSCTL_BASE + TRN3_MCU_SYSCTL_TOHOST)

/* Compare a register with a constant (t6 is the scratch). */
.macro EXPECT reg, value
    li t6, \value
    bne \reg, t6, fail
.endm

.macro TEST number
    li gp, \number
.endm

/* The common ending: pass and fail. */
.macro END_TESTS
pass:
    li t0, TOHOST
    li t1, TRN3_MCU_TOHOST_PASS
    sw t1, 0(t0)
1:  j 1b
fail:                   /* TRN3_MCU_TOHOST_FAIL(gp) */
    slli gp, gp, 1
    ori gp, gp, 1
    li t0, TOHOST
    sw gp, 0(t0)
2:  j 2b
.endm
