#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "trn3/core/same_time_order.h"

#include <algorithm>
#include <cstring>

namespace trn3 {

same_time_order::same_time_order(const char* name) {
    sc_core::sc_spawn_options o;
    o.spawn_method();
    o.set_sensitivity(&due_);
    o.dont_initialize();
    sc_core::sc_spawn([this] { release(); }, name, &o);
}

void same_time_order::take() {
    const sc_core::sc_process_b* me = sc_core::sc_get_current_process_b();
    if (seen_.size() < 2) seen_.insert(me);
    if (seen_.size() < 2) return;
    if (free_.empty()) free_.push_back(&events_.emplace_back());
    sc_core::sc_event* go = free_.back();
    free_.pop_back();
    if (waiting_.empty()) due_.notify(sc_core::SC_ZERO_TIME);
    waiting_.push_back({me->name(), go});
    sc_core::wait(*go);
    free_.push_back(go);
}

void same_time_order::release() {
    std::stable_sort(waiting_.begin(), waiting_.end(),
                     [](const waiting& a, const waiting& b) { return std::strcmp(a.process, b.process) < 0; });
    // The kernel triggers a delta cycle's events last notified first
    // (SystemC 2.3's scheduler; tests/core/test_same_time_order.cpp checks it).
    for (auto w = waiting_.rbegin(); w != waiting_.rend(); ++w) w->go->notify(sc_core::SC_ZERO_TIME);
    waiting_.clear();
}

}  // namespace trn3
