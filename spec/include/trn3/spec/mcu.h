/* The management controller's memory map and registers: the programming
 * model the MCU firmware (C), the host driver and the models share.
 * docs/firmware.md describes it. Plain C (the firmware includes it).
 *
 * Every MMIO block sits on its own 4 KiB page, away from ROM and SRAM, so
 * the hart's hot code and data never leave direct memory access.
 */
#ifndef TRN3_SPEC_MCU_H
#define TRN3_SPEC_MCU_H

/* Memories */
#define TRN3_MCU_ROM_BASE 0x00000000u /* boot ROM */
#define TRN3_MCU_ROM_SIZE 0x00010000u /* 64 KiB */
#define TRN3_MCU_SRAM_BASE 0x20000000u /* firmware image, data, stack */
#define TRN3_MCU_SRAM_SIZE 0x00040000u /* 256 KiB */
#define TRN3_MCU_BLOCK_SIZE 0x1000u /* each MMIO block's page */

/* UART: write a byte to TX; lines go to the simulator's log under the MCU's name. */
#define TRN3_MCU_UART_BASE 0x10000000u
#define TRN3_MCU_UART_TX 0x00u /* W: one byte */
#define TRN3_MCU_UART_STATUS 0x04u /* R: bit 0 TX ready (always 1) */
#define TRN3_MCU_UART_STATUS_TX_READY 0x1u

/* Timer (RISC-V CLINT layout for one hart): mtime counts at the timebase
 * frequency; MTIP = mtime >= mtimecmp; MSIP = msip bit 0. */
#define TRN3_MCU_TIMER_BASE 0x10001000u
#define TRN3_MCU_TIMER_MSIP 0x00u
#define TRN3_MCU_TIMER_MTIMECMP 0x08u /* 64-bit: low word, then high word at +4 */
#define TRN3_MCU_TIMER_MTIMECMP_HI 0x0cu
#define TRN3_MCU_TIMER_MTIME 0x10u /* 64-bit, read-only */
#define TRN3_MCU_TIMER_MTIME_HI 0x14u
#define TRN3_MCU_TIMER_FREQ 0x18u /* R: timebase in Hz */
#define TRN3_MCU_TIMER_MSIP_PENDING 0x1u /* MSIP bit 0: machine software interrupt pending */

/* Interrupt controller: level lines from chip blocks; MEIP = any pending & enabled. */
#define TRN3_MCU_INTC_BASE 0x10002000u
#define TRN3_MCU_INTC_PENDING 0x00u /* R: one bit per line */
#define TRN3_MCU_INTC_ENABLE 0x04u /* RW */
#define TRN3_MCU_INTC_LINES 32u /* line l is bit l of PENDING and ENABLE */
#define TRN3_MCU_IRQ_MAILBOX 0u /* the host rang the MCU's doorbell */
#define TRN3_MCU_IRQ_WATCHDOG 1u /* the watchdog expired once (it resets the MCU the second time) */
#define TRN3_MCU_IRQ_HBM 2u /* an HBM stack raised its error interrupt */
#define TRN3_MCU_IRQ_LINK 3u /* a NeuronLink port raised its event interrupt */

/* System control: test exit, boot status, the provisioned firmware digest. */
#define TRN3_MCU_SYSCTL_BASE 0x10003000u
#define TRN3_MCU_SYSCTL_TOHOST 0x00u /* W: 1 = pass, (n << 1) | 1 = fail with test n; stops the MCU */
#define TRN3_MCU_SYSCTL_BOOT_STATUS 0x04u /* RW: TRN3_BOOT_* */
#define TRN3_MCU_SYSCTL_FW_BASE 0x08u /* R: where the firmware image lies (SRAM) */
#define TRN3_MCU_SYSCTL_FW_SIZE 0x0cu /* R: its size in bytes */
#define TRN3_MCU_SYSCTL_FW_ENTRY 0x10u /* R: its entry point */
#define TRN3_MCU_SYSCTL_CHIP 0x14u /* R: 1 when the chip window (TRN3_MCU_CHIP_BASE) leads to a chip */
#define TRN3_MCU_SYSCTL_DIGEST 0x20u /* R: 32 bytes, SHA-256 the chip was provisioned with (fuses) */
#define TRN3_MCU_SYSCTL_DIGEST_WORDS 8u /* DIGEST + 4i: bytes 4i..4i+3, little-endian */
#define TRN3_MCU_TOHOST_PASS 1u
#define TRN3_MCU_TOHOST_FAIL(n) (((n) << 1) | 1u)
#define TRN3_MCU_TOHOST_TEST(v) ((v) >> 1) /* the failed test's number */

