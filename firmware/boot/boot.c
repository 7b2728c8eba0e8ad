/* The boot ROM: checks the firmware image in SRAM against the SHA-256 the
 * chip was provisioned with (the fuse digest in the system-control page),
 * hashing it with the MCU's SHA-256 engine, and jumps to it, or refuses it
 * and stays in a safe state: interrupts off, waiting, with TRN3_BOOT_REFUSED
 * in the boot status register. */
#include <stdint.h>

#include "trn3/spec/mcu.h"

#define SYSCTL(off) (*(volatile uint32_t*)(TRN3_MCU_SYSCTL_BASE + (off)))
#define HASH(off) (*(volatile uint32_t*)(TRN3_MCU_HASH_BASE + (off)))
#define UART_TX (*(volatile uint32_t*)(TRN3_MCU_UART_BASE + TRN3_MCU_UART_TX))

static void say(const char* s) {
    while (*s) UART_TX = (uint8_t)*s++;
}

void boot_main(void) {
    SYSCTL(TRN3_MCU_SYSCTL_BOOT_STATUS) = TRN3_BOOT_CHECKING;
    const uint32_t base = SYSCTL(TRN3_MCU_SYSCTL_FW_BASE), size = SYSCTL(TRN3_MCU_SYSCTL_FW_SIZE);
    HASH(TRN3_MCU_HASH_SRC) = base;
    HASH(TRN3_MCU_HASH_LEN) = size;
    HASH(TRN3_MCU_HASH_CTRL) = TRN3_MCU_HASH_CTRL_START;
    uint32_t status;
    while ((status = HASH(TRN3_MCU_HASH_STATUS)) & TRN3_MCU_HASH_STATUS_BUSY) {}
    unsigned same = status == TRN3_MCU_HASH_STATUS_DONE;
    for (unsigned i = 0; i < TRN3_MCU_SYSCTL_DIGEST_WORDS; ++i)
        same &= HASH(TRN3_MCU_HASH_DIGEST + 4 * i) == SYSCTL(TRN3_MCU_SYSCTL_DIGEST + 4 * i);
    if (!same || size == 0) {
        SYSCTL(TRN3_MCU_SYSCTL_BOOT_STATUS) = TRN3_BOOT_REFUSED;
        say("boot: firmware image refused (SHA-256 differs from the provisioned digest)\n");
        __asm__ volatile("csrw mie, zero\n csrci mstatus, 8");
        for (;;) __asm__ volatile("wfi");
    }
    SYSCTL(TRN3_MCU_SYSCTL_BOOT_STATUS) = TRN3_BOOT_VERIFIED;
    say("boot: firmware image verified\n");
    void (*entry)(void) = (void (*)(void))SYSCTL(TRN3_MCU_SYSCTL_FW_ENTRY);
    entry();
}
