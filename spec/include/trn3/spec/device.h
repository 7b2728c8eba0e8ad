/* The Trainium3 chip as its host driver sees it: BAR layout, chip control
 * registers, DMA queues (descriptor rings with doorbells and completion
 * records), the execution notification queue, MSI-X vectors, and the
 * device address map. Shared by the chip model (models/chip), the driver
 * (sw/driver) and firmware; docs/device.md is the prose. Plain C.
 */
#ifndef TRN3_SPEC_DEVICE_H
#define TRN3_SPEC_DEVICE_H

#include <stdint.h>

/* ---- Device address map (what NeuronCores and DMA engines address; BAR2
 * maps it from 0) ---- */
#define TRN3_DEV_HBM_STACKS 4u
#define TRN3_DEV_HBM_STRIDE 0x1000000000ull /* stack s at s x 64 GiB */
#define TRN3_DEV_HBM_BASE(s) ((uint64_t)(s)*TRN3_DEV_HBM_STRIDE)
/* The stacks striped: byte x of this window is byte ((x / G) / 4) x G + x
 * mod G of stack (x / G) mod 4, G the chip's hbm_stripe.granule (1 MiB):
 * one buffer here streams from every stack at once. It aliases the stacks
 * from their byte 0 (models/hbm/stack_interleave.h); past 4 x a stack's
 * size (4 x 36 GiB) the stacks answer with an address error. */
#define TRN3_DEV_HBM_STRIPED_BASE (TRN3_DEV_HBM_STACKS * TRN3_DEV_HBM_STRIDE) /* 256 GiB */
#define TRN3_DEV_HBM_STRIPED_SIZE (3 * TRN3_DEV_HBM_STRIDE) /* 192 GiB */
#define TRN3_DEV_CORES 8u
/* NeuronCore c's SBUF as device memory: byte a of the window is byte a mod
 * P of partition a / P, P the core's sbuf_partition_size (256 KiB: 128
 * partitions, 32 MiB). The chip's DMA engine, its host (BAR2) and other
 * chips' fabric writes reach it here: collectives SBUF to SBUF. */
#define TRN3_DEV_SBUF_BASE(c) (0x7000000000ull + (uint64_t)(c)*TRN3_DEV_SBUF_STRIDE) /* 448 GiB */
#define TRN3_DEV_SBUF_STRIDE 0x2000000ull /* 32 MiB */

/* Fabric addresses: chip id's device address a, reached over NeuronLink
 * from any chip: writes there are carried as TLPs and forwarded chip to chip
 * and switch to switch by the route tables (docs/ultraserver.md). */
#define TRN3_FABRIC_SHIFT 40u
#define TRN3_FABRIC_ADDR(id, a) ((((uint64_t)(id) + 1) << TRN3_FABRIC_SHIFT) | (a))
#define TRN3_FABRIC_ID(addr) ((uint32_t)((addr) >> TRN3_FABRIC_SHIFT) - 1u)
#define TRN3_FABRIC_OFFSET(addr) ((addr) & ((1ull << TRN3_FABRIC_SHIFT) - 1))
#define TRN3_FABRIC_CHIPS 256u

/* ---- BARs ---- */
#define TRN3_BAR0_SIZE 0x1000000ull /* 16 MiB of registers */
#define TRN3_BAR2_SIZE \
    0x8000000000ull /* 512 GiB window onto the device address map: the stacks, them striped, the cores' SBUF */

