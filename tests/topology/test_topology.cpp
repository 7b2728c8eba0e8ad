// The UltraServer topologies: counts from the facts sheet, lane budgets,
// every chip pair reachable, and the published hop counts.
#include <catch2/catch.hpp>

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trn3/spec/device.h"
#include "trn3/topology/topology.h"

using namespace trn3::topology;

namespace {

topology make(const std::string& sku, unsigned gen, unsigned switch_trays = 4) {
    topology_params p;
    p.sku = sku;
    p.switch_gen = gen;
    p.switch_trays = switch_trays;
    return build(p);
}

int max_hops(const topology& t, bool& all_reachable) {
    int m = 0;
    all_reachable = true;
    for (const auto& row : t.chip_hops())
        for (int h : row) {
            if (h < 0) all_reachable = false;
            m = std::max(m, h);
        }
    return m;
}

// The facts sheet's examples, each checked against the computed shortest path.
void check_examples(const topology& t) {
    const auto ex = examples(t.params);
    REQUIRE(ex.size() == 3);
    for (const published_example& e : ex) {
        const auto p = t.path(t.chip(e.rack_a, e.tray_a, e.slot_a), t.chip(e.rack_b, e.tray_b, e.slot_b));
        INFO(e.from << " -> " << e.to);
        CHECK(int(p.size()) - 2 == e.published_hops);
    }
}

}  // namespace

TEST_CASE("NL72x2 Gen1: 144 chips, 36 hosts, 368 scale-up switches, 11,520 backplane cables, hops 1/3/4") {
    const topology t = make("nl72x2", 1);
    CHECK(t.count(node_kind::chip) == 144);
    CHECK(t.count(node_kind::host) == 36);
    CHECK(t.count(node_kind::scaleup_switch) == 368);  // 2 x (40 in switch trays + 18 x 8 on the compute trays)
    CHECK(t.backplane_cables() == 11520);
    CHECK(t.retimers == 216);
    CHECK(t.converters == 72);
    const auto lanes = t.chip_lanes(t.chips().front(), true), active = t.chip_lanes(t.chips().front(), false);
    CHECK(lanes.at(medium::backplane) == 80);
    CHECK(active.at(medium::backplane) == 64);
    CHECK(lanes.at(medium::tray_switch) == 64);
    CHECK(lanes.at(medium::cross_rack) == 16);
    check_examples(t);
    bool reachable = false;
    CHECK(max_hops(t, reachable) == 4);
    CHECK(reachable);
}

TEST_CASE("NL32x2 Gen1: 64 chips, 4 hosts, 32 switches (40 with the fifth switch tray), 5,120 cables, hops 1/2/3") {
    const topology t = make("nl32x2", 1);
    CHECK(t.count(node_kind::chip) == 64);
    CHECK(t.count(node_kind::host) == 4);
    CHECK(t.count(node_kind::scaleup_switch) == 32);
    CHECK(make("nl32x2", 1, 5).count(node_kind::scaleup_switch) == 40);
    CHECK(t.backplane_cables() == 5120);
    CHECK(make("nl32x2", 1, 5).backplane_cables() == 5120);
    CHECK(t.chip_lanes(t.chips().front(), false).at(medium::pcb) == 64);
    check_examples(t);
    bool reachable = false;
    CHECK(max_hops(t, reachable) == 3);
    CHECK(reachable);
}

TEST_CASE("every chip pair is reachable on every SKU and generation, and Gen2 and Gen3 put a rack one switch apart") {
    for (const char* sku : {"nl32x2", "nl72x2"})
        for (unsigned gen : {1u, 2u, 3u}) {
            const topology t = make(sku, gen);
            bool reachable = false;
            const int worst = max_hops(t, reachable);
            INFO(sku << " gen " << gen);
            CHECK(reachable);
            CHECK(worst <= 4);
            if (gen >= 2) {
                // Same rack: one switch hop for any pair of chips (NL32x2 Gen2/3 and NL72x2 Gen3),
                // at most three through the tray switches on NL72x2 Gen2 (two planes).
                const auto hops = t.chip_hops();
                const auto chips = t.chips();
                int worst_in_rack = 0;
                for (std::size_t i = 0; i < chips.size(); ++i)
                    for (std::size_t j = 0; j < chips.size(); ++j)
                        if (i != j && t.nodes[std::size_t(chips[i])].rack == t.nodes[std::size_t(chips[j])].rack)
                            worst_in_rack = std::max(worst_in_rack, hops[i][j]);
                CHECK(worst_in_rack == (std::string(sku) == "nl72x2" && gen == 2 ? 3 : 1));
            }
        }
    for (const char* sku : {"nl16-torus2d", "nl32x2-torus3d"}) {
        const topology t = make(sku, 1);
        bool reachable = false;
        INFO(sku);
        CHECK(max_hops(t, reachable) == (std::string(sku) == "nl16-torus2d" ? 3 : 5));
        CHECK(reachable);
        CHECK(t.chip_lanes(t.chips().front(), false).at(medium::torus) == 144);
    }
}

