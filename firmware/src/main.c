/* The MCU firmware: reports itself, runs its self-test, and serves the host
 * driver through the mailbox (docs/firmware.md). Chip blocks (HBM, links,
 * NeuronCores) are driven here as each lands in the platform; until then
 * their commands answer TRN3_MBOX_STATUS_NOT_AVAILABLE. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "trn3/spec/mailbox.h"
#include "trn3/spec/mcu.h"

#define FIRMWARE_VERSION ((0u << 16) | 1u) /* 0.1 */
#define REG(base, off) (*(volatile uint32_t*)((base) + (off)))

/* picolibc's stdout: bytes to the UART. */
static int uart_putc(char c, FILE* f) {
    (void)f;
    REG(TRN3_MCU_UART_BASE, TRN3_MCU_UART_TX) = (uint8_t)c;
    return (unsigned char)c;
}
static FILE uart_file = FDEV_SETUP_STREAM(uart_putc, NULL, NULL, _FDEV_SETUP_WRITE);
FILE* const stdout = &uart_file;

static uint64_t mtime(void) {
    uint32_t hi, lo;
    do {
        hi = REG(TRN3_MCU_TIMER_BASE, TRN3_MCU_TIMER_MTIME + 4);
        lo = REG(TRN3_MCU_TIMER_BASE, TRN3_MCU_TIMER_MTIME);
    } while (hi != REG(TRN3_MCU_TIMER_BASE, TRN3_MCU_TIMER_MTIME + 4));
    return ((uint64_t)hi << 32) | lo;
}

static struct {
    uint64_t start;
    uint32_t served, errors, routing_id;
} state;

/* Self-test: SRAM holds patterns, the timer runs. */
static int self_test(void) {
    static volatile uint32_t scratch[64];
    for (unsigned i = 0; i < 64; ++i) scratch[i] = 0xa5a50000u ^ (i * 0x01010101u);
    for (unsigned i = 0; i < 64; ++i)
        if (scratch[i] != (0xa5a50000u ^ (i * 0x01010101u))) return 0;
    const uint64_t t0 = mtime();
    for (volatile unsigned i = 0; i < 2000; ++i) {
    }
    return mtime() > t0;
}

/* Answers one request: fills the response's status and payload. */
static void serve(const volatile struct trn3_mbox_request* rq, volatile struct trn3_mbox_response* rs) {
    const uint16_t command = rq->command, length = rq->length;
    uint16_t status = TRN3_MBOX_STATUS_OK, out = 0;
    if (length > TRN3_MBOX_PAYLOAD_MAX) {
        status = TRN3_MBOX_STATUS_BAD_LENGTH;
    } else {
        switch (command) {
        case TRN3_MBOX_CMD_VERSION: {
            struct trn3_mbox_version v;
            memset(&v, 0, sizeof v);
            v.firmware_version = FIRMWARE_VERSION;
            v.protocol_version = TRN3_MBOX_PROTOCOL_VERSION;
            strncpy(v.build, "trn3vp mcu firmware", sizeof v.build - 1);
            if (length != 0) status = TRN3_MBOX_STATUS_BAD_LENGTH;
            else memcpy((void*)rs->payload, &v, out = sizeof v);
            break;
        }
        case TRN3_MBOX_CMD_STATUS: {
            struct trn3_mbox_status s;
            s.boot_status = REG(TRN3_MCU_SYSCTL_BASE, TRN3_MCU_SYSCTL_BOOT_STATUS);
            const uint32_t freq = REG(TRN3_MCU_TIMER_BASE, TRN3_MCU_TIMER_FREQ);
            s.uptime_us = (uint32_t)((mtime() - state.start) * 1000000u / freq);
            s.commands_served = state.served + 1;
            s.errors = state.errors;
            s.routing_id = state.routing_id;
            if (length != 0) status = TRN3_MBOX_STATUS_BAD_LENGTH;
            else memcpy((void*)rs->payload, &s, out = sizeof s);
            break;
        }
        case TRN3_MBOX_CMD_SET_ROUTING_ID:
            if (length != 4) status = TRN3_MBOX_STATUS_BAD_LENGTH;
            else memcpy(&state.routing_id, (const void*)rq->payload, 4);
            break;
        case TRN3_MBOX_CMD_RESET_CORE:
        case TRN3_MBOX_CMD_LINK_STATUS:
        case TRN3_MBOX_CMD_ECC_COUNTERS:
        case TRN3_MBOX_CMD_TELEMETRY:
            status = length == 4 || command == TRN3_MBOX_CMD_TELEMETRY ? TRN3_MBOX_STATUS_NOT_AVAILABLE
                                                                       : TRN3_MBOX_STATUS_BAD_LENGTH;
            break;
        default:
            status = TRN3_MBOX_STATUS_UNKNOWN_COMMAND;
            break;
        }
    }
    rs->status = status;
    rs->length = out;
    rs->tag = rq->tag;
    ++state.served;
    if (status != TRN3_MBOX_STATUS_OK) ++state.errors;
}