/* ---- BAR0 layout (a block's registers take BLOCK_SIZE bytes from its base) ---- */
#define TRN3_BAR0_CHIP 0x000000u /* chip control, below */
#define TRN3_BAR0_MAILBOX 0x010000u /* the MCU mailbox, host side (spec/mailbox.h offsets) */
#define TRN3_BAR0_CORE(c) (0x100000u + 0x10000u * (c)) /* NeuronCore c (spec/neuroncore.h registers) */
#define TRN3_BAR0_DMA(q) (0x200000u + TRN3_DMA_QUEUE_BLOCK_SIZE * (q)) /* DMA queue q, below */
#define TRN3_BAR0_NOTIFY 0x000100u /* notification queue (in the chip control block), below */
#define TRN3_BAR0_HBM(s) (0x020000u + TRN3_BAR0_HBM_BLOCK_SIZE * (s)) /* HBM stack s controller, below */
#define TRN3_BAR0_LINK(p) (0x030000u + 0x100u * (p)) /* NeuronLink port p: link registers (spec/link.h) */
#define TRN3_BAR0_CHIP_BLOCK_SIZE 0x1000u
#define TRN3_BAR0_MAILBOX_BLOCK_SIZE 0x1000u
#define TRN3_BAR0_CORE_BLOCK_SIZE 0x10000u
#define TRN3_BAR0_HBM_BLOCK_SIZE 0x1000u
#define TRN3_NEURONLINK_PORTS 20u /* 160 lanes as x8 ports; a port may hold a wider bundle */
/* The chip's MCU sees the same register space at TRN3_MCU_CHIP_BASE + offset
 * (spec/mcu.h): the firmware drives HBM, links and cores through it. */

/* Chip control */
#define TRN3_CHIP_ID 0x00u /* RO: 0x1D0F7364 */
#define TRN3_CHIP_VERSION 0x04u /* RO: model version */
#define TRN3_CHIP_BOOT_STATUS 0x08u /* RO: the MCU's boot status (TRN3_BOOT_* in spec/mcu.h) */
#define TRN3_CHIP_LNC 0x0Cu /* RW: logical core size, 1 or 2 (reset 1) */
#define TRN3_CHIP_CORE_RESET 0x10u /* WO: bit c resets NeuronCore c (engines stop, state cleared) */
#define TRN3_CHIP_ERR_STATUS 0x14u /* W1C: error causes, below */
#define TRN3_CHIP_ERR_ENABLE 0x18u /* RW: causes that raise the error vector (reset all) */
#define TRN3_CHIP_CORE_STATE 0x1Cu /* RO: 2 bits per core: 0 idle, 1 running, 2 error */
#define TRN3_CHIP_LAUNCH 0x20u /* WO: bits 4:0 engine mask, bits 11:8 core: start those engines at LAUNCH_PC */
#define TRN3_CHIP_LAUNCH_PC(e) (0x40u + 8u * (e)) /* RW 8: start address of engine e (0 tensor .. 4 sync) */
#define TRN3_CHIP_FW_EVENT 0x24u /* WO: firmware writes 1 to report an event to the host (ERR_STATUS bit 28) */
#define TRN3_CHIP_NL_PORTS 0x28u /* RO: bit p: NeuronLink port p has a link */
#define TRN3_CHIP_FABRIC_ID \
    0x2Cu /* RW: this chip on the NeuronLink fabric: bits 7:0 its id, bit 31 ENABLE (reset 0: off) */
#define TRN3_FABRIC_ID_MASK 0xFFu
#define TRN3_FABRIC_ENABLE 0x80000000u /* the chip sends, accepts and forwards fabric writes; program ROUTE first */
#define TRN3_CHIP_FABRIC_RX_BYTES 0x30u /* RO 8: bytes of fabric writes that landed in this chip's memory */
#define TRN3_CHIP_MCU_RESET \
    0x3Cu /* WO: TRN3_MCU_RESET_KEY warm-resets the MCU and its mailbox: the boot ROM checks the firmware again */
#define TRN3_MCU_RESET_KEY 0x4D435552u /* "MCUR" */
#define TRN3_CHIP_DMA_QUEUES 0x70u /* RO 4: the DMA queues this chip has (queue q < DMA_QUEUES) */
/* RO 4, w = 0..3: bit q % 32 of word q / 32 is set while DMA queue q has
 * descriptors left to run (enabled, HEAD != TAIL, not stopped on an error):
 * one read tells a host which of 32 queues are done (clear: done, stopped
 * on an error, which ERR_STATUS says, disabled, or never rung) */
