#include "trn3/core/units.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "trn3/core/error.h"

namespace trn3 {
namespace {

struct unit_scale {
    const char* suffix;
    double scale;
};

// Splits "12.5 ns" into 12.5 and "ns"; throws when there is no number.
std::pair<double, std::string> split_number(const std::string& text, const char* what) {
    const char* begin = text.c_str();
    char* end = nullptr;
    double value = std::strtod(begin, &end);
    if (end == begin || !std::isfinite(value))
        throw config_error(fmt::format("'{}' is not a {}: it must start with a number", text, what));
    std::string unit(end);
    unit.erase(0, unit.find_first_not_of(' '));
    unit.erase(unit.find_last_not_of(' ') + 1);
    return {value, unit};
}

double parse_scaled(const std::string& text, const char* what, const std::vector<unit_scale>& units) {
    auto [value, unit] = split_number(text, what);
    if (value < 0) throw config_error(fmt::format("'{}' is not a {}: it must not be negative", text, what));
    std::string accepted;
    for (const auto& u : units) {
        if (unit == u.suffix) return value * u.scale;
        accepted += accepted.empty() ? u.suffix : std::string(", ") + u.suffix;
    }
    throw config_error(fmt::format("'{}' is not a {}: the unit must be one of {}", text, what, accepted));
}

// Writes v / scale with up to 6 significant decimals and no trailing zeros.
std::string trim_number(double v) {
    std::string s = fmt::format("{:.6f}", v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
}

// Picks the largest unit in which the value is at least 1 and exact to 1e-9.
std::string format_scaled(double value, const std::vector<unit_scale>& units_small_to_large) {
    const unit_scale* best = &units_small_to_large.front();
    for (const auto& u : units_small_to_large) {
        double scaled = value / u.scale;
        double rounded = std::round(scaled * 1e6) / 1e6;
        if (value != 0 && scaled >= 1.0 && std::abs(rounded * u.scale - value) <= 1e-9 * std::abs(value)) best = &u;
    }
    return trim_number(value / best->scale) + best->suffix;
}

const std::vector<unit_scale> time_units = {{"ps", 1e-12}, {"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}};
const std::vector<unit_scale> frequency_units = {{"Hz", 1.0}, {"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}};
const std::vector<unit_scale> binary_size_units = {
    {"B", 1.0}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
// K, M, G and T alone are binary, as nccl-tests reads its -b and -e sizes.
const std::vector<unit_scale> size_units = {
    {"B", 1.0},       {"KiB", 1024.0},     {"MiB", 1048576.0},    {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
    {"KB", 1e3},      {"MB", 1e6},         {"GB", 1e9},           {"TB", 1e12},          {"K", 1024.0},
    {"M", 1048576.0}, {"G", 1073741824.0}, {"T", 1099511627776.0}};
const std::vector<unit_scale> byte_rate_units = {
    {"B/s", 1.0}, {"KB/s", 1e3}, {"MB/s", 1e6}, {"GB/s", 1e9}, {"TB/s", 1e12}};
const std::vector<unit_scale> rate_units = {{"B/s", 1.0},    {"KB/s", 1e3},  {"MB/s", 1e6},   {"GB/s", 1e9},
                                            {"TB/s", 1e12},  {"b/s", 0.125}, {"Kb/s", 125.0}, {"Mb/s", 125e3},
                                            {"Gb/s", 125e6}, {"Tb/s", 125e9}};

}  // namespace

sc_core::sc_time parse_time(const std::string& text) {
    double seconds = parse_scaled(text, "time", time_units);
    if (seconds >= sc_core::sc_max_time().to_seconds())
        throw config_error(fmt::format("'{}' is not a time the simulation can hold (at most {:.0f} s)", text,
                                       sc_core::sc_max_time().to_seconds()));
    return sc_core::sc_time(seconds, sc_core::SC_SEC);
}

frequency parse_frequency(const std::string& text) {
    double hz = parse_scaled(text, "frequency", frequency_units);
    if (hz <= 0) throw config_error(fmt::format("'{}' is not a frequency: it must be above zero", text));
    return {hz};
}

byte_count parse_byte_count(const std::string& text) {
    // A plain count of bytes ("4096", "4096B") is taken exactly, beyond a double's 53 bits.
    const std::size_t digits = text.find_first_not_of("0123456789");
    if (digits > 0 && digits != std::string::npos ? text.substr(digits) == "B" : digits == std::string::npos) {
        errno = 0;
        const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
        if (errno == ERANGE) throw config_error(fmt::format("'{}' is not a size: it is beyond 2^64 bytes", text));
        return {v};
    }
    double bytes = parse_scaled(text, "size", size_units);
    if (bytes != std::floor(bytes) || bytes > 1.8e19)
        throw config_error(fmt::format("'{}' is not a size: it must be a whole number of bytes", text));
    return {static_cast<std::uint64_t>(bytes)};
}

bandwidth parse_bandwidth(const std::string& text) {
    double bps = parse_scaled(text, "bandwidth", rate_units);
    if (bps <= 0) throw config_error(fmt::format("'{}' is not a bandwidth: it must be above zero", text));
    return {bps};
}

std::string format_time(const sc_core::sc_time& t) { return format_scaled(t.to_seconds(), time_units); }
std::string format_frequency(frequency f) { return format_scaled(f.hz, frequency_units); }
std::string format_byte_count(byte_count b) { return format_scaled(static_cast<double>(b.bytes), binary_size_units); }
std::string format_bandwidth(bandwidth b) { return format_scaled(b.bytes_per_s, byte_rate_units); }

}  // namespace trn3
