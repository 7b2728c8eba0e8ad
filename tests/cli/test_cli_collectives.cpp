// The collectives program on the command line (see test_cli.cpp):
// nccl-tests tables with exact data for every op and algorithm, on reduced
// UltraServers and the torus, subgroups, JSON, faults and the errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli.h"

using namespace trn3::cli_test;

namespace {
// The table rows of a collectives run (the lines that start with spaces and a size).
std::vector<std::string> table_rows(const std::string& out) {
    std::vector<std::string> rows;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
        if (line.size() > 12 && line.compare(0, 2, "  ") == 0) {
            std::istringstream fields(line);
            std::string size;
            fields >> size;
            if (size.find_first_not_of("0123456789") == std::string::npos) rows.push_back(line);
        }
    return rows;
}

// Column `column` (1-based) of a table row as a number: 6 is the
// out-of-place time in us, 10 the in-place one.
double column_of(const std::string& row, int column) {
    std::istringstream in(row);
    std::string field;
    for (int i = 0; i < column; ++i) in >> field;
    return std::stod(field);
}

// The one row of a run of one size, which must end well with every
// element exact, in and out of place.
std::string exact_row(const result& r) {
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const auto rows = table_rows(r.out);
    REQUIRE(rows.size() == 1);
    CHECK(column_of(rows[0], 9) == 0);
    CHECK(column_of(rows[0], 13) == 0);
    return rows[0];
}
}  // namespace

TEST_CASE("collectives: nccl-tests tables with exact results for every op on reduced nl32x2, the same run to run") {
    const std::string base = "run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=collectives "
                             "-p collectives.min_bytes=64 -p collectives.max_bytes=8192 -p collectives.factor=4 ";
    for (const char* args : {"-p collectives.op=all_reduce -p collectives.dtype=fp32",
                             "-p collectives.op=all_reduce -p collectives.dtype=bf16 -p collectives.redop=max",
                             "-p collectives.op=reduce_scatter -p collectives.dtype=fp16",
                             "-p collectives.op=all_gather -p collectives.dtype=e4m3",
                             "-p collectives.op=all_to_all -p collectives.dtype=int32 -p collectives.channels=3",
                             "-p collectives.op=broadcast -p collectives.dtype=bf16 -p collectives.root=5",
                             "-p collectives.op=all_reduce -p collectives.dtype=int32 -p collectives.redop=min",
                             "-p collectives.op=reduce -p collectives.dtype=fp16 -p collectives.root=6",
                             "-p collectives.op=sendrecv -p collectives.dtype=e5m2",
                             "-p collectives.op=all_to_allv -p collectives.dtype=bf16",
                             "-p collectives.op=all_reduce -p collectives.dtype=bf16 -p collectives.redop=avg",
                             "-p collectives.op=reduce_scatter -p collectives.dtype=fp32 -p collectives.redop=prod"}) {
        const result r = trn3vp(base + args);
        INFO(args << "\n" << r.out << r.err);
        CHECK(r.code == 0);
        CHECK_THAT(r.out, Catch::Contains("# nl32x2: 8 ranks"));
        CHECK_THAT(r.out, Catch::Contains("#       size        count     type  redop   root       time   algbw   busbw "
                                          "#wrong       time   algbw   busbw #wrong"));
        const auto rows = table_rows(r.out);
        CHECK(rows.size() == 4);  // 64, 256, 1024, 4096
        for (const auto& row : rows) CHECK_THAT(row, Catch::EndsWith("      0"));  // #wrong, in place
        CHECK_THAT(r.out, Catch::Contains("# Out of bounds values : 0 OK"));
        CHECK_THAT(r.out, Catch::Contains("platform nl32x2: PASSED"));
        CHECK(table_rows(trn3vp(base + args).out) == rows);  // deterministic: times and all
    }
}

TEST_CASE("collectives: every algorithm runs every op it can with exact data, on reduced nl32x2 and nl72x2 and on "
          "the 2D torus, in and out of place") {
    struct one {
        const char* platform;
        unsigned ranks;
    };
    for (const one& p : {one{"nl32x2 -p nl32x2.trays=2 -p nl32x2.app=collectives", 8},
                         one{"nl72x2 -p nl72x2.trays=1 -p nl72x2.app=collectives -p collectives.chips=0-5", 6},
                         one{"nl16-torus2d -p nl16_torus2d.app=collectives", 16}})
        for (const char* how : {"ring", "direct", "halving_doubling", "tree", "hierarchical"})
            for (const char* op : {"all_reduce", "reduce_scatter", "all_gather"}) {
                // halving_doubling runs reduce_scatter and all_gather on a power of two only; tree all_reduce only;
                // hierarchical needs a full grid (6 chips: 4 in one rack, 2 in the other)
                if (std::string(how) == "halving_doubling" && std::string(op) != "all_reduce" && p.ranks == 6) continue;
                if (std::string(how) == "hierarchical" && p.ranks == 6) continue;
                if (std::string(how) == "tree" && std::string(op) != "all_reduce") continue;
                const result r = trn3vp(std::string("run --platform ") + p.platform +
                                        " -p collectives.algorithm=" + how + " -p collectives.op=" + op +
                                        " -p collectives.dtype=bf16 -p collectives.min_bytes=96 "
                                        "-p collectives.max_bytes=6144 -p collectives.factor=8");
                INFO(p.platform << " " << how << " " << op << "\n" << r.out << r.err);
                CHECK(r.code == 0);
                CHECK_THAT(r.out, Catch::Contains(std::to_string(p.ranks) + " ranks"));
                CHECK_THAT(r.out, Catch::Contains(std::string(how) + " algorithm"));
                const auto rows = table_rows(r.out);
                CHECK(rows.size() == 3);  // 96, 768, 6144 (48 bf16 elements: 8, 6 or 16 chunks)
                for (const auto& row : rows) CHECK_THAT(row, Catch::EndsWith("      0"));
                CHECK_THAT(r.out, Catch::Contains("# Out of bounds values : 0 OK"));
            }
}

