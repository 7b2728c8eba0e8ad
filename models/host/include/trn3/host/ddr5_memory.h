// The host's DDR5 memory: sparse (costs only what is touched), with the
// timing of its channels as one pool of bandwidth.
//
//   an access of n bytes at t: starts at max(t, bus free), occupies the
//   bus for n / (channels x transfer_rate x 8 B), completes latency later.
//   Graviton4: 12 channels of DDR5-5600 = 537.6 GB/s.
//
// socket: in (target; b_transport, debug); a trn3::timing_only access is
//         timed and moves nothing
// Pinned memory: a host program's own memory that a device may reach
// (what registering memory with a NIC does). pin() maps it at physical
// addresses from pinned_base on, each range from a page boundary, where
// accesses reach the program's memory with the DDR's timing; the
// simulator's memory stands for those pages.
//
// params: size, channels, transfer_rate (MT/s), latency
// stats:  reads, writes, bytes, address_errors
#pragma once

#include <map>

#include <tlm_utils/simple_target_socket.h>

#include "trn3/core/component.h"
#include "trn3/core/sparse_store.h"
#include "trn3/core/stats.h"

namespace trn3::host {

class ddr5_memory : public component {
public:
    tlm_utils::simple_target_socket<ddr5_memory> in{"in"};

    param<byte_count> size{this, "size", byte_count{64ull << 30}, "capacity (the model reserves, touches on use)"};
    param<std::uint64_t> channels{this, "channels", 12, "DDR5 channels", range<std::uint64_t>{1, 64}};
    param<std::uint64_t> transfer_rate{this, "transfer_rate", 5600, "MT/s per channel (8 bytes per transfer)",
                                       range<std::uint64_t>{1, 20000}};
    param<sc_core::sc_time> latency{this, "latency", sc_core::sc_time(100, sc_core::SC_NS), "load-to-use latency"};

    explicit ddr5_memory(const sc_core::sc_module_name& name);

    unsigned char* data() { return store_.data(); }
    // Clears a range without touching untouched pages (see sparse_store::zero).
    void zero(std::uint64_t offset, std::uint64_t bytes) { store_.zero(offset, bytes); }

    static constexpr std::uint64_t pinned_base = 1ull << 52;
    // `bytes` of a program's memory at `cpu`; returns their physical address
    // (page aligned; an access past `bytes` is an address error).
    std::uint64_t pin(unsigned char* cpu, std::uint64_t bytes);
    void unpin(std::uint64_t physical) { pinned_.erase(physical); }

    double bytes_per_second() const { return double(channels.get()) * double(transfer_rate.get()) * 1e6 * 8; }

private:
    void transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
    unsigned debug(tlm::tlm_generic_payload& tx);
    unsigned char* resolve(std::uint64_t address, std::uint64_t bytes);  // nullptr: outside memory
    struct pinned_range {
        unsigned char* cpu;
        std::uint64_t bytes;
    };
    sparse_store store_;
    std::map<std::uint64_t, pinned_range> pinned_;  // by physical address
    std::uint64_t next_pinned_ = pinned_base;
    sc_core::sc_time bus_free_;
    counter reads_, writes_, bytes_, address_errors_;
};

}  // namespace trn3::host
