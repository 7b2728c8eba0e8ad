// nitro_nic: the Nitro-v6 NIC: a PCIe endpoint on its host, SRD on two
// Ethernet ports (one to each ToR), queue pairs and RDMA with memory keys.
//
//   PCIe link ══ ep ── bar0: registers (spec/nic.h)    bar2: 4 KiB, unused
//                   └─ dma: the NIC's requests into host memory (through the host's IOMMU)
//   srd.port(0), srd.port(1): the Ethernet links
//
// Send engine (a thread): serves the send queues round robin, one entry at
// a time. An entry is checked before anything moves: a known opcode, zero
// reserved fields, a length up to TRN3_NIC_MAX_MESSAGE (BAD_REQUEST); the
// local buffer inside a valid region of the queue pair's protection domain
// with local access (LOCAL_PROTECTION). SEND, WRITE and WRITE_IMM read the
// buffer and post one SRD message, the RDMA header and the data; READ posts
// the header. A request completes when its response comes back (the
// target's status; a READ's data is written to the local buffer first), or
// with TRANSPORT when SRD gives up on the connection.
//
// Receive engine (a thread): takes the SRD messages in their delivery
// order. WRITE, WRITE_IMM and READ name a region by key: it must be valid,
// the key must match (index and tag), the region must belong to the target
// queue pair's protection domain, allow the access, and hold [offset,
// offset + length). Otherwise the request is refused (REMOTE_ACCESS):
// nothing moves, RDMA_ERRORS counts it, LAST_ERROR names it, ERROR_VECTOR
// is raised, and the response tells the requester. SEND and WRITE_IMM take
// the target queue pair's next receive buffer (none: RNR; too small: RNR,
// and the buffer completes with RNR); their receive completion carries the
// sender, its queue pair, the bytes and WRITE_IMM's immediate value.
//
// Completions go to the queue pair's CQ with the phase bit of their pass
// over the ring; a full CQ stops the queue pair (CQ_OVERRUN); a stopped or
// disabled queue pair gets none (completions_dropped). A queue pair whose
// ring cannot be read, or whose tail is more than its size ahead of its
// head, stops with BAD_RING. A request without a response within
// `response_timeout` completes with TRANSPORT (the response was lost with
// its connection). A queue pair holds at most `max_outstanding` request
// bytes awaiting responses; past that its send queue waits. Disabling a
// queue pair drops its requests and resets its SRD connections (their next
// use is a new epoch). An Ethernet port without a link is down (PORTS).
//
// Timing only (TRN3_NIC_WQE_TIMING_ONLY, simulation only): the request is
// checked, protected and completed as ever and takes its bytes' time on
// PCIe (trn3::timing_only accesses, TLPs without data) and on the network
// (SRD packets of the same sizes carrying the RDMA header and no payload),
// and moves none: so a collective's timed-only rows cost no host memory.
//
// params:  wqe_cost, response_timeout, max_outstanding
// stats:   requests, responses, rdma_refused, rnr, local_errors, response_timeouts,
//          completions_dropped, bytes_sent, bytes_received
#pragma once

#include <array>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>

#include "trn3/core/payload.h"
#include "trn3/core/reg_block.h"
#include "trn3/core/sparse_memory.h"
#include "trn3/core/stats.h"
#include "trn3/nic/srd_engine.h"
#include "trn3/pcie/endpoint.h"
#include "trn3/spec/nic.h"

namespace trn3::nic {

class nitro_nic : public reg_block {
public:
    pcie::endpoint ep;
    srd_engine srd;
    sparse_memory window{"window", byte_count{4096}};
    tlm_utils::simple_initiator_socket<nitro_nic> dma{"dma"};

    param<sc_core::sc_time> wqe_cost;
    param<sc_core::sc_time> response_timeout;
    param<byte_count> max_outstanding;

