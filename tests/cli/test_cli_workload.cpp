// The workload program on the command line (see test_cli.cpp): Chakra
// traces written here run on a reduced UltraServer, and the report's
// arithmetic is checked against what each node took: step time, compute,
// exposed communication, the critical path, the dependency order; kernels
// timed only take the data mode's time; bad input is one line and exit 2.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "trn3/workload/chakra.h"
#include "trn3/workload/generators.h"

using namespace trn3::cli_test;
using namespace trn3::workload;

namespace {

const std::string reduced = "run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.racks=1 -p nl32x2.app=workload ";

node timed(std::uint64_t id, const std::string& name, std::uint64_t us, std::vector<std::uint64_t> deps) {
    node n;
    n.id = id;
    n.name = name;
    n.duration_ps = us * 1'000'000;
    n.deps = std::move(deps);
    return n;
}

node comm(std::uint64_t id, const std::string& name, node_kind kind, std::uint64_t bytes,
          std::vector<std::uint64_t> deps) {
    node n;
    n.id = id;
    n.name = name;
    n.kind = kind;
    n.bytes = bytes;
    n.deps = std::move(deps);
    return n;
}

// Runs the trace, returns the JSON report (with every node).
nlohmann::json run_trace(const graph& g, const std::string& tag, const std::string& extra = "") {
    const std::string prefix = temp_path(tag), json = temp_path(tag + ".json");
    write_chakra(g, prefix);
    // 4 chips in a rack, or 8 over the pair of racks.
    const std::string platform =
        g.ranks.size() > 4 ? "run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=workload " : reduced;
    const result r = trn3vp(platform + "-p workload.source=chakra -p workload.trace=" + prefix +
                            " -p workload.json_nodes=true -p workload.json=" + json + " " + extra);
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("platform nl32x2: PASSED"));
    const nlohmann::json j = nlohmann::json::parse(slurp(json));
    for (unsigned q = 0; q < g.ranks.size(); ++q) std::remove(chakra_file(prefix, q).c_str());
    std::remove(json.c_str());
    return j;
}

// start, end of a node by rank and name.
std::pair<double, double> span(const nlohmann::json& j, unsigned rank, const std::string& name) {
    for (const auto& n : j["nodes"])
        if (n["rank"] == rank && n["node"] == name) return {n["start_us"].get<double>(), n["end_us"].get<double>()};
    FAIL("no node " << name << " on rank " << rank);
    return {0, 0};
}

}  // namespace

