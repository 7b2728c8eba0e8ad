// The core's 256 semaphores: engines wait until one reaches a value and
// signal it (add) when an instruction is done; a DMA's signal lands later,
// when its queue finishes the copy, so signals may be scheduled ahead.
// Semaphores only grow during a kernel, so the order in which simultaneous
// signals land cannot change a result (docs/isa.md).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <utility>

#include <systemc>

#include "trn3/spec/isa.h"

namespace trn3::neuroncore {

class semaphore_bank {
public:
    std::uint32_t value(unsigned s) const { return values_[s]; }
    // A register write: the new value, and waiting engines look again.
    void set(unsigned s, std::uint32_t v);
    // Adds `add` to semaphore `sem` at time `at` (now or later).
    void signal(unsigned sem, std::uint32_t add, const sc_core::sc_time& at);
    // Wakes every engine waiting on a semaphore so that it looks again (a
    // value changed, or its stream was abandoned).
    void wake_waiters() { changed_.notify(sc_core::SC_ZERO_TIME); }
    const sc_core::sc_event& changed() const { return changed_; }
    // All to zero, scheduled signals dropped.
    void reset();
    // The process that applies scheduled signals when they are due; spawned
    // by the core's constructor.
    void spawn();

private:
    void apply_due_signals();

    std::array<std::uint32_t, isa::semaphores> values_{};
    sc_core::sc_event changed_, signals_due_;
    std::multimap<sc_core::sc_time, std::pair<unsigned, std::uint32_t>> pending_signals_;
};

}  // namespace trn3::neuroncore