    // node: the NIC's 48-bit address; its two Ethernet ports get message-port
    // ids first_port_id and first_port_id + 1.
    nitro_nic(const sc_core::sc_module_name& name, std::uint64_t node, std::uint64_t first_port_id);
    // Data bytes it has sent and received over the network (request data
    // sent, data written into memory: its links' payload, both ways).
    std::uint64_t network_bytes() const { return bytes_sent_.value() + bytes_received_.value(); }

    std::uint64_t node() const { return node_; }
    // An Ethernet port's link went down (or up): SRD stops using it; PORTS shows it.
    void set_link_down(unsigned port, bool down);

private:
    struct qp_regs {
        reg *sq_base, *sq_size, *sq_tail, *sq_head, *rq_base, *rq_size, *rq_tail, *rq_head, *cq_base, *cq_size,
            *cq_head, *cq_tail, *pd, *vector, *control, *status;
    };
    struct mr_regs {
        reg *addr, *length, *key, *pd, *access;
    };
    struct pending {  // a request awaiting its response
        unsigned qp;
        trn3_nic_wqe wqe;
    };
    struct inbound_item {  // what the receive engine takes, in order
        srd_engine::inbound msg;
        bool transport_failure = false;  // else a message
        std::uint64_t failed_token = 0;
    };

    void end_of_elaboration() override;
    void ring();  // a doorbell (or room for a request): the send engine looks again
    void disable(unsigned q);
    bool take_pending(std::uint64_t token, pending& out);
    void fail_request(std::uint64_t token);  // completes it with TRANSPORT
    void send_engine();
    void receive_engine();
    bool serve(unsigned q);
    // The receive engine's own copy of the message: its data is written to host memory from where it lies.
    void on_request(srd_engine::inbound& m);
    void on_response(srd_engine::inbound& m);
    // timing_bytes: a timing-only READ's bytes, timed and not carried.
    void respond(const srd_engine::inbound& request, std::uint8_t status, std::vector<std::uint8_t> data = {},
                 std::uint64_t timing_bytes = 0);
    void refuse(unsigned q, std::uint32_t status);
    // A region's bus address for [offset, offset + length), or false.
    bool region(std::uint32_t key, std::uint32_t pd, std::uint32_t access, std::uint64_t offset, std::uint64_t length,
                std::uint64_t& bus) const;
    // The local buffer [addr, addr + length) inside region lkey of domain pd.
    bool local_buffer(std::uint32_t lkey, std::uint32_t pd, std::uint64_t addr, std::uint64_t length) const;
    // timing: a trn3::timing_only access (data unused).
    bool host_access(tlm::tlm_command cmd, std::uint64_t address, void* data, std::uint64_t bytes, bool timing = false);
    bool complete(unsigned q, const trn3_nic_cqe& c);
    bool qp_usable(unsigned q) const;

    std::uint64_t node_;
    std::vector<std::unique_ptr<reg>> owned_;
    std::vector<qp_regs> qps_;
    std::vector<mr_regs> mrs_;
    reg* rdma_errors_reg_ = nullptr;
    reg* last_error_ = nullptr;
    reg* error_vector_ = nullptr;
    reg* ports_ = nullptr;
    sc_core::sc_event doorbell_, inbound_event_;
    std::uint64_t doorbells_ = 0;
    std::multimap<sc_core::sc_time, std::uint64_t> response_deadlines_;  // -> token
    std::array<std::uint64_t, TRN3_NIC_QPS> outstanding_{};  // request bytes awaiting responses, per queue pair
    std::deque<inbound_item> inbound_;
    std::map<std::uint64_t, pending> pending_;  // by token
    untouched_buffer untouched_;  // what timing-only DMA accesses point at
    std::uint64_t next_token_ = 1;
    counter requests_, responses_, rdma_refused_, rnr_, local_errors_, response_timeouts_, completions_dropped_,
        bytes_sent_, bytes_received_;
};

}  // namespace trn3::nic