TEST_CASE("bad topology params are refused with one line naming them") {
    topology_params p;
    CHECK_THROWS_WITH(set_param(p, "switch_gen", "x"), "param switch_gen: 'x' is not a number");
    CHECK_THROWS_WITH(set_param(p, "planes", "2"), Catch::Contains("unknown topology param 'planes'"));
    set_param(p, "nl72x2.trays", "4");  // a platform prefix is accepted
    CHECK(p.trays == 4);
    p.sku = "nl99";
    CHECK_THROWS_WITH(build(p), Catch::Contains("unknown SKU 'nl99'"));
    p.sku = "nl32x2";
    p.trays = 17;
    CHECK_THROWS_WITH(build(p), "trays 17: 1 to 16");
    p.trays = 4;  // a reduced system for CI: still every pair reachable
    const topology small = build(p);
    CHECK(small.count(node_kind::chip) == 16);
}

TEST_CASE("routes follow minimal-hop paths to every chip, and flows spread over the equal next hops") {
    for (const char* sku : {"nl32x2", "nl72x2"})
        for (unsigned gen : {1u, 2u, 3u}) {
            const topology t = make(sku, gen);
            const auto routes = t.routes();
            const auto chips = t.chips();
            const auto hops = t.chip_hops();
            INFO(sku << " gen " << gen);
            // Every flow (source, destination, channel), taking at each node
            // the next hop TRN3_ROUTE_PICK names, arrives in the minimal hops.
            bool all_minimal = true;
            for (std::size_t i = 0; i < chips.size(); ++i)
                for (std::size_t k = 0; k < chips.size(); ++k)
                    for (unsigned channel = 0; channel < 3 && i != k; ++channel) {
                        int at = chips[i], steps = 0;
                        while (at != chips[k] && at >= 0 && steps < 16) {
                            const auto& next = routes[std::size_t(at)][k];
                            at = next.empty() ? -1 : next[TRN3_ROUTE_PICK(i, k, channel, next.size())];
                            ++steps;
                        }
                        all_minimal = all_minimal && at == chips[k] && steps == hops[i][k] + 1;
                    }
            CHECK(all_minimal);
            // Balance: the first chip's flows to the other chips, channel 0,
            // leave through many switches; its equal next hops towards a chip
            // one switch away are every active switch between them.
            std::map<int, unsigned> first_hops;
            std::size_t widest = 0;
            bool every_switch_between = true;
            const auto adj = t.forwarding_adjacency();
            auto joined = [&](int a, int b) {
                return std::count(adj[std::size_t(a)].begin(), adj[std::size_t(a)].end(), b) > 0;
            };
            for (std::size_t k = 1; k < chips.size(); ++k) {
                const auto& next = routes[std::size_t(chips[0])][k];
                ++first_hops[next[TRN3_ROUTE_PICK(0, k, 0, next.size())]];
                widest = std::max(widest, next.size());
                for (int s : adj[std::size_t(chips[0])])
                    if (hops[0][k] == 1 && t.nodes[std::size_t(s)].kind == node_kind::scaleup_switch &&
                        joined(s, chips[k]))
                        every_switch_between = every_switch_between && std::count(next.begin(), next.end(), s) == 1;
            }
            CHECK(every_switch_between);
            unsigned via_switch = 0, switches_used = 0;
            for (const auto& [n, count] : first_hops)
                if (t.nodes[std::size_t(n)].kind == node_kind::scaleup_switch) {
                    via_switch += count;
                    ++switches_used;
                }
            CHECK(switches_used >= 4);  // spread, not all through one switch
            CHECK(via_switch > 0);
            CHECK(widest >= 5);
        }
}

TEST_CASE("counts of every SKU and generation: switches, cables, NICs, and the worst hop count") {
    struct expected {
        const char* sku;
        unsigned gen, switches, cables, worst;
    };
    // Gen2: NL32x2 8 x 320-lane per rack; NL72x2 two planes of 10 per rack + the tray switches.
    // Gen3: 6 UALink switches per rack (5 active x4 ports per chip + a spare).
    for (const expected& e : {expected{"nl32x2", 2, 16, 5120, 2}, expected{"nl32x2", 3, 12, 1536, 2},
                              expected{"nl72x2", 2, 40 + 288, 11520, 4}, expected{"nl72x2", 3, 12 + 288, 3456, 2},
                              expected{"nl16-torus2d", 1, 0, 0, 3}, expected{"nl32x2-torus3d", 1, 0, 0, 5}}) {
        const topology t = make(e.sku, e.gen);
        INFO(e.sku << " gen " << e.gen);
        CHECK(t.count(node_kind::scaleup_switch) == e.switches);
        CHECK(t.backplane_cables() == e.cables);
        // NIC option 1 (the default): one Nitro-v6 per two chips, plus each host's own.
        CHECK(t.chip_nics() == t.count(node_kind::chip) / 2);
        CHECK(t.count(node_kind::nic) == t.count(node_kind::chip) / 2 + t.count(node_kind::host));
        bool reachable = false;
        CHECK(max_hops(t, reachable) == int(e.worst));
        CHECK(reachable);
    }
}

