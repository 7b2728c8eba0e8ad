// The chip's DMA engine: `queues` descriptor rings (spec/device.h)
// that move bytes between host memory (through the PCIe endpoint) and
// device memory (HBM through the chip's network).
//
//   regs (target): one register block per queue at q x TRN3_DMA_QUEUE_BLOCK_SIZE (256 bytes)
//   host (initiator) ── PCIe endpoint dma: host bus addresses (through the host's IOMMU)
//   device (initiator) ── chip network: device addresses
//
// A queue's descriptors are read up to `descriptor_prefetch` at a time (those
// between HEAD and TAIL, in one access), so the next ones cost no memory
// access; writing CONTROL, RING_BASE or RING_SIZE, or setting TAIL back over
// them, drops what was read ahead and a wait among it (a driver that
// recovers a queue rewrites its entries). A write to a queue's TAIL (the
// doorbell) calls the engines (`engines` of them: the chip's collective
// engines). At the end of the instant of a doorbell or of an engine
// finishing a descriptor (core/end_of_instant.h: so the choice never
// depends on the order the kernel ran them in), idle engines, in their
// order, take the next queues with work, round robin, never a queue
// another engine is serving (so a queue's descriptors run in order). An
// engine serves one descriptor at a time: reads it (from
// host memory, or device memory when CONTROL.DEVICE_RING is set), moves its bytes
// in pieces of `chunk`, each read, then written: the engine keeps
// `reads_ahead` pieces' reads outstanding (one buffer each, free again when
// its piece's write is issued, since the target takes the data then), and
// writes a piece once it is read and the piece before is written (writes go
// one at a time, in order; a fabric write is done when its link's wire is
// free), writes the completion record
// at CPL_BASE + index x 16 and advances HEAD; a descriptor with INTERRUPT
// raises the queue's MSI-X vector. A descriptor with REDUCE reduces its
// bytes into the destination (dst = dst op src; numerics/reduce.h): in this
// chip's memory by reading, reducing and writing back; to another chip's
// memory as reducing writes that the destination chip applies as the data
// lands (fabric_write.h); with REDUCE_OPERAND as well, the destination
// chip takes the other operand where its FABRIC_OPERAND(channel) says
// (dst = operand op src). A WAIT_FABRIC descriptor holds its queue until
// the chip's FABRIC_RX_CHANNEL(q) reaches the count in its src (the engine
// remembers the wait and looks at the count again when fabric bytes land),
// then completes without moving anything; the other queues go on
// meanwhile. A descriptor with ON_CHANNEL(c) waits on channel c, or tags
// its fabric writes with c, instead of its queue's number. A TIMING_ONLY
// descriptor makes the same accesses carrying trn3::timing_only: every
// target times them and moves nothing (no data, no reduction). Engines
// that access at the same instant go in queue order. A failed access or a malformed
// descriptor stops the queue with STATUS error and the error cause (the
// chip reports it in ERR_STATUS); the engine goes on with the other queues.
// Writing CONTROL (disable, then enable) restarts a stopped queue.
//
// params:  queues, chunk, descriptor_cost, reads_ahead, descriptor_prefetch, engines
// stats:   descriptors, bytes, errors, reduced_bytes
// timeline: one slice per descriptor on the queue's track
#pragma once

#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>

#include "trn3/core/end_of_instant.h"
#include "trn3/core/payload.h"
#include "trn3/core/reg_block.h"
#include "trn3/core/stats.h"
#include "trn3/core/timeline.h"
#include "trn3/numerics/reduce.h"
#include "trn3/spec/device.h"

namespace trn3::dma {

class dma_engine : public reg_block {
public:
    tlm_utils::simple_initiator_socket<dma_engine> host{"host"};
    tlm_utils::simple_initiator_socket<dma_engine> device{"device"};

    param<std::uint64_t> queues;  // register blocks 0 to queues - 1 (BAR0 holds TRN3_DMA_QUEUES_MAX)
    param<byte_count> chunk;
    param<sc_core::sc_time> descriptor_cost;
    param<std::uint64_t> reads_ahead;
    param<std::uint64_t> descriptor_prefetch;
    param<std::uint64_t> engines;  // descriptors served at once, each from a different queue

    std::function<void(unsigned vector)> raise_msix;  // the chip wires it to its endpoint
    std::function<void(unsigned queue)> queue_error;  // the chip reports it in ERR_STATUS
    // The chip's count of fabric bytes landed on a channel (WAIT_FABRIC
    // descriptors of that queue); the chip calls fabric_progress() when one grows.
    std::function<std::uint64_t(unsigned channel)> fabric_rx_bytes;
    void fabric_progress();

    // default_engines: the `engines` param's default (the chip's collective engines).
    explicit dma_engine(const sc_core::sc_module_name& name, unsigned default_engines = 1);

