#include "trn3/mcu/timer.h"

#include <cmath>

namespace trn3::mcu {

timer::timer(const sc_core::sc_module_name& name)
    : reg_block(name, frequency{1e9}), timebase(this, "timebase", frequency{10e6}, "mtime frequency") {
    freq_.set(static_cast<std::uint64_t>(timebase.get().hz));
    time_lo_.on_read([this](reg& r) { r.set(mtime_at(access_time_) & 0xffffffffu); });
    time_hi_.on_read([this](reg& r) { r.set(mtime_at(access_time_) >> 32); });
    auto update = [this](reg&, std::uint64_t) {
        mtimecmp_ = (cmp_hi_.value() << 32) | cmp_lo_.value();
        changed_.notify(sc_core::SC_ZERO_TIME);
    };
    cmp_lo_.on_write(update);
    cmp_hi_.on_write(update);
    msip_.on_write([this](reg&, std::uint64_t) { changed_.notify(sc_core::SC_ZERO_TIME); });
}

std::uint64_t timer::mtime_at(const sc_core::sc_time& t) const {
    return static_cast<std::uint64_t>(std::floor(t.to_seconds() * timebase.get().hz));
}

sc_core::sc_time timer::deadline() const {
    if (mtimecmp_ == ~0ull) return sc_core::sc_max_time();
    // The first instant whose mtime is mtimecmp (rounded up to a picosecond).
    const double s = static_cast<double>(mtimecmp_) / timebase.get().hz;
    return sc_core::sc_time(std::ceil(s * 1e12), sc_core::SC_PS);
}

}  // namespace trn3::mcu
