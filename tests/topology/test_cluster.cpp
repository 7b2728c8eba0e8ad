// The scale-out network's arithmetic (platforms/topology cluster.h): the
// facts sheet's cluster sizes, and what a concrete cluster of UltraServers needs.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "trn3/topology/cluster.h"

using namespace trn3::topology;

namespace {
cluster_network plan(double tbps, unsigned gbps, unsigned ultraservers = 2, const char* us = "nl72x2",
                     unsigned nic_option = 1) {
    cluster_params p;
    p.switch_tbps = tbps;
    p.port_gbps = gbps;
    p.ultraservers = ultraservers;
    p.ultraserver = us;
    p.nic_option = nic_option;
    return plan_cluster(p);
}
}  // namespace

TEST_CASE("12.8T switches hold 8,192 chips in two tiers and 524,288 in three at 100G ports, 512 in two at 400G") {
    const cluster_network at100 = plan(12.8, 100);
    CHECK(at100.radix == 128);
    CHECK(at100.largest_chips[1] == 8192);
    CHECK(at100.largest_chips[2] == 524288);
    const cluster_network at400 = plan(12.8, 400);
    CHECK(at400.radix == 32);
    CHECK(at400.largest_chips[1] == 512);
}

TEST_CASE("51.2T switches at 100G ports hold 16 times the chips of 400G ports in two tiers, 64 times in three") {
    const cluster_network at100 = plan(51.2, 100), at400 = plan(51.2, 400);
    CHECK(at100.largest_chips[1] == 16 * at400.largest_chips[1]);
    CHECK(at100.largest_chips[2] == 64 * at400.largest_chips[2]);
    CHECK(at100.largest_chips[1] == 131072);
    CHECK(plan(25.6, 100).largest_chips[1] == 32768);
}

TEST_CASE("two NL72x2 UltraServers on 12.8T switches: 432 ports a plane, two tiers, 7 ToRs and 4 spines a plane") {
    const cluster_network c = plan(12.8, 100);
    CHECK(c.chips == 288);
    CHECK(c.chip_nics == 144);  // option 1: one per two chips
    CHECK(c.host_nics == 72);  // each host's own
    CHECK(c.ports_per_plane == (144 + 72) * 2);  // a 200 Gb/s link takes two 100G ports
    CHECK(c.tiers == 2);
    CHECK(c.tors == 7);  // 432 / 64 down-ports, rounded up
    CHECK(c.spines == 4);  // 7 x 64 up-ports / 128
    CHECK(c.switches() == 22);
    // NIC option 2 doubles the chips' NICs.
    CHECK(plan(12.8, 100, 2, "nl72x2", 2).chip_nics == 288);
}

TEST_CASE("a cluster beyond two tiers takes three: leaves appear, and past three tiers it is refused") {
    const cluster_network c = plan(12.8, 400, 20, "nl32x2");  // radix 32: two tiers hold 512 ports
    CHECK(c.ports_per_plane > 512);
    CHECK(c.tiers == 3);
    CHECK(c.leaves == c.tors);
    CHECK(c.spines == (c.leaves * 16 + 31) / 32);
    REQUIRE_THROWS_WITH(plan(12.8, 400, 100), Catch::Contains("three tiers of radix 32 hold 8192"));
}

TEST_CASE("cluster params: unknown keys, capacities and port speeds no switch has, and non-numbers are refused") {
    cluster_params p;
    REQUIRE_THROWS_WITH(set_param(p, "colour", "red"), Catch::Contains("unknown cluster param 'colour'"));
    REQUIRE_THROWS_WITH(set_param(p, "ultraservers", "two"), Catch::Contains("'two' is not a number"));
    REQUIRE_THROWS_WITH(set_param(p, "ultraservers", "1.5"), Catch::Contains("not a whole number"));
    REQUIRE_THROWS_WITH(plan(10, 100), Catch::Contains("switch_capacity 10 Tb/s"));
    REQUIRE_THROWS_WITH(plan(12.8, 300), Catch::Contains("port_speed 300 Gb/s"));
    REQUIRE_THROWS_WITH(plan(12.8, 100, 0), Catch::Contains("at least 1"));
    REQUIRE_THROWS_WITH(plan(12.8, 100, 2, "nl16"), Catch::Contains("nl32x2 or nl72x2"));
    set_param(p, "cluster.port_speed", "400");
    CHECK(p.port_gbps == 400);
}