TEST_CASE("collectives: an algorithm that cannot run the op is a one-line error") {
    const std::string base = "run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=collectives ";
    expect_user_error(base + "-p collectives.algorithm=chain",
                      "collectives: the chain algorithm does not run all_reduce");
    expect_user_error(base + "-p collectives.op=all_to_all -p collectives.algorithm=ring",
                      "collectives: the ring algorithm does not run all_to_all");
    expect_user_error(base + "-p collectives.algorithm=halving_doubling -p collectives.op=all_gather "
                             "-p collectives.chips=0-5",
                      "the halving_doubling algorithm does not run all_gather (on 6 ranks: only on a power of two)");

    expect_user_error(base + "-p collectives.algorithm=bruck",
                      "must be one of auto, ring, direct, halving_doubling, chain, tree, hierarchical");
    // Hierarchical: a communicator that leaves holes in its levels' grid.
    expect_user_error("run --platform nl72x2 -p nl72x2.trays=1 -p nl72x2.app=collectives "
                      "-p collectives.algorithm=hierarchical -p collectives.chips=0-5",
                      "collectives: hierarchical: the 6 ranks do not fill their levels' 8 positions");

    // 64 MiB of halves in 64-byte segments: 2 x 262,144 segments per channel, far past a 16 MiB ring.
    expect_user_error(base +
                          "-p collectives.algorithm=tree -p collectives.segment_bytes=64 -p collectives.min_bytes=256M "
                          "-p collectives.max_bytes=256M",
                      "descriptors on a channel of rank");
    expect_user_error(base + "-p collectives.algorithm=tree -p collectives.op=all_gather",
                      "collectives: the tree algorithm does not run all_gather");
    expect_user_error(base + "-p collectives.redop=avg -p collectives.dtype=int32",
                      "collectives: avg is a sum over a floating type");
}

TEST_CASE("collectives: a chain pipelines in segments of collectives.segment_bytes, exact, and the segment size "
          "changes the time") {
    const std::string base = "run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=collectives "
                             "-p collectives.op=broadcast -p collectives.min_bytes=1M -p collectives.max_bytes=1M ";
    const auto eight = table_rows(trn3vp(base).out),
               small = table_rows(trn3vp(base + "-p collectives.segment_bytes=16K").out);
    REQUIRE(eight.size() == 1);
    REQUIRE(small.size() == 1);
    CHECK_THAT(small[0], Catch::EndsWith("      0"));
    CHECK(small[0] != eight[0]);  // 64 segments: here their descriptors cost more than the finer pipeline gains
}

TEST_CASE("collectives: rings searched over the fabric are exact and, on four channels, faster than rings by stride") {
    const std::string base = "run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=collectives "
                             "-p collectives.algorithm=ring -p collectives.channels=4 -p collectives.min_bytes=64K "
                             "-p collectives.max_bytes=4M -p collectives.factor=64 -p collectives.check_max_bytes=64K "
                             "-p collectives.channel_bytes=0 ";
    const auto searched = table_rows(trn3vp(base).out),
               strided = table_rows(trn3vp(base + "-p collectives.rings=stride").out);
    REQUIRE(searched.size() == 2);
    REQUIRE(strided.size() == 2);
    CHECK_THAT(searched[0], Catch::EndsWith("      0"));  // 64 KiB, checked: exact
    // 4 MiB, out of place: column 6 is the time in us (two racks: the strides
    // cross between them on the same few cables).
    CHECK(column_of(searched[1], 6) == Approx(54.83));
    CHECK(column_of(strided[1], 6) == Approx(79.5));
}

TEST_CASE("collectives: on 16 chips of nl72x2 with 15 channels the local search's rings beat the greedy search's") {
    // The greedy walk's rings cross between the racks on the same cables
    // again and again (one hop each, on a link twice a switch link's width);
    // the local search moves runs of ranks until fewer flows share a link.
    const std::string base =
        "run --platform nl72x2 -p nl72x2.trays=2 -p nl72x2.app=collectives "
        "-p collectives.algorithm=ring -p collectives.channels=15 -p nl72x2.*.dma0.engines=16 "
        "-p collectives.min_bytes=16M -p collectives.max_bytes=16M -p collectives.check_max_bytes=0 ";
    const auto searched = table_rows(trn3vp(base).out),
               greedy = table_rows(trn3vp(base + "-p collectives.rings=greedy").out);
    REQUIRE(searched.size() == 1);
    REQUIRE(greedy.size() == 1);
    CHECK(column_of(searched[0], 6) == Approx(128.71));  // out of place
    CHECK(column_of(greedy[0], 6) == Approx(154.90));
    CHECK(column_of(searched[0], 10) == Approx(113.81));  // in place
    CHECK(column_of(greedy[0], 10) == Approx(133.55));
}

TEST_CASE("collectives: the hierarchical all_reduce runs rings level by level of the topology, exact, and on the 2D "
          "torus (its rings per dimension) beats the ring and halving-doubling from 2 MiB") {
    const std::string torus =
        "run --platform nl16-torus2d -p nl16_torus2d.app=collectives -p collectives.min_bytes=64K "
        "-p collectives.max_bytes=2M -p collectives.factor=32 -p collectives.check_max_bytes=64K "
        "-p collectives.algorithm=";
    const result r = trn3vp(torus + "hierarchical");
    INFO(r.out << r.err);
    CHECK_THAT(r.out, Catch::Contains("all_reduce float sum, hierarchical algorithm (x 4 x y 4; x-y x2)"));
    const auto levels = table_rows(r.out), ring = table_rows(trn3vp(torus + "ring").out),
               halving = table_rows(trn3vp(torus + "halving_doubling").out);
    REQUIRE(levels.size() == 2);
    REQUIRE(ring.size() == 2);
    REQUIRE(halving.size() == 2);
    CHECK_THAT(levels[0], Catch::EndsWith("      0"));  // 64 KiB, checked: exact
    // 2 MiB, out of place: 6 steps per dimension against the ring's 30.
    CHECK(column_of(levels[1], 6) == Approx(20.30));
    CHECK(column_of(ring[1], 6) == Approx(32.39));
    CHECK(column_of(halving[1], 6) == Approx(33.60));
    // nl72x2 reduced to 16 chips: trays of 4, 2 trays a rack, 2 racks.
    const result s = trn3vp("run --platform nl72x2 -p nl72x2.trays=2 -p nl72x2.app=collectives -p "
                            "collectives.algorithm=hierarchical -p collectives.op=reduce_scatter "
                            "-p collectives.min_bytes=64K -p collectives.max_bytes=64K");
    INFO(s.out << s.err);
    CHECK_THAT(s.out, Catch::Contains("reduce_scatter float sum, hierarchical algorithm (tray 4 x rack 2 x racks 2; "));
    CHECK_THAT(s.out, Catch::Contains("# Out of bounds values : 0 OK"));
}

