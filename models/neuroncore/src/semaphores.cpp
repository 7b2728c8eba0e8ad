#include "semaphores.h"

namespace trn3::neuroncore {

using sc_core::sc_time;

void semaphore_bank::set(unsigned s, std::uint32_t v) {
    values_[s] = v;
    wake_waiters();
}

void semaphore_bank::signal(unsigned sem, std::uint32_t add, const sc_time& at) {
    const sc_time now = sc_core::sc_time_stamp();
    if (at <= now) {
        values_[sem] += add;
        wake_waiters();
        return;
    }
    pending_signals_.emplace(at, std::make_pair(sem, add));
    signals_due_.notify(pending_signals_.begin()->first - now);
}

void semaphore_bank::apply_due_signals() {
    const sc_time now = sc_core::sc_time_stamp();
    while (!pending_signals_.empty() && pending_signals_.begin()->first <= now) {
        auto [sem, add] = pending_signals_.begin()->second;
        values_[sem] += add;
        pending_signals_.erase(pending_signals_.begin());
    }
    wake_waiters();
    if (!pending_signals_.empty()) signals_due_.notify(pending_signals_.begin()->first - now);
}

void semaphore_bank::reset() {
    wake_waiters();
    values_.fill(0);
    pending_signals_.clear();
}

void semaphore_bank::spawn() {
    sc_core::sc_spawn_options method;
    method.spawn_method();
    method.set_sensitivity(&signals_due_);
    method.dont_initialize();
    sc_core::sc_spawn(sc_bind(&semaphore_bank::apply_due_signals, this), "apply_due_signals", &method);
}

}  // namespace trn3::neuroncore
