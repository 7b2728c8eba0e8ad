#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include <unistd.h>

#include "trn3/core/param.h"

using namespace trn3;
using sc_core::sc_time;
using sc_core::SC_NS;

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
} // namespace

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
                      "cannot read config file '/nonexistent.json'");
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

TEST_CASE("edit distance counts single-character edits") {
    CHECK(edit_distance("latency", "latency") == 0);
    CHECK(edit_distance("latncy", "latency") == 1);
    CHECK(edit_distance("kitten", "sitting") == 3);
}
