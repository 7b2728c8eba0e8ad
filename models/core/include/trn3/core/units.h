// Typed physical quantities and their text form.
//
// Params carry units in their values ("120ns", "2.4GHz", "144GiB", "38.4GB/s")
// so that a config file reads like a datasheet. Each quantity is a small
// strong type so that a frequency cannot be passed where a size is expected.
// Time uses sc_core::sc_time directly: models schedule with it.
#pragma once

#include <cstdint>
#include <string>

#include <systemc>

namespace trn3 {

// A clock or a rate of events, in hertz.
struct frequency {
    double hz = 0.0;
    sc_core::sc_time period() const { return sc_core::sc_time(1.0 / hz, sc_core::SC_SEC); }
    friend bool operator<(frequency a, frequency b) { return a.hz < b.hz; }
    friend bool operator==(frequency a, frequency b) { return a.hz == b.hz; }
};

// A number of bytes (capacities, sizes, page sizes).
struct byte_count {
    std::uint64_t bytes = 0;
    friend bool operator<(byte_count a, byte_count b) { return a.bytes < b.bytes; }
    friend bool operator==(byte_count a, byte_count b) { return a.bytes == b.bytes; }
};

// A data rate in bytes per second. "GB/s" is 1e9 bytes/s; "Gb/s" 1e9 bits/s.
struct bandwidth {
    double bytes_per_s = 0.0;
    // Time the wire is busy carrying n bytes, rounded to the time resolution.
    sc_core::sc_time transfer_time(std::uint64_t n) const {
        return sc_core::sc_time(static_cast<double>(n) / bytes_per_s, sc_core::SC_SEC);
    }
    friend bool operator<(bandwidth a, bandwidth b) { return a.bytes_per_s < b.bytes_per_s; }
    friend bool operator==(bandwidth a, bandwidth b) { return a.bytes_per_s == b.bytes_per_s; }
};

// Parsers: accept "<number><unit>" with optional spaces; throw config_error
// naming the accepted units when the text is not a valid quantity.
sc_core::sc_time parse_time(const std::string& text);  // ps ns us ms s
frequency parse_frequency(const std::string& text);  // Hz kHz MHz GHz
byte_count parse_byte_count(const std::string& text);  // B KiB MiB GiB TiB (and KB MB GB TB = 1000^n)
bandwidth parse_bandwidth(const std::string& text);  // B/s KB/s MB/s GB/s TB/s, b/s Kb/s Mb/s Gb/s Tb/s

// Formatters: the shortest exact form in the largest unit that keeps an
// integer or short decimal ("120ns", "2.4GHz", "144GiB", "38.4GB/s"). The
// result parses back to the same value.
std::string format_time(const sc_core::sc_time& t);
std::string format_frequency(frequency f);
std::string format_byte_count(byte_count b);
std::string format_bandwidth(bandwidth b);

}  // namespace trn3
