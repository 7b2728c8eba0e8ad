// Bad input on the command line: each becomes one line and exit 2, or the hardware's answer.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli.h"

using namespace trn3::cli_test;

namespace {
std::string write_temp(const std::string& tag, const std::string& text) {
    const std::string path = temp_path(tag);
    std::ofstream(path) << text;
    return path;
}
}  // namespace

TEST_CASE("input that crashed the simulator is a one-line user error") {
    expect_user_error("run -p bringup.tg0.base=18446744073709551615", "bringup.tg0.base = 18446744073709551615");
    expect_user_error("run --platform neuroncore -p neuroncore.device.size=1MiB",
                      "neuroncore.device.size = 1MiB: the kernels' layout needs 13GiB");
    for (const char* p :
         {"vector_elements_per_cycle_wide", "vector_elements_per_cycle_narrow", "scalar_elements_per_cycle_wide",
          "scalar_elements_per_cycle_narrow", "gpsimd_elements_per_cycle"})
        expect_user_error(std::string("run --platform neuroncore -p neuroncore.nc0.") + p + "=0",
                          "outside its range [1, 65536]");
    expect_user_error("run --platform trn3-dev -p trn3dev.chip0.nc3.gpsimd_elements_per_cycle=0", "outside its range");
    std::string deep;
    for (int i = 0; i < 50000; ++i) deep += "{\"a\":";
    deep += "1";
    for (int i = 0; i < 50000; ++i) deep += "}";
    const std::string nested = write_temp("deep.json", deep);
    expect_user_error("run --config " + nested, "nested deeper than 64 levels");
    std::remove(nested.c_str());
}

TEST_CASE("sizes a platform cannot hold and values that would wrap are refused, never truncated") {
    expect_user_error("run --platform neuroncore -p neuroncore.m=1000000000", "more than its 4GiB slot");
    expect_user_error("run --platform neuroncore -p neuroncore.m=4294967424", "neuroncore.m = 4294967424");
    expect_user_error("run --platform pcie -p pcie.ep2_link.failed_lanes=4294967297", "4294967297");
    expect_user_error("run -p bringup.dram.read_latency=1e30s", "not a time the simulation can hold");
    expect_user_error("run -p sim.progress=nan", "NaN");
    expect_user_error("run --platform hbm -p hbm.hbm0.ecc.double_rate=nan", "NaN");
    expect_user_error("run --platform nl32x2 -p nl32x2.faulty_lanes=1000", "the first chip has 80 backplane lanes");
    expect_user_error("run --platform neuroncore -p neuroncore.tolerance=-1", "outside its range");
    expect_user_error("run --platform neuroncore -p neuroncore.kernel=matmul_stream -p neuroncore.repeats=0",
                      "outside its range");
}

TEST_CASE("a link that never trains ends the run with a failure, not a simulation that runs forever") {
    for (const char* args :
         {"--platform pcie -p pcie.host_link.failed_lanes=0-15", "--platform pcie -p pcie.host_link.auto_train=false",
          "--platform trn3-dev -p trn3dev.host_link.failed_lanes=0-15"}) {
        const result r = trn3vp(std::string("run ") + args);
        INFO(args << "\n" << r.out << r.err);
        CHECK(r.code == 1);
        CHECK_THAT(r.out, Catch::Contains("FAILED: the root port's link did not come up within 10 ms"));
        CHECK_THAT(r.out, Catch::Contains("simulated time    10.000 ms"));
    }
}

TEST_CASE(
    "files: a directory or an endless device is refused, every output is checked, two outputs never share a file") {
    expect_user_error("run --config /tmp", "config file '/tmp': not a regular file");
    expect_user_error("run --platform mcu -p mcu.mcu0.firmware=/tmp", "firmware '/tmp': not a regular file");
    expect_user_error("run --platform mcu -p mcu.mcu0.boot_rom=/dev/zero", "firmware '/dev/zero': not a regular file");
    const result stats = trn3vp("run" + small + " --stats /dev/full");
    CHECK(stats.code == 2);
    CHECK_THAT(stats.err, Catch::Contains("stats file '/dev/full': writing it failed"));
    expect_user_error("run --dump-config /dev/full", "config file '/dev/full': writing it failed");
    const result timeline = trn3vp("run" + small + " --timeline /dev/full");
    CHECK(timeline.code == 2);
    CHECK_THAT(timeline.err, Catch::Contains("timeline file '/dev/full': writing it failed"));
    expect_user_error("run --platform neuroncore -p neuroncore.nc0.tensor_engine.backend=rtl "
                      "-p neuroncore.nc0.tensor_engine.waveform=/nonexistent/w.vcd",
                      "waveform file '/nonexistent/w.vcd': cannot write it");
    const std::string same = temp_path("same.json");
    expect_user_error("run --stats " + same + " --timeline " + same, "--stats and --timeline name the same file");
    const std::string garbage = write_temp("garbage.json", "{\"bringup.tg0.count\": 5} trailing");
    expect_user_error("run --config " + garbage, "is not valid JSON");
    std::remove(garbage.c_str());
    const result big = trn3vp("run -p bringup.tg0.pattern=" + std::string(100000, 'x'));
    CHECK(big.code == 2);
    CHECK(big.err.size() < 400);  // the value is quoted, not echoed whole
}