TEST_CASE("workload: 2 chips, compute around a send: the step time and the exposed communication add up") {
    graph g;
    g.name = "two";
    g.ranks.resize(2);
    // rank 0: a (10 us), then the send; b (5 us) after a only, beside the send.
    g.ranks[0].nodes = {timed(1, "a", 10, {}), comm(2, "send", node_kind::send, 1 << 20, {1}), timed(3, "b", 5, {1})};
    g.ranks[0].nodes[1].peer = 1;
    // rank 1: the receive, then c (20 us).
    g.ranks[1].nodes = {comm(1, "recv", node_kind::recv, 1 << 20, {}), timed(2, "c", 20, {1})};
    g.ranks[1].nodes[0].peer = 0;
    // On chips 3 and 1 (workload.chips), not 0 and 1.
    const nlohmann::json j = run_trace(g, "two", "-p workload.chips=3,1");
    CHECK(j["per_rank"][0]["chip"] == 3);
    CHECK(j["per_rank"][1]["chip"] == 1);

    const auto a = span(j, 0, "a"), send = span(j, 0, "send"), b = span(j, 0, "b");
    const auto recv = span(j, 1, "recv"), c = span(j, 1, "c");
    CHECK(a.first == Approx(0).margin(1e-9));
    CHECK(a.second == Approx(10));
    CHECK(b.first == Approx(10));  // b waits only for a
    CHECK(b.second == Approx(15));
    CHECK(send.first == Approx(10));
    const double transfer = recv.second - 10;  // the receive is done once the message landed
    CHECK(transfer > 1);  // 1 MiB over NeuronLink: microseconds
    CHECK(transfer < 100);
    CHECK(c.first == Approx(recv.second));
    CHECK(c.second == Approx(recv.second + 20));
    CHECK(j["step_time_us"].get<double>() == Approx(10 + transfer + 20));
    CHECK(j["per_rank"][0]["compute_us"].get<double>() == Approx(15));
    CHECK(j["per_rank"][1]["compute_us"].get<double>() == Approx(20));
    // Rank 0's send overlaps b for 5 us; rank 1 computes nothing while it receives.
    CHECK(j["per_rank"][0]["exposed_communication_us"].get<double>() ==
          Approx(send.second - send.first - 5).margin(1e-6));
    CHECK(j["per_rank"][1]["exposed_communication_us"].get<double>() == Approx(recv.second - recv.first));
    // The critical path: a, the transfer, c.
    std::vector<std::string> path;
    for (const auto& n : j["critical_path"]) path.push_back(n["node"]);
    CHECK(path.front() == "a");
    CHECK(path.back() == "c");
    CHECK(j["mfu"].get<double>() == 0);  // no matmul

    // Energy: the parts add up to the total; nothing computed; idle power
    // for the step's time; the message crossed the fabric.
    double sum = 0;
    for (const auto& [what, joules] : j["energy_j"].items()) sum += joules.get<double>();
    CHECK(sum == Approx(j["energy_total_j"].get<double>()));
    CHECK(j["energy_j"].count("compute") == 0);
    const double step_s = j["step_time_us"].get<double>() * 1e-6;
    CHECK(j["energy_j"]["idle chips"].get<double>() == Approx(4 * 140.0 * step_s));  // the platform's 4 chips
    CHECK(j["power_system_w"].get<double>() == Approx(j["energy_total_j"].get<double>() / step_s));
    double fabric_bytes = 0;
    for (const auto& [name, link] : j["links"].items())
        if (name != "host" && name != "nic") fabric_bytes += link["bytes"].get<double>();
    CHECK(fabric_bytes >= (1 << 20));
}

TEST_CASE("workload: 8 chips, an all_reduce between timed compute: the step is the slowest chip's") {
    graph g;
    g.name = "eight";
    g.ranks.resize(8);
    for (unsigned r = 0; r < 8; ++r) {
        g.ranks[r].nodes = {timed(1, "before", 10 + r, {}), comm(2, "grads", node_kind::collective, 1 << 20, {1}),
                            timed(3, "after", 3, {2})};
        g.ranks[r].nodes[1].op = collective_op::all_reduce;
    }
    const nlohmann::json j = run_trace(g, "eight");
    // Every member starts when the last (rank 7, 17 us) arrives, and they end within the collective.
    double ar_end = 0;
    for (unsigned r = 0; r < 8; ++r) {
        const auto ar = span(j, r, "grads");
        CHECK(ar.first == Approx(10 + r));
        ar_end = std::max(ar_end, ar.second);
        const auto after = span(j, r, "after");
        CHECK(after.first == Approx(ar.second));
        // Exposed: the whole all_reduce (nothing computes beside it).
        CHECK(j["per_rank"][r]["exposed_communication_us"].get<double>() == Approx(ar.second - ar.first));
    }
    CHECK(j["step_time_us"].get<double>() == Approx(ar_end + 3));
    // The path runs through rank 7's "before" (the last to arrive).
    bool through_seven = false;
    for (const auto& n : j["critical_path"]) through_seven |= n["rank"] == 7 && n["node"] == "before";
    CHECK(through_seven);
}