#define TRN3_CHIP_DMA_PENDING(w) (0x80u + 4u * (w))
#define TRN3_DMA_PENDING_WORDS (TRN3_DMA_QUEUES_MAX / 32u)
#define TRN3_CHIP_FABRIC_DROPPED 0x38u /* RO 4: fabric TLPs this chip dropped (fabric off, or no route): ERR_FABRIC */
/* RO 8: bytes of fabric writes of channel c (the sending queue's number, or its descriptor's ON_CHANNEL) that landed */
#define TRN3_CHIP_FABRIC_RX_CHANNEL(c) (0x800u + 8u * (c))
#define TRN3_FABRIC_CHANNELS 128u /* counts; a DMA queue q counts on channel q unless ON_CHANNEL names another */
/* RW 8: where a reducing write of channel c that asks for an operand
 * (TRN3_DESC_REDUCE_OPERAND) finds it: at its address + this offset (mod
 * 2^64) in this chip's device address space. The receiver owns its memory's
 * layout, so it says where the other operand lies; the TLP carries one bit. */
#define TRN3_CHIP_FABRIC_OPERAND(c) (0xC00u + 8u * (c))
/* RW: the NeuronLink ports towards chip d (bit p: port p is a next hop on a shortest path; 0: no route) */
#define TRN3_CHIP_ROUTE(d) (0x400u + 4u * (d))
#define TRN3_ROUTE_NONE 0u
#define TRN3_ROUTE_PORT(p) (1u << (p))
/* Of the n equal next hops (a chip's set ports, lowest first; a fabric
 * switch's equal ports the same way), a TLP from chip s to chip d on fabric
 * channel c takes number TRN3_ROUTE_PICK(s, d, c, n): one flow (source,
 * destination, channel) keeps one path and so its order; flows spread over
 * the planes and switches. For a completion, s is the completer, d the
 * requester. */
#define TRN3_ROUTE_PICK(s, d, c, n) (((unsigned)(s) + (unsigned)(d) + (unsigned)(c)) % (unsigned)(n))

#define TRN3_CHIP_ID_VALUE 0x1D0F7364u
#define TRN3_CHIP_VERSION_VALUE 0x00010000u /* major << 16 | minor: 1.0 */
/* CORE_RESET */
#define TRN3_CORE_RESET_BIT(c) (1u << (c)) /* resets NeuronCore c */
/* CORE_STATE: core c's state in bits 2c+1:2c */
#define TRN3_CORE_STATE_IDLE 0u
#define TRN3_CORE_STATE_RUNNING 1u
#define TRN3_CORE_STATE_ERROR 2u
#define TRN3_CORE_STATE(v, c) (((v) >> (2u * (c))) & 0x3u)
#define TRN3_CORE_STATE_FIELD(c, state) ((uint32_t)(state) << (2u * (c)))
/* LAUNCH */
#define TRN3_LAUNCH_ENGINES(v) ((v)&0x1Fu) /* bits 4:0: engine e is bit e */
#define TRN3_LAUNCH_CORE(v) (((v) >> 8) & 0xFu) /* bits 11:8 */
#define TRN3_LAUNCH_VALUE(core, engines) (((uint32_t)(core) << 8) | (uint32_t)(engines))
/* FW_EVENT */
#define TRN3_FW_EVENT_REPORT 0x1u /* write: report an event (ERR_STATUS TRN3_ERR_FIRMWARE) */
/* NL_PORTS */
#define TRN3_NL_PORT(p) (1u << (p)) /* NeuronLink port p has a link */
#define TRN3_ERR_CORE(c) (1u << (c)) /* NeuronCore c stopped on an error */
#define TRN3_ERR_DMA_BITS 16u /* ERR_STATUS bits 23:8; queues TRN3_ERR_DMA_BITS apart share one */
#define TRN3_ERR_DMA(q) (1u << (8u + (q) % TRN3_ERR_DMA_BITS)) /* DMA queue q stopped on an error */
#define TRN3_ERR_HBM(s) (1u << (24 + (s))) /* HBM stack s reported an uncorrectable error */
#define TRN3_ERR_FABRIC (1u << 29) /* a NeuronLink TLP was dropped here (FABRIC_DROPPED counts them) */
#define TRN3_ERR_FIRMWARE (1u << 28) /* the firmware reported an event (a link down, ...): ask it */

