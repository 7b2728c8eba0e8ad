/* The MCU firmware: reports itself, runs its self-test, brings the chip up
 * (trains every HBM stack, trains every NeuronLink port through its LTSSM
 * registers and reports its lanes), serves the host driver through the
 * mailbox, and handles HBM and link errors (docs/firmware.md). On an MCU
 * without a chip (sysctl CHIP = 0) the chip commands answer
 * TRN3_MBOX_STATUS_NOT_AVAILABLE. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "trn3/spec/device.h"
#include "trn3/spec/link.h"
#include "trn3/spec/mailbox.h"
#include "trn3/spec/mcu.h"

#define FIRMWARE_VERSION ((0u << 16) | 2u) /* 0.2 */
#define REG(base, off) (*(volatile uint32_t*)((base) + (off)))
#define CHIP(off) REG(TRN3_MCU_CHIP_BASE, (off))

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
        hi = REG(TRN3_MCU_TIMER_BASE, TRN3_MCU_TIMER_MTIME_HI);
        lo = REG(TRN3_MCU_TIMER_BASE, TRN3_MCU_TIMER_MTIME);
    } while (hi != REG(TRN3_MCU_TIMER_BASE, TRN3_MCU_TIMER_MTIME_HI));
    return ((uint64_t)hi << 32) | lo;
}

static struct {
    uint64_t start;
    uint32_t served, errors, routing_id;
    int chip; /* a chip behind the window */
    uint32_t hbm_ready, ports, ports_up, ports_degraded;
    uint32_t hbm_events, link_events, core_resets;
    uint32_t retrains[TRN3_NEURONLINK_PORTS];
} state;

static uint32_t us_since(uint64_t t0) {
    const uint32_t freq = REG(TRN3_MCU_TIMER_BASE, TRN3_MCU_TIMER_FREQ);
    return (uint32_t)((mtime() - t0) * 1000000u / freq);
}

static void wake_in(uint32_t ticks);

/* Waits until (reg & mask) == want, at most timeout_us; 1 when it came.
 * Between reads the hart sleeps for a microsecond (wfi, woken by the timer:
 * mie.MTIE without mstatus.MIE, so no trap) instead of spinning: a wait of
 * a millisecond costs a thousand reads, not a million instructions. */
static int poll(uint32_t off, uint32_t mask, uint32_t want, uint32_t timeout_us) {
    const uint32_t ticks_per_us = REG(TRN3_MCU_TIMER_BASE, TRN3_MCU_TIMER_FREQ) / 1000000u;
    const uint64_t t0 = mtime();
    __asm__ volatile("csrs mie, %0" ::"r"(1u << 7));
    while ((CHIP(off) & mask) != want) {
        if (us_since(t0) > timeout_us) return 0;
        wake_in(ticks_per_us ? ticks_per_us : 1);
        __asm__ volatile("wfi");
    }
    return 1;
}

/* ---- HBM: initialise and train each stack ---- */
static void hbm_init(void) {
    for (unsigned s = 0; s < TRN3_DEV_HBM_STACKS; ++s) {
        const uint32_t base = TRN3_BAR0_HBM(s);
        if (CHIP(base + TRN3_HBM_ID) != TRN3_HBM_ID_VALUE) {
            printf("hbm%u: not present\n", s);
            continue;
        }
        const uint64_t t0 = mtime();
        CHIP(base + TRN3_HBM_TRAIN_CTRL) = TRN3_HBM_TRAIN_START;
        if (!poll(base + TRN3_HBM_TRAIN_STATUS, TRN3_HBM_TRAIN_STATE_MASK, TRN3_HBM_TRAIN_READY, 10000)) {
            printf("hbm%u: training timed out\n", s);
            continue;
        }
        state.hbm_ready |= 1u << s;
        CHIP(base + TRN3_HBM_IRQ_ENABLE) = TRN3_HBM_IRQ_UNCORRECTABLE | TRN3_HBM_IRQ_ADDRESS;
        printf("hbm%u: trained in %u us\n", s, (unsigned)us_since(t0));
    }
}