TEST_CASE("collectives: the hierarchical channels take the levels innermost first or in balanced orders, exact, "
          "and the JSON gives the levels, their bandwidth, each channel's order and rings") {
    const std::string path = temp_path("levels.json");
    const std::string base = "run --platform nl72x2 -p nl72x2.trays=2 -p nl72x2.app=collectives "
                             "-p collectives.algorithm=hierarchical -p collectives.channels=8 "
                             "-p collectives.channel_bytes=0 -p collectives.min_bytes=1M -p collectives.max_bytes=1M ";
    const result r = trn3vp(base + "-p collectives.level_orders=balanced -p collectives.json=" + path);
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    // Tray (4) and rack (2) links alike (8 x8 each), the racks' one x16: the
    // rack's 2 places leave it the lighter level, so most channels start
    // there; the narrow racks level is last in every order.
    CHECK_THAT(r.out, Catch::Contains("hierarchical algorithm (tray 4 x rack 2 x racks 2; rack-tray-racks x7, "
                                      "tray-rack-racks x1), 8 channels"));
    const auto rows = table_rows(r.out);
    REQUIRE(rows.size() == 1);
    CHECK_THAT(rows[0], Catch::EndsWith("      0"));
    const auto j = nlohmann::json::parse(slurp(path));
    std::remove(path.c_str());
    const auto& levels = j["levels"];
    CHECK(levels["names"] == nlohmann::json({"tray", "rack", "racks"}));
    CHECK(levels["places"] == nlohmann::json({4, 2, 2}));
    CHECK(levels["bandwidth_GBps"] == nlohmann::json({512.0, 512.0, 128.0}));  // 8 x8, 8 x8, one x16 at 8 GB/s a lane
    REQUIRE(levels["orders"].size() == 8);
    CHECK(levels["orders"][0] == nlohmann::json({1, 0, 2}));
    REQUIRE(levels["rings"].size() == 8);
    REQUIRE(levels["rings"][0].size() == 3);
    CHECK(levels["rings"][0][0].size() == 4);  // 4 trays of 4 chips
    CHECK(levels["rings"][0][1].size() == 8);  // 8 pairs of trays
    const result inner = trn3vp(base);  // the default
    INFO(inner.out << inner.err);
    CHECK_THAT(inner.out, Catch::Contains("hierarchical algorithm (tray 4 x rack 2 x racks 2; tray-rack-racks x8)"));
    CHECK_THAT(inner.out, Catch::Contains("# Out of bounds values : 0 OK"));
}

TEST_CASE("collectives: SBUF to SBUF, every op exact, small messages faster than HBM to HBM, and sizes past the "
          "SBUF a one-line error") {
    const std::string base = "run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=collectives -p "
                             "collectives.min_bytes=32 -p collectives.max_bytes=1M -p collectives.factor=32 ";
    for (const char* op : {"all_reduce", "reduce_scatter", "all_gather", "all_to_all", "all_to_allv", "broadcast",
                           "reduce", "sendrecv"}) {
        const result r = trn3vp(base + "-p collectives.buffers=sbuf -p collectives.op=" + op);
        INFO(op << "\n" << r.out << r.err);
        CHECK(r.code == 0);
        const auto rows = table_rows(r.out);
        REQUIRE(rows.size() == 4);  // 32 B, 1 KiB, 32 KiB, 1 MiB: all checked
        for (const auto& row : rows) CHECK_THAT(row, Catch::EndsWith("      0"));
        if (std::string(op) == "all_reduce") {
            // 32 B out of place: 3.71 us from SBUF, 5.41 us from HBM (the HBM's latency on every step's read and
            // landing, where SBUF answers in 20 ns).
            const auto hbm = table_rows(trn3vp(base + "-p collectives.op=all_reduce").out);
            REQUIRE(hbm.size() == 4);
            CHECK(column_of(rows[0], 6) == Approx(3.71));
            CHECK(column_of(hbm[0], 6) == Approx(5.41));
        }
    }
    expect_user_error(base + "-p collectives.buffers=sbuf -p collectives.min_bytes=2M -p collectives.max_bytes=2M",
                      "param collectives.buffers = sbuf holds sizes up to 1 MiB and outputs up to 2 MiB (a 32 MiB "
                      "SBUF): size 2097152 B, largest output 2097152 B");
}

TEST_CASE("collectives run on reduced nl72x2 and on the 2D torus too") {
    for (const char* platform :
         {"nl72x2 -p nl72x2.trays=1 -p nl72x2.app=collectives", "nl16-torus2d -p nl16_torus2d.app=collectives"}) {
        const result r = trn3vp(std::string("run --platform ") + platform +
                                " -p collectives.min_bytes=1024 -p collectives.max_bytes=4096");
        INFO(r.out << r.err);
        CHECK(r.code == 0);
        CHECK(table_rows(r.out).size() == 3);
        CHECK_THAT(r.out, Catch::Contains("# Out of bounds values : 0 OK"));
    }
}

TEST_CASE("collectives: sizes and platforms the program cannot run are one-line errors") {
    expect_user_error("run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=collectives -p collectives.min_bytes=6 "
                      "-p collectives.max_bytes=6",
                      "collectives: size 6 B is not a whole number of 4-byte elements");
    expect_user_error("run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=collectives "
                      "-p collectives.op=reduce_scatter -p collectives.min_bytes=16 -p collectives.max_bytes=16",
                      "reduce_scatter: size 16 B is not 8 chunks of whole elements");
    expect_user_error("run --platform nl32x2 -p nl32x2.app=collectives -p collectives.min_bytes=64 "
                      "-p collectives.max_bytes=8",
                      "param collectives.min_bytes = 64 is above collectives.max_bytes = 8");
    expect_user_error("run --platform nl32x2 -p nl32x2.app=collectives -p collectives.dtype=fp64",
                      "must be one of fp32, bf16, fp16, e4m3, e5m2, int32");
    expect_user_error("run --platform trn3-dev -p trn3dev.app=collectives",
                      "program collectives needs at least two chips on a NeuronLink fabric");
}