/* HBM stack controller (TRN3_BAR0_HBM(s); models/hbm/hbm_stack.h) */
#define TRN3_HBM_ID 0x00u /* RO 4: 0x48424d33 "HBM3" */
#define TRN3_HBM_CE_COUNT 0x08u /* RO 8 */
#define TRN3_HBM_UE_COUNT 0x10u /* RO 8 */
#define TRN3_HBM_ADDR_ERRORS 0x18u /* RO 8 */
#define TRN3_HBM_LAST_ERROR_ADDR 0x20u /* RO 8 */
#define TRN3_HBM_IRQ_STATUS 0x28u /* W1C 4: bit 0 uncorrectable, 1 corrected, 2 address error */
#define TRN3_HBM_IRQ_ENABLE 0x2Cu /* RW 4: reset UNCORRECTABLE | ADDRESS (corrected errors only count) */
#define TRN3_HBM_IRQ_UNCORRECTABLE 0x1u
#define TRN3_HBM_IRQ_CORRECTED 0x2u
#define TRN3_HBM_IRQ_ADDRESS 0x4u
#define TRN3_HBM_INJECT_ADDR 0x30u /* RW 8: address of the word INJECT_MASK flips (debug) */
#define TRN3_HBM_INJECT_MASK 0x38u /* WO 8: a non-zero mask flips those bits of the 64-bit word */
#define TRN3_HBM_TRAIN_CTRL 0x40u /* WO 4: 1 starts initialisation and training */
#define TRN3_HBM_TRAIN_STATUS 0x44u /* RO 4: TRN3_HBM_TRAIN_{UNTRAINED,BUSY,READY} in bits 7:0 */
#define TRN3_HBM_TRAIN_START 0x1u /* TRAIN_CTRL */
#define TRN3_HBM_TRAIN_UNTRAINED 0u
#define TRN3_HBM_TRAIN_BUSY 1u
#define TRN3_HBM_TRAIN_READY 2u
#define TRN3_HBM_TRAIN_STATE_MASK 0xFFu /* TRAIN_STATUS bits 7:0: the state */
#define TRN3_HBM_ID_VALUE 0x48424d33u

/* ---- DMA queues: rings of descriptors in host or device memory, as many
 * as the chip's DMA_QUEUES register says (TRN3_DMA_QUEUES unless the
 * platform's dma0.queues says otherwise; at most TRN3_DMA_QUEUES_MAX, one
 * per fabric channel, all of whose register blocks BAR0 holds); the host writes descriptors, then the new tail into TAIL (the
 * doorbell); the engine moves each descriptor's bytes, writes a completion
 * record, advances HEAD and, if the descriptor asks, raises the queue's
 * MSI-X vector. An error stops the queue (STATUS error, ERR_STATUS bit). ---- */