/* ---- NeuronLink: train every port, report width and lane sparing ---- */
static void link_report(unsigned p) {
    const uint32_t base = TRN3_BAR0_LINK(p);
    const uint32_t st = CHIP(base + TRN3_LINK_STATUS), lanes = CHIP(base + TRN3_LINK_LANES);
    if (st & TRN3_LINK_STATUS_UP) state.ports_up |= 1u << p;
    else state.ports_up &= ~(1u << p);
    if (st & TRN3_LINK_STATUS_DEGRADED) state.ports_degraded |= 1u << p;
    else state.ports_degraded &= ~(1u << p);
    if (st & TRN3_LINK_STATUS_UP)
        printf("nl%u: up, speed %u x%u of x%u, %u failed lanes, %u spares in use%s\n", p,
               (unsigned)TRN3_LINK_STATUS_SPEED(st), (unsigned)TRN3_LINK_STATUS_WIDTH(st),
               (unsigned)TRN3_LINK_LANES_CONFIGURED(lanes), (unsigned)TRN3_LINK_LANES_FAILED(lanes),
               (unsigned)TRN3_LINK_LANES_SPARES_USED(lanes), (st & TRN3_LINK_STATUS_DEGRADED) ? ", DEGRADED" : "");
    else
        printf("nl%u: down (state %u%s)\n", p, (unsigned)TRN3_LINK_STATUS_STATE(st),
               (st & TRN3_LINK_STATUS_FAILED) ? ", training failed" : "");
}

static void links_init(void) {
    state.ports = CHIP(TRN3_CHIP_NL_PORTS);
    for (unsigned p = 0; p < TRN3_NEURONLINK_PORTS; ++p)
        if (state.ports & TRN3_NL_PORT(p)) {
            const uint32_t base = TRN3_BAR0_LINK(p);
            CHIP(base + TRN3_LINK_EVENT_MASK) =
                TRN3_LINK_EVENT_DOWN | TRN3_LINK_EVENT_DEGRADED | TRN3_LINK_EVENT_FAILED;
            CHIP(base + TRN3_LINK_CONTROL) = TRN3_LINK_CONTROL_ENABLE | TRN3_LINK_CONTROL_SPARING;
        }
    /* All ports train at once; wait for each to come up or fail. */
    for (unsigned p = 0; p < TRN3_NEURONLINK_PORTS; ++p)
        if (state.ports & TRN3_NL_PORT(p)) {
            poll(TRN3_BAR0_LINK(p) + TRN3_LINK_STATUS, TRN3_LINK_STATUS_UP | TRN3_LINK_STATUS_FAILED,
                 TRN3_LINK_STATUS_UP, 2000);
            CHIP(TRN3_BAR0_LINK(p) + TRN3_LINK_EVENTS) = 0xFFFFFFFFu; /* what training raised is reported here */
            link_report(p);
        }
}

/* ---- errors ---- */
static void hbm_errors(void) {
    for (unsigned s = 0; s < TRN3_DEV_HBM_STACKS; ++s) {
        const uint32_t base = TRN3_BAR0_HBM(s);
        const uint32_t st = CHIP(base + TRN3_HBM_IRQ_STATUS);
        if (!st) continue;
        ++state.hbm_events;
        printf("hbm%u: error interrupt 0x%x: %u uncorrectable, %u corrected, last at 0x%08x%08x\n", s, (unsigned)st,
               (unsigned)CHIP(base + TRN3_HBM_UE_COUNT), (unsigned)CHIP(base + TRN3_HBM_CE_COUNT),
               (unsigned)CHIP(base + TRN3_HBM_LAST_ERROR_ADDR + 4), (unsigned)CHIP(base + TRN3_HBM_LAST_ERROR_ADDR));
        CHIP(base + TRN3_HBM_IRQ_STATUS) = st;
        CHIP(TRN3_CHIP_FW_EVENT) = TRN3_FW_EVENT_REPORT;
    }
}

static void link_errors(void) {
    for (unsigned p = 0; p < TRN3_NEURONLINK_PORTS; ++p) {
        if (!(state.ports & TRN3_NL_PORT(p))) continue;
        const uint32_t base = TRN3_BAR0_LINK(p);
        const uint32_t ev = CHIP(base + TRN3_LINK_EVENTS);
        if (!ev) continue;
        ++state.link_events;
        CHIP(base + TRN3_LINK_EVENTS) = ev;
        if (ev & TRN3_LINK_EVENT_FAILED) {
            /* Training failed: start it again from Detect, a few times. */
            if (state.retrains[p] < 3) {
                ++state.retrains[p];
                printf("nl%u: training failed, retraining (%u)\n", p, (unsigned)state.retrains[p]);
                CHIP(base + TRN3_LINK_CONTROL) = 0;
                CHIP(base + TRN3_LINK_CONTROL) = TRN3_LINK_CONTROL_ENABLE | TRN3_LINK_CONTROL_SPARING;
            }
        } else if (ev & TRN3_LINK_EVENT_DOWN) {
            /* Lanes failed in L0: the link is retraining on its own; wait for it. */
            printf("nl%u: link down, retraining\n", p);
            poll(base + TRN3_LINK_STATUS, TRN3_LINK_STATUS_UP, TRN3_LINK_STATUS_UP, 1000);
            CHIP(base + TRN3_LINK_EVENTS) = CHIP(base + TRN3_LINK_EVENTS) & (TRN3_LINK_EVENT_UP | TRN3_LINK_EVENT_DOWN);
        }
        link_report(p);
        CHIP(TRN3_CHIP_FW_EVENT) = TRN3_FW_EVENT_REPORT;
    }
}