TEST_CASE("the tray composition is a param: NL72x2 with 4 x 64-lane tray switches, and retimers per tray") {
    topology_params p;
    set_param(p, "tray_switches", "4");
    set_param(p, "retimers_per_tray", "8");
    const topology t = build(p);
    CHECK(t.count(node_kind::scaleup_switch) == 80 + 2 * 18 * 4);
    CHECK(t.retimers == 2 * 18 * 8);
    CHECK(t.chip_lanes(t.chips().front(), false).at(medium::tray_switch) == 64);  // the same PCB lanes, fewer switches
    check_examples(t);  // the published hops do not depend on it
    set_param(p, "tray_switches", "3");
    CHECK_THROWS_WITH(build(p), "tray_switches 3: 1, 2, 4 or 8");
}

TEST_CASE("NIC options: one 400G Nitro-v6 per two chips (the default) or per chip, and every host's own") {
    for (const char* sku : {"nl72x2", "nl32x2"}) {
        topology_params p;
        set_param(p, "sku", sku);
        const topology one = build(p);
        set_param(p, "nic_option", "2");
        const topology two = build(p);
        INFO(sku);
        const unsigned chips = one.count(node_kind::chip), hosts = one.count(node_kind::host);
        CHECK(one.chip_nics() == chips / 2);
        CHECK(two.chip_nics() == chips);
        CHECK(one.count(node_kind::nic) == chips / 2 + hosts);  // NL72x2: 72 + 36; NL32x2: 32 + 4
        CHECK(two.count(node_kind::nic) == chips + hosts);
        CHECK_THAT(report(one), Catch::Contains(fmt::format("{} Nitro-v6 x 400 Gb/s for the chips (option 1: 200 Gb/s "
                                                            "per chip) + {} on the hosts",
                                                            chips / 2, hosts)));
        CHECK_THAT(report(two), Catch::Contains("(option 2: 400 Gb/s per chip)"));
        set_param(p, "nic_option", "3");
        CHECK_THROWS_WITH(build(p), "nic_option 3: 1 (a 400G NIC per two chips) or 2 (one per chip)");
    }
}

TEST_CASE("host links: NL32x2's JBOG cables are PCIe 6.0 x16 split x8 per chip, NL72x2's run Gen5 x16 through the "
          "converters") {
    for (const char* sku : {"nl32x2", "nl72x2"}) {
        topology_params p;
        set_param(p, "sku", sku);
        const topology t = build(p);
        const bool nl32 = std::string(sku) == "nl32x2";
        unsigned host_links = 0;
        for (const edge& e : t.edges)
            if (e.m == medium::host_link) {
                ++host_links;
                CHECK(e.lanes == (nl32 ? 8u : 16u));
                CHECK(e.lane_bytes_per_s == Approx(nl32 ? 8e9 : 32e9 * 128 / 130 / 8));
            }
        CHECK(host_links == t.count(node_kind::chip));
        // Per JBOG tray (two chips): 2 x 8 lanes x 8 GB/s = 128 GB/s per direction, the cable's.
        if (nl32) CHECK(2 * 8 * 8e9 == 128e9);
    }
}

TEST_CASE("the system's published aggregates: NL72x2 362 PFLOP/s dense MXFP8, 20.7 TB of HBM at 706 TB/s") {
    const topology t = make("nl72x2", 1);
    const std::string text = report(t);
    CHECK_THAT(text, Catch::Contains("system              362.4 PFLOP/s dense MXFP8 (1449.6 sparse), 90.6 PFLOP/s "
                                     "BF16, 20736 GiB of HBM (published as 20.7 TB: binary GB), 705.6 TB/s"));
    const auto j = nlohmann::json::parse(to_json(t));
    CHECK(j["system"]["dense_mxfp8_pflops"].get<double>() == Approx(362.39).epsilon(1e-4));
    CHECK(j["system"]["hbm_gib"].get<double>() == 20736);
    CHECK(j["system"]["hbm_tbytes_per_s"].get<double>() == Approx(705.6));
    CHECK(j["counts"]["chip_nics"] == 72);
}

TEST_CASE("Gen1 switch model: the PEX90144 (18 x8) fits NL72x2's planes and NL32x2 with five switch trays only") {
    topology_params p;
    set_param(p, "sku", "nl72x2");
    set_param(p, "switch_model", "pex90144");
    const topology t = build(p);
    unsigned pex = 0;
    for (const node& n : t.nodes)
        if (n.model == "pex144-x8") ++pex;
    CHECK(pex == 80);
    check_examples(t);  // the same planes, the same hops
    set_param(p, "sku", "nl32x2");
    CHECK_THROWS_WITH(build(p), "switch r0.p0.sw0 (pex144-x8) would carry 160 lanes, more than its 144 "
                                "(NL32x2 with 144-lane switches needs switch_trays=5)");
    set_param(p, "switch_trays", "5");
    CHECK(build(p).count(node_kind::scaleup_switch) == 40);
    set_param(p, "switch_model", "pex144");
    CHECK_THROWS_WITH(build(p), "switch_model 'pex144': scorpio-x or pex90144");
}
