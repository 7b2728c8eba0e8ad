#include "trn3/mcu/uart.h"

namespace trn3::mcu {

uart::uart(const sc_core::sc_module_name& name) : reg_block(name, frequency{1e9}) {
    tx_.on_write([this](reg& r, std::uint64_t) {
        const char c = static_cast<char>(r.value() & 0xff);
        console_ += c;
        if (c == '\n') {
            log().info("{}", line_);
            line_.clear();
        } else if (c != '\r') {
            line_ += c;
        }
    });
}

}  // namespace trn3::mcu
