// traffic_generator: a loosely-timed initiator that writes a pattern over a
// window of memory and reads it back, checking every byte.
//
// It exercises the whole path a real initiator uses: b_transport with the
// quantum keeper, DMI when the target offers it (through dmi_cache), error
// responses, stats and trace. Addresses and data depend only on params and
// the seed, so two runs with the same config issue the same traffic.
//
// socket: out
// params: base, window, count, block, pattern (sequential | random), seed, use_dmi,
//         dmi_timing (after each DMI access, a timing_only transaction charges the target's timing)
// stats:  writes, reads, dmi_accesses, mismatches, errors
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include "trn3/core/component.h"
#include "trn3/core/dmi_cache.h"
#include "trn3/core/stats.h"
#include "trn3/core/timeline.h"

namespace trn3 {

class protocol_checker;

class traffic_generator : public component {
public:
    tlm_utils::simple_initiator_socket<traffic_generator> out;

    param<std::uint64_t> base;
    param<byte_count> window;
    param<std::uint64_t> count;
    param<byte_count> block;
    param<std::string> pattern;
    param<std::uint64_t> seed;
    param<bool> use_dmi;
    param<bool> dmi_timing;

    // Defaults of the params, so a platform can give each instance its own.
    struct defaults {
        std::uint64_t base = 0;
        byte_count window{1 << 20};
        std::uint64_t count = 1000;
        byte_count block{64};
        std::string pattern = "sequential";
        bool use_dmi = true;
        bool dmi_timing = false;
    };

    traffic_generator(const sc_core::sc_module_name& name, const defaults& d);

    // Lets the protocol checker on `out` see this initiator's DMI accesses.
    void observe_dmi(protocol_checker* checker) { dmi_.set_observer(checker); }
    const sc_core::sc_event& done_event() const { return done_; }
    bool finished() const { return finished_; }
    std::uint64_t mismatches() const { return mismatches_.value(); }
    std::uint64_t errors() const { return errors_.value(); }

private:
    void run();
    // One access of `len` bytes; returns false on an error response.
    bool access(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data, unsigned len);
    void charge_timing(tlm::tlm_command cmd, std::uint64_t addr, unsigned len);
    tlm::tlm_generic_payload timing_tx_;
    std::vector<unsigned char> timing_scratch_;
    void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) { dmi_.invalidate(start, end); }
    std::uint64_t address_of(std::uint64_t i);

    tlm_utils::tlm_quantumkeeper qk_;
    dmi_cache dmi_;
    std::mt19937_64 rng_;
    sc_core::sc_event done_;
    bool finished_ = false;
    bool random_ = false;
    trace_point trace_out_;
    timeline::track track_;
    counter writes_, reads_, dmi_accesses_, mismatches_, errors_;
};

}  // namespace trn3
