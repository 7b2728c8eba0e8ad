#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include <unistd.h>

#include "trn3/core/param.h"

using namespace trn3;
using sc_core::SC_NS;
using sc_core::sc_time;

namespace {
struct block : sc_core::sc_module {
    param<sc_time> latency{this, "latency", sc_time(100, SC_NS), "read latency"};
    param<frequency> clock{this, "clock", frequency{2.4e9}, "core clock"};
    param<std::uint64_t> lanes{this, "lanes", 16, "active lanes", range<std::uint64_t>{1, 144}};
    param<bool> enabled{this, "enabled", true, "block is on"};
    param<std::string> mode{this, "mode", "model", "back end"};
    param<byte_count> size{this, "size", byte_count{36ull << 30}, "stack capacity"};
    explicit block(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {}
};

std::string temp_file(const std::string& text) {
    char name[] = "/tmp/trn3-params-XXXXXX";
    int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    close(fd);
    std::ofstream(name) << text;
    return name;
}
}  // namespace

TEST_CASE("a param without a value keeps its default and says so") {
    block b("chip0");
    CHECK(b.latency.get() == sc_time(100, SC_NS));
    CHECK(b.latency.name() == "chip0.latency");
    CHECK(b.latency.source() == "default");
    CHECK(std::string(b.latency.type_name()) == "time");
    CHECK(b.clock.get().hz == 2.4e9);
}

TEST_CASE("a command-line value set before construction is picked up") {
    auto& reg = param_registry::instance();
    reg.set_pending_text("chip0.latency", "120ns", "command line");
    reg.set_pending_text("chip0.lanes", "144", "command line");
    block b("chip0");
    CHECK(b.latency.get() == sc_time(120, SC_NS));
    CHECK(b.lanes.get() == 144);
    CHECK(b.latency.source() == "command line");
    CHECK_NOTHROW(reg.check_all_claimed());
}

TEST_CASE("a name with '*' sets every param it matches, before or after they exist, in the order values were set") {
    auto& reg = param_registry::instance();
    reg.set_pending_text("chip*.latency", "150ns", "command line");
    reg.set_pending_text("chip1.latency", "170ns", "command line");  // later: wins for chip1
    block a("chip0"), b("chip1");
    CHECK(a.latency.get() == sc_time(150, SC_NS));
    CHECK(b.latency.get() == sc_time(170, SC_NS));
    CHECK(a.lanes.get() == 16);
    reg.set_pending_text("*.lanes", "96", "command line");  // the params exist: set at once
    CHECK(a.lanes.get() == 96);
    CHECK(b.lanes.get() == 96);
    CHECK_NOTHROW(reg.check_all_claimed());
    reg.set_pending_text("tray*.latency", "1ns", "command line");
    CHECK_THROWS_WITH(reg.check_all_claimed(), "param pattern 'tray*.latency' (from command line) matches no param");
    reg.clear_pending();
}

TEST_CASE("a value out of range is refused and names the param and the range") {
    param_registry::instance().set_pending_text("chip0.lanes", "200", "command line");
    CHECK_THROWS_WITH(block("chip0"), Catch::Contains("chip0.lanes = 200") && Catch::Contains("[1, 144]"));
}

TEST_CASE("a value that does not parse is refused and names the param") {
    param_registry::instance().set_pending_text("chip0.latency", "fast", "command line");
    CHECK_THROWS_WITH(block("chip0"), Catch::StartsWith("param chip0.latency:"));
}

TEST_CASE("a misspelled key gets the nearest valid name as a suggestion") {
    auto& reg = param_registry::instance();
    block b("chip0");
    reg.set_pending_text("chip0.latncy", "1ns", "command line");
    CHECK_THROWS_WITH(reg.check_all_claimed(),
                      "unknown param 'chip0.latncy' (from command line); did you mean 'chip0.latency'?");
}

TEST_CASE("an unknown key far from every name gets no suggestion") {
    auto& reg = param_registry::instance();
    block b("chip0");
    reg.set_pending_text("zzzzzzzzzzzzzzzzzzzz", "1", "command line");
    CHECK_THROWS_WITH(reg.check_all_claimed(), "unknown param 'zzzzzzzzzzzzzzzzzzzz' (from command line)");
}

TEST_CASE("a config file may be flat or nested, and -p overrides it") {
    auto& reg = param_registry::instance();
    std::string path = temp_file(R"({"chip0": {"latency": "80ns", "mode": "rtl"}, "chip0.enabled": false,
                                    "chip0.size": "24GiB"})");
    reg.load_config_file(path);
    reg.set_pending_text("chip0.mode", "check", "command line");
    block b("chip0");
    CHECK(b.latency.get() == sc_time(80, SC_NS));
    CHECK(b.enabled.get() == false);
    CHECK(b.size.get().bytes == 24ull << 30);
    CHECK(b.mode.get() == "check");
    std::remove(path.c_str());
}

TEST_CASE("the dumped config, fed back, reproduces every value") {
    auto& reg = param_registry::instance();
    std::string path = temp_file("");
    nlohmann::json first;
    {
        reg.set_pending_text("chip0.latency", "12.5ns", "command line");
        reg.set_pending_text("chip0.clock", "1.2GHz", "command line");
        block b("chip0");
        reg.dump_config_file(path);
        first = reg.resolved();
    }
    reg.clear_pending();
    reg.load_config_file(path);
    block again("chip0");
    CHECK(reg.resolved() == first);
    CHECK(again.latency.get() == sc_time(12500, sc_core::SC_PS));
    CHECK(again.clock.get().hz == 1.2e9);
    std::remove(path.c_str());
}