    std::uint32_t queue_status(unsigned q) const { return static_cast<std::uint32_t>(queues_.at(q).status->value()); }
    // The chip's DMA_PENDING word w: bit i for queue 32 w + i while it has
    // descriptors left (enabled, HEAD != TAIL, not stopped on an error).
    std::uint32_t pending_word(unsigned w) const;

private:
    struct queue {
        reg* ring_base;
        reg* ring_size;
        reg* tail;
        reg* head;
        reg* status;
        reg* cpl_base;
        reg* control;
        timeline::track track;
        // A WAIT_FABRIC descriptor not yet satisfied: the head it sits at and
        // its count, so the engine does not fetch it again until the count is reached.
        bool waiting = false;
        bool busy = false;  // an engine is serving this queue
        std::uint32_t waiting_at = 0;
        unsigned waiting_on = 0;  // the channel
        std::uint64_t waiting_for = 0;
        // Descriptors read ahead (descriptor_prefetch): entries from index
        // `cached_from` on, as the ring held them between HEAD and TAIL.
        std::vector<trn3_dma_descriptor> cached;
        std::uint32_t cached_from = 0;
        std::uint64_t generation = 0;  // counts drop_read_ahead()s
    };
    void drop_read_ahead(unsigned q);
    // The descriptor at `head`: from the queue's read-ahead, or read with
    // the ones after it up to TAIL (descriptor_prefetch at most, not past
    // the ring's end) in one access. False when that read fails.
    bool fetch(queue& qu, unsigned q, std::uint32_t head, std::uint32_t size, bool ring_on_host,
               trn3_dma_descriptor& d);
    // An engine: the queue it serves (-1: idle), and its start.
    struct engine {
        int queue = -1;
        sc_core::sc_event go;
        // The pieces' buffers (data mode): kept from descriptor to
        // descriptor and grown when a piece needs more, never cleared (a
        // piece is read into its buffer before it is written from it).
        std::vector<std::unique_ptr<std::uint8_t[]>> buffers;
        std::uint64_t buffer_bytes = 0;  // each one's size
        std::uint8_t* buffer(std::uint64_t i, std::uint64_t count, std::uint64_t bytes);
    };
    void run(engine& e);
    void ring();  // a doorbell: queues are given out again at the end of this instant
    // Gives idle engines the next ready queues (at the end of an instant,
    // when every change of it is in: the choice never depends on which
    // engine or doorbell the kernel ran first).
    void dispatch();
    // Enabled, not stopped on an error, HEAD != TAIL: what DMA_PENDING shows.
    static bool has_descriptors(const queue& qu);
    bool ready(unsigned q) const;  // has a descriptor to serve and no engine
    bool serve(engine& e, unsigned q);  // one descriptor; false when the queue has none or stopped
    // What an access is for: its queue (the order of simultaneous accesses),
    // the channel its fabric writes count on, whether it is timing only
    // (TRN3_DESC_TIMING_ONLY) and its fabric writes' traffic class.
    struct access {
        unsigned queue, channel;
        bool timing;
        unsigned traffic_class = 0;
        bool operand = false;  // a reducing write's other operand is where its destination says (REDUCE_OPERAND)
    };
    // One access; a write with `reduce` carries it (a fabric destination reduces as the data lands).
    // Device writes carry the channel and traffic class (fabric_write.h).
    // With `done` given, the access is issued and not waited for: *done is when it completes.
    bool transfer(bool host_side, tlm::tlm_command cmd, std::uint64_t address, std::uint8_t* data, std::uint64_t n,
                  const access& a, const numerics::reduction* reduce = nullptr, sc_core::sc_time* done = nullptr);
    // dst = dst op src at the destination: read, reduce and write back for
    // this chip's memory; one reducing write for a fabric address.
    // A fabric destination's reducing write is issued like any write (done).
    bool reduce_to(std::uint64_t address, std::uint8_t* data, std::uint64_t n, const access& a,
                   const numerics::reduction& r, sc_core::sc_time* done);
    // Waits until no engine with a lower queue number wants to access at this instant.
    void take_turn(unsigned queue);
    void fail(unsigned q, std::uint32_t cause);

    std::vector<std::unique_ptr<reg>> regs_owned_;
    untouched_buffer timing_buffer_;  // what timing-only accesses point at (chunk bytes: never moves)
    unsigned busy_queues_ = 0;  // queues an engine is serving now
    std::set<unsigned> turns_;  // queues whose engine waits for its turn to access, this instant
    sc_core::sc_event turn_;
    std::vector<queue> queues_;  // `queues` of them
    std::deque<engine> engines_;
    unsigned next_ = 0;  // the queue the round robin looks at first
    counter descriptors_, bytes_, errors_, reduced_bytes_;
    end_of_instant::requester dispatch_;
};

}  // namespace trn3::dma
