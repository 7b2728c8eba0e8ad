// stack_bandwidth: the HBM stack's fast timing engine (hbm_stack's
// timing_model=bandwidth), O(1) per access however many bytes it holds.
//
// The dram engine (pseudo_channel.h) places every 256-byte piece of an
// access on its pseudo-channel's banks, column slots, data bus and
// refreshes: exact for any pattern, but its cost grows with the bytes, and
// at workload scale (a 1 GiB collective over hundreds of chips) it is most
// of the host's time. This engine treats the stack as one server of its
// sustained bandwidth: an access books bytes / (peak x efficiency) on one
// calendar (core/calendar.h, so a late-placed access may still take an
// earlier gap inside the reorder window, as the channels' calendars allow),
// then completes after its fixed latency: a read after its data and the
// unloaded closed-row read latency (tRCD + tCL), a write after its data
// (posted into the controller). The efficiencies default to what the dram
// engine sustains streaming 4 KiB requests (docs/performance.md, HBM3E:
// 90.5% reads, 86.2% writes, refresh and turnarounds included). What it
// does not model: row hits and conflicts, bank parallelism, refresh
// windows, read/write batching; random small requests, which the dram
// engine caps near 35% of peak, run here at the streaming efficiency.
#pragma once

#include <cstdint>

#include "trn3/core/calendar.h"
#include "trn3/hbm/timing.h"

namespace trn3::hbm {

class stack_bandwidth {
public:
    // peak_bytes_per_s: the stack's peak (channels x channel bandwidth);
    // read/write efficiency in (0, 1]; read_latency: added after a read's
    // data (tRCD + tCL); reorder_window: how far back a gap may be taken.
    stack_bandwidth(double peak_bytes_per_s, double read_efficiency, double write_efficiency, ps_t read_latency,
                    ps_t reorder_window);

    // Books an access of `bytes` arriving at `arrival`; returns when its
    // data is done (reads: with read_latency).
    ps_t read(ps_t arrival, std::uint64_t bytes);
    ps_t write(ps_t arrival, std::uint64_t bytes);
    // End of the last booked data.
    ps_t last_data_end() const { return bus_.last_end(); }

private:
    ps_t book(ps_t arrival, std::uint64_t bytes, double bytes_per_ps);

    double read_bytes_per_ps_, write_bytes_per_ps_;
    ps_t read_latency_, reorder_window_;
    ps_t latest_arrival_ = 0;
    calendar bus_;
};

}  // namespace trn3::hbm