/* The watchdog resets the MCU if the firmware stops kicking it: 10 ms,
 * kicked every 5 ms by a timer wake-up in the idle loop. */
static uint32_t watchdog_ticks;

static void wake_in(uint32_t ticks) {
    const uint64_t t = mtime() + ticks;
    REG(TRN3_MCU_TIMER_BASE, TRN3_MCU_TIMER_MTIMECMP + 4) = 0xffffffffu; /* no early match while updating */
    REG(TRN3_MCU_TIMER_BASE, TRN3_MCU_TIMER_MTIMECMP) = (uint32_t)t;
    REG(TRN3_MCU_TIMER_BASE, TRN3_MCU_TIMER_MTIMECMP + 4) = (uint32_t)(t >> 32);
}

static void kick(void) { REG(TRN3_MCU_WDT_BASE, TRN3_MCU_WDT_KICK) = TRN3_MCU_WDT_KICK_KEY; }

int main(void) {
    REG(TRN3_MCU_SYSCTL_BASE, TRN3_MCU_SYSCTL_BOOT_STATUS) = TRN3_BOOT_RUNNING;
    state.start = mtime();
    printf("trn3 mcu firmware %u.%u, mailbox protocol %u\n", FIRMWARE_VERSION >> 16, FIRMWARE_VERSION & 0xffff,
           TRN3_MBOX_PROTOCOL_VERSION);
    printf("self-test %s\n", self_test() ? "passed" : "FAILED");
    /* The mailbox doorbell (mie.MEIE) and the timer (mie.MTIE) wake wfi
     * without trapping (mstatus.MIE off). */
    REG(TRN3_MCU_INTC_BASE, TRN3_MCU_INTC_ENABLE) = 1u << TRN3_MCU_IRQ_MAILBOX;
    __asm__ volatile("csrci mstatus, 8\n csrw mie, %0" ::"r"((1u << 11) | (1u << 7)));
    watchdog_ticks = REG(TRN3_MCU_TIMER_BASE, TRN3_MCU_TIMER_FREQ) / 100;
    REG(TRN3_MCU_WDT_BASE, TRN3_MCU_WDT_TIMEOUT) = watchdog_ticks;
    REG(TRN3_MCU_WDT_BASE, TRN3_MCU_WDT_CTRL) = 1;
    printf("ready (watchdog %u ticks)\n", (unsigned)watchdog_ticks);
    const volatile struct trn3_mbox_request* rq = (const volatile void*)(TRN3_MCU_MAILBOX_BASE + TRN3_MBOX_REQUEST);
    volatile struct trn3_mbox_response* rs = (volatile void*)(TRN3_MCU_MAILBOX_BASE + TRN3_MBOX_RESPONSE);
    for (;;) {
        while (!(REG(TRN3_MCU_MAILBOX_BASE, TRN3_MBOX_H2M_DOORBELL) & 1)) {
            wake_in(watchdog_ticks / 2);
            __asm__ volatile("wfi");
            kick();
        }
        kick();
        serve(rq, rs);
        REG(TRN3_MCU_MAILBOX_BASE, TRN3_MBOX_H2M_DOORBELL) = 1; /* taken */
        REG(TRN3_MCU_MAILBOX_BASE, TRN3_MBOX_M2H_DOORBELL) = 1; /* answered */
    }
}
