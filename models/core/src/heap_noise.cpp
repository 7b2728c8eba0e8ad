#include "trn3/core/heap_noise.h"

namespace trn3 {

heap_noise::heap_noise(const sc_core::sc_module_name& name, std::uint64_t events) : sc_core::sc_module(name) {
    SC_HAS_PROCESS(heap_noise);
    SC_METHOD(fire);
    for (std::uint64_t i = 0; i < events; ++i) sensitive << events_.emplace_back();
    dont_initialize();
    arm();
}

void heap_noise::arm() {
    // Each event at its own time, a few hundred nanoseconds apart at most,
    // the spread changing every round (primes: no step lines up with a
    // model's clock for long).
    ++round_;
    for (std::uint64_t i = 0; i < events_.size(); ++i) {
        const std::uint64_t ps = 7919 * (i + 1) + (round_ * 104729 + i * 15485863) % 99991;
        events_[i].notify(sc_core::sc_time(static_cast<double>(ps), sc_core::SC_PS));
    }
}

void heap_noise::fire() {
    for (sc_core::sc_event& e : events_) e.cancel();
    if (sc_core::sc_pending_activity_at_future_time()) arm();
}

}  // namespace trn3