TEST_CASE("collectives: rows timed only (above check_max_bytes: no data moves) take exactly the times of checked "
          "rows, for every algorithm") {
    for (const char* how : {"-p collectives.channels=3", "-p collectives.algorithm=halving_doubling",
                            "-p collectives.algorithm=direct -p collectives.op=reduce_scatter",
                            "-p collectives.op=all_to_all", "-p collectives.op=broadcast -p collectives.root=2"}) {
        const std::string base = std::string("run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=collectives "
                                             "-p collectives.min_bytes=96 -p collectives.max_bytes=384K "
                                             "-p collectives.factor=16 ") +
                                 how;
        const auto checked = table_rows(trn3vp(base + " -p collectives.check_max_bytes=384K").out),
                   timed = table_rows(trn3vp(base + " -p collectives.check_max_bytes=0").out);
        INFO(how);
        REQUIRE(checked.size() == 4);  // 96 B to 384 KiB
        REQUIRE(timed.size() == 4);
        for (std::size_t i = 0; i < checked.size(); ++i) {
            // The same row but for #wrong: 0 where checked, N/A where timed only.
            std::string expect = checked[i];
            for (std::size_t at = expect.find("      0"); at != std::string::npos; at = expect.find("      0", at + 7))
                if (at + 7 == expect.size() || expect[at + 7] == ' ') expect.replace(at, 7, "    N/A");
            CHECK(timed[i] == expect);
        }
    }
}

TEST_CASE("collectives over a subgroup of the chips, in the rank order written") {
    for (const char* op : {"all_reduce", "reduce_scatter", "all_gather", "all_to_all"}) {
        const result r =
            trn3vp(std::string("run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=collectives "
                               "-p collectives.chips=1,6-7,3 -p collectives.min_bytes=64 "
                               "-p collectives.max_bytes=4096 -p collectives.factor=64 -p collectives.op=") +
                   op);
        INFO(op << "\n" << r.out << r.err);
        CHECK(r.code == 0);
        CHECK_THAT(r.out, Catch::Contains("# nl32x2: 4 ranks (chips 1,6-7,3)"));
        CHECK(table_rows(r.out).size() == 2);
        CHECK_THAT(r.out, Catch::Contains("# Out of bounds values : 0 OK"));
    }
    for (const auto& [chips, message] :
         std::vector<std::pair<std::string, std::string>>{{"3", "a communicator needs at least two chips"},
                                                          {"0-3,2", "chip 2 appears twice"},
                                                          {"0-8", "0-8 is not on the fabric (ids 0-7)"},
                                                          {"a-b", "'a-b' is not a fabric id or a range a-b"}})
        expect_user_error(
            "run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=collectives -p collectives.chips=" + chips, message);
}

TEST_CASE("a backplane link that loses lanes during a collective: the collective completes, exact and slower") {
    const std::string base = "run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=collectives "
                             "-p collectives.algorithm=ring -p collectives.min_bytes=2097152 "
                             "-p collectives.max_bytes=2097152 -p collectives.check_max_bytes=4194304";
    // r0.t0.c0's link to plane 0's switch 3 carries the rings; 7 of its 10 lanes fail while the
    // in-place all_reduce runs: 2 spares take over, the link retrains at x2.
    const auto healthy = table_rows(trn3vp(base).out);
    const result r = trn3vp(base + " -p nl32x2.r0_t0_c0__r0_p0_sw3.failed_lanes=0-6 "
                                   "-p nl32x2.r0_t0_c0__r0_p0_sw3.fault_time=1160us");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    const auto faulted = table_rows(r.out);
    REQUIRE(healthy.size() == 1);
    REQUIRE(faulted.size() == 1);
    CHECK_THAT(faulted[0], Catch::EndsWith("      0"));  // in place: every element exact
    CHECK(faulted[0] != healthy[0]);  // and slower (the fault fell inside it)
    CHECK_THAT(r.out,
               Catch::Contains("links backplane          64 up of 64, 1 degraded, 0 failed (1 Gen6 x2, 63 Gen6 x8)"));
    CHECK_THAT(r.out, Catch::Contains("platform nl32x2: PASSED"));

    // All 10 lanes: the link is gone and its traffic has no other route; the
    // chips waiting for it time out, the run fails, no wrong data is reported.
    const result dead = trn3vp(base + " -p nl32x2.r0_t0_c0__r0_p0_sw3.failed_lanes=0-9 "
                                      "-p nl32x2.r0_t0_c0__r0_p0_sw3.fault_time=1160us -p collectives.timeout=1ms");
    INFO(dead.out << dead.err);
    CHECK(dead.code == 1);
    CHECK_THAT(dead.out, Catch::Contains("FAILED: host 0: 2097152 B in place: chip r0.t0.c0 channel 0: timed out"));
    CHECK_THAT(dead.out, Catch::Contains("# Out of bounds values : the sweep did not finish"));
    CHECK_THAT(dead.out, Catch::Contains("platform nl32x2: FAILED"));
}

