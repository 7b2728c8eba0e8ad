#include "trn3/core/component.h"

#include <fmt/format.h>

#include "trn3/core/log.h"

namespace trn3 {
namespace {
bool& trace_default_flag() {
    static bool on = false;
    return on;
}
}  // namespace

void component::set_trace_default(bool on) { trace_default_flag() = on; }
bool component::trace_default() { return trace_default_flag(); }

component::component(const sc_core::sc_module_name& name, frequency default_clock)
    : sc_core::sc_module(name), clock(this, "clock", default_clock, "clock of this block"),
      log_level(this, "log_level", "", "log level of this block; empty = the global --log-level", log_level_choices()),
      trace(this, "trace", trace_default(), "log every transaction on every socket of this block"),
      logger_(make_logger(this->name(), log_level.get())), period_(clock.get().period()) {}

trace_point::trace_point(const component& owner, const std::string& socket)
    : switch_(&owner, socket + ".trace", false, "log every transaction on socket " + socket),
      enabled_(owner.trace.get() || switch_.get()), socket_(socket),
      logger_(enabled_ ? make_logger(owner.name(), "trace") : nullptr) {}

std::string describe(const tlm::tlm_generic_payload& tx, const std::string& socket) {
    const char* cmd = tx.is_read() ? "RD" : tx.is_write() ? "WR" : "IGN";
    std::string bytes;
    unsigned shown = std::min(tx.get_data_length(), 16u);
    for (unsigned i = 0; tx.get_data_ptr() && i < shown; ++i)
        bytes += fmt::format(i ? " {:02x}" : "{:02x}", tx.get_data_ptr()[i]);
    if (tx.get_data_length() > shown) bytes += fmt::format(" ... ({} bytes)", tx.get_data_length());
    return fmt::format("{} >> {} 0x{:x} [{}] ({})", socket, cmd, tx.get_address(), bytes, tx.get_response_string());
}

void trace_point::record(const tlm::tlm_generic_payload& tx, const sc_core::sc_time& delay, bool debug) const {
    if (!enabled_) return;
    logger_->info("TLM{} {} +{}", debug ? " dbg" : "", describe(tx, socket_), delay.to_string());
}

}  // namespace trn3