#define TRN3_BOOT_RESET 0u /* nothing run yet */
#define TRN3_BOOT_CHECKING 1u /* the boot ROM is hashing the image */
#define TRN3_BOOT_VERIFIED 2u /* digest matched: jumped to the firmware */
#define TRN3_BOOT_REFUSED 3u /* digest differs: the ROM stays in its safe loop */
#define TRN3_BOOT_RUNNING 4u /* the firmware has started */

/* Watchdog: counts timebase ticks from the last kick. The first expiry
 * raises TRN3_MCU_IRQ_WATCHDOG (a warning) and starts over; a second one
 * without a kick resets the MCU (warm: the boot ROM runs again, SRAM keeps
 * its contents) and disables the watchdog. */
#define TRN3_MCU_WDT_BASE 0x10005000u
#define TRN3_MCU_WDT_CTRL 0x00u /* RW: bit 0 enable */
#define TRN3_MCU_WDT_TIMEOUT 0x04u /* RW: ticks of the timer's timebase */
#define TRN3_MCU_WDT_KICK 0x08u /* W: TRN3_MCU_WDT_KICK_KEY restarts the count and clears the warning */
#define TRN3_MCU_WDT_STATUS 0x0cu /* R: bit 0 warning raised */
#define TRN3_MCU_WDT_RESETS 0x10u /* R: resets the watchdog has caused */
#define TRN3_MCU_WDT_KICK_KEY 0x5a5au
#define TRN3_MCU_WDT_CTRL_ENABLE 0x1u
#define TRN3_MCU_WDT_STATUS_WARNING 0x1u

/* SHA-256 engine (FIPS 180-4): hashes LEN bytes of the MCU's ROM or SRAM
 * from SRC, as the boot ROM's image check does. Writing CTRL.START reads the
 * data and starts; STATUS says BUSY until the engine's time for LEN bytes has
 * passed, then DONE with the digest; a range outside ROM and SRAM, or a start
 * while busy, sets ERROR and hashes nothing. */
#define TRN3_MCU_HASH_BASE 0x10006000u
#define TRN3_MCU_HASH_SRC 0x00u /* RW: MCU address of the data */
#define TRN3_MCU_HASH_LEN 0x04u /* RW: bytes */
#define TRN3_MCU_HASH_CTRL 0x08u /* W: bit 0 start */
#define TRN3_MCU_HASH_STATUS 0x0cu /* R: bit 0 busy, bit 1 done, bit 2 error */
#define TRN3_MCU_HASH_DIGEST 0x20u /* R: 32 bytes; DIGEST + 4i: bytes 4i..4i+3, little-endian (as SYSCTL_DIGEST) */
#define TRN3_MCU_HASH_DIGEST_WORDS 8u
#define TRN3_MCU_HASH_CTRL_START 0x1u
#define TRN3_MCU_HASH_STATUS_BUSY 0x1u
#define TRN3_MCU_HASH_STATUS_DONE 0x2u
#define TRN3_MCU_HASH_STATUS_ERROR 0x4u

/* Window onto the chip's address space (HBM, blocks' registers) through the MCU's bus port. */
#define TRN3_MCU_CHIP_BASE 0x40000000u

#endif
