/* The Nitro-v6 NIC as its driver sees it (vendor 0x1D0F, device
 * TRN3_PCI_DEVICE_NIC, class network): registers in BAR0, the work queue
 * entries and completions it reads and writes in host memory, and the RDMA
 * header it puts in front of every SRD message. Shared by the NIC model
 * (models/nic nitro_nic) and the driver (sw/driver nic_device);
 * docs/scaleout.md describes the behaviour. Plain C; all fields little-endian.
 */
#ifndef TRN3_SPEC_NIC_H
#define TRN3_SPEC_NIC_H

#include <stdint.h>

/* ---- BAR0 ---- */
#define TRN3_NIC_ID 0x000u /* RO: TRN3_NIC_ID_VALUE */
#define TRN3_NIC_ID_VALUE 0x3643494Eu /* "NIC6" */
#define TRN3_NIC_NODE 0x008u /* RO, 8 bytes: this NIC's 48-bit network address */
#define TRN3_NIC_PORTS 0x010u /* RO: bit p set: port p's link is up */
#define TRN3_NIC_RDMA_ERRORS 0x018u /* RO, 8 bytes: inbound RDMA requests refused (key, bounds, domain, access) */
#define TRN3_NIC_LAST_ERROR 0x020u /* RO: the last refused request: qp | status << 16 */
#define TRN3_NIC_ERROR_VECTOR 0x024u /* RW: MSI-X vector raised when an inbound request is refused; 0xFFFF: none */

/* Queue pairs: TRN3_NIC_QPS blocks of TRN3_NIC_QP_BLOCK bytes from TRN3_NIC_QP_BASE.
 * The send queue (SQ), receive queue (RQ) and completion queue (CQ) are
 * rings in host memory of a power-of-two number of entries. Software
 * writes entries, then the tail (the doorbell); the NIC advances the head.
 * The NIC writes completions at the CQ's tail; software advances CQ_HEAD
 * past the ones it consumed. */
#define TRN3_NIC_QP_BASE 0x1000u
#define TRN3_NIC_QP_BLOCK 0x100u
#define TRN3_NIC_QPS 16u
#define TRN3_NIC_QP(q) (TRN3_NIC_QP_BASE + (q)*TRN3_NIC_QP_BLOCK)
#define TRN3_NIC_SQ_BASE 0x00u /* RW, 8 */
#define TRN3_NIC_SQ_SIZE 0x08u /* RW: entries (a power of two) */
#define TRN3_NIC_SQ_TAIL 0x0Cu /* RW: the doorbell */
#define TRN3_NIC_SQ_HEAD 0x10u /* RO */
#define TRN3_NIC_RQ_BASE 0x18u /* RW, 8 */
#define TRN3_NIC_RQ_SIZE 0x20u /* RW */
#define TRN3_NIC_RQ_TAIL 0x24u /* RW: receive buffers posted */
#define TRN3_NIC_RQ_HEAD 0x28u /* RO: receive buffers used */
#define TRN3_NIC_CQ_BASE 0x30u /* RW, 8 */
#define TRN3_NIC_CQ_SIZE 0x38u /* RW */
#define TRN3_NIC_CQ_HEAD 0x3Cu /* RW: software has consumed completions up to here */
#define TRN3_NIC_CQ_TAIL 0x40u /* RO: completions written */
#define TRN3_NIC_QP_PD 0x44u /* RW: the queue pair's protection domain */
#define TRN3_NIC_QP_VECTOR 0x48u /* RW: MSI-X vector raised per completion; 0xFFFF: none */
#define TRN3_NIC_QP_CONTROL 0x4Cu /* RW: bit 0 enable */
#define TRN3_NIC_QP_STATUS 0x50u /* RO: TRN3_NIC_QP_OK, or an error that stopped the queue pair */
#define TRN3_NIC_QP_ENABLE 0x1u
#define TRN3_NIC_QP_OK 0u
#define TRN3_NIC_QP_CQ_OVERRUN 1u /* a completion found the CQ full: the queue pair stops */
#define TRN3_NIC_QP_BAD_RING 2u /* a ring that is not a power of two, or a ring access that failed */
#define TRN3_NIC_NO_VECTOR 0xFFFFu

/* Memory regions: TRN3_NIC_MRS entries of TRN3_NIC_MR_BLOCK bytes from
 * TRN3_NIC_MR_BASE. A region is host memory at a bus address (through the
 * IOMMU) that requests name by key; a remote address is an offset in the
 * region. A key is the entry's index | a tag << 8 that software chooses, so
 * a stale key of a re-registered entry is refused. */
