#include "trn3/mcu/intc.h"

namespace trn3::mcu {

intc::intc(const sc_core::sc_module_name& name) : reg_block(name, frequency{1e9}) {
    for (unsigned i = 0; i < lines; ++i) {
        lines_.push_back(std::make_unique<irq_line>());
        lines_.back()->on_change([this](bool) { changed_.notify(sc_core::SC_ZERO_TIME); });
    }
    pending_.on_read([this](reg& r) { r.set(pending()); });
    enable_.on_write([this](reg&, std::uint64_t) { changed_.notify(sc_core::SC_ZERO_TIME); });
}

std::uint32_t intc::pending() const {
    std::uint32_t p = 0;
    for (unsigned i = 0; i < lines; ++i) p |= static_cast<std::uint32_t>(lines_[i]->level()) << i;
    return p;
}

}  // namespace trn3::mcu