/* Self-test: SRAM holds patterns, the timer runs. */
static int self_test(void) {
    static volatile uint32_t scratch[64];
    for (unsigned i = 0; i < 64; ++i) scratch[i] = 0xa5a50000u ^ (i * 0x01010101u);
    for (unsigned i = 0; i < 64; ++i)
        if (scratch[i] != (0xa5a50000u ^ (i * 0x01010101u))) return 0;
    const uint64_t t0 = mtime();
    for (volatile unsigned i = 0; i < 2000; ++i) {}
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
        case TRN3_MBOX_CMD_ECC_COUNTERS: {
            uint32_t arg = 0;
            if (length != 4) {
                status = TRN3_MBOX_STATUS_BAD_LENGTH;
                break;
            }
            memcpy(&arg, (const void*)rq->payload, 4);
            if (!state.chip) {
                status = TRN3_MBOX_STATUS_NOT_AVAILABLE;
            } else if (command == TRN3_MBOX_CMD_RESET_CORE) {
                if (arg >= TRN3_DEV_CORES) status = TRN3_MBOX_STATUS_BAD_ARGUMENT;
                else {
                    CHIP(TRN3_CHIP_CORE_RESET) = TRN3_CORE_RESET_BIT(arg);
                    CHIP(TRN3_CHIP_ERR_STATUS) = TRN3_ERR_CORE(arg);
                    ++state.core_resets;
                }
            } else if (command == TRN3_MBOX_CMD_LINK_STATUS) {
                if (arg >= TRN3_NEURONLINK_PORTS || !(state.ports & TRN3_NL_PORT(arg)))
                    status = TRN3_MBOX_STATUS_BAD_ARGUMENT;
                else {
                    const uint32_t base = TRN3_BAR0_LINK(arg);
                    struct trn3_mbox_link l;
                    l.status = CHIP(base + TRN3_LINK_STATUS);
                    l.lanes = CHIP(base + TRN3_LINK_LANES);
                    l.failed[0] = CHIP(base + TRN3_LINK_FAILED0);
                    l.failed[1] = CHIP(base + TRN3_LINK_FAILED1);
                    l.failed[2] = CHIP(base + TRN3_LINK_FAILED2);
                    l.trainings = CHIP(base + TRN3_LINK_TRAININGS);
                    l.replayed = CHIP(base + TRN3_LINK_REPLAYED);
                    l.retrains_by_firmware = state.retrains[arg];
                    memcpy((void*)rs->payload, &l, out = sizeof l);
                }
            } else {
                if (arg >= TRN3_DEV_HBM_STACKS) status = TRN3_MBOX_STATUS_BAD_ARGUMENT;
                else {
                    const uint32_t base = TRN3_BAR0_HBM(arg);
                    struct trn3_mbox_ecc e;
                    e.corrected = CHIP(base + TRN3_HBM_CE_COUNT);
                    e.uncorrectable = CHIP(base + TRN3_HBM_UE_COUNT);
                    e.address_errors = CHIP(base + TRN3_HBM_ADDR_ERRORS);
                    e.last_error_addr_lo = CHIP(base + TRN3_HBM_LAST_ERROR_ADDR);
                    e.last_error_addr_hi = CHIP(base + TRN3_HBM_LAST_ERROR_ADDR + 4);
                    e.train_status = CHIP(base + TRN3_HBM_TRAIN_STATUS);
                    memcpy((void*)rs->payload, &e, out = sizeof e);
                }
            }
            break;
        }
        case TRN3_MBOX_CMD_TELEMETRY: {
            struct trn3_mbox_telemetry t;
            memset(&t, 0, sizeof t);
            t.uptime_us = us_since(state.start);
            t.hbm_ready = state.hbm_ready;
            t.ports_present = state.ports;
            t.ports_up = state.ports_up;
            t.ports_degraded = state.ports_degraded;
            for (unsigned s2 = 0; state.chip && s2 < TRN3_DEV_HBM_STACKS; ++s2) {
                t.corrected_total += CHIP(TRN3_BAR0_HBM(s2) + TRN3_HBM_CE_COUNT);
                t.uncorrectable_total += CHIP(TRN3_BAR0_HBM(s2) + TRN3_HBM_UE_COUNT);
            }
            t.hbm_events = state.hbm_events;
            t.link_events = state.link_events;
            t.core_resets = state.core_resets;
            if (length != 0) status = TRN3_MBOX_STATUS_BAD_LENGTH;
            else memcpy((void*)rs->payload, &t, out = sizeof t);
            break;
        }
        default: status = TRN3_MBOX_STATUS_UNKNOWN_COMMAND; break;
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
    REG(TRN3_MCU_TIMER_BASE, TRN3_MCU_TIMER_MTIMECMP_HI) = 0xffffffffu; /* no early match while updating */
    REG(TRN3_MCU_TIMER_BASE, TRN3_MCU_TIMER_MTIMECMP) = (uint32_t)t;
    REG(TRN3_MCU_TIMER_BASE, TRN3_MCU_TIMER_MTIMECMP_HI) = (uint32_t)(t >> 32);
}

