// Fuzz target: config files (models/core param.h: a JSON object of param
// values, flat or nested, by name or '*' pattern, with units in strings).
// Any text loads or is refused with config_error, never another exception;
// what loads leaves every param a value it accepts, and the resolved set
// (what --dump-config writes) loads back to the same values.
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "trn3/core/error.h"
#include "trn3/core/param.h"

namespace {

using namespace trn3;
using sc_core::SC_MS;
using sc_core::SC_NS;
using sc_core::sc_time;

// One param of every value type, with ranges and choices, as models declare them.
struct params {
    param<sc_time> latency{nullptr, "fz.chip.latency", sc_time(120, SC_NS), "a time",
                           range<sc_time>{sc_time(1, SC_NS), sc_time(1, SC_MS)}};
    param<std::uint64_t> lanes{nullptr, "fz.chip.lanes", 16, "a count", range<std::uint64_t>{1, 96}};
    param<std::uint64_t> base{nullptr, "fz.chip.base", 0, "an address", address_range()};
    param<std::int64_t> port{nullptr, "fz.switch.port", 0, "a signed number", range<std::int64_t>{-1, 71}};
    param<double> share{nullptr, "fz.switch.share", 0.5, "a fraction", range<double>{0.0, 1.0}};
    param<bool> sparing{nullptr, "fz.switch.sparing", true, "a flag"};
    param<std::string> mode{nullptr, "fz.mode", "far", "a choice", one_of<std::string>{{"far", "all", "off"}}};
    param<std::string> label{nullptr, "fz.label", "", "free text"};
    param<frequency> clock{nullptr, "fz.chip.clock", frequency{2.4e9}, "a frequency"};
    param<byte_count> buffer{nullptr, "fz.chip.buffer", byte_count{64 * 1024}, "a byte count"};
    param<bandwidth> rate{nullptr, "fz.chip.rate", bandwidth{64e9}, "a bandwidth"};
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // Declared once; its params register first, so the registry outlives them.
    static params declared;
    (void)declared;
    param_registry& registry = param_registry::instance();
    static const nlohmann::json defaults = registry.resolved();
    registry.clear_pending();
    for (const auto& [name, value] : defaults.items()) registry.set_pending(name, value, "default");
    registry.clear_pending();

    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        registry.load_config_text(text, "fuzz.json");
        registry.check_all_claimed();
    } catch (const config_error&) {
        return 0;
    }
    const nlohmann::json loaded = registry.resolved();
    registry.clear_pending();
    try {
        registry.load_config_text(loaded.dump(), "resolved.json");
    } catch (const config_error&) {
        TRN3_FUZZ_CHECK(!"the resolved set does not load back");
    }
    TRN3_FUZZ_CHECK(registry.resolved() == loaded);
    registry.clear_pending();
    return 0;
}