TEST_CASE("switch-tray hot-swap during a collective on nl32x2: the fifth tray takes the traffic, exact") {
    // 8 channels of rings: plane 0's flows pick among its 8 active switches, so
    // tray 1 (switches 2 and 3 of both planes) carries some. Its attention
    // button is pressed 15 us into the 8 MiB out-of-place all_reduce; one of
    // its cables is 5 us long, so what is on it takes a while to land.
    const std::string base = "run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=collectives "
                             "-p collectives.algorithm=ring -p collectives.channels=8 -p collectives.min_bytes=8M "
                             "-p collectives.max_bytes=8M -p collectives.check_max_bytes=8M -p collectives.timeout=1ms "
                             "-p nl32x2.r0_t0_c0__r0_p0_sw3.phy_latency=5us "
                             "-p nl32x2.hot_swap_tray=r0.st1 -p nl32x2.hot_swap_at=1780us ";
    const result r = trn3vp(base + "-p nl32x2.switch_trays=5");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    const auto rows = table_rows(r.out);
    REQUIRE(rows.size() == 1);
    CHECK(column_of(rows[0], 9) == 0);  // out of place: every element exact
    CHECK(column_of(rows[0], 13) == 0);  // in place, after the swap
    CHECK(column_of(rows[0], 10) == Approx(71.79));  // at full speed: the fifth tray stands in
    // The sources are held until the tray's links are empty (4 us: what left
    // last is on the long cable), the routes move onto the fifth tray's standby cables (11.5 MiB
    // crossed them), the tray loses power.
    CHECK_THAT(r.out, Catch::Contains("hot-swap: switch tray r0.st1 (4 switches, 8 links) attention button at "
                                      "1780.000 us; sources held at 1790.000 us, drained at 1794.000 us: routes "
                                      "reprogrammed, 8 standby links joined and carried 12058624 B since; powered "
                                      "off, 0 TLPs stranded"));
    CHECK_THAT(r.out, Catch::Contains("links backplane          72 up of 80, 0 degraded, 8 failed"));
    CHECK_THAT(r.out, Catch::Contains("chip r0.t0.c0 backplane: 512 of 512 GB/s per direction"));
    CHECK_THAT(r.out, Catch::Contains("platform nl32x2: PASSED"));

    // Four switch trays: nothing stands by, the chips keep 6 of their 8
    // switches; still exact, the in-place run after the swap slower.
    const result four = trn3vp(base + "-p nl32x2.switch_trays=4");
    INFO(four.out << four.err);
    CHECK(four.code == 0);
    const auto four_rows = table_rows(four.out);
    REQUIRE(four_rows.size() == 1);
    CHECK(column_of(four_rows[0], 9) == 0);
    CHECK(column_of(four_rows[0], 13) == 0);
    CHECK(column_of(four_rows[0], 10) == Approx(79.87));
    CHECK_THAT(four.out, Catch::Contains("0 standby links joined and carried 0 B since"));
    CHECK_THAT(four.out, Catch::Contains("links backplane          56 up of 64, 0 degraded, 8 failed"));

    // The fifth tray itself: only standby cables leave.
    const result fifth = trn3vp(base + "-p nl32x2.switch_trays=5 -p nl32x2.hot_swap_tray=r0.st4");
    INFO(fifth.out << fifth.err);
    CHECK(fifth.code == 0);
    CHECK_THAT(fifth.out, Catch::Contains("switch tray r0.st4 (4 switches, 8 links)"));
    CHECK_THAT(fifth.out, Catch::Contains("0 standby links joined"));

    // Pressed before the hosts have put their chips on the fabric (they
    // program the boot's routes): the fabric manager waits for them first.
    const result early = trn3vp(base + "-p nl32x2.switch_trays=5 -p nl32x2.hot_swap_at=100us");
    INFO(early.out << early.err);
    CHECK(early.code == 0);
    CHECK_THAT(early.out, Catch::Contains("attention button at 100.000 us; sources held at 270.000 us, drained at "
                                          "270.000 us: routes reprogrammed, 8 standby links joined and carried "
                                          "14680064 B since"));

    // Pulled without warning: what was on its cables is stranded, the
    // collective that waits for it times out, never with wrong data.
    const result pulled = trn3vp(base + "-p nl32x2.switch_trays=5 -p nl32x2.hot_swap_surprise=true");
    INFO(pulled.out << pulled.err);
    CHECK(pulled.code == 1);
    CHECK_THAT(pulled.out, Catch::Contains("pulled at 1780.000 us: links down; routes reprogrammed at 1790.000 us"));
    CHECK_THAT(pulled.out, Catch::Contains("7 TLPs stranded"));
    CHECK_THAT(pulled.out, Catch::Contains("8388608 B out of place: chip r0.t0.c0 channel 0: timed out"));
    CHECK_THAT(pulled.out, Catch::Contains("# Out of bounds values : the sweep did not finish"));

    expect_user_error("run --platform nl72x2 -p nl72x2.trays=1 -p nl72x2.hot_swap_tray=r0.st1",
                      "switch trays are hot-swapped on nl32x2 with switch_gen=1");
    expect_user_error(
        "run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.hot_swap_tray=r0.st4 -p nl32x2.hot_swap_at=1us",
        "each rack has 4 switch trays (st0-st3)");
    expect_user_error("run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.hot_swap_tray=r0.st1",
                      "nl32x2.hot_swap_at must be set");
    for (const char* bad : {"tray1", "r0.st-1", "r+0.st1", "r0.st1x"})
        expect_user_error(std::string("run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.hot_swap_at=1us "
                                      "-p nl32x2.hot_swap_tray=") +
                              bad,
                          "not rR.stN (e.g. r0.st1)");
}

TEST_CASE("collectives: channel_bytes runs small sizes on fewer channels, exact, and much sooner") {
    // 8 channels: with channel_bytes 0 every size pays 8 channels'
    // descriptors and waits; with 256 KiB (the default), 64 B and 16 KiB run
    // on one, 4 MiB on all 8 (halving-doubling both ways at 64 B).
    const std::string path = temp_path("channels.json");
    const std::string base = "run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=collectives "
                             "-p collectives.channels=8 -p collectives.min_bytes=64 -p collectives.max_bytes=4M "
                             "-p collectives.factor=256 -p collectives.check_max_bytes=64K ";
    const auto every = table_rows(trn3vp(base + "-p collectives.channel_bytes=0").out);
    const result r = trn3vp(base + "-p collectives.json=" + path);
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const auto fewer = table_rows(r.out);
    const auto j = nlohmann::json::parse(slurp(path));
    std::remove(path.c_str());
    REQUIRE(every.size() == 3);
    REQUIRE(fewer.size() == 3);
    REQUIRE(j["rows"].size() == 3);
    CHECK(j["rows"][0]["channels"] == 1);
    CHECK(j["rows"][1]["channels"] == 1);
    CHECK(j["rows"][2]["channels"] == 8);
    CHECK(j["rows"][0]["algorithm"] == "halving_doubling");
    CHECK_THAT(fewer[1], Catch::EndsWith("      0"));  // 16 KiB, checked: exact
    CHECK(column_of(every[0], 6) == Approx(18.18));  // 64 B, out of place
    CHECK(column_of(fewer[0], 6) == Approx(5.41));
}

