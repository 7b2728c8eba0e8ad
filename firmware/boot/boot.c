/* The boot ROM: checks the firmware image in SRAM against the SHA-256 the
 * chip was provisioned with (the fuse digest in the system-control page) and
 * jumps to it, or refuses it and stays in a safe state: interrupts off,
 * waiting, with TRN3_BOOT_REFUSED in the boot status register. */
#include <stdint.h>

#include "sha256.h"
#include "trn3/spec/mcu.h"

#define SYSCTL(off) (*(volatile uint32_t*)(TRN3_MCU_SYSCTL_BASE + (off)))
#define UART_TX (*(volatile uint32_t*)(TRN3_MCU_UART_BASE + TRN3_MCU_UART_TX))

static void say(const char* s) {
    while (*s) UART_TX = (uint8_t)*s++;
}

void boot_main(void) {
    SYSCTL(TRN3_MCU_SYSCTL_BOOT_STATUS) = TRN3_BOOT_CHECKING;
    const uint32_t base = SYSCTL(TRN3_MCU_SYSCTL_FW_BASE), size = SYSCTL(TRN3_MCU_SYSCTL_FW_SIZE);
    uint8_t digest[32];
    sha256((const uint8_t*)base, size, digest);
    unsigned same = 1;
    for (unsigned i = 0; i < TRN3_MCU_SYSCTL_DIGEST_WORDS; ++i) {
        const uint32_t fuse = SYSCTL(TRN3_MCU_SYSCTL_DIGEST + 4 * i);
        for (unsigned j = 0; j < 4; ++j) same &= digest[4 * i + j] == (uint8_t)(fuse >> (8 * j));
    }
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
