// The command line on trn3-dev and the UltraServers (see test_cli.cpp).
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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
std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}
}  // namespace

TEST_CASE(
    "a platform's hosts run the program its app param names, and one whose needs the platform lacks is a user error") {
    const result boot = trn3vp("run --platform trn3-dev -p trn3dev.app=boot");
    INFO(boot.out << boot.err);
    CHECK(boot.code == 0);
    CHECK_THAT(boot.out, Catch::Contains("chips up: 1 of 1; kernels verified: 1 of 1"));
    CHECK_THAT(boot.out, Catch::Contains("mcu0 console: ready"));
    const result bench = trn3vp("run --platform trn3-dev -p trn3dev.app=pcie_checks");
    CHECK(bench.code == 2);
    CHECK_THAT(bench.err, Catch::Contains("program pcie_checks needs a platform with four PCIe exercisers"));
    const result none = trn3vp("run --platform pcie -p pcie.app=boot");
    CHECK(none.code == 2);
    CHECK_THAT(none.err, Catch::Contains("program boot needs hosts with Trainium3 chips"));
}

TEST_CASE("trn3-dev: power-on, firmware, driver and runtime run the reference kernels to verified results") {
    const std::string trace = temp_path("trn3dev.json");
    const result r = trn3vp("run --platform trn3-dev --timeline " + trace);
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    for (const char* step : {"root port link up (Gen5 x16)", "enumerated (2 functions)", "driver probed the chip",
                             "firmware running (boot ROM verified the image)", "mailbox handshake (firmware 0.2",
                             "first verified kernel result", "all kernels verified"})
        CHECK_THAT(r.out, Catch::Contains(step));
    for (const char* k : {"nc0: gemm bf16 512x1024x512", "nc1: softmax 256x1024 fp32",
                          "nc2: attention 128x256, head dim 128", "nc3: rmsnorm 256x1024 fp32"})
        CHECK_THAT(r.out, Catch::Contains(k));
    CHECK_THAT(r.out, Catch::Contains("nc4+nc5 (LNC=2): gemm bf16 256x512x256 each"));
    CHECK_THAT(r.out,
               Catch::Contains("ok: a kernel with an illegal instruction: NRT_EXEC_ERROR, engine error 1 (illegal)"));
    CHECK_THAT(r.out, Catch::Contains("ok: the driver reset the core; the next kernel on it ran and verified"));
    CHECK_THAT(r.out, Catch::Contains("ok: DMA read of host memory outside the IOMMU's mappings"));
    CHECK_THAT(r.out, Catch::Contains("ok: DMA write to host memory outside the mappings: dropped by the IOMMU"));
    CHECK_THAT(r.out, Catch::Contains("01:00.0 [1d0f:7364] accelerator BAR0 0xe0000000 [64-bit 16M]"));
    CHECK_THAT(r.out, Catch::Contains("/sys/bus/pci/devices/0000:01:00.0/neuron/iommu_faults: 2"));
    CHECK_THAT(r.out, Catch::Contains("platform trn3-dev: PASSED"));
    // The timeline has engines, DMA queues, the mailbox and interrupts.
    const std::string t = slurp(trace);
    std::remove(trace.c_str());
    for (const char* track :
         {"\"tensor\"", "\"dma0.q0\"", "\"chip0.mailbox\"", "\"host0.interrupts\"", "\"control.notify\""})
        CHECK_THAT(t, Catch::Contains(track));
    CHECK_THAT(t, Catch::Contains("response (MCU rang)"));
    // From power-on: the links' training, the boot ROM's verdict, the host's phases.
    for (const char* event : {"\"training to L0: Gen5 x16\"", "\"boot: verified\"", "\"boot: running\"",
                              "\"enumerated (2 functions)\"", "\"host0 software\""})
        CHECK_THAT(t, Catch::Contains(event));
}

TEST_CASE("trn3-dev: a firmware image that fails its boot check is reported clearly, without a hang") {
    const result r = trn3vp("run --platform trn3-dev -p trn3dev.chip0.mcu0.fuse_digest=" + std::string(64, '0'));
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK_THAT(r.out, Catch::Contains("FAILED: firmware: the boot ROM refused the firmware image"));
    CHECK_THAT(r.out, Catch::Contains("firmware image refused"));
}

