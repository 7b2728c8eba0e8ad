// Fuzz target: param values with units (models/core units.h: times,
// frequencies, byte counts, bandwidths). Any text parses or is refused with
// config_error; a value that parses is finite and not negative, and its
// formatted text parses back to the same value.
#include <cmath>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "trn3/core/error.h"
#include "trn3/core/units.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace trn3;
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const sc_core::sc_time t = parse_time(text);
        TRN3_FUZZ_CHECK(parse_time(format_time(t)) == t);
    } catch (const config_error&) {}
    try {
        const frequency f = parse_frequency(text);
        TRN3_FUZZ_CHECK(std::isfinite(f.hz) && f.hz >= 0);
        TRN3_FUZZ_CHECK(parse_frequency(format_frequency(f)).hz == f.hz);
    } catch (const config_error&) {}
    try {
        const byte_count b = parse_byte_count(text);
        TRN3_FUZZ_CHECK(parse_byte_count(format_byte_count(b)).bytes == b.bytes);
    } catch (const config_error&) {}
    try {
        const bandwidth w = parse_bandwidth(text);
        TRN3_FUZZ_CHECK(std::isfinite(w.bytes_per_s) && w.bytes_per_s >= 0);
        TRN3_FUZZ_CHECK(parse_bandwidth(format_bandwidth(w)).bytes_per_s == w.bytes_per_s);
    } catch (const config_error&) {}
    return 0;
}
