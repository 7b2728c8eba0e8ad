// A barrier of a system's hosts, in simulated time: every host arrives; at
// the end of the instant the last one arrives at (core/end_of_instant.h),
// the barrier releases: the hosts that arrived at that instant go on at
// once, the others see it at their next poll. Records when. The programs
// that start work on every host together use it.
//
// Released at the end of the instant, not by whichever host the kernel ran
// last: hosts that arrive together are alike, whatever order the kernel
// ran them in (else one went on at once and the others a poll later), and
// they go on in host order (else the first to run could change what the
// others see).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include <systemc>

#include "trn3/apps/host_program.h"
#include "trn3/core/end_of_instant.h"

namespace trn3::apps {

class host_barrier {
public:
    explicit host_barrier(const host_system& s)
        : sys_(s), end_(s.instance_name() + ".barrier", [this] { look(); }), go_(s.hosts.size()) {}

    // Host h arrives and waits for the others; false when they did not all
    // come within timeout_ns.
    bool arrive(unsigned h, std::uint64_t timeout_ns, std::uint64_t poll_ns) {
        const std::uint64_t generation = generation_;
        ++arrived_;
        now_.push_back(h);
        end_.request();
        sc_core::wait(go_[h]);  // every host arriving at this instant is in
        if (generation_ != generation) return true;
        return sys_.hosts[h].ops->wait_until([&] { return generation_ != generation; }, timeout_ns, poll_ns);
    }
    // When the last barrier released.
    const sc_core::sc_time& released_at() const { return released_at_; }

private:
    void look() {
        if (arrived_ == sys_.hosts.size()) {
            arrived_ = 0;
            released_at_ = sc_core::sc_time_stamp();
            ++generation_;
        }
        // This instant's arrivals go on (or wait for the rest), in host order.
        std::sort(now_.begin(), now_.end());
        for (unsigned h : now_) go_[h].notify();
        now_.clear();
    }

    const host_system& sys_;
    std::size_t arrived_ = 0;
    std::uint64_t generation_ = 0;
    sc_core::sc_time released_at_;
    end_of_instant::requester end_;
    std::vector<unsigned> now_;  // the hosts arriving at this instant
    std::deque<sc_core::sc_event> go_;  // by host
};

}  // namespace trn3::apps
