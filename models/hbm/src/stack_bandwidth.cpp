// The HBM stack as one bandwidth server (stack_bandwidth.h).
#include "trn3/hbm/stack_bandwidth.h"

#include <cmath>

namespace trn3::hbm {

stack_bandwidth::stack_bandwidth(double peak_bytes_per_s, double read_efficiency, double write_efficiency,
                                 ps_t read_latency, ps_t reorder_window)
    : read_bytes_per_ps_(peak_bytes_per_s * read_efficiency * 1e-12),
      write_bytes_per_ps_(peak_bytes_per_s * write_efficiency * 1e-12), read_latency_(read_latency),
      reorder_window_(reorder_window) {}

ps_t stack_bandwidth::book(ps_t arrival, std::uint64_t bytes, double bytes_per_ps) {
    // Forgetting is batched, once a quarter of the reorder window has passed.
    if (arrival >= latest_arrival_ + reorder_window_ / 4) {
        latest_arrival_ = arrival;
        if (arrival > reorder_window_) bus_.forget_before(arrival - reorder_window_);
    }
    // Whole picoseconds, at least one: the calendar's bookings never vanish.
    const auto length = static_cast<ps_t>(std::ceil(static_cast<double>(bytes) / bytes_per_ps));
    const ps_t busy = length == 0 ? 1 : length;
    return bus_.book(arrival, busy) + busy;
}

ps_t stack_bandwidth::read(ps_t arrival, std::uint64_t bytes) {
    return book(arrival, bytes, read_bytes_per_ps_) + read_latency_;
}

ps_t stack_bandwidth::write(ps_t arrival, std::uint64_t bytes) { return book(arrival, bytes, write_bytes_per_ps_); }

}  // namespace trn3::hbm
