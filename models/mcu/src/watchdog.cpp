#include "trn3/mcu/watchdog.h"

namespace trn3::mcu {

watchdog::watchdog(const sc_core::sc_module_name& name, const timer& timebase)
    : reg_block(name, frequency{1e9}), timer_(timebase),
      expiries_(this, "expiries", "times the count ran out (warnings and resets)") {
    ctrl_.on_write([this](reg&, std::uint64_t) { restart(); });
    timeout_.on_write([this](reg&, std::uint64_t) { restart(); });
    kick_.on_write([this](reg& r, std::uint64_t) {
        if (r.value() == TRN3_MCU_WDT_KICK_KEY) restart();
    });
    SC_HAS_PROCESS(watchdog);
    SC_THREAD(run);
}

void watchdog::restart() {
    kicked_at_ = sc_core::sc_time_stamp();
    status_.set(0);
    warning.set(false);
    changed_.notify(sc_core::SC_ZERO_TIME);
}

void watchdog::stop() {
    ctrl_.set(0);
    status_.set(0);
    warning.set(false);
    changed_.notify(sc_core::SC_ZERO_TIME);
}

void watchdog::run() {
    for (;;) {
        if (!(ctrl_.value() & TRN3_MCU_WDT_CTRL_ENABLE) || timeout_.value() == 0) {
            wait(changed_);
            continue;
        }
        const sc_core::sc_time period =
            sc_core::sc_time(static_cast<double>(timeout_.value()) / timer_.timebase.get().hz, sc_core::SC_SEC);
        const sc_core::sc_time due = kicked_at_ + period, now = sc_core::sc_time_stamp();
        if (due > now) {
            wait(due - now, changed_);
            continue;
        }
        ++expiries_;
        if (!(status_.value() & TRN3_MCU_WDT_STATUS_WARNING)) {  // first expiry: warn, count again
            status_.set(TRN3_MCU_WDT_STATUS_WARNING);
            warning.set(true);
            kicked_at_ = now;
            continue;
        }
        // Second expiry: reset the MCU, and stay off until software enables again.
        resets_.set(resets_.value() + 1);
        ctrl_.set(0);
        status_.set(0);
        warning.set(false);
        if (reset_request) reset_request();
    }
}

}  // namespace trn3::mcu
