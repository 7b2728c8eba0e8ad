// The chip's HBM stacks seen as one striped memory: a window of the device
// address map (spec/device.h TRN3_DEV_HBM_STRIPED_BASE) where consecutive
// `granule` bytes go to the stacks in turn, so one buffer streams from all
// of them at once. Byte x of the window is byte
//   ((x / granule) / stacks) x granule + x mod granule
// of stack (x / granule) mod stacks, at that stack's own device address
// (TRN3_DEV_HBM_BASE): the window aliases the stacks from their byte 0.
//
//   in (target) ── the window, addresses relative to its base (the chip's noc)
//   out (initiator) ── the chip's noc: each stack's own addresses
//
// An access becomes one access per stack it touches (a granule run of one
// stack is contiguous there), all issued at the access's time; the access
// is done when the last is, and fails with the first stack (in stack
// order) that fails; the others' parts still happen. An access of no
// bytes, with byte enables or a streaming width below its length is
// refused whole, as a stack would refuse it. Its extensions go with it
// (timing_only: nothing copied). No DMI: every access is timed by the
// stacks.
//
// params:  granule
// stats:   accesses, split_accesses
#pragma once

#include <cstdint>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "trn3/core/component.h"
#include "trn3/core/stats.h"

namespace trn3::hbm {

class stack_interleave : public component {
public:
    tlm_utils::simple_target_socket<stack_interleave> in{"in"};
    tlm_utils::simple_initiator_socket<stack_interleave> out{"out"};

    param<byte_count> granule;

    stack_interleave(const sc_core::sc_module_name& name, unsigned stacks);

    // Where byte x of the window lives: its stack and the byte of that stack.
    struct place {
        unsigned stack;
        std::uint64_t offset;
    };
    place locate(std::uint64_t x) const;

private:
    void b_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
    unsigned transport_dbg(tlm::tlm_generic_payload& tx);
    // Each stack's part of [address, address + length): its first byte in the
    // stack, its length, and the pieces of the access it holds (offset in
    // the access, length), in order.
    struct part {
        std::uint64_t offset = 0, length = 0;
        std::vector<std::pair<std::uint64_t, std::uint64_t>> pieces;
    };
    std::vector<part> split(std::uint64_t address, std::uint64_t length) const;

    unsigned stacks_;
    std::vector<std::uint8_t> gather_;  // one stack's bytes of an access
    counter accesses_, split_accesses_;
};

}  // namespace trn3::hbm
