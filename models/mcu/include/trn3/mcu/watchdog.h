// The MCU's watchdog (spec/mcu.h): a kick restarts its count; the first
// expiry raises a warning interrupt, a second one without a kick resets
// the MCU through `reset_request`.
#pragma once

#include <functional>

#include "trn3/core/irq.h"
#include "trn3/core/reg_block.h"
#include "trn3/core/stats.h"
#include "trn3/mcu/timer.h"
#include "trn3/spec/mcu.h"

namespace trn3::mcu {

class watchdog : public reg_block {
public:
    irq_line warning;  // to the interrupt controller
    std::function<void()> reset_request;  // the MCU's warm reset

    watchdog(const sc_core::sc_module_name& name, const timer& timebase);

    std::uint32_t resets() const { return static_cast<std::uint32_t>(resets_.value()); }
    // What a warm reset of the MCU from outside does to it: off, no warning
    // (software enables it again); RESETS keeps its count.
    void stop();

private:
    void run();
    void restart();
    const timer& timer_;
    sc_core::sc_time kicked_at_;
    sc_core::sc_event changed_;
    counter expiries_;
    reg ctrl_{regs, "ctrl", TRN3_MCU_WDT_CTRL, 4, 0, access::rw, "bit 0: enable"};
    reg timeout_{regs, "timeout", TRN3_MCU_WDT_TIMEOUT, 4, 0, access::rw, "ticks of the timer's timebase"};
    reg kick_{regs, "kick", TRN3_MCU_WDT_KICK, 4, 0, access::wo, "write the kick key to restart the count"};
    reg status_{regs, "status", TRN3_MCU_WDT_STATUS, 4, 0, access::ro, "bit 0: warning raised"};
    reg resets_{regs, "resets", TRN3_MCU_WDT_RESETS, 4, 0, access::ro, "resets caused"};
};

}  // namespace trn3::mcu