TEST_CASE("trn3-dev: the firmware trains HBM and NeuronLink, reports lane sparing, and handles HBM errors") {
    const result r = trn3vp("run --platform trn3-dev");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    for (unsigned s = 0; s < 4; ++s)
        CHECK_THAT(r.out, Catch::Contains("mcu0 console: hbm" + std::to_string(s) + ": trained in 25 us"));
    CHECK_THAT(r.out, Catch::Contains("mcu0 console: nl0: up, speed 6 x64 of x64, 0 failed lanes, 0 spares in use"));
    CHECK_THAT(r.out, Catch::Contains("HBM ready 0xf, NeuronLink ports 0x3 up 0x3 degraded 0x0"));
    CHECK_THAT(r.out,
               Catch::Contains("ok: an uncorrectable HBM error: poisoned read, the firmware's handler counted it"));
    CHECK_THAT(r.out, Catch::Contains("mcu0 console: hbm0: error interrupt 0x1: 1 uncorrectable"));
    CHECK_THAT(r.out, Catch::Contains("ok: mailbox RESET_CORE: the firmware reset nc6"));
}

TEST_CASE(
    "trn3-dev: 16 failed backplane lanes are spared, 17 degrade the link, a fault under traffic is retrained by the firmware") {
    const result spared = trn3vp("run --platform trn3-dev -p trn3dev.nl0.failed_lanes=0-15");
    INFO(spared.out << spared.err);
    CHECK(spared.code == 0);
    CHECK_THAT(spared.out, Catch::Contains("nl0: up x64 of x64, 16 failed lanes, 16 spares in use, 1 trainings\n"));
    const result degraded =
        trn3vp("run --platform trn3-dev -p trn3dev.nl0.failed_lanes=0-16 -p trn3dev.nl1.failed_lanes=5 "
               "-p trn3dev.nl1.fault_time=350us");
    INFO(degraded.out << degraded.err);
    CHECK(degraded.code == 0);
    CHECK_THAT(degraded.out,
               Catch::Contains("nl0: up x56 of x64, 17 failed lanes, 0 spares in use, 1 trainings, DEGRADED"));
    CHECK_THAT(degraded.out, Catch::Contains("mcu0 console: nl1: link down, retraining"));
    CHECK_THAT(degraded.out,
               Catch::Contains("nl1: up x8 of x16, 1 failed lanes, 0 spares in use, 2 trainings, DEGRADED"));
}

TEST_CASE("trn3vp topology prints counts, lanes, hops and the published examples, and json and dot export the graph") {
    const result r = trn3vp("topology --platform nl72x2 -p switch_gen=1");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("scale-up switches   368 (80 x gen1-160, 288 x tray-32)"));
    CHECK_THAT(r.out, Catch::Contains("backplane cables    11520"));
    CHECK_THAT(r.out, Catch::Contains("rack A node 2 chip C: 3 hops (published 3)"));
    CHECK_THAT(r.out, Catch::Contains("rack B node 2 chip C: 4 hops (published 4)"));
    CHECK_THAT(r.out, Catch::Contains("every pair reachable"));
    const result j = trn3vp("topology --platform nl32x2 --format json");
    CHECK(j.code == 0);
    const auto doc = nlohmann::json::parse(j.out);
    CHECK(doc["counts"]["chips"] == 64);
    CHECK(doc["counts"]["backplane_cables"] == 5120);
    CHECK(doc["examples"][2]["hops"] == 3);
    const result d = trn3vp("topology --platform nl16-torus2d --format dot");
    CHECK(d.code == 0);
    CHECK_THAT(d.out, Catch::StartsWith("graph \"nl16-torus2d gen1\" {"));
    CHECK_THAT(d.out, Catch::Contains("\"x0.y0.z0\" -- \"x1.y0.z0\" [label=\"x36 torus\"];"));
    const result bad = trn3vp("topology -p switch_gen=4");
    CHECK(bad.code == 2);
    CHECK_THAT(bad.err, Catch::Contains("switch_gen 4: 1, 2 or 3"));
}