#define TRN3_DMA_QUEUES 16u /* the default count */
#define TRN3_DMA_QUEUES_MAX TRN3_FABRIC_CHANNELS
#define TRN3_DMA_QUEUE_BLOCK_SIZE 0x100u /* each queue's register block: queue q at q x 0x100 */
#define TRN3_DMA_RING_BASE 0x00u /* RW 8: ring address (host: bus address, through the IOMMU) */
#define TRN3_DMA_RING_SIZE 0x08u /* RW 4: entries, a power of two */
#define TRN3_DMA_TAIL 0x0Cu /* RW 4: producer index (the doorbell) */
#define TRN3_DMA_HEAD 0x10u /* RO 4: consumer index: descriptors done */
#define TRN3_DMA_STATUS 0x14u /* RO 4: TRN3_DMA_STATE_* | error << 8 */
#define TRN3_DMA_CPL_BASE 0x18u /* RW 8: completion records, one per ring entry */
#define TRN3_DMA_CONTROL 0x20u /* RW 4: bit 0 enable, bit 1 ring and records in device memory */
/* CONTROL */
#define TRN3_DMA_CONTROL_ENABLE 0x1u /* serve the ring; a 0-to-1 edge restarts a stopped queue */
#define TRN3_DMA_CONTROL_DEVICE_RING 0x2u /* ring and completion records in device memory (else host) */
/* STATUS: state in bits 7:0, error in bits 15:8 */
#define TRN3_DMA_STATUS_STATE(s) ((s)&0xFFu) /* TRN3_DMA_STATE_* */
#define TRN3_DMA_STATUS_ERROR(s) (((s) >> 8) & 0xFFu) /* TRN3_DMA_ERR_*, 0 none */
#define TRN3_DMA_STATUS_VALUE(state, error) ((uint32_t)(state) | ((uint32_t)(error) << 8))
#define TRN3_DMA_STATE_IDLE 0u
#define TRN3_DMA_STATE_RUNNING 1u
#define TRN3_DMA_STATE_ERROR 2u
#define TRN3_DMA_ERR_HOST 1u /* a host access failed (IOMMU fault, UR) */
#define TRN3_DMA_ERR_DEVICE 2u /* a device access failed */
#define TRN3_DMA_ERR_DESCRIPTOR 3u /* malformed descriptor */

struct trn3_dma_descriptor { /* 32 bytes */
    uint64_t src;
    uint64_t dst;
    uint32_t length;
    uint32_t flags; /* TRN3_DESC_* */
    uint64_t user; /* echoed in the completion record */
};
#define TRN3_DESC_SRC_HOST 0x1u /* src is a host bus address (else a device address) */
#define TRN3_DESC_DST_HOST 0x2u
#define TRN3_DESC_INTERRUPT 0x4u /* raise the queue's vector when done */
/* Reduce: dst = dst op src, element by element, done at the destination's
 * memory (a fabric destination reduces as the data lands: one transfer).
 * dst must be a device address and length whole elements, else the
 * descriptor is malformed. Rules: models/numerics/reduce.h. */
#define TRN3_DESC_REDUCE 0x8u
/* Reduce with an operand (with REDUCE, to a fabric address): the landing
 * chip writes dst = operand op src, the operand at dst + its
 * FABRIC_OPERAND(channel) (the channel as ON_CHANNEL below): a reduction
 * out of place, from one buffer into another, in one transfer and with the
 * memory traffic of one in place (read the operand, write dst). A chip's own
 * memory is reached through its own fabric address. Without REDUCE, or to a
 * device or host address, the descriptor is malformed. */
#define TRN3_DESC_REDUCE_OPERAND 0x40u
/* Wait: moves nothing; queue q holds here until this chip's
 * FABRIC_RX_CHANNEL(q) reaches src (the bytes landed from other chips'
 * queue q), then completes the descriptor. The other queues go on
 * meanwhile. It orders a collective's steps: a step that forwards what a
 * peer sent waits for it; a collective on queue q of every chip counts only
 * its own traffic. */
#define TRN3_DESC_WAIT_FABRIC 0x10u
/* Channel: with ON_CHANNEL set, the descriptor's fabric writes count on
 * channel c at their destination (instead of this queue's number), and a
 * WAIT_FABRIC waits on this chip's FABRIC_RX_CHANNEL(c) (instead of the
 * queue's). A schedule gives each peer or step its own count this way, so a
 * wait is never met by bytes of a later step from another peer. */
#define TRN3_DESC_ON_CHANNEL_SET 0x10000u
#define TRN3_DESC_ON_CHANNEL(c) (TRN3_DESC_ON_CHANNEL_SET | (((uint32_t)(c)&0x7Fu) << 20))
#define TRN3_DESC_CHANNEL_OF(f, queue) ((uint32_t)(((f)&TRN3_DESC_ON_CHANNEL_SET) ? (((f) >> 20) & 0x7Fu) : (queue)))

