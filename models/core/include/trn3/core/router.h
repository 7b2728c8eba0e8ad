// router: an address map between initiators and targets.
//
// Each target is mapped at [base, base + size) and sees addresses relative to
// its base. Overlapping regions are refused while the platform is built (the
// error names both). An access to no region, or one running past the end of
// its region, gets TLM_ADDRESS_ERROR_RESPONSE. A one-entry decode cache in
// front of a binary search keeps streaming traffic cheap; DMI grants are
// translated and clipped to the region, and invalidations are translated back
// and sent to every initiator.
//
// sockets: in  (multi target: any number of initiators)
//          out (multi initiator: one binding per mapped target)
// stats:   transactions, address_errors
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "trn3/core/component.h"
#include "trn3/core/stats.h"

namespace trn3 {

class router : public component {
public:
    tlm_utils::multi_passthrough_target_socket<router> in;
    tlm_utils::multi_passthrough_initiator_socket<router> out;

    explicit router(const sc_core::sc_module_name& name);

    // Maps `target` at [base, base + size). Binds out to it (through a
    // protocol checker when sim.protocol_checks is on).
    void map(tlm::tlm_base_target_socket_b<>& target, std::uint64_t base, std::uint64_t size,
             const std::string& region_name);

    struct region {
        std::string name;
        std::uint64_t base, size;
        int target;  // index into out
        tlm::tlm_fw_transport_if<>* fw = nullptr;  // resolved at end of elaboration
    };
    const std::vector<region>& memory_map() const { return regions_; }
    std::string memory_map_text() const;

private:
    void b_transport(int id, tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
    bool get_direct_mem_ptr(int id, tlm::tlm_generic_payload& tx, tlm::tlm_dmi& dmi);
    unsigned transport_dbg(int id, tlm::tlm_generic_payload& tx);
    void invalidate_direct_mem_ptr(int target, sc_dt::uint64 start, sc_dt::uint64 end);
    void end_of_elaboration() override;

    // Region holding [addr, addr + len), or nullptr.
    const region* decode(std::uint64_t addr, unsigned len) {
        const region* r = last_;
        if (r && addr - r->base < r->size && len <= r->base + r->size - addr) return r;
        return decode_slow(addr, len);
    }
    const region* decode_slow(std::uint64_t addr, unsigned len);

    std::vector<region> regions_;  // sorted by base
    const region* last_ = nullptr;
    int bound_targets_ = 0;
    trace_point trace_in_;
    counter transactions_, address_errors_;
};

}  // namespace trn3
