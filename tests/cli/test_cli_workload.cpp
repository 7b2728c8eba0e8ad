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

// Two reduced nl72x2 (8 chips each: one rack of two trays) on the EFA network.
const std::string two_ultraservers = "run --platform cluster -p cluster.port_speed=400 -p 'cluster.*.trays=2' "
                                     "-p 'cluster.*.racks=1' -p 'cluster.*.app=workload' ";

// Runs the trace, returns the JSON report (with every node).
nlohmann::json run_trace(const graph& g, const std::string& tag, const std::string& extra = "", bool cluster = false) {
    const std::string prefix = temp_path(tag), json = temp_path(tag + ".json");
    write_chakra(g, prefix);
    // 4 chips in a rack, or 8 over the pair of racks; or two UltraServers.
    const std::string platform = cluster ? two_ultraservers
                                 : g.ranks.size() > 4
                                     ? "run --platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=workload "
                                     : reduced;
    const result r = trn3vp(platform + "-p workload.source=chakra -p workload.trace=" + prefix +
                            " -p workload.json_nodes=true -p workload.json=" + json + " " + extra);
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains(cluster ? "platform cluster: PASSED" : "platform nl32x2: PASSED"));
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

TEST_CASE("workload on a cluster: all_reduces across two UltraServers over EFA, pairwise and hierarchical, and the "
          "step's arithmetic") {
    // 16 ranks, 8 on each UltraServer: rank r and r + 8 all-reduce 4 MiB
    // (one member on each: the whole buffer over EFA), then all 16 do
    // (8 on each: a reduce-scatter over NeuronLink, 512 KiB per chip over
    // EFA, an all-gather). Rank 9, on the second UltraServer, comes to the
    // second late: it releases everyone's.
    constexpr std::uint64_t bytes = 4 << 20;
    graph g;
    g.name = "across";
    g.ranks.resize(16);
    for (unsigned r = 0; r < 16; ++r) {
        g.ranks[r].nodes = {timed(1, "before", 10, {}), comm(2, "pair", node_kind::collective, bytes, {1}),
                            timed(3, "mid", r == 9 ? 30 : 2, {2}), comm(4, "all", node_kind::collective, bytes, {3}),
                            timed(5, "after", 3, {4})};
        for (const std::size_t k : {std::size_t(1), std::size_t(3)}) g.ranks[r].nodes[k].op = collective_op::all_reduce;
        g.ranks[r].nodes[1].group = "pair" + std::to_string(r % 8);
        g.ranks[r].nodes[3].group = "all";
        g.groups["pair" + std::to_string(r % 8)].push_back(r);
        g.groups["all"].push_back(r);
    }
    const nlohmann::json j = run_trace(g, "across", "", true);
    REQUIRE(j["per_rank"].size() == 16);
    CHECK(j["ultraservers"] == 2);
    for (unsigned r = 0; r < 16; ++r) CHECK(j["per_rank"][r]["ultraserver"] == r / 8);

    // Pairwise: the whole 4 MiB crosses the network both ways; a chip's
    // share of its NIC is 200 Gb/s (option 1: one 400 Gb/s NIC per two chips).
    const double wire_us = double(bytes) / 25e9 * 1e6;  // 167.8 us
    double pair_us = 0, all_start = 0, all_end = 0, last_end = 0;
    for (unsigned r = 0; r < 16; ++r) {
        const auto pair = span(j, r, "pair"), partner = span(j, (r + 8) % 16, "pair");
        CHECK(pair.first == Approx(10));
        CHECK(std::abs(pair.second - partner.second) < 5);  // done together, on either UltraServer
        pair_us = std::max(pair_us, pair.second - pair.first);
        const auto mid = span(j, r, "mid"), all = span(j, r, "all"), after = span(j, r, "after");
        CHECK(mid.first == Approx(pair.second));
        CHECK(all.first == Approx(mid.second));
        CHECK(after.first == Approx(all.second));
        all_start = std::max(all_start, all.first);
        all_end = std::max(all_end, all.second);
        last_end = std::max(last_end, after.second);
    }
    CHECK(pair_us > wire_us);
    CHECK(pair_us < 3 * wire_us);
    // Hierarchical: an eighth of the bytes over EFA, the rest on NeuronLink
    // (from the last arrival, rank 9's).
    CHECK(all_start == Approx(span(j, 9, "mid").second));
    const double all_us = all_end - all_start;
    CHECK(all_us < pair_us / 2);
    CHECK(all_us > wire_us / 8);
    CHECK(j["step_time_us"].get<double>() == Approx(last_end));
    // The first UltraServer's NICs carried its 8 chips' EFA bytes both
    // ways: each sends its 4 MiB (two halves) and its 512 KiB chunk, and
    // receives as much.
    CHECK(j["links"]["efa"]["bytes"].get<double>() == 8 * 2 * double(bytes + bytes / 8));
    CHECK(j["energy_j"]["links efa"].get<double>() == Approx(j["links"]["efa"]["bytes"].get<double>() * 8 * 5e-12));
    // The critical path ends with an "after" and goes through both
    // all_reduces and rank 9's late "mid", on the other UltraServer.
    std::vector<std::string> path;
    bool through_nine = false;
    for (const auto& n : j["critical_path"]) {
        path.push_back(n["node"]);
        through_nine |= n["rank"] == 9 && n["node"] == "mid";
    }
    CHECK(path.back() == "after");
    CHECK(std::count(path.begin(), path.end(), "pair") >= 1);
    CHECK(std::count(path.begin(), path.end(), "all") >= 1);
    CHECK(through_nine);

    // A step that runs past workload.timeout while chips are in their EFA
    // rings ends with the hosts' failures, exit 1: no crash, no hang.
    const std::string prefix = temp_path("across_late");
    write_chakra(g, prefix);
    const result late = trn3vp(two_ultraservers + "-p workload.source=chakra -p workload.trace=" + prefix +
                               " -p workload.timeout=100us");
    INFO(late.out << late.err);
    CHECK(late.code == 1);
    CHECK_THAT(late.out, Catch::Contains("the step did not finish within workload.timeout (100 us)"));
    CHECK_THAT(late.out, Catch::Contains("platform cluster: FAILED"));
    for (unsigned r = 0; r < 16; ++r) std::remove(chakra_file(prefix, r).c_str());
}