TEST_CASE("trn3vp topology --platform cluster prints tiers, switch counts and the largest clusters, or exits 2") {
    const result r = trn3vp("topology --platform cluster -p ultraservers=2 -p switch_capacity=12.8 -p port_speed=100");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("cluster: 2 x nl72x2 (288 chips)"));
    CHECK_THAT(r.out, Catch::Contains("switches per plane  7 ToR, 0 leaf, 4 spine"));
    CHECK_THAT(r.out, Catch::Contains("   12.8T   100G     128           128         8192       524288"));
    CHECK_THAT(r.out, Catch::Contains("   12.8T   400G      32            32          512         8192"));
    const result j = trn3vp("topology --platform cluster --format json -p nic_option=2");
    CHECK(j.code == 0);
    CHECK(nlohmann::json::parse(j.out)["chip_nics"] == 288);
    for (const char* bad : {"-p port_speed=300", "-p switch_capacity=10", "-p ultraservers=100000",
                            "-p port_speed=fast", "--format dot"}) {
        const result b = trn3vp(std::string("topology --platform cluster ") + bad);
        INFO(bad << ": " << b.err);
        CHECK(b.code == 2);
        CHECK(std::count(b.err.begin(), b.err.end(), '\n') == 1);
    }
}

TEST_CASE("cluster: three reduced UltraServers boot on a ToR and spine network, and partners ping-pong over EFA "
          "through libfabric") {
    const result r = trn3vp("run --platform cluster -p cluster.ultraservers=3 -p cluster.port_speed=400 "
                            "-p 'cluster.*.trays=2' -p 'cluster.*.racks=1'");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    // 400G ports: radix 32, 16 NIC links per ToR; the tiers and spines are the full-size plan's.
    CHECK_THAT(r.out, Catch::Contains("cluster: 3 x nl72x2, 24 chips; EFA network: 2 planes of 2 ToRs and 11 spines "
                                      "(12.8 Tb/s switches at 400 Gb/s ports, radix 32), 18 NIC links of 200 Gb/s "
                                      "per plane"));
    for (const char* us : {"--- us0 ---", "--- us1 ---", "--- us2 ---"}) CHECK_THAT(r.out, Catch::Contains(us));
    CHECK(count_of(r.out, "chips up: 8 of 8; kernels verified: 8 of 8; NICs probed: 6 of 6") == 3);
    // us0 and us1 are partners (us2 has none): every message of 8 B, 8 KiB and 1 MiB exact.
    CHECK_THAT(r.out, Catch::Contains("EFA: with system 1 over libfabric (trn3vp), 30 of 30 messages exact; half "
                                      "round trip, 8 B 4.068 us"));
    CHECK_THAT(r.out, Catch::Contains("EFA: with system 0 over libfabric (trn3vp), 126 of 126 messages exact; "
                                      "bandwidth"));
    CHECK(count_of(r.out, "EFA: ") == 2);
    CHECK_THAT(r.out, Catch::Contains("platform cluster: PASSED"));
    for (const char* bad : {"-p cluster.port_speed=300", "-p cluster.switch_capacity=10", "-p cluster.ultraservers=64",
                            "-p cluster.us1.nic_option=2"}) {
        const result b =
            trn3vp(std::string("run --platform cluster -p 'cluster.*.trays=1' -p 'cluster.*.racks=1' ") + bad);
        INFO(bad << ": " << b.err);
        CHECK(b.code == 2);
        CHECK(std::count(b.err.begin(), b.err.end(), '\n') == 1);
    }
}

TEST_CASE("cluster: 1% loss and 1% reordering at every ToR: SRD retransmits and every EFA message arrives exact") {
    const std::string stats = temp_path("stats");
    const result r = trn3vp("run --platform cluster -p 'cluster.*.trays=1' -p 'cluster.*.racks=1' "
                            "-p 'cluster.tor*.drop_rate=0.01' -p 'cluster.tor*.reorder_rate=0.01' --stats " +
                            stats);
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("30 of 30 messages exact"));
    CHECK_THAT(r.out, Catch::Contains("126 of 126 messages exact"));
    const auto j = nlohmann::json::parse(slurp(stats));
    std::remove(stats.c_str());
    std::uint64_t dropped = 0, held = 0, retransmitted = 0;
    const auto ends_with = [](const std::string& s, const std::string& tail) {
        return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
    };
    for (const auto& [name, value] : j.items()) {
        if (!value.is_number()) continue;
        if (ends_with(name, ".fault_drops")) dropped += value.get<std::uint64_t>();
        if (ends_with(name, ".held")) held += value.get<std::uint64_t>();
        if (ends_with(name, ".srd.retransmits")) retransmitted += value.get<std::uint64_t>();
    }
    CHECK(dropped > 50);
    CHECK(held > 50);
    CHECK(retransmitted > 50);  // what was lost was sent again
}

