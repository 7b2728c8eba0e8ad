// protocol_checker: our own checker of the TLM-2.0 base-protocol rules this
// project relies on. connect() inserts one between an initiator and a target
// socket when sim.protocol_checks is on (test builds turn it on); it is
// transparent except for the time it takes.
//
// Rules checked (each violation is logged, counted and kept as text):
//  b_transport   the initiator passes a data pointer, a non-zero length and
//                TLM_INCOMPLETE_RESPONSE (timing_only payloads too: IEEE 1666
//                14.11 e); the target sets a response status and leaves a
//                timing_only payload's data alone;
//                bytes whose byte enable is off are left alone (read: the
//                initiator's buffer; write: the target's memory, seen through
//                debug reads before and after)
//  DMI           a grant covers the requested address, has a pointer, allows
//                the requested access, and agrees with what debug transport
//                reads; initiators report their DMI accesses (dmi_cache does)
//                and each must fall in a live grant with the right access —
//                so an access after invalidation is caught
//  debug         transport_dbg returns at most the requested length and has
//                no side effects: a second debug read returns the same bytes
//
// sockets: in (target), out (initiator)
// stats:   violations
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "trn3/core/component.h"
#include "trn3/core/stats.h"

namespace trn3 {

class protocol_checker : public component {
public:
    tlm_utils::simple_target_socket<protocol_checker> in;
    tlm_utils::simple_initiator_socket<protocol_checker> out;

    param<bool> check_write_enables;

    explicit protocol_checker(const sc_core::sc_module_name& name);

    // Called by an initiator for each access it makes through a DMI pointer.
    void note_dmi_access(std::uint64_t addr, unsigned len, bool is_write);

    std::uint64_t violations() const { return violations_.value(); }
    const std::vector<std::string>& reports() const { return reports_; }
    // Violations of every checker in the simulation.
    static std::uint64_t total_violations();

private:
    void b_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
    bool get_direct_mem_ptr(tlm::tlm_generic_payload& tx, tlm::tlm_dmi& dmi);
    unsigned transport_dbg(tlm::tlm_generic_payload& tx);
    void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end);

    void violation(const std::string& rule, const std::string& detail);
    // Reads [addr, addr + len) through debug transport; false if not all came back.
    bool peek(std::uint64_t addr, unsigned len, std::vector<unsigned char>& out_bytes);

    struct grant {
        std::uint64_t start, end;
        bool read, write, live;
    };
    std::vector<grant> grants_;
    std::vector<std::string> reports_;
    counter violations_;
};

// True when connect() inserts protocol checkers (param sim.protocol_checks).
bool protocol_checks_enabled();
void set_protocol_checks(bool on);

// Binds an initiator socket to a target socket, through a new
// protocol_checker when checks are on. Returns that checker, or nullptr.
template <typename Initiator, typename Target>
protocol_checker* connect(Initiator& initiator, Target& target) {
    if (!protocol_checks_enabled()) {
        initiator.bind(target);
        return nullptr;
    }
    auto* checker = new protocol_checker(sc_core::sc_gen_unique_name("checker"));
    initiator.bind(checker->in);
    checker->out.bind(target);
    return checker;  // owned by the SystemC object hierarchy for the whole run
}

}  // namespace trn3