/* Timing only (a simulator extension, not the hardware's): the descriptor
 * takes the time moving its bytes would take, through every memory, link
 * and switch on the way, and moves no data and reduces nothing. Sweeps past
 * the sizes worth checking use it: the times are those of the data mode. */
#define TRN3_DESC_TIMING_ONLY 0x20u
/* Traffic class (bits 29:27): the TC of the descriptor's fabric TLPs. Links
 * and switches with strict arbitration send a higher class first (tensor
 * parallel over expert parallel, say); with fifo arbitration it is carried
 * and ignored. */
#define TRN3_DESC_TRAFFIC_CLASS(tc) ((((uint32_t)(tc)) & 0x7u) << 27)
#define TRN3_DESC_TRAFFIC_CLASS_OF(f) (((f) >> 27) & 0x7u)
#define TRN3_DESC_REDUCE_OP(f) (((f) >> 8) & 0xFu) /* TRN3_REDUCE_SUM, _MAX, _MIN, _PROD */
#define TRN3_DESC_REDUCE_TYPE(f) (((f) >> 12) & 0xFu) /* TRN3_REDUCE_FP32 ... _INT32 */
#define TRN3_DESC_REDUCE_WITH(op, type) (TRN3_DESC_REDUCE | ((uint32_t)(op) << 8) | ((uint32_t)(type) << 12))
#define TRN3_REDUCE_SUM 0u
#define TRN3_REDUCE_MAX 1u
#define TRN3_REDUCE_MIN 2u
#define TRN3_REDUCE_PROD 3u
#define TRN3_REDUCE_FP32 0u
#define TRN3_REDUCE_BF16 1u
#define TRN3_REDUCE_FP16 2u
#define TRN3_REDUCE_E4M3 3u
#define TRN3_REDUCE_E5M2 4u
#define TRN3_REDUCE_INT32 5u

struct trn3_dma_completion { /* 16 bytes */
    uint32_t status; /* 0 done, else TRN3_DMA_ERR_* */
    uint32_t length;
    uint64_t user;
};

/* ---- Notification queue: the chip reports each NeuronCore that stops
 * (all its started engines done, or one stopped on an error) as an entry in
 * a host ring and raises TRN3_MSIX_NOTIFY. ---- */
#define TRN3_NOTIFY_BASE 0x00u /* RW 8: ring address (host bus address) */
#define TRN3_NOTIFY_SIZE 0x08u /* RW 4: entries, a power of two */
#define TRN3_NOTIFY_HEAD 0x0Cu /* RO 4: producer index (entries written) */
#define TRN3_NOTIFY_TAIL 0x10u /* RW 4: consumer index (the host has read up to) */
#define TRN3_NOTIFY_CONTROL 0x14u /* RW 4: bit 0 enable */
#define TRN3_NOTIFY_CONTROL_ENABLE 0x1u

struct trn3_notification { /* 16 bytes */
    uint32_t core;
    uint32_t status; /* TRN3_NOTIFY_STATUS_* */
    uint32_t error; /* the first failing engine's error code */
    uint32_t sequence; /* counts notifications from 1 */
};

#define TRN3_NOTIFY_STATUS_DONE 0u /* every started engine finished */
#define TRN3_NOTIFY_STATUS_ERROR 1u /* an engine stopped on an error: `error` says which */

/* ---- MSI-X vectors ---- */
#define TRN3_MSIX_MAILBOX 0u /* the MCU answered (M2H doorbell) */
#define TRN3_MSIX_ERROR 1u /* ERR_STATUS & ERR_ENABLE became non-zero */
#define TRN3_MSIX_NOTIFY 2u /* a notification was written */
#define TRN3_MSIX_VECTORS 32u
#define TRN3_MSIX_DMA_VECTORS 24u /* vectors 8 to 31; queues TRN3_MSIX_DMA_VECTORS apart share one */
#define TRN3_MSIX_DMA(q) (8u + (q) % TRN3_MSIX_DMA_VECTORS)

#endif /* TRN3_SPEC_DEVICE_H */