TEST_CASE("cluster: a ToR that dies silently during the EFA traffic: SRD leaves its paths, nothing is lost") {
    const std::string stats = temp_path("stats");
    // Plane 0's only ToR dies 100 us into the ping-pong; the NICs are not told (their links stay up).
    const result r = trn3vp("run --platform cluster -p 'cluster.*.trays=1' -p 'cluster.*.racks=1' "
                            "-p cluster.tor_p0_0.fail_at=400us --stats " +
                            stats);
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("[cluster.tor_p0_0] [warning] the switch fails: every port down"));
    CHECK_THAT(r.out, Catch::Contains("30 of 30 messages exact"));
    CHECK_THAT(r.out, Catch::Contains("126 of 126 messages exact"));
    CHECK_THAT(r.out, Catch::Contains("platform cluster: PASSED"));
    const auto j = nlohmann::json::parse(slurp(stats));
    std::remove(stats.c_str());
    CHECK(j.at("cluster.tor_p0_0.down_drops").get<std::uint64_t>() > 100);
    CHECK(j.at("cluster.us0.r0_t0_c0_nic.srd.connection_failures").get<std::uint64_t>() == 0);
    CHECK(j.at("cluster.us0.r0_t0_c0_nic.srd.retransmits").get<std::uint64_t>() > 50);
}

TEST_CASE("cluster: an all_reduce over every chip of two UltraServers, NeuronLink inside and EFA between, exact "
          "under 1% loss") {
    const std::string stats = temp_path("stats"), table = temp_path("json");
    // 2 x 8 chips (2 hosts each), bf16: every row checked, out of place and in place; the ToRs drop 1%.
    const result r = trn3vp("run --platform cluster -p cluster.port_speed=400 -p 'cluster.*.trays=2' "
                            "-p 'cluster.*.racks=1' -p 'cluster.*.app=collectives' -p collectives.dtype=bf16 "
                            "-p collectives.min_bytes=8 -p collectives.max_bytes=256K -p collectives.factor=8 "
                            "-p 'cluster.tor*.drop_rate=0.01' -p collectives.json=" +
                            table + " --stats " + stats);
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("# cluster.us0: 16 ranks (every chip of 2 UltraServers, 8 each), all_reduce "
                                      "bfloat16 sum, hierarchical across UltraServers (inside each, reduce_scatter "
                                      "and all_gather by the auto algorithm"));
    CHECK_THAT(r.out, Catch::Contains("# cluster.us1: 8 of the cluster's 16 ranks; the table is the first "
                                      "UltraServer's"));
    // Sizes round down to whole chunks of the 8 chips (8 B -> 16 B; 4 KiB; 256 KiB).
    for (const char* row : {"          16            8 bfloat16    sum     -1", "        4096         2048 bfloat16",
                            "      262144       131072 bfloat16"})
        CHECK_THAT(r.out, Catch::Contains(row));
    CHECK_THAT(r.out, Catch::Contains("# Out of bounds values : 0 OK"));
    CHECK_THAT(r.out, Catch::Contains("platform cluster: PASSED"));
    const auto rows = nlohmann::json::parse(slurp(table));
    std::remove(table.c_str());
    CHECK(rows.at("ultraservers") == 2);
    CHECK(rows.at("rows").size() == 6);  // 16 B (from 8 B), 64 B, 512 B, 4 KiB, 32 KiB, 256 KiB
    for (const auto& row : rows.at("rows")) {
        CHECK(row.at("out_of_place").at("nwrong") == 0);
        CHECK(row.at("in_place").at("nwrong") == 0);
    }
    // The NICs wrote into the chips' memory peer to peer (through the root complex, past the IOMMU), and
    // SRD sent again what the ToRs dropped.
    const auto j = nlohmann::json::parse(slurp(stats));
    std::remove(stats.c_str());
    CHECK(j.at("cluster.us0.r0_t0_host.rc.p2p_reflected").get<std::uint64_t>() > 1000);
    CHECK(j.at("cluster.us1.r0_t1_host.rc.p2p_reflected").get<std::uint64_t>() > 1000);
    std::uint64_t retransmitted = 0;
    for (const auto& [name, value] : j.items())
        if (name.size() > 16 && name.compare(name.size() - 16, 16, ".srd.retransmits") == 0)
            retransmitted += value.get<std::uint64_t>();
    CHECK(retransmitted > 0);
    // Across UltraServers: all_reduce over every chip, the rest refused with one line.
    for (const char* bad : {"-p collectives.op=all_gather", "-p collectives.chips=0-3", "-p collectives.redop=avg"}) {
        const result b = trn3vp(std::string("run --platform cluster -p 'cluster.*.trays=1' -p 'cluster.*.racks=1' "
                                            "-p 'cluster.*.app=collectives' ") +
                                bad);
        INFO(bad << ": " << b.err);
        CHECK(b.code == 2);
        CHECK_THAT(b.err, Catch::Contains("collectives across 2 UltraServers: all_reduce"));
        CHECK(std::count(b.err.begin(), b.err.end(), '\n') == 1);
    }
}

