// A bare initiator for tests: a socket, a DMI cache that follows
// invalidations, and one-call accesses.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include "trn3/core/dmi_cache.h"
#include "trn3/core/payload.h"

namespace trn3::test {

struct initiator : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<initiator> out{"out"};
    dmi_cache dmi;
    int invalidations = 0;

    explicit initiator(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {
        out.register_invalidate_direct_mem_ptr(this, &initiator::invalidate);
    }
    void invalidate(sc_dt::uint64 s, sc_dt::uint64 e) {
        ++invalidations;
        last_invalidation = {s, e};
        dmi.invalidate(s, e);
    }
    // One access; `delay` is the local time offset before and the annotated
    // time after.
    tlm::tlm_response_status access(tlm::tlm_command cmd, std::uint64_t addr, void* data, unsigned len,
                                    sc_core::sc_time* delay = nullptr) {
        tlm::tlm_generic_payload tx;
        set_access(tx, cmd, addr, data, len);
        sc_core::sc_time d = delay ? *delay : sc_core::SC_ZERO_TIME;
        out->b_transport(tx, d);
        if (delay) *delay = d;
        return tx.get_response_status();
    }
    std::pair<std::uint64_t, std::uint64_t> last_invalidation{0, 0};
};

}  // namespace trn3::test