TEST_CASE("collectives: rings=grid on 16 chips of nl72x2: 64 channels are 8 patterns of one-level hops, each chip "
          "crossing between the racks in one, exact, and a channel count that is not a multiple of 8 is refused") {
    const std::string path = temp_path("grid_rings.json");
    const std::string base = "run --platform nl72x2 -p nl72x2.trays=2 -p nl72x2.app=collectives "
                             "-p collectives.algorithm=ring -p collectives.rings=grid -p nl72x2.*.dma0.queues=128 "
                             "-p nl72x2.*.dma0.engines=128 -p collectives.channel_bytes=0 "
                             "-p collectives.min_bytes=1M -p collectives.max_bytes=1M ";
    const result r = trn3vp(base + "-p collectives.channels=64 -p collectives.json=" + path);
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const auto rows = table_rows(r.out);
    REQUIRE(rows.size() == 1);
    CHECK(column_of(rows[0], 9) == 0);  // out of place: every element exact
    CHECK(column_of(rows[0], 13) == 0);  // in place
    CHECK_THAT(r.out, Catch::Contains("ring algorithm (grid rings: 8 patterns x 8 channels, hops out of a chip at most "
                                      "tray 4, rack 4, racks 1 (balanced)), 64 channels"));
    const auto j = nlohmann::json::parse(slurp(path));
    std::remove(path.c_str());
    const auto rings = j["rings"].get<std::vector<std::vector<unsigned>>>();
    REQUIRE(rings.size() == 64);
    // Fabric id r x 8 + t x 4 + s: rack r, tray t, slot s.
    std::vector<unsigned> crossings(16, 0);
    for (const auto& ring : rings) {
        REQUIRE(ring.size() == 16);
        for (std::size_t i = 0; i < 16; ++i) {
            const unsigned a = ring[i], b = ring[(i + 1) % 16];
            const int levels = (a / 8 != b / 8) + (a / 4 % 2 != b / 4 % 2) + (a % 4 != b % 4);
            CHECK(levels == 1);  // a tray switch, a plane switch, or the cable to the twin
            if (a / 8 != b / 8) ++crossings[a];
        }
    }
    // Each chip's cable carries one pattern's 8 copies (4 flows a x8 way, as
    // every tray and plane way): the cables' ceiling, every ring at 16 GB/s.
    CHECK(crossings == std::vector<unsigned>(16, 8));
    // Copies of a pattern: one order on 8 consecutive channels.
    auto from = [](std::vector<unsigned> ring, unsigned first) {
        std::rotate(ring.begin(), std::find(ring.begin(), ring.end(), first), ring.end());
        return ring;
    };
    CHECK(from(rings[9], rings[8][0]) == rings[8]);
    CHECK(from(rings[15], rings[8][0]) == rings[8]);
    CHECK(from(rings[16], rings[8][0]) != rings[8]);

    const result odd = trn3vp(base + "-p collectives.channels=20");
    CHECK(odd.code == 2);
    CHECK_THAT(odd.err,
               Catch::Contains("collectives: grid rings: 20 rings: a multiple of 8 (the most ways of a level)"));
}

TEST_CASE("collectives: copy_queues: out of place the input is copied on queues of their own, exact, and chips "
          "without the queues are refused") {
    const std::string base = "run --platform nl72x2 -p nl72x2.trays=2 -p nl72x2.app=collectives "
                             "-p collectives.algorithm=ring -p collectives.channels=16 -p collectives.copy_queues=4 "
                             "-p collectives.channel_bytes=0 -p collectives.min_bytes=1M -p collectives.max_bytes=1M ";
    for (const char* op : {"all_reduce", "reduce_scatter"}) {
        // 16 channels, 4 copy queues of 4 channels each.
        INFO(op);
        const std::string row = exact_row(trn3vp(base + "-p nl72x2.*.dma0.queues=32 -p collectives.op=" + op));
        // The copy queues ran: the out-of-place row's time is not the copy-first one.
        const std::string first =
            exact_row(trn3vp(base + "-p nl72x2.*.dma0.queues=32 -p collectives.copy_queues=0 -p collectives.op=" + op));
        CHECK(column_of(row, 6) != column_of(first, 6));
    }
    const result few = trn3vp(base);
    CHECK(few.code != 0);
    CHECK_THAT(few.out + few.err, Catch::Contains("has 16 DMA queues: collectives.channels = 16 and copy_queues = 4 "
                                                  "needs 21 (its dma0.queues param)"));
    const result counters = trn3vp(base + "-p nl72x2.*.dma0.queues=128 -p collectives.channels=120 "
                                          "-p collectives.copy_phases=8 -p collectives.min_bytes=64M "
                                          "-p collectives.max_bytes=64M");
    CHECK(counters.code == 2);
    CHECK_THAT(counters.err, Catch::Contains("120 channels and 8 copy phases count on 129 of 128 fabric channels"));
}

TEST_CASE("collectives: out_of_place=operand reduces from the input where data lands: exact, sooner than copying "
          "first, timing-only alike, and not with copy_queues") {
    const std::string base = "run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=collectives "
                             "-p collectives.algorithm=ring -p collectives.channels=4 -p collectives.channel_bytes=0 "
                             "-p collectives.min_bytes=1M -p collectives.max_bytes=1M ";
    for (const char* op : {"all_reduce", "reduce_scatter"}) {
        INFO(op);
        const std::string with = base + "-p collectives.op=" + op + " -p collectives.dtype=bf16 ";
        const std::string row = exact_row(trn3vp(with + "-p collectives.out_of_place=operand"));
        const std::string copying = exact_row(trn3vp(with));
        // No copy, no token: out of place costs little more than in place
        // (1 MiB: 20.79 against 20.37 us for all_reduce, where copying first takes 24.62).
        CHECK(column_of(row, 6) < column_of(copying, 6));
        CHECK(column_of(row, 6) - column_of(row, 10) < (column_of(copying, 6) - column_of(copying, 10)) / 2);
        // Timing only: the same time, nothing checked.
        const auto timed = table_rows(trn3vp(with + "-p collectives.out_of_place=operand "
                                                    "-p collectives.check_max_bytes=0")
                                          .out);
        REQUIRE(timed.size() == 1);
        CHECK(column_of(timed[0], 6) == column_of(row, 6));
        CHECK_THAT(timed[0], Catch::Contains("N/A"));
    }
    // avg: the sum landed from the input, then the local prod by 1/n.
    exact_row(trn3vp(base + "-p collectives.out_of_place=operand -p collectives.redop=avg"));
    // auto: halving-doubling at 1 KiB copies as before; hierarchical at 1 MiB
    // lands its first level from the input (19.33 us copying first, 16.78).
    const std::string path = temp_path("operand.json");
    const std::string mixed = "run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=collectives "
                              "-p collectives.min_bytes=1K -p collectives.max_bytes=1M -p collectives.factor=1024 ";
    const result landed = trn3vp(mixed + "-p collectives.out_of_place=operand -p collectives.json=" + path);
    const result copied = trn3vp(mixed);
    INFO(landed.out << landed.err);
    REQUIRE(landed.code == 0);
    const auto j = nlohmann::json::parse(slurp(path));
    std::remove(path.c_str());
    REQUIRE(j["rows"].size() == 2);
    CHECK(j["rows"][0]["algorithm"] == "halving_doubling");
    CHECK(j["rows"][1]["algorithm"] == "hierarchical");
    const auto landed_rows = table_rows(landed.out), copied_rows = table_rows(copied.out);
    REQUIRE(landed_rows.size() == 2);
    REQUIRE(copied_rows.size() == 2);
    for (const auto& row : landed_rows) {
        CHECK(column_of(row, 9) == 0);
        CHECK(column_of(row, 13) == 0);
    }
    CHECK(column_of(landed_rows[0], 6) == column_of(copied_rows[0], 6));
    CHECK(column_of(landed_rows[1], 6) < column_of(copied_rows[1], 6));
    expect_user_error(base + "-p collectives.out_of_place=operand -p collectives.copy_queues=2",
                      "param collectives.copy_queues = 2 copies the input: it needs collectives.out_of_place = copy, "
                      "not operand");
}