TEST_CASE("cluster: the all_reduce across three UltraServers: a ring of three over EFA, exact, and timed-only rows "
          "run") {
    // 3 x 4 chips (one host each), fp16 max: pieces in a ring of three; the 64 KiB row is timed only.
    const result r = trn3vp("run --platform cluster -p cluster.ultraservers=3 -p cluster.port_speed=400 "
                            "-p 'cluster.*.trays=1' -p 'cluster.*.racks=1' -p 'cluster.*.app=collectives' "
                            "-p collectives.dtype=fp16 -p collectives.redop=max -p collectives.min_bytes=64 "
                            "-p collectives.max_bytes=64K -p collectives.factor=32 -p collectives.check_max_bytes=2K");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("# cluster.us0: 12 ranks (every chip of 3 UltraServers, 4 each), all_reduce "
                                      "half max, hierarchical across UltraServers"));
    CHECK(count_of(r.out, "of the cluster's 12 ranks; the table is the first UltraServer's") == 2);
    for (const char* row : {"          64           32     half    max     -1", "        2048         1024     half",
                            "       65536        32768     half"})
        CHECK_THAT(r.out, Catch::Contains(row));
    CHECK(count_of(r.out, "      0  ") >= 2);  // the checked rows' #wrong, out of place and in place
    CHECK(count_of(r.out, "    N/A") == 2);  // 64 KiB: timed only
    CHECK_THAT(r.out, Catch::Contains("# Out of bounds values : 0 OK"));
    CHECK_THAT(r.out, Catch::Contains("platform cluster: PASSED"));
}

TEST_CASE("nl32x2 at reduced size boots: every MCU, every link, every host, a verified kernel on every chip") {
    const result r = trn3vp("run --platform nl32x2 -p nl32x2.trays=2 -p boot.fabric_check=all");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("elaboration: 8 chips, 2 hosts, 32 switches, 86 links"));
    // Every pair of chips writes to each other over NeuronLink, through switches and forwarding chips.
    CHECK_THAT(r.out, Catch::Contains("fabric: 56 of 56 chip-to-chip writes over NeuronLink verified (all pairs)"));
    CHECK_THAT(r.out, Catch::Contains("chips up: 8 of 8; kernels verified: 8 of 8"));
    CHECK_THAT(r.out, Catch::Contains("links backplane          64 up of 64, 0 degraded, 0 failed (64 Gen6 x8)"));
    // Each JBOG tray's PCIe 6.0 x16 cable, x8 per chip; the NICs (one per two chips, one per host) at Gen5.
    CHECK_THAT(r.out, Catch::Contains("links host               8 up of 8, 0 degraded, 0 failed (8 Gen6 x8)"));
    CHECK_THAT(r.out, Catch::Contains("links nic                6 up of 6, 0 degraded, 0 failed (6 Gen5 x16)"));
    CHECK_THAT(r.out, Catch::Contains("NICs probed: 6 of 6"));
    CHECK_THAT(r.out, Catch::Contains("platform nl32x2: PASSED"));
}

