// The core's control registers (the ctrl socket; the map is
// spec/include/trn3/spec/neuroncore.h): per engine its pc, start, status,
// error and error_pc, the semaphores, and the error interrupt: bit e of
// irq_status when engine e stops on an error, error_irq = (irq_status &
// irq_enable) != 0. One cycle per access.
#pragma once

#include <memory>
#include <vector>

#include <tlm>

#include "trn3/core/reg.h"
#include "trn3/neuroncore/neuroncore.h"

namespace trn3::neuroncore {

class semaphore_bank;
class sequencer;

class control_regs {
public:
    control_regs(neuroncore& core, sequencer& sequencers, semaphore_bank& semaphores);

    void transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
    unsigned debug_transport(tlm::tlm_generic_payload& tx);
    // Engine e stopped on an error: its irq_status bit.
    void raise_error(isa::engine e);
    // irq_status cleared.
    void reset();

private:
    void update_irq();

    neuroncore& core_;
    reg_bank regs_;
    std::vector<std::unique_ptr<reg>> owned_regs_;  // per-engine and semaphore registers, made in the constructor
    reg irq_status_, irq_enable_;
};

}  // namespace trn3::neuroncore