TEST_CASE("collectives: the table as JSON, with the same fields, and a file that cannot be written is refused") {
    const std::string path = temp_path("collectives.json");
    const result r =
        trn3vp("run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=collectives -p collectives.min_bytes=64 "
               "-p collectives.max_bytes=4096 -p collectives.factor=64 -p collectives.check_max_bytes=1024 "
               "-p collectives.json=" +
               path);
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(slurp(path));
    std::remove(path.c_str());
    CHECK(j["op"] == "all_reduce");
    CHECK(j["ranks"].size() == 8);
    CHECK(j["out_of_place"] == "copy");  // how the ring reduces out of place
    CHECK(j["copy_queues"] == 0);
    REQUIRE(j["rows"].size() == 2);
    CHECK(j["rows"][0]["size"] == 64);
    CHECK(j["rows"][0]["count"] == 16);
    CHECK(j["rows"][0]["out_of_place"]["nwrong"] == 0);
    CHECK(j["rows"][1]["in_place"]["nwrong"].is_null());  // 4096 B: timed only
    // The JSON's times are the table's.
    const auto rows = table_rows(r.out);
    REQUIRE(rows.size() == 2);
    char time[32];
    std::snprintf(time, sizeof time, "%.2f", j["rows"][0]["out_of_place"]["time_us"].get<double>());
    CHECK_THAT(rows[0], Catch::Contains(time));
    CHECK(j["finished"] == true);
    const result full = trn3vp("run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=collectives "
                               "-p collectives.min_bytes=64 -p collectives.max_bytes=64 -p collectives.json=/dev/full");
    CHECK(full.code == 2);
    CHECK_THAT(full.err, Catch::Contains("collectives JSON file '/dev/full'"));
}

namespace {
// Every "...backpressure" counter of a stats file, summed.
std::uint64_t backpressure(const nlohmann::json& j) {
    std::uint64_t sum = 0;
    if (j.is_object())
        for (const auto& [key, value] : j.items()) {
            if (value.is_number() && key.size() >= 12 && key.compare(key.size() - 12, 12, "backpressure") == 0)
                sum += value.get<std::uint64_t>();
            else sum += backpressure(value);
        }
    return sum;
}
}  // namespace

TEST_CASE("flow control on the fabric: an all_to_all's senders converging on each chip are held by full receive "
          "buffers and the data is exact, and with the buffers unbounded nothing is held") {
    const std::string base = "run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=collectives "
                             "-p collectives.op=all_to_all -p collectives.min_bytes=4M -p collectives.max_bytes=4M "
                             "-p collectives.check_max_bytes=4M --stats ";
    for (const bool bounded : {true, false}) {
        const std::string stats = temp_path("stats");
        const result r = trn3vp(base + stats + (bounded ? "" : " -p 'nl32x2.*.rx_buffer=0'"));
        INFO(r.out << r.err);
        REQUIRE(r.code == 0);
        CHECK_THAT(r.out, Catch::Contains("# Out of bounds values : 0 OK"));
        const auto j = nlohmann::json::parse(slurp(stats));
        std::remove(stats.c_str());
        if (bounded) CHECK(backpressure(j) > 0);
        else CHECK(backpressure(j) == 0);
    }
}

namespace {
// The sum of the links' `passed` stats: TLPs sent ahead of lower-class traffic (strict arbitration).
std::uint64_t passed_on_links(const std::string& stats_path) {
    const auto j = nlohmann::json::parse(slurp(stats_path));
    std::uint64_t sum = 0;
    for (const auto& [name, value] : j.items())
        if (name.size() > 7 && name.compare(name.size() - 7, 7, ".passed") == 0) sum += value.get<std::uint64_t>();
    return sum;
}
}  // namespace

TEST_CASE("collectives: traffic classes: under strict fabric arbitration the tokens (class 1) pass the data queued "
          "at switch egress and at the chips' ports, exact, while fifo sends everything in order") {
    const std::string base = "run --platform nl72x2 -p nl72x2.trays=2 -p nl72x2.app=collectives "
                             "-p collectives.algorithm=hierarchical -p collectives.channels=8 "
                             "-p collectives.channel_bytes=0 -p collectives.min_bytes=1M -p collectives.max_bytes=1M "
                             "-p collectives.token_class=1 ";
    for (const char* arbitration : {"strict", "fifo"}) {
        const std::string stats = temp_path("tc_stats.json");
        const result r = trn3vp(base + "-p nl72x2.fabric_arbitration=" + arbitration + " --stats " + stats);
        INFO(arbitration << "\n" << r.out << r.err);
        REQUIRE(r.code == 0);
        const auto rows = table_rows(r.out);
        REQUIRE(rows.size() == 1);
        CHECK_THAT(rows[0], Catch::EndsWith("      0"));
        CHECK(column_of(rows[0], 9) == 0);  // #wrong out of place
        const std::uint64_t passed = passed_on_links(stats);
        std::remove(stats.c_str());
        // 16 chips, 8 channels: 27 token TLPs went ahead of data (on 24 links;
        // the count follows when each chip starts, after its host's bring-up).
        if (std::string(arbitration) == "strict") CHECK(passed == 27);
        else CHECK(passed == 0);
    }
    const result bad = trn3vp(base + "-p collectives.traffic_class=8");
    CHECK(bad.code == 2);
    CHECK_THAT(bad.err, Catch::Contains("collectives.traffic_class"));
}

