/* A link's training and status registers (one 256-byte block per link,
 * mapped by the platform where the link's owner reaches it: a chip's MCU for
 * its NeuronLink ports, a test directly). Shared by the models (models/pcie
 * link), firmware and the driver; docs/pcie.md describes the LTSSM. Plain C.
 */
#ifndef TRN3_SPEC_LINK_H
#define TRN3_SPEC_LINK_H

#include <stdint.h>

#define TRN3_LINK_CONTROL 0x00u /* RW */
#define TRN3_LINK_STATUS 0x04u /* RO */
#define TRN3_LINK_LANES 0x08u /* RO */
#define TRN3_LINK_FAILED0 0x10u /* RO: failed lanes 0-31 (bit per lane) */
#define TRN3_LINK_FAILED1 0x14u /* RO: lanes 32-63 */
#define TRN3_LINK_FAILED2 0x18u /* RO: lanes 64-95 */
#define TRN3_LINK_EVENTS 0x20u /* W1C; the link's interrupt is (EVENTS & EVENT_MASK) != 0 */
#define TRN3_LINK_EVENT_MASK 0x24u /* RW */
#define TRN3_LINK_TRAININGS 0x28u /* RO: trainings and retrains completed */
#define TRN3_LINK_REPLAYED 0x2Cu /* RO: TLPs replayed after a retrain */
#define TRN3_LINK_BLOCK_SIZE 0x100u

/* CONTROL */
#define TRN3_LINK_CONTROL_ENABLE 0x1u /* 1: train from Detect (links with auto_train do so at reset) */
#define TRN3_LINK_CONTROL_RETRAIN 0x2u /* write 1: go to Recovery and retrain (reads 0) */
#define TRN3_LINK_CONTROL_SPARING \
    0x4u /* spare lanes may replace failed ones (links with auto_train start with it set) */

/* STATUS */
#define TRN3_LINK_STATUS_STATE(s) ((s)&0xFu) /* TRN3_LTSSM_* */
#define TRN3_LINK_STATUS_EQ_PHASE(s) (((s) >> 4) & 0x3u)
#define TRN3_LINK_STATUS_SPEED(s) (((s) >> 8) & 0xFu) /* PCIe speed code: 5 Gen5, 6 Gen6, 7 UALink */
#define TRN3_LINK_STATUS_WIDTH(s) (((s) >> 16) & 0x7Fu)
#define TRN3_LINK_STATUS_UP 0x01000000u /* L0: data link active */
#define TRN3_LINK_STATUS_FLIT 0x02000000u /* flit mode */
#define TRN3_LINK_STATUS_DEGRADED 0x04000000u /* trained narrower than configured */
#define TRN3_LINK_STATUS_FAILED 0x08000000u /* training failed (no lanes, a dead retimer) */
/* The state, phase, speed and width fields of STATUS, as the link composes them */
#define TRN3_LINK_STATUS_VALUE(state, eq_phase, speed, width) \
    ((uint32_t)(state) | ((uint32_t)(eq_phase) << 4) | ((uint32_t)(speed) << 8) | ((uint32_t)(width) << 16))

#define TRN3_LTSSM_DISABLED 0u
#define TRN3_LTSSM_DETECT 1u
#define TRN3_LTSSM_POLLING 2u
#define TRN3_LTSSM_CONFIGURATION 3u
#define TRN3_LTSSM_L0 4u
#define TRN3_LTSSM_RECOVERY 5u /* EQ_PHASE tells the equalisation phase while equalising */

/* LANES */
#define TRN3_LINK_LANES_CONFIGURED(v) ((v)&0xFFu)
#define TRN3_LINK_LANES_SPARE(v) (((v) >> 8) & 0xFFu)
#define TRN3_LINK_LANES_SPARES_USED(v) (((v) >> 16) & 0xFFu)
#define TRN3_LINK_LANES_FAILED(v) (((v) >> 24) & 0xFFu)
#define TRN3_LINK_LANES_VALUE(configured, spare, spares_used, failed) \
    ((uint32_t)(configured) | ((uint32_t)(spare) << 8) | ((uint32_t)(spares_used) << 16) | ((uint32_t)(failed) << 24))

/* EVENTS */
#define TRN3_LINK_EVENT_UP 0x1u /* reached L0 */
#define TRN3_LINK_EVENT_DOWN 0x2u /* left L0 (lane fault, retrain) */
#define TRN3_LINK_EVENT_DEGRADED 0x4u /* trained narrower than configured */
#define TRN3_LINK_EVENT_FAILED 0x8u /* training failed */

#endif /* TRN3_SPEC_LINK_H */
