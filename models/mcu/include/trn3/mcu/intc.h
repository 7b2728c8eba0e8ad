// The MCU's interrupt controller: level lines from chip blocks (the mailbox
// doorbell, the watchdog, and later HBM, links, NeuronCores) with an enable
// mask; the hart's external interrupt (MEIP) is any line pending and enabled.
#pragma once

#include <memory>
#include <vector>

#include "trn3/core/irq.h"
#include "trn3/core/reg_block.h"
#include "trn3/spec/mcu.h"

namespace trn3::mcu {

class intc : public reg_block {
public:
    static constexpr unsigned lines = TRN3_MCU_INTC_LINES;

    explicit intc(const sc_core::sc_module_name& name);

    irq_line& line(unsigned i) { return *lines_.at(i); }
    bool meip() const { return (pending() & enable_.value()) != 0; }
    std::uint32_t pending() const;
    // Notified when a line or the enable mask changes.
    const sc_core::sc_event& changed() const { return changed_; }

private:
    std::vector<std::unique_ptr<irq_line>> lines_;
    sc_core::sc_event changed_;
    reg pending_{regs, "pending", TRN3_MCU_INTC_PENDING, 4, 0, access::ro, "one bit per line, its level"};
    reg enable_{regs, "enable", TRN3_MCU_INTC_ENABLE, 4, 0, access::rw, "lines that raise the external interrupt"};
};

}  // namespace trn3::mcu