TEST_CASE("nl72x2 at reduced size boots with Gen3 UALink switches and with the PEX90144 Gen1 alternative too") {
    for (const char* gen : {"1", "3", "1 -p nl72x2.switch_model=pex90144"}) {
        const result r = trn3vp(
            std::string("run --platform nl72x2 -p nl72x2.trays=1 -p boot.fabric_check=all -p nl72x2.switch_gen=") +
            gen);
        INFO(r.out << r.err);
        CHECK(r.code == 0);
        CHECK_THAT(r.out, Catch::Contains("chips up: 8 of 8; kernels verified: 8 of 8"));
        CHECK_THAT(r.out, Catch::Contains("fabric: 56 of 56 chip-to-chip writes over NeuronLink verified (all pairs)"));
        CHECK_THAT(r.out, Catch::Contains("platform nl72x2: PASSED"));
        CHECK_THAT(r.out, Catch::Contains("links host               8 up of 8, 0 degraded, 0 failed (8 Gen5 x16)"));
        if (std::string(gen).find("pex90144") != std::string::npos)
            CHECK_THAT(r.out, Catch::Contains("scale-up switches   96 (80 x pex144-x8, 16 x tray-32)"));
    }
    expect_user_error("run --platform nl32x2 -p nl32x2.switch_model=pex90144",
                      "(NL32x2 with 144-lane switches needs switch_trays=5)");
}

TEST_CASE("16 failed backplane lanes leave every Gen6 SKU at full bandwidth, the 17th reduces it and is reported") {
    // NL32x2 Gen1 (4 switch trays: x8 links with 2 spare lanes each; 5 trays:
    // 8 x8 links and 2 standby ones), NL32x2 Gen2, NL72x2 Gen1 and Gen2 (2
    // standby links of a plane's spare switches).
    for (const char* sku :
         {"nl32x2 -p nl32x2.switch_gen=1", "nl32x2 -p nl32x2.switch_gen=1 -p nl32x2.switch_trays=5",
          "nl32x2 -p nl32x2.switch_gen=2", "nl72x2 -p nl72x2.switch_gen=1", "nl72x2 -p nl72x2.switch_gen=2"}) {
        const std::string platform = std::string(sku).substr(0, 6);
        const std::string base = std::string("run --platform ") + sku + " -p " + platform +
                                 ".trays=1 -p boot.kernels=false -p boot.fabric_check=off -p " + platform +
                                 ".faulty_lanes=";
        const result sixteen = trn3vp(base + "16");
        INFO(sku << "\n" << sixteen.out << sixteen.err);
        CHECK(sixteen.code == 0);
        CHECK_THAT(
            sixteen.out,
            Catch::Contains("backplane: 512 of 512 GB/s per direction, 16 lanes failed, 16 of 16 spare lanes used\n"));
        const result seventeen = trn3vp(base + "17");
        INFO(seventeen.out << seventeen.err);
        CHECK(seventeen.code == 0);
        CHECK_THAT(seventeen.out, Catch::Contains("17 lanes failed, 16 of 16 spare lanes used -- REDUCED"));
    }
}

TEST_CASE("Gen3's spare capacity is one standby x4 UALink port: 4 failed lanes cost nothing, the 5th reduces") {
    const std::string base =
        "run --platform nl72x2 -p nl72x2.switch_gen=3 -p nl72x2.trays=1 -p boot.kernels=false -p boot.fabric_check=off "
        "-p nl72x2.faulty_lanes=";
    CHECK_THAT(trn3vp(base + "4").out,
               Catch::Contains("backplane: 500 of 500 GB/s per direction, 4 lanes failed, 4 of 4 spare lanes used\n"));
    CHECK_THAT(trn3vp(base + "5").out, Catch::Contains("5 lanes failed, 4 of 4 spare lanes used -- REDUCED"));
}

TEST_CASE("more failed lanes than a chip's backplane has, or on a SKU without one, is a user error") {
    const result many = trn3vp("run --platform nl32x2 -p nl32x2.faulty_lanes=81");
    CHECK(many.code == 2);
    CHECK_THAT(many.err, Catch::Contains("nl32x2.faulty_lanes = 81: the first chip has 80 backplane lanes"));
    const result torus = trn3vp("run --platform nl16-torus2d -p nl16_torus2d.faulty_lanes=1");
    CHECK(torus.code == 2);
    CHECK_THAT(torus.err, Catch::Contains("the first chip has 0 backplane lanes"));
}