static void kick(void) { REG(TRN3_MCU_WDT_BASE, TRN3_MCU_WDT_KICK) = TRN3_MCU_WDT_KICK_KEY; }

int main(void) {
    state.start = mtime();
    printf("trn3 mcu firmware %u.%u, mailbox protocol %u\n", FIRMWARE_VERSION >> 16, FIRMWARE_VERSION & 0xffff,
           TRN3_MBOX_PROTOCOL_VERSION);
    printf("self-test %s\n", self_test() ? "passed" : "FAILED");
    /* The chip first: the host sees RUNNING only once HBM and links are trained. */
    state.chip = REG(TRN3_MCU_SYSCTL_BASE, TRN3_MCU_SYSCTL_CHIP) != 0;
    if (state.chip) {
        hbm_init();
        links_init();
    }
    REG(TRN3_MCU_SYSCTL_BASE, TRN3_MCU_SYSCTL_BOOT_STATUS) = TRN3_BOOT_RUNNING;
    /* The mailbox doorbell, HBM and link errors (mie.MEIE) and the timer
     * (mie.MTIE) wake wfi without trapping (mstatus.MIE off). */
    REG(TRN3_MCU_INTC_BASE, TRN3_MCU_INTC_ENABLE) =
        (1u << TRN3_MCU_IRQ_MAILBOX) | (state.chip ? (1u << TRN3_MCU_IRQ_HBM) | (1u << TRN3_MCU_IRQ_LINK) : 0);
    __asm__ volatile("csrci mstatus, 8\n csrw mie, %0" ::"r"((1u << 11) | (1u << 7)));
    watchdog_ticks = REG(TRN3_MCU_TIMER_BASE, TRN3_MCU_TIMER_FREQ) / 100;
    REG(TRN3_MCU_WDT_BASE, TRN3_MCU_WDT_TIMEOUT) = watchdog_ticks;
    REG(TRN3_MCU_WDT_BASE, TRN3_MCU_WDT_CTRL) = TRN3_MCU_WDT_CTRL_ENABLE;
    printf("ready (watchdog %u ticks)\n", (unsigned)watchdog_ticks);
    const volatile struct trn3_mbox_request* rq = (const volatile void*)(TRN3_MCU_MAILBOX_BASE + TRN3_MBOX_REQUEST);
    volatile struct trn3_mbox_response* rs = (volatile void*)(TRN3_MCU_MAILBOX_BASE + TRN3_MBOX_RESPONSE);
    for (;;) {
        while (!(REG(TRN3_MCU_MAILBOX_BASE, TRN3_MBOX_H2M_DOORBELL) & TRN3_MBOX_DOORBELL_PENDING)) {
            const uint32_t pending = REG(TRN3_MCU_INTC_BASE, TRN3_MCU_INTC_PENDING);
            if (pending & (1u << TRN3_MCU_IRQ_HBM)) hbm_errors();
            if (pending & (1u << TRN3_MCU_IRQ_LINK)) link_errors();
            if (pending & ((1u << TRN3_MCU_IRQ_HBM) | (1u << TRN3_MCU_IRQ_LINK))) continue;
            wake_in(watchdog_ticks / 2);
            __asm__ volatile("wfi");
            kick();
        }
        kick();
        serve(rq, rs);
        REG(TRN3_MCU_MAILBOX_BASE, TRN3_MBOX_H2M_DOORBELL) = TRN3_MBOX_DOORBELL_CLEAR; /* taken */
        REG(TRN3_MCU_MAILBOX_BASE, TRN3_MBOX_M2H_DOORBELL) = TRN3_MBOX_DOORBELL_RING; /* answered */
    }
}
