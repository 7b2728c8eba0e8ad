// A barrier of a system's hosts, in simulated time: every host arrives; the
// last one releases the others (each sees it at its next poll) and records
// when. The programs that start work on every host together use it.
#pragma once

#include <cstdint>

#include <systemc>

#include "trn3/apps/host_program.h"

namespace trn3::apps {

class host_barrier {
public:
    explicit host_barrier(const host_system& s) : sys_(s) {}

    // Host h arrives and waits for the others; false when they did not all
    // come within timeout_ns.
    bool arrive(unsigned h, std::uint64_t timeout_ns, std::uint64_t poll_ns) {
        const std::uint64_t generation = generation_;
        if (++arrived_ == sys_.hosts.size()) {
            arrived_ = 0;
            released_at_ = sc_core::sc_time_stamp();
            ++generation_;
            return true;
        }
        return sys_.hosts[h].ops->wait_until([&] { return generation_ != generation; }, timeout_ns, poll_ns);
    }
    // When the last barrier released.
    const sc_core::sc_time& released_at() const { return released_at_; }

private:
    const host_system& sys_;
    std::size_t arrived_ = 0;
    std::uint64_t generation_ = 0;
    sc_core::sc_time released_at_;
};

}  // namespace trn3::apps