TEST_CASE("firmware that traps at its first instruction: the report names the trap's cause and pc") {
    const result r = trn3vp(std::string("run --platform mcu -p mcu.mcu0.boot_rom= -p mcu.mcu0.firmware=") +
                            TRN3_MCU_PROGRAMS + "/mcu_trap_at_entry.elf");
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK_THAT(r.out, Catch::Contains("exceptions; the first: illegal instruction (cause 2) at pc 0x20000000"));
    CHECK_THAT(r.out, Catch::Contains("FAILED: command 1: no answer within 10 ms"));
}

TEST_CASE("the command line: --version, a dumped config names its platform, list-params filters by glob") {
    const result v = trn3vp("--version");
    CHECK(v.code == 0);
    CHECK_THAT(v.out, Catch::StartsWith("trn3vp "));
    const std::string dump = temp_path("nc-dump.json");
    REQUIRE(trn3vp("run --platform neuroncore -p neuroncore.kernel=softmax --dump-config " + dump).code == 0);
    CHECK_THAT(slurp(dump), Catch::Contains("\"platform\": \"neuroncore\""));
    const result again = trn3vp("run --config " + dump);
    std::remove(dump.c_str());
    CHECK(again.code == 0);
    CHECK_THAT(again.out, Catch::Contains("platform neuroncore: PASSED"));
    CHECK_THAT(again.out, Catch::Contains("kernel softmax"));
    const result f = trn3vp("list-params --platform trn3-dev --filter 'trn3dev.chip0.nc0.tensor_engine.*'");
    CHECK(f.code == 0);
    CHECK(std::count(f.out.begin(), f.out.end(), '\n') == 6);  // the header and five params
    expect_user_error("list-params --filter 'nothing.*'", "no param matches 'nothing.*'");
    const result help = trn3vp("run --help");
    CHECK_THAT(help.out, Catch::Contains("-p bringup.dram.read_latency=120ns"));
}

TEST_CASE("a bad sweep file is a one-line user error naming what is wrong") {
    using namespace trn3::cli_test;
    const struct {
        const char* json;
        const char* says;
    } cases[] = {
        {"{\"platform\": \"bringup\",", "not JSON"},
        {"[1, 2]", "must be a JSON object"},
        {"{\"grid\": {}}", "'platform' (a string) is required, unless the grid varies it"},
        {"{\"platform\": \"bringup\", \"gird\": {}}", "unknown key 'gird'"},
        {"{\"platform\": \"bringup\", \"grid\": {\"bringup.tg0.count\": 5}}", "must be a non-empty list"},
        {"{\"platform\": \"bringup\", \"grid\": {\"bringup.tg0.count\": [[1]]}}",
         "must be a string, a number or a boolean"},
        {"{\"platform\": \"bringup\", \"figures\": {\"x\": \"no group\"}}", "needs a group"},
        {"{\"platform\": \"bringup\", \"figures\": {\"x\": \"(\"}}", "not a regex"},
        {"{\"platform\": \"bringup\", \"grid\": {\"a\": [1]}, \"plot\": {\"x\": \"a\", \"y\": \"nothing\"}}",
         "plot y 'nothing' is not a figure"},
        {"{\"platform\": \"bringup\", \"plot\": {\"x\": \"b\", \"y\": \"simulated_us\"}}",
         "plot x 'b' is not a param of the grid or points"},
    };
    const std::string path = temp_path("sweep.json");
    for (const auto& c : cases) {
        std::ofstream(path) << c.json;
        expect_user_error("sweep " + path + " --dry-run", c.says);
    }
    std::remove(path.c_str());
    expect_user_error("sweep /nonexistent/sweep.json", "/nonexistent/sweep.json");
}

TEST_CASE("a sweep's dry run lists every point of the grid crossed with the points, the grid's last key fastest") {
    using namespace trn3::cli_test;
    const std::string path = temp_path("sweep.json");
    std::ofstream(path) << R"({"platform": "bringup", "params": {"bringup.tg1.count": 7},
        "grid": {"bringup.tg0.count": [1, 2], "bringup.dram.read_latency": ["5ns", "9ns"]},
        "points": [{"bringup.tg1.count": 3}, {}]})";
    const result r = trn3vp("sweep " + path + " --dry-run");
    std::remove(path.c_str());
    CHECK(r.code == 0);
    CHECK(
        r.out ==
        "point 0: --platform bringup -p bringup.dram.read_latency=5ns -p bringup.tg0.count=1 -p bringup.tg1.count=3\n"
        "point 1: --platform bringup -p bringup.dram.read_latency=5ns -p bringup.tg0.count=2 -p bringup.tg1.count=3\n"
        "point 2: --platform bringup -p bringup.dram.read_latency=9ns -p bringup.tg0.count=1 -p bringup.tg1.count=3\n"
        "point 3: --platform bringup -p bringup.dram.read_latency=9ns -p bringup.tg0.count=2 -p bringup.tg1.count=3\n"
        "point 4: --platform bringup -p bringup.dram.read_latency=5ns -p bringup.tg0.count=1 -p bringup.tg1.count=7\n"
        "point 5: --platform bringup -p bringup.dram.read_latency=5ns -p bringup.tg0.count=2 -p bringup.tg1.count=7\n"
        "point 6: --platform bringup -p bringup.dram.read_latency=9ns -p bringup.tg0.count=1 -p bringup.tg1.count=7\n"
        "point 7: --platform bringup -p bringup.dram.read_latency=9ns -p bringup.tg0.count=2 -p bringup.tg1.count=7\n");
}
