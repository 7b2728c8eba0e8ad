// The MCU's timer (the RISC-V CLINT layout for one hart): mtime counts at
// the timebase frequency from simulated time; the MCU reads mtip() and
// msip() between instruction batches and wakes from wfi at the deadline.
#pragma once

#include "trn3/core/reg_block.h"
#include "trn3/spec/mcu.h"

namespace trn3::mcu {

class timer : public reg_block {
public:
    param<frequency> timebase;

    explicit timer(const sc_core::sc_module_name& name);

    std::uint64_t mtime_at(const sc_core::sc_time& t) const;
    bool mtip(const sc_core::sc_time& t) const { return mtime_at(t) >= mtimecmp_; }
    bool msip() const { return msip_.value() & TRN3_MCU_TIMER_MSIP_PENDING; }
    // When mtime reaches mtimecmp (SC_ZERO_TIME if it has; max time if never).
    sc_core::sc_time deadline() const;
    // Notified when software writes mtimecmp or msip.
    const sc_core::sc_event& changed() const { return changed_; }

private:
    void before_access(const sc_core::sc_time& delay) override { access_time_ = sc_core::sc_time_stamp() + delay; }
    std::uint64_t mtimecmp_ = ~0ull;
    sc_core::sc_time access_time_;  // the accessing initiator's local time
    sc_core::sc_event changed_;
    reg msip_{regs, "msip", TRN3_MCU_TIMER_MSIP, 4, 0, access::rw, "bit 0: machine software interrupt pending"};
    reg cmp_lo_{regs, "mtimecmp_lo", TRN3_MCU_TIMER_MTIMECMP, 4, 0xffffffff, access::rw, "mtimecmp bits 31:0"};
    reg cmp_hi_{regs, "mtimecmp_hi", TRN3_MCU_TIMER_MTIMECMP_HI, 4, 0xffffffff, access::rw, "mtimecmp bits 63:32"};
    reg time_lo_{regs, "mtime_lo", TRN3_MCU_TIMER_MTIME, 4, 0, access::ro, "mtime bits 31:0"};
    reg time_hi_{regs, "mtime_hi", TRN3_MCU_TIMER_MTIME_HI, 4, 0, access::ro, "mtime bits 63:32"};
    reg freq_{regs, "freq", TRN3_MCU_TIMER_FREQ, 4, 0, access::ro, "timebase in Hz"};
};

}  // namespace trn3::mcu