TEST_CASE("workload on a cluster: the generators run, and what cannot cross UltraServers is one line and exit 2") {
    // MoE: experts within each UltraServer by default; their gradients'
    // all_reduce across the two over EFA.
    const result moe = trn3vp(two_ultraservers + "-p workload.moe.tokens=128 -p workload.moe.hidden=256 "
                                                 "-p workload.moe.expert_ffn=128 -p workload.moe.experts=16");
    INFO(moe.out << moe.err);
    CHECK(moe.code == 0);
    CHECK_THAT(moe.out, Catch::Contains("# workload moe_16r_ep8 on cluster.us0 (UltraServer 0 of 2: ranks 0 to 7)"));
    CHECK_THAT(moe.out, Catch::Contains("UltraServer 1 of 2: ranks 8 to 15"));
    CHECK_THAT(moe.out, Catch::Contains("bwd.experts.grad_all_reduce"));
    CHECK_THAT(moe.out, Catch::Contains("platform cluster: PASSED"));
    // Dense: tensor-parallel 4 inside an UltraServer, data-parallel 4 over
    // both (two members on each: hierarchical).
    const result dense =
        trn3vp(two_ultraservers + "-p workload.source=dense -p workload.dense.tp=4 -p workload.dense.hidden=512 "
                                  "-p workload.dense.heads=4 -p workload.dense.kv_heads=4 -p workload.dense.ffn=1024 "
                                  "-p workload.dense.seq=256 -p workload.dense.layers=1");
    INFO(dense.out << dense.err);
    CHECK(dense.code == 0);
    CHECK_THAT(dense.out, Catch::Contains("# workload dense_16r_tp4_pp1_dp4 on cluster.us0"));
    CHECK_THAT(dense.out, Catch::Contains("platform cluster: PASSED"));

    // A hand-built trace: a send from rank 0 to rank 8, or an all_reduce
    // with two members on one UltraServer and one on the other.
    graph p2p;
    p2p.name = "p2p";
    p2p.ranks.resize(16);
    p2p.ranks[0].nodes = {comm(1, "send", node_kind::send, 1 << 20, {})};
    p2p.ranks[0].nodes[0].peer = 8;
    p2p.ranks[8].nodes = {comm(1, "recv", node_kind::recv, 1 << 20, {})};
    p2p.ranks[8].nodes[0].peer = 0;
    graph uneven;
    uneven.name = "uneven";
    uneven.ranks.resize(16);
    for (const unsigned r : {0u, 1u, 8u}) {
        uneven.ranks[r].nodes = {comm(1, "grads", node_kind::collective, 1 << 20, {})};
        uneven.ranks[r].nodes[0].op = collective_op::all_reduce;
        uneven.ranks[r].nodes[0].group = "g";
        uneven.groups["g"].push_back(r);
    }
    const std::string p2p_prefix = temp_path("p2p_across"), uneven_prefix = temp_path("uneven_across");
    write_chakra(p2p, p2p_prefix);
    write_chakra(uneven, uneven_prefix);
    struct bad {
        std::string args, words;
    };
    for (const bad& b : std::vector<bad>{
             {"-p workload.moe.ep=16 -p workload.moe.experts=16",
              "all_to_allv of group 'ep0' spans 2 UltraServers: only all_reduce runs across UltraServers"},
             {"-p workload.source=chakra -p workload.trace=" + p2p_prefix,
              "rank 0 node 1 ('send'): a send between ranks on different UltraServers"},
             {"-p workload.source=chakra -p workload.trace=" + uneven_prefix,
              "group 'g' has 2 members on UltraServer 0 and 1 on UltraServer 1"},
             {"-p workload.ranks=18 -p workload.moe.ep=9 -p workload.moe.experts=18",
              "18 ranks, more than the 16 chips of 2 UltraServers"},
         }) {
        const result r = trn3vp(two_ultraservers + b.args);
        INFO(b.args << "\n" << r.out << r.err);
        CHECK(r.code == 2);
        CHECK_THAT(r.err, Catch::Contains(b.words));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
    for (unsigned r = 0; r < 16; ++r) {
        std::remove(chakra_file(p2p_prefix, r).c_str());
        std::remove(chakra_file(uneven_prefix, r).c_str());
    }
}