namespace {
// A stat summed over every component whose name ends in `suffix`.
std::uint64_t stat_sum(const nlohmann::json& j, const std::string& suffix) {
    std::uint64_t sum = 0;
    for (const auto& [name, value] : j.items())
        if (value.is_number() && name.size() >= suffix.size() &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
            sum += value.get<std::uint64_t>();
    return sum;
}
}  // namespace

TEST_CASE("collectives: wait=interrupt: each queue's last descriptor raises its MSI-X and the hosts read the queues "
          "only then: the same exact data, times within 0.5 us of polling, a fraction of the MMIO reads") {
    const std::string base = "run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=collectives "
                             "-p collectives.min_bytes=4K -p collectives.max_bytes=4M -p collectives.factor=32 "
                             "-p collectives.check_max_bytes=4M --stats ";
    std::vector<std::string> rows[2];
    std::uint64_t reads[2] = {}, interrupts[2] = {};
    for (const bool irq : {false, true}) {
        const std::string stats = temp_path("wait_stats.json");
        const result r = trn3vp(base + stats + (irq ? " -p collectives.wait=interrupt" : ""));
        INFO(r.out << r.err);
        REQUIRE(r.code == 0);
        CHECK_THAT(r.out, Catch::Contains("# Out of bounds values : 0 OK"));
        rows[irq] = table_rows(r.out);
        REQUIRE(rows[irq].size() == 3);  // 4K, 128K, 4M
        for (const auto& row : rows[irq]) CHECK_THAT(row, Catch::EndsWith("      0"));
        const auto j = nlohmann::json::parse(slurp(stats));
        std::remove(stats.c_str());
        reads[irq] = stat_sum(j, ".rc.mmio_reads");
        interrupts[irq] = stat_sum(j, ".interrupts");
        CHECK(stat_sum(j, ".unclaimed_interrupts") == 0);  // the driver claims every queue's vector
    }
    // Interrupt mode: one MSI-X per queue and row on top of bring-up's; polling
    // reads each queue's STATUS and HEAD all along a row, interrupt mode once a queue is done.
    CHECK(interrupts[1] > interrupts[0]);
    CHECK(reads[1] * 2 < reads[0]);
    for (std::size_t i = 0; i < rows[0].size(); ++i)
        for (const int column : {6, 10}) {  // out of place, in place
            INFO(rows[0][i] << "\n" << rows[1][i]);
            CHECK(std::abs(column_of(rows[0][i], column) - column_of(rows[1][i], column)) <= 0.5);
        }
}

TEST_CASE("collectives: past 15 channels the chips need more DMA queues (dma0.queues): on 16 chips of nl72x2, 31 "
          "channels on 32 queues are exact, also on interrupts, and faster at 64 MiB than 15, and too few queues fail "
          "naming the param") {
    const std::string base = "run --platform nl72x2 -p nl72x2.trays=2 -p nl72x2.app=collectives "
                             "-p collectives.algorithm=ring -p collectives.channel_bytes=0 -p collectives.min_bytes=4M "
                             "-p collectives.max_bytes=64M -p collectives.factor=16 -p collectives.check_max_bytes=4M ";
    const result fifteen = trn3vp(base + "-p collectives.channels=15 -p nl72x2.*.dma0.engines=16");
    const std::string stats = temp_path("queues_stats.json");
    const result wide = trn3vp(base +
                               "-p collectives.channels=31 -p nl72x2.*.dma0.queues=32 -p nl72x2.*.dma0.engines=32 "
                               "-p collectives.wait=interrupt --stats " +
                               stats);
    INFO(fifteen.out << fifteen.err << wide.out << wide.err);
    REQUIRE(fifteen.code == 0);
    REQUIRE(wide.code == 0);
    const auto j = nlohmann::json::parse(slurp(stats));
    std::remove(stats.c_str());
    CHECK(stat_sum(j, ".unclaimed_interrupts") == 0);  // queues 25 to 31 share vectors with 1 to 7
    const auto a = table_rows(fifteen.out), b = table_rows(wide.out);
    REQUIRE(a.size() == 2);
    REQUIRE(b.size() == 2);
    CHECK_THAT(b[0], Catch::EndsWith("      0"));  // 4 MiB: exact in both placements
    CHECK(column_of(b[0], 9) == 0);
    // 64 MiB: 31 flows a chip over its 18 ways instead of 15 (docs/collectives.md).
    CHECK(column_of(a[1], 6) == Approx(423.18));  // out of place
    CHECK(column_of(b[1], 6) == Approx(325.46).margin(0.5));  // (interrupts move it by a fraction of a microsecond)
    CHECK(column_of(a[1], 10) == Approx(381.69));  // in place
    CHECK(column_of(b[1], 10) == Approx(276.07).margin(0.5));

    const result short_of_queues = trn3vp(base + "-p collectives.channels=20");
    CHECK(short_of_queues.code == 1);
    CHECK_THAT(short_of_queues.out,
               Catch::Contains("FAILED: host 0: chip 0 has 16 DMA queues: collectives.channels = 20 needs 21 (its "
                               "dma0.queues param)"));
}

TEST_CASE("collectives: completion=pending: a host sees its chips' 31 queues done through DMA_PENDING (one read for "
          "32 queues) instead of queue by queue: exact, sooner, and the same on interrupts") {
    const std::string base = "run --platform nl72x2 -p nl72x2.trays=2 -p nl72x2.app=collectives "
                             "-p collectives.algorithm=ring -p collectives.channel_bytes=0 -p collectives.min_bytes=4M "
                             "-p collectives.max_bytes=64M -p collectives.factor=16 -p collectives.check_max_bytes=4M "
                             "-p collectives.channels=31 -p nl72x2.*.dma0.queues=32 -p nl72x2.*.dma0.engines=32 "
                             "-p collectives.completion=pending ";
    const result polled = trn3vp(base);
    const std::string stats = temp_path("pending_stats.json");
    const result woken = trn3vp(base + "-p collectives.wait=interrupt --stats " + stats);
    INFO(polled.out << polled.err << woken.out << woken.err);
    REQUIRE(polled.code == 0);
    REQUIRE(woken.code == 0);
    const auto j = nlohmann::json::parse(slurp(stats));
    std::remove(stats.c_str());
    CHECK(stat_sum(j, ".unclaimed_interrupts") == 0);
    const auto a = table_rows(polled.out), b = table_rows(woken.out);
    REQUIRE(a.size() == 2);
    REQUIRE(b.size() == 2);
    CHECK_THAT(a[0], Catch::EndsWith("      0"));  // 4 MiB exact in both placements
    CHECK(column_of(a[0], 9) == 0);
    CHECK_THAT(b[0], Catch::EndsWith("      0"));
    // Queue by queue (the test above, polled): 4 MiB 165.06 / 129.21 us, 64 MiB 325.39 / 276.24 us.
    CHECK(column_of(a[0], 6) == Approx(129.88));
    CHECK(column_of(a[0], 10) == Approx(92.76));
    CHECK(column_of(a[1], 6) == Approx(298.49));
    CHECK(column_of(a[1], 10) == Approx(244.64));
    for (std::size_t r = 0; r < 2; ++r) {
        CHECK(column_of(b[r], 6) == Approx(column_of(a[r], 6)).margin(0.5));
        CHECK(column_of(b[r], 10) == Approx(column_of(a[r], 10)).margin(0.5));
    }
}