#define TRN3_NIC_MR_BASE 0x4000u
#define TRN3_NIC_MR_BLOCK 0x20u
#define TRN3_NIC_MRS 64u
#define TRN3_NIC_MR(i) (TRN3_NIC_MR_BASE + (i)*TRN3_NIC_MR_BLOCK)
#define TRN3_NIC_MR_ADDR 0x00u /* RW, 8: bus address */
#define TRN3_NIC_MR_LENGTH 0x08u /* RW, 8 */
#define TRN3_NIC_MR_KEY 0x10u /* RW: the key requests must give; its low 8 bits are the index */
#define TRN3_NIC_MR_PD 0x14u /* RW: the protection domain */
#define TRN3_NIC_MR_ACCESS 0x18u /* RW: TRN3_NIC_ACCESS_* ; 0: not valid */
#define TRN3_NIC_ACCESS_LOCAL 0x1u /* the owner's own send, write and read buffers */
#define TRN3_NIC_ACCESS_REMOTE_WRITE 0x2u
#define TRN3_NIC_ACCESS_REMOTE_READ 0x4u
#define TRN3_NIC_KEY_INDEX(k) ((k)&0xFFu)

/* ---- Host memory ---- */
/* A send queue entry */
typedef struct {
    uint8_t opcode; /* TRN3_NIC_OP_* */
    uint8_t flags; /* TRN3_NIC_WQE_TIMING_ONLY, else 0 */
    uint16_t dst_qp;
    uint32_t imm; /* WRITE_IMM: delivered in the target's receive completion */
    uint64_t dst_node;
    uint64_t local_addr; /* bus address of the local buffer (SEND, WRITE: source; READ: destination) */
    uint32_t length;
    uint32_t lkey; /* the local buffer's region */
    uint64_t remote_offset; /* WRITE, WRITE_IMM, READ: offset in the remote region */
    uint32_t rkey;
    uint32_t reserved;
    uint64_t wr_id; /* returned in the completion */
    uint64_t reserved2;
} trn3_nic_wqe; /* 64 bytes */
/* Simulation only (like the DMA's TRN3_DESC_TIMING_ONLY): SEND, WRITE,
 * WRITE_IMM and READ check and complete as ever and take the time of their
 * bytes on PCIe and the network, but move none: the local buffer is not
 * read, the packets carry the RDMA header and no payload, the target's
 * memory is not written (a READ's local buffer neither). */
#define TRN3_NIC_WQE_TIMING_ONLY 0x1u

/* A receive queue entry */
typedef struct {
    uint64_t addr; /* bus address */
    uint32_t length;
    uint32_t lkey;
    uint64_t wr_id;
    uint64_t reserved;
} trn3_nic_rqe; /* 32 bytes */

/* A completion */
typedef struct {
    uint64_t wr_id;
    uint32_t status; /* TRN3_NIC_ST_* */
    uint8_t opcode; /* the request's, or TRN3_NIC_OP_RECV */
    uint8_t phase; /* 1 on the first pass over the ring, 0 on the next, and so on */
    uint16_t src_qp; /* receive completions: the sender's queue pair */
    uint32_t bytes;
    uint32_t imm;
    uint64_t src_node; /* receive completions: the sender */
} trn3_nic_cqe; /* 32 bytes */

#define TRN3_NIC_OP_SEND 1u
#define TRN3_NIC_OP_WRITE 2u
#define TRN3_NIC_OP_WRITE_IMM 3u
#define TRN3_NIC_OP_READ 4u
#define TRN3_NIC_OP_RECV 0x80u /* completions only: a SEND received; | TRN3_NIC_OP_WRITE_IMM: a WRITE_IMM landed */

#define TRN3_NIC_ST_OK 0u
#define TRN3_NIC_ST_LOCAL_PROTECTION 1u /* the local buffer is not in its region (lkey, bounds, domain) */
#define TRN3_NIC_ST_REMOTE_ACCESS 2u /* the target refused: rkey, bounds, domain or access */
#define TRN3_NIC_ST_RNR 3u /* the target had no receive buffer (SEND, WRITE_IMM) or it was too small */
#define TRN3_NIC_ST_TRANSPORT 4u /* SRD gave up: the connection failed */
#define TRN3_NIC_ST_BAD_REQUEST 5u /* unknown opcode, reserved bits, a length over TRN3_NIC_MAX_MESSAGE */
#define TRN3_NIC_ST_LOCAL_DMA 6u /* a host memory access failed (IOMMU) */
#define TRN3_NIC_MAX_MESSAGE (1u << 30)

/* ---- On the wire: the RDMA header at the front of every SRD message ---- */
#define TRN3_RDMA_OP 0u /* u8: TRN3_NIC_OP_*, or TRN3_RDMA_RESPONSE */
#define TRN3_RDMA_STATUS 1u /* u8: responses: TRN3_NIC_ST_* */
#define TRN3_RDMA_FLAGS 2u /* u16: TRN3_RDMA_TIMING_ONLY, else 0 */
#define TRN3_RDMA_TIMING_ONLY 0x1u /* the message's bytes after the header are timed, not carried */
#define TRN3_RDMA_IMM 4u /* u32 */
#define TRN3_RDMA_TOKEN 8u /* u64: the request's, echoed by its response */
#define TRN3_RDMA_OFFSET 16u /* u64: remote offset */
#define TRN3_RDMA_KEY 24u /* u32: rkey */
#define TRN3_RDMA_LENGTH 28u /* u32: READ: bytes asked for */
#define TRN3_RDMA_HEADER_BYTES 32u /* data follows (SEND, WRITE, WRITE_IMM; a READ's response) */
#define TRN3_RDMA_RESPONSE 0x40u

#endif