TEST_CASE(
    "workload: a generated MoE layer runs in its dependency order, and kernels timed only take the data mode time") {
    moe_config c;
    c.ranks = 4;
    c.tokens = 256;
    c.hidden = 512;
    c.expert_ffn = 512;
    c.experts = 8;
    c.top_k = 2;
    const graph g = moe_layer(c);
    const std::string data = "-p workload.compute=every_chip";
    const nlohmann::json with_data = run_trace(g, "moe_data", data);
    const nlohmann::json timed_only = run_trace(g, "moe_timed", data + " -p '*.timing_only=true'");
    CHECK(timed_only["step_time_us"].get<double>() == with_data["step_time_us"].get<double>());
    for (unsigned r = 0; r < 4; ++r)
        CHECK(timed_only["per_rank"][r]["compute_us"].get<double>() ==
              with_data["per_rank"][r]["compute_us"].get<double>());
    // Every node starts at or after each of its dependencies' ends; a
    // stream's nodes do not overlap.
    std::map<std::pair<unsigned, std::uint64_t>, std::pair<double, double>> at;
    for (const auto& n : timed_only["nodes"])
        at[{n["rank"].get<unsigned>(), n["id"].get<std::uint64_t>()}] = {n["start_us"], n["end_us"]};
    std::map<std::pair<unsigned, std::string>, double> stream_end;
    for (const auto& n : timed_only["nodes"]) {
        const unsigned r = n["rank"];
        for (const auto& d : n["deps"]) CHECK(n["start_us"].get<double>() >= at[{r, d.get<std::uint64_t>()}].second);
        const std::string stream = n["kind"] == "compute" ? "compute" : "comm";
        CHECK(n["start_us"].get<double>() >= stream_end[{r, stream}]);
        stream_end[{r, stream}] = n["end_us"];
    }
    CHECK(timed_only["mfu"].get<double>() > 0);
    // Compute energy is the step's matmul FLOPs at 0.5 pJ each.
    CHECK(timed_only["energy_j"]["compute"].get<double>() == Approx(timed_only["model_flops"].get<double>() * 0.5e-12));
}

TEST_CASE("workload: the generators on the platform, and bad input is one line and exit 2") {
    const result moe = trn3vp(reduced + "-p '*.timing_only=true' -p workload.moe.tokens=256 -p workload.moe.hidden=512 "
                                        "-p workload.moe.expert_ffn=256 -p workload.moe.experts=8");
    INFO(moe.out << moe.err);
    CHECK(moe.code == 0);
    CHECK_THAT(moe.out, Catch::Contains("# workload moe_4r_ep4 on nl32x2: 4 ranks"));
    CHECK_THAT(moe.out, Catch::Contains("MFU"));
    const result dense =
        trn3vp(reduced + "-p '*.timing_only=true' -p workload.source=dense -p workload.dense.tp=2 "
                         "-p workload.dense.pp=2 -p workload.dense.hidden=512 -p workload.dense.heads=4 "
                         "-p workload.dense.kv_heads=2 -p workload.dense.ffn=1024 -p workload.dense.seq=256 "
                         "-p workload.dense.micro_batches=2");
    INFO(dense.out << dense.err);
    CHECK(dense.code == 0);
    CHECK_THAT(dense.out, Catch::Contains("# workload dense_4r_tp2_pp2_dp1 on nl32x2: 4 ranks"));
    CHECK_THAT(dense.out, Catch::Contains("sends and receives"));

    struct bad {
        std::string args, words;
    };
    const std::string prefix = temp_path("bad_trace");
    std::ofstream(chakra_file(prefix, 0)) << "not a trace";
    for (const bad& b : std::vector<bad>{
             {"-p workload.source=chakra -p workload.trace=" + prefix, "malformed global metadata"},
             {"-p workload.source=chakra", "param workload.trace"},
             {"-p workload.ranks=5 -p workload.moe.experts=10", "5 ranks, more than the 4 chips"},
             {"-p workload.chips=0,2,2", "param workload.chips = '0,2,2': chip 2 appears twice"},
             {"-p workload.source=dense -p workload.dense.tp=3", "tp 3 x pp 1 x dp 1"},
             {"-p workload.moe.experts=6", "param workload.moe.experts = 6"},
         }) {
        const result r = trn3vp(reduced + b.args);
        INFO(b.args << "\n" << r.out << r.err);
        CHECK(r.code == 2);
        CHECK_THAT(r.err, Catch::Contains(b.words));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
    std::remove(chakra_file(prefix, 0).c_str());
}