TEST_CASE("a malformed config file is a one-line error naming the file") {
    std::string path = temp_file("{ not json");
    CHECK_THROWS_WITH(param_registry::instance().load_config_file(path),
                      Catch::StartsWith("config file '" + path + "' is not valid JSON"));
    CHECK_THROWS_WITH(param_registry::instance().load_config_file("/nonexistent.json"),
                      "config file '/nonexistent.json': cannot open it (No such file or directory)");
    std::remove(path.c_str());
}

TEST_CASE("a wrongly typed JSON value is refused") {
    param_registry::instance().set_pending("chip0.lanes", nlohmann::json("many"), "config x.json");
    CHECK_THROWS_AS(block("chip0"), config_error);
}

TEST_CASE("a param declared twice is an error") {
    block b("chip0");
    CHECK_THROWS_WITH(param<bool>(&b, "enabled", false, "again"), "param chip0.enabled is declared twice");
}

TEST_CASE("a host program's param declared by a second instance of the program reads the same key") {
    param_registry::instance().clear_pending();
    param_registry::instance().set_pending_text("app.rounds", "5", "command line");
    auto first = std::make_unique<param<std::uint64_t>>(nullptr, "app.rounds", 1, "rounds");
    param<std::uint64_t> second(nullptr, "app.rounds", 1, "rounds");
    CHECK(first->get() == 5);
    CHECK(second.get() == 5);
    param_registry::instance().set_pending_text("app.rounds", "7", "command line");  // after both exist
    CHECK(first->get() == 7);
    CHECK(second.get() == 7);
    CHECK_THROWS_WITH(param<bool>(nullptr, "app.rounds", false, "a different type"),
                      "param app.rounds is declared twice");
    first.reset();  // the second stands for the key now
    REQUIRE(param_registry::instance().find("app.rounds") == &second);
    param_registry::instance().clear_pending();
}

TEST_CASE("edit distance counts single-character edits") {
    CHECK(edit_distance("latency", "latency") == 0);
    CHECK(edit_distance("latncy", "latency") == 1);
    CHECK(edit_distance("kitten", "sitting") == 3);
}

namespace {
struct numbers : sc_core::sc_module {
    param<double> rate{this, "rate", 0.5, "a rate", range<double>{0.0, 1.0}};
    param<double> gain{this, "gain", 1.0, "no declared range"};
    param<std::uint64_t> count{this, "count", 4, "no declared range"};
    param<std::int64_t> offset{this, "offset", 0, "no declared range"};
    param<sc_time> timeout{this, "timeout", sc_time(1, SC_NS), "no declared range"};
    param<byte_count> bytes{this, "bytes", byte_count{0}, "no declared range"};
    explicit numbers(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {}
};
}  // namespace

TEST_CASE("NaN and infinity are refused by every real param, with or without a declared range") {
    for (const char* leaf : {"rate", "gain"})
        for (const char* bad : {"nan", "NaN", "inf", "-inf"}) {
            param_registry::instance().clear_pending();
            param_registry::instance().set_pending_text(std::string("n.") + leaf, bad, "command line");
            CHECK_THROWS_AS(numbers("n"), config_error);
        }
}

TEST_CASE("a numeric param without a declared range has its type's: 32-bit integers, an hour, a PiB") {
    auto& reg = param_registry::instance();
    reg.set_pending_text("n.count", "4294967296", "command line");  // 2^32 would wrap an unsigned
    CHECK_THROWS_WITH(numbers("n"), Catch::Contains("n.count = 4294967296") && Catch::Contains("[0, 4294967295]"));
    reg.clear_pending();
    reg.set_pending_text("n.offset", "-2147483649", "command line");
    CHECK_THROWS_WITH(numbers("n"), Catch::Contains("outside its range [-2147483648, 2147483647]"));
    reg.clear_pending();
    reg.set_pending_text("n.timeout", "2h", "command line");
    CHECK_THROWS_AS(numbers("n"), config_error);  // no such unit
    reg.clear_pending();
    reg.set_pending_text("n.timeout", "3601s", "command line");
    CHECK_THROWS_WITH(numbers("n"), Catch::Contains("[0ps, 3600s]"));
    reg.clear_pending();
    reg.set_pending_text("n.timeout", "1e30s", "command line");
    CHECK_THROWS_WITH(numbers("n"), Catch::Contains("not a time the simulation can hold"));
}

TEST_CASE("a size given as a plain count of bytes is taken exactly, beyond a double's precision") {
    CHECK(parse_byte_count("9007199254740993").bytes == 9007199254740993ull);  // 2^53 + 1
    CHECK(parse_byte_count("9007199254740993B").bytes == 9007199254740993ull);
    CHECK(parse_byte_count("4KiB").bytes == 4096);
    CHECK(parse_byte_count("1G").bytes == 1ull << 30);  // K, M, G alone: binary, as nccl-tests reads them
    CHECK(parse_byte_count("16M").bytes == 16ull << 20);
    CHECK(parse_byte_count("8K").bytes == 8192);
    CHECK_THROWS_WITH(parse_byte_count("18446744073709551616"), Catch::Contains("beyond 2^64"));
}
