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

// The number and which of `units` it is in.
std::pair<double, std::size_t> split_unit(const std::string& text, const char* what,
                                          const std::vector<unit_scale>& units) {
    auto [value, unit] = split_number(text, what);
    if (value < 0) throw config_error(fmt::format("'{}' is not a {}: it must not be negative", text, what));
    std::string accepted;
    for (std::size_t i = 0; i < units.size(); ++i) {
        if (unit == units[i].suffix) return {value, i};
        accepted += accepted.empty() ? units[i].suffix : std::string(", ") + units[i].suffix;
    }
    throw config_error(fmt::format("'{}' is not a {}: the unit must be one of {}", text, what, accepted));
}

double parse_scaled(const std::string& text, const char* what, const std::vector<unit_scale>& units) {
    const auto [value, i] = split_unit(text, what, units);
    // "481E300Gb/s" is a finite number times a unit past a double's range
    // (found by fuzz/targets/units.cpp): refused, never an infinity.
    const double scaled = value * units[i].scale;
    if (!std::isfinite(scaled)) throw config_error(fmt::format("'{}' is not a {}: it is too large", text, what));
    return scaled;
}

// Writes v / scale with up to 6 significant decimals and no trailing zeros.
std::string trim_number(double v) {
    std::string s = fmt::format("{:.6f}", v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
}

// The largest unit in which the value is at least 1 and reads as a short
// decimal (up to 6 places) that `exact` accepts (it parses back to the
// value); else `fallback` (an exact form). (A tolerance of 1e-9 once let
// 1844440733844441 B become "1677.509075TiB", 182,179 bytes short: found by
// fuzz/targets/units.cpp.)
template <typename Exact>
std::string format_scaled(double value, const std::vector<unit_scale>& units_small_to_large, Exact&& exact,
                          const std::string& fallback) {
    for (auto u = units_small_to_large.rbegin(); u != units_small_to_large.rend(); ++u) {
        const double scaled = value / u->scale;
        if (value == 0 || scaled < 1.0) continue;
        const std::string text = trim_number(scaled) + u->suffix;
        if (exact(text)) return text;
    }
    return fallback;
}

const std::vector<unit_scale> time_units = {{"ps", 1e-12}, {"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}};
// SystemC's unit for each of time_units, in the same order.
const sc_core::sc_time_unit time_unit_of[] = {sc_core::SC_PS, sc_core::SC_NS, sc_core::SC_US, sc_core::SC_MS,
                                              sc_core::SC_SEC};
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
    // In the text's own unit, not through seconds: "4674407073384443ps" is
    // exact in picoseconds and not as a double of seconds (found by
    // fuzz/targets/units.cpp); a whole number of units is counted in ticks,
    // as sc_time(double) rounds by adding 0.5 to a double past 2^52 ticks.
    const auto [value, i] = split_unit(text, "time", time_units);
    if (value * time_units[i].scale >= sc_core::sc_max_time().to_seconds())
        throw config_error(fmt::format("'{}' is not a time the simulation can hold (at most {:.0f} s)", text,
                                       sc_core::sc_max_time().to_seconds()));
    const std::uint64_t ticks_per_unit = sc_core::sc_time(1, time_unit_of[i]).value();
    if (value == std::floor(value) && ticks_per_unit > 0 && value < 9e18 / static_cast<double>(ticks_per_unit))
        return sc_core::sc_time::from_value(static_cast<std::uint64_t>(value) * ticks_per_unit);
    return sc_core::sc_time(value, time_unit_of[i]);
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

namespace {
// Whether `text` parses back to exactly `value` (a text the parser refuses does not).
template <typename Parse, typename T>
bool reads_back(Parse&& parse, const std::string& text, const T& value) {
    try {
        return parse(text) == value;
    } catch (const config_error&) {
        return false;
    }
}
}  // namespace

// The fallbacks: the shortest decimal that reads back to the same double
// (fmt's "{}"), in the smallest unit; a size's exact count of bytes.
std::string format_time(const sc_core::sc_time& t) {
    // Past 2^53 ticks a double of seconds no longer holds the time (found by
    // fuzz/targets/units.cpp: 144674073704466ns): whole units, counted in
    // ticks, in the largest unit that divides the time.
    std::string whole;
    for (std::size_t i = 0; i < time_units.size(); ++i) {
        const std::uint64_t per = sc_core::sc_time(1, time_unit_of[i]).value();
        if (per > 0 && t.value() % per == 0 && (i == 0 || t.value() != 0))
            whole = fmt::format("{}{}", t.value() / per, time_units[i].suffix);
    }
    if (t.value() >= (1ull << 53) && !whole.empty()) return whole;
    // The fallback counts the time resolution's ticks in picoseconds (1 each at the default 1 ps).
    const double ps_per_tick = sc_core::sc_get_time_resolution().to_seconds() * 1e12;
    return format_scaled(
        t.to_seconds(), time_units, [&](const std::string& s) { return reads_back(parse_time, s, t); },
        whole.empty() ? fmt::format("{}ps", static_cast<double>(t.value()) * ps_per_tick) : whole);
}
std::string format_frequency(frequency f) {
    return format_scaled(
        f.hz, frequency_units, [&](const std::string& s) { return reads_back(parse_frequency, s, f); },
        fmt::format("{}Hz", f.hz));
}
std::string format_byte_count(byte_count b) {
    return format_scaled(
        static_cast<double>(b.bytes), binary_size_units,
        [&](const std::string& s) { return reads_back(parse_byte_count, s, b); }, fmt::format("{}B", b.bytes));
}
std::string format_bandwidth(bandwidth b) {
    return format_scaled(
        b.bytes_per_s, byte_rate_units, [&](const std::string& s) { return reads_back(parse_bandwidth, s, b); },
        fmt::format("{}B/s", b.bytes_per_s));
}

}  // namespace trn3
