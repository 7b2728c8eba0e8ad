#include <catch2/catch.hpp>

#include "trn3/core/error.h"
#include "trn3/core/units.h"

using namespace trn3;
using sc_core::SC_NS;
using sc_core::sc_time;

TEST_CASE("times parse in every unit and print back exactly") {
    CHECK(parse_time("120ns") == sc_time(120, SC_NS));
    CHECK(parse_time("12.5 ns") == sc_time(12500, sc_core::SC_PS));
    CHECK(parse_time("3.9us") == sc_time(3900, SC_NS));
    CHECK(parse_time("2ms") == sc_time(2, sc_core::SC_MS));
    CHECK(format_time(sc_time(120, SC_NS)) == "120ns");
    CHECK(format_time(sc_time(12500, sc_core::SC_PS)) == "12.5ns");
    CHECK(format_time(sc_time(3900, SC_NS)) == "3.9us");
    CHECK(parse_time(format_time(sc_time(16250, sc_core::SC_PS))) == sc_time(16250, sc_core::SC_PS));
}

TEST_CASE("frequencies, sizes and bandwidths parse with their units") {
    CHECK(parse_frequency("2.4GHz").hz == 2.4e9);
    CHECK(parse_frequency("1200MHz").hz == 1.2e9);
    CHECK(format_frequency(parse_frequency("1200MHz")) == "1.2GHz");
    CHECK(parse_byte_count("144GiB").bytes == 144ull << 30);
    CHECK(parse_byte_count("256 KiB").bytes == 256u << 10);
    CHECK(parse_byte_count("2KB").bytes == 2000);
    CHECK(format_byte_count(byte_count{144ull << 30}) == "144GiB");
    CHECK(format_byte_count(byte_count{1536}) == "1.5KiB");
    CHECK(format_byte_count(byte_count{12345}) == "12345B");
    CHECK(parse_bandwidth("38.4GB/s").bytes_per_s == Approx(38.4e9));
    CHECK(parse_bandwidth("64Gb/s").bytes_per_s == Approx(8e9));
    CHECK(format_bandwidth(bandwidth{4.9152e12}) == "4.9152TB/s");
}

TEST_CASE("what a formatter writes parses back to the same value, however many digits it needs (found by fuzzing)") {
    // Once "1677.509075TiB", 182,179 bytes short.
    const byte_count odd{1844440733844441ull};
    CHECK(format_byte_count(odd) != "1677.509075TiB");
    CHECK(parse_byte_count(format_byte_count(odd)) == odd);
    CHECK(format_byte_count(byte_count{(1ull << 62) + 1}) == "4611686018427387905B");  // past a double's 53 bits
    // Once read through a double of seconds, a picosecond off.
    const sc_time long_time = parse_time("4674407073384443ps");
    CHECK(long_time.value() == 4674407073384443ull);
    CHECK(parse_time(format_time(long_time)) == long_time);
    CHECK(format_time(sc_time(120, SC_NS)) == "120ns");
    // Past 2^53 picoseconds a double of seconds cannot hold the time: whole units, counted exactly.
    const sc_time longer = parse_time("144674073704466ns");
    CHECK(format_time(longer) == "144674073704466ns");
    CHECK(parse_time(format_time(longer)) == longer);
    // A finite number in a large unit past a double's range: refused, not infinite.
    CHECK_THROWS_WITH(parse_bandwidth("481E300Gb/s"), "'481E300Gb/s' is not a bandwidth: it is too large");
    CHECK_THROWS_WITH(parse_frequency("1e308GHz"), "'1e308GHz' is not a frequency: it is too large");
}

TEST_CASE("a bandwidth turns bytes into wire time") {
    bandwidth b{8e9};  // one Gen6 lane, one direction
    CHECK(b.transfer_time(256) == sc_time(32, SC_NS));
}

TEST_CASE("a quantity with a wrong or missing unit is refused with the accepted units") {
    CHECK_THROWS_WITH(parse_time("120"), Catch::Contains("ps, ns, us, ms, s"));
    CHECK_THROWS_WITH(parse_time("120GHz"), Catch::Contains("'120GHz' is not a time"));
    CHECK_THROWS_AS(parse_byte_count("ns"), config_error);
    CHECK_THROWS_AS(parse_byte_count("1.5B"), config_error);
    CHECK_THROWS_AS(parse_frequency("0Hz"), config_error);
    CHECK_THROWS_AS(parse_bandwidth("-1GB/s"), config_error);
}
