// The MCU's UART: bytes written to TX collect into lines, and each line goes
// to the log under this block's name (<mcu>.uart) and into console().
#pragma once

#include <string>

#include "trn3/core/reg_block.h"
#include "trn3/spec/mcu.h"

namespace trn3::mcu {

class uart : public reg_block {
public:
    explicit uart(const sc_core::sc_module_name& name);
    // Everything written so far, lines included.
    const std::string& console() const { return console_; }

private:
    std::string console_, line_;
    reg tx_{regs, "tx", TRN3_MCU_UART_TX, 4, 0, access::wo, "write a byte"};
    reg status_{regs, "status", TRN3_MCU_UART_STATUS, 4, TRN3_MCU_UART_STATUS_TX_READY, access::ro, "bit 0: TX ready"};
};

}  // namespace trn3::mcu