TEST_CASE("without kernels the fabric check still passes: chips join the fabric only when their routes are in") {
    const result r = trn3vp("run --platform nl32x2 -p boot.kernels=false");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("fabric: 64 of 64 chip-to-chip writes over NeuronLink verified (far pairs)"));
    CHECK_THAT(r.out, Catch::Contains(", 0 dropped"));
    const result torus = trn3vp("run --platform nl16-torus2d -p boot.fabric_check=all -p boot.kernels=false");
    CHECK(torus.code == 0);
    CHECK_THAT(torus.out, Catch::Contains("fabric: 240 of 240 chip-to-chip writes"));
}

TEST_CASE("the torus SKUs boot the same way: nl16-torus2d with every pair of chips writing to each other") {
    const result r = trn3vp("run --platform nl16-torus2d -p boot.fabric_check=all");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("elaboration: 16 chips, 4 hosts, 0 switches, 60 links"));
    CHECK_THAT(r.out, Catch::Contains("fabric: 240 of 240 chip-to-chip writes over NeuronLink verified (all pairs)"));
    CHECK_THAT(r.out, Catch::Contains("links torus              32 up of 32, 0 degraded, 0 failed (32 Gen6 x36)"));
}

TEST_CASE("firmware hangs during operation: the driver notices, resets the MCU, probes again, the work runs again") {
    const std::string base = "run --platform trn3-dev -p trn3dev.app=firmware_recovery ";
    const std::string clean = "faults noticed: 0 by a mailbox timeout, 0 by a restarted firmware; 0 recoveries";
    const result healthy = trn3vp(base);
    INFO(healthy.out << healthy.err);
    CHECK(healthy.code == 0);
    CHECK_THAT(healthy.out, Catch::Contains("8 of 8 items exact on 1 chip(s), 65536 B each; " + clean));

    // The campaign: the firmware hangs at 20 moments spread over the items
    // (3 ms apart); each time a mailbox call times out, the driver resets
    // the MCU from the host and the item runs again: every item exact.
    for (unsigned k = 0; k < 20; ++k) {
        const unsigned hang_us = 3000 + 1511 * k;  // 3.0 to 31.7 ms
        const result r = trn3vp(base +
                                "-p firmware_recovery.items=12 -p firmware_recovery.gap=3ms "
                                "-p trn3dev.chip0.mcu0.hang_at=" +
                                std::to_string(hang_us) + "us");
        INFO(hang_us << " us\n" << r.out << r.err);
        CHECK(r.code == 0);
        CHECK_THAT(r.out, Catch::Contains("12 of 12 items exact on 1 chip(s), 65536 B each; faults noticed: 1 by a "
                                          "mailbox timeout, 0 by a restarted firmware; 1 recoveries, 1 items run "
                                          "again"));
        CHECK_THAT(r.out, Catch::Contains("MCU reset, probed, firmware"));
    }

    // With 30 ms between items the watchdog resets the MCU first (20 ms after
    // its last kick): the next item finds the firmware's uptime behind the
    // host's clock, and the driver recovers the chip all the same.
    const result watchdog = trn3vp(base + "-p firmware_recovery.items=4 -p firmware_recovery.gap=30ms "
                                          "-p trn3dev.chip0.mcu0.hang_at=5ms");
    INFO(watchdog.out << watchdog.err);
    CHECK(watchdog.code == 0);
    CHECK_THAT(watchdog.err, Catch::Contains("watchdog reset"));
    CHECK_THAT(watchdog.out, Catch::Contains("item 1: the firmware restarted (uptime "));
    CHECK_THAT(watchdog.out, Catch::Contains("4 of 4 items exact on 1 chip(s), 65536 B each; faults noticed: 0 by a "
                                             "mailbox timeout, 1 by a restarted firmware; 1 recoveries"));

    // No recovery allowed: the run fails and says where.
    const result given_up = trn3vp(base + "-p firmware_recovery.max_recoveries=0 -p trn3dev.chip0.mcu0.hang_at=5ms");
    INFO(given_up.out << given_up.err);
    CHECK(given_up.code == 1);
    CHECK_THAT(given_up.out,
               Catch::Contains("FAILED: host 0: chip 0 item 3: a mailbox call timed out, after 0 recoveries: gave up"));
    CHECK_THAT(given_up.out, Catch::Contains("platform trn3-dev: FAILED"));
}
