/* The host <-> MCU mailbox: registers and message layouts, shared by the
 * MCU firmware (C), the host driver and the models. docs/firmware.md
 * describes the protocol. Plain C.
 *
 * One page, seen by both sides (the MCU at TRN3_MCU_MAILBOX_BASE, the host
 * through the chip's BAR): the host writes a request into REQUEST and 1 into
 * H2M_DOORBELL, which raises the MCU's mailbox interrupt line; the MCU
 * answers into RESPONSE, clears H2M_DOORBELL and writes 1 into
 * M2H_DOORBELL, which raises the host's mailbox interrupt; the host reads
 * the response and clears M2H_DOORBELL. One request at a time.
 */
#ifndef TRN3_SPEC_MAILBOX_H
#define TRN3_SPEC_MAILBOX_H

#include <stdint.h>

#define TRN3_MCU_MAILBOX_BASE 0x10004000u

#define TRN3_MBOX_H2M_DOORBELL 0x000u /* host: write 1 to ring; MCU: reads 1 while pending, writes 1 to clear */
#define TRN3_MBOX_M2H_DOORBELL 0x004u /* MCU: write 1 to ring; host: reads 1 while pending, writes 1 to clear */
#define TRN3_MBOX_REQUEST 0x100u /* struct trn3_mbox_request */
#define TRN3_MBOX_RESPONSE 0x200u /* struct trn3_mbox_response */
/* Bit 0 of either doorbell, under the name that reads right where it is used:
 * it reads 1 while pending; writing it rings from the ringing side and
 * clears from the other. */
#define TRN3_MBOX_DOORBELL_PENDING 0x1u
#define TRN3_MBOX_DOORBELL_RING 0x1u
#define TRN3_MBOX_DOORBELL_CLEAR 0x1u
#define TRN3_MBOX_PAYLOAD_MAX 248u

struct trn3_mbox_request {
    uint16_t command; /* TRN3_MBOX_CMD_* */
    uint16_t length; /* payload bytes */
    uint32_t tag; /* echoed in the response */
    uint8_t payload[TRN3_MBOX_PAYLOAD_MAX];
};

struct trn3_mbox_response {
    uint16_t status; /* TRN3_MBOX_STATUS_* */
    uint16_t length; /* payload bytes */
    uint32_t tag;
    uint8_t payload[TRN3_MBOX_PAYLOAD_MAX];
};

/* Commands (request payload -> response payload) */
#define TRN3_MBOX_CMD_VERSION 1u /* none -> struct trn3_mbox_version */
#define TRN3_MBOX_CMD_STATUS 2u /* none -> struct trn3_mbox_status */
#define TRN3_MBOX_CMD_RESET_CORE 3u /* uint32_t core -> none */
#define TRN3_MBOX_CMD_SET_ROUTING_ID 4u /* uint32_t id -> none */
#define TRN3_MBOX_CMD_LINK_STATUS 5u /* uint32_t port -> struct trn3_mbox_link */
#define TRN3_MBOX_CMD_ECC_COUNTERS 6u /* uint32_t stack -> struct trn3_mbox_ecc */
#define TRN3_MBOX_CMD_TELEMETRY 7u /* none -> struct trn3_mbox_telemetry */

#define TRN3_MBOX_STATUS_OK 0u
#define TRN3_MBOX_STATUS_UNKNOWN_COMMAND 1u
#define TRN3_MBOX_STATUS_BAD_LENGTH 2u /* the payload length does not fit the command */
#define TRN3_MBOX_STATUS_BAD_ARGUMENT 3u
#define TRN3_MBOX_STATUS_NOT_AVAILABLE 4u /* the block the command needs is not on this chip (yet) */

struct trn3_mbox_version {
    uint32_t firmware_version; /* major << 16 | minor */
    uint32_t protocol_version;
    char build[32]; /* NUL-terminated */
};

struct trn3_mbox_status {
    uint32_t boot_status; /* TRN3_BOOT_* */
    uint32_t uptime_us; /* since the firmware started */
    uint32_t commands_served; /* including this one */
    uint32_t errors; /* requests answered with an error status */
    uint32_t routing_id;
};

struct trn3_mbox_link {
    uint32_t status; /* the link's STATUS register (spec/link.h) */
    uint32_t lanes; /* its LANES register: configured, spare, spares in use, failed */
    uint32_t failed[3]; /* failed-lane bitmap, lanes 0-95 */
    uint32_t trainings;
    uint32_t replayed;
    uint32_t retrains_by_firmware;
};

struct trn3_mbox_ecc {
    uint32_t corrected;
    uint32_t uncorrectable;
    uint32_t address_errors;
    uint32_t last_error_addr_lo, last_error_addr_hi;
    uint32_t train_status; /* TRN3_HBM_TRAIN_STATUS */
};

struct trn3_mbox_telemetry {
    uint32_t uptime_us;
    uint32_t hbm_ready; /* bit per trained stack */
    uint32_t ports_present; /* bit per NeuronLink port with a link */
    uint32_t ports_up;
    uint32_t ports_degraded;
    uint32_t corrected_total;
    uint32_t uncorrectable_total;
    uint32_t hbm_events; /* HBM error interrupts the firmware handled */
    uint32_t link_events; /* link interrupts the firmware handled */
    uint32_t core_resets; /* RESET_CORE commands served */
};

#define TRN3_MBOX_PROTOCOL_VERSION 2u

#endif
