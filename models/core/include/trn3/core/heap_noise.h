// heap_noise: unrelated timed events kept in the kernel's queue while the
// platform runs (param sim.heap_noise: how many). A check of determinism.
//
// The kernel's timed queue is a heap that does not keep the order of ties:
// processes woken at one simulated time run in an order that depends on
// every other event it holds. A model whose results depend on that order
// gives other results when anything unrelated is added (a fault scheduled
// for later, a progress line, another UltraServer in the same process).
// With n events of its own in the queue, always n of them pending at
// spread-out times and moved on as each falls due, the heap holds other
// entries at every step; a run must give the same reports and stats for
// every n (tests/core and the ctest cases "ties:").
//
// The events stop once nothing else is pending, so a run ends where it
// would have; they do nothing when they fire. No progress line is printed
// while they run (the progress reporter also goes on while anything is
// pending: the two would keep each other going in a run that never stops).
#pragma once

#include <cstdint>
#include <deque>

#include <systemc>

namespace trn3 {

class heap_noise : public sc_core::sc_module {
public:
    heap_noise(const sc_core::sc_module_name& name, std::uint64_t events);

private:
    void fire();
    void arm();
    std::deque<sc_core::sc_event> events_;
    std::uint64_t round_ = 0;
};

}  // namespace trn3
