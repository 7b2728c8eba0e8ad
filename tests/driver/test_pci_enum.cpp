// The driver's PCI walker (sw/driver pci_enum): bus numbers, BAR sizing and
// placement, bridge windows, running out of addresses or buses, and the
// lspci listing, over real PCIe hierarchies (a Graviton4's root complex,
// switches and endpoints joined by links). Only the malformed
// configuration spaces no model produces use an in-memory config_access.
#include <catch2/catch.hpp>

#include <map>
#include <memory>

#include <fmt/format.h>

#include "../pcie/rig.h"
#include "trn3/driver/pci_enum.h"
#include "trn3/host/graviton4.h"
#include "trn3/pcie/rate_bridge.h"
#include "trn3/platforms/host_adapter.h"

using namespace trn3;
using driver::pci_function;

namespace {

constexpr std::uint64_t mem32_base = 0xE0000000ull, mem64_base = 0x4000000000ull;
const driver::address_pool pools{mem32_base, 0x10000000ull, mem64_base, 1ull << 40};

// A host and what hangs below its root port, built by the test:
//   host0.rc ══ Gen5 x16 ══ bridge ══ root_side() (Gen6, `lanes`) ══ the first device
struct tree {
    delivery_queue queue{"queue"};
    host::graviton4 host0{"host0"};
    host_adapter adapter{host0};
    pcie::rate_bridge bridge{"bridge"};
    std::vector<std::unique_ptr<pcie::link>> links;
    std::vector<std::unique_ptr<pcie::pcie_switch>> switches;
    std::vector<std::unique_ptr<rig::device>> endpoints;
    std::vector<pci_function> found;

    explicit tree(unsigned lanes = 16) {
        host0.rc.attach(0, link(pcie::generation::gen5, 16).a());
        bridge.attach(links[0]->b(), link(pcie::generation::gen6, lanes).a());
    }
    pcie::link& link(pcie::generation g, unsigned lanes) {
        const std::uint64_t id = 2 * links.size() + 1;
        links.push_back(std::make_unique<pcie::link>(fmt::format("link{}", links.size()).c_str(), queue, id, id + 1,
                                                     pcie::link_config{g, lanes}));
        return *links.back();
    }
    pcie::link_end& root_side() { return links[1]->b(); }
    // A new link below switch `sw`'s port: its far end.
    pcie::link_end& below(pcie::pcie_switch& sw, unsigned port, unsigned lanes = 8) {
        pcie::link& l = link(pcie::generation::gen6, lanes);
        sw.attach(port, l.a());
        return l.b();
    }
    pcie::pcie_switch& add_switch(pcie::link_end& up, const char* preset, unsigned ports, unsigned lanes) {
        switches.push_back(
            std::make_unique<pcie::pcie_switch>(fmt::format("sw{}", switches.size()).c_str(),
                                                pcie::switch_config{preset}.with_ports(ports).with_port_lanes(lanes)));
        switches.back()->attach(0, up);
        return *switches.back();
    }
    rig::device& add_endpoint(pcie::link_end& up) {
        endpoints.push_back(std::make_unique<rig::device>(fmt::format("ep{}", endpoints.size()).c_str()));
        endpoints.back()->ep.attach(up);
        return *endpoints.back();
    }

    driver::config_access& cfg() { return adapter.config(); }
    // Runs `body` as the host's software once the root port's link is up.
    void run(const std::function<void()>& body) {
        bool done = false;
        host0.run("software", [&] {
            while (!(cfg().read(0, TRN3_PCI_PCIE_CAP + TRN3_PCIE_LINK_STATUS, 2) & TRN3_PCIE_LINK_DL_ACTIVE))
                adapter.sleep_ns(1000);
            adapter.sleep_ns(100'000);  // the links below have trained too
            body();
            done = true;
            sc_core::sc_stop();
        });
        sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC));
        REQUIRE(done);
    }
    // Enumerates with `pool`; the walker's error text, or "" if it succeeded.
    std::string enumerate(const driver::address_pool& pool = pools) {
        std::string error;
        run([&] {
            try {
                found = driver::enumerate(cfg(), pool);
            } catch (const std::runtime_error& e) {
                error = e.what();
            }
        });
        return error;
    }
    const pci_function& at(std::uint16_t bdf) const {
        for (const auto& f : found)
            if (f.bdf == bdf) return f;
        FAIL("no function " << driver::bdf_name(bdf));
        throw;
    }
};

// The tree most cases use:
//   root port 00:00.0 ══ sw0 (4 ports x16): port 1 ══ ep0
//                                           port 2 ══ sw1 (3 ports x8): port 1 ══ ep1, port 2 ══ ep2
//                                           port 3: nothing
struct small_tree : tree {
    pcie::pcie_switch& sw0 = add_switch(root_side(), "gen1-160", 4, 16);
    rig::device& ep0 = add_endpoint(below(sw0, 1));
    pcie::pcie_switch& sw1 = add_switch(below(sw0, 2), "gen1-160", 3, 8);
    rig::device& ep1 = add_endpoint(below(sw1, 1));
    rig::device& ep2 = add_endpoint(below(sw1, 2));
};

constexpr std::uint16_t bdf(unsigned bus, unsigned dev, unsigned fn) { return TRN3_PCI_BDF(bus, dev, fn); }

void check_bridge(const pci_function& f, unsigned secondary, unsigned subordinate) {
    INFO(driver::bdf_name(f.bdf));
    CHECK(f.bridge);
    CHECK(f.secondary == secondary);
    CHECK(f.subordinate == subordinate);
}

void check_windows(const pci_function& f, std::uint64_t mem_base, std::uint64_t mem_limit, std::uint64_t pref_base,
                   std::uint64_t pref_limit) {
    INFO(driver::bdf_name(f.bdf));
    CHECK(f.mem_base == mem_base);
    CHECK(f.mem_limit == mem_limit);
    CHECK(f.pref_base == pref_base);
    CHECK(f.pref_limit == pref_limit);
}

void check_bar(const pci_function& f, std::size_t i, int index, std::uint64_t base, std::uint64_t size, bool pref) {
    INFO(driver::bdf_name(f.bdf) << " BAR" << index);
    REQUIRE(f.bars.size() > i);
    CHECK(f.bars[i].index == index);
    CHECK(f.bars[i].base == base);
    CHECK(f.bars[i].size == size);
    CHECK(f.bars[i].is64);
    CHECK(f.bars[i].prefetchable == pref);
}

}  // namespace

TEST_CASE(
    "buses are numbered depth first: each bridge's secondary is the next free bus, its subordinate the last one below") {
    small_tree t;
    REQUIRE(t.enumerate() == "");
    std::vector<std::uint16_t> order;
    for (const auto& f : t.found) order.push_back(f.bdf);
    // root port, sw0 up, its downstream ports 0-2 each followed by what is below.
    const std::vector<std::uint16_t> expected = {bdf(0, 0, 0), bdf(1, 0, 0), bdf(2, 0, 0), bdf(3, 0, 0),
                                                 bdf(2, 1, 0), bdf(4, 0, 0), bdf(5, 0, 0), bdf(6, 0, 0),
                                                 bdf(5, 1, 0), bdf(7, 0, 0), bdf(2, 2, 0)};
    CHECK(order == expected);
    check_bridge(t.at(bdf(0, 0, 0)), 1, 8);
    check_bridge(t.at(bdf(1, 0, 0)), 2, 8);
    check_bridge(t.at(bdf(2, 0, 0)), 3, 3);
    check_bridge(t.at(bdf(2, 1, 0)), 4, 7);
    check_bridge(t.at(bdf(4, 0, 0)), 5, 7);
    check_bridge(t.at(bdf(5, 0, 0)), 6, 6);
    check_bridge(t.at(bdf(5, 1, 0)), 7, 7);
    check_bridge(t.at(bdf(2, 2, 0)), 8, 8);  // a port with nothing below still has its bus
    // The bridges hold what the walker says, and each endpoint took its bus and device number.
    CHECK(t.sw1.port_config(0).secondary_bus() == 5);
    CHECK(t.sw1.port_config(0).subordinate_bus() == 7);
    CHECK(t.sw0.port_config(2).secondary_bus() == 4);
    CHECK(t.ep0.ep.bdf() == bdf(3, 0, 0));
    CHECK(t.ep2.ep.bdf() == bdf(7, 0, 0));
    CHECK(t.at(bdf(3, 0, 0)).parent == 2);
    CHECK(t.at(bdf(7, 0, 0)).depth == 5);
}

TEST_CASE(
    "BARs are sized and placed: 64-bit prefetchable ones from the 64-bit pool, the others below 4 GiB, each aligned to its size") {
    param_registry::instance().set_pending_text("ep0.ep.bar0_size", "4KiB", "test");
    param_registry::instance().set_pending_text("ep1.ep.bar2_size", "2GiB", "test");
    small_tree t;
    REQUIRE(t.enumerate() == "");
    const pci_function& ep0 = t.at(bdf(3, 0, 0));
    REQUIRE(ep0.bars.size() == 3);
    check_bar(ep0, 0, 0, 0xE0000000ull, 4096, false);
    check_bar(ep0, 1, 2, 0x4000000000ull, 1ull << 30, true);
    check_bar(ep0, 2, 4, 0xE0010000ull, 64 << 10, false);  // 64 KiB aligned, not right after BAR0
    const pci_function& ep1 = t.at(bdf(6, 0, 0));
    check_bar(ep1, 0, 0, 0xE0100000ull, 1 << 20, false);  // the next bridge window starts at a 1 MiB boundary
    check_bar(ep1, 1, 2, 0x4080000000ull, 2ull << 30, true);  // 2 GiB aligned
    check_bar(ep1, 2, 4, 0xE0200000ull, 64 << 10, false);
    const pci_function& ep2 = t.at(bdf(7, 0, 0));
    check_bar(ep2, 0, 0, 0xE0300000ull, 1 << 20, false);
    check_bar(ep2, 1, 2, 0x4100000000ull, 1ull << 30, true);
    check_bar(ep2, 2, 4, 0xE0400000ull, 64 << 10, false);
    // The endpoints' configuration spaces hold the addresses.
    CHECK(t.ep1.ep.config().bar_address(2) == 0x4080000000ull);
    CHECK(t.ep0.ep.config().bar_address(4) == 0xE0010000ull);
    // Bridges and root port have no BARs.
    CHECK(t.at(bdf(0, 0, 0)).bars.empty());
    CHECK(t.at(bdf(2, 1, 0)).bars.empty());
}

TEST_CASE(
    "bridge windows cover exactly what lies below them at 1 MiB granularity, and a window with nothing below is closed") {
    small_tree t;
    REQUIRE(t.enumerate() == "");
    check_windows(t.at(bdf(2, 0, 0)), 0xE0000000ull, 0xE01FFFFFull, 0x4000000000ull, 0x403FFFFFFFull);
    check_windows(t.at(bdf(5, 0, 0)), 0xE0200000ull, 0xE03FFFFFull, 0x4040000000ull, 0x407FFFFFFFull);
    check_windows(t.at(bdf(5, 1, 0)), 0xE0400000ull, 0xE05FFFFFull, 0x4080000000ull, 0x40BFFFFFFFull);
    check_windows(t.at(bdf(4, 0, 0)), 0xE0200000ull, 0xE05FFFFFull, 0x4040000000ull, 0x40BFFFFFFFull);
    check_windows(t.at(bdf(2, 1, 0)), 0xE0200000ull, 0xE05FFFFFull, 0x4040000000ull, 0x40BFFFFFFFull);
    check_windows(t.at(bdf(1, 0, 0)), 0xE0000000ull, 0xE05FFFFFull, 0x4000000000ull, 0x40BFFFFFFFull);
    check_windows(t.at(bdf(0, 0, 0)), 0xE0000000ull, 0xE05FFFFFull, 0x4000000000ull, 0x40BFFFFFFFull);
    const pci_function& empty = t.at(bdf(2, 2, 0));
    CHECK(empty.mem_base > empty.mem_limit);
    CHECK(empty.pref_base > empty.pref_limit);
    // What the bridges decode: sw1's downstream port 1 routes ep2's BARs and nothing of ep1's.
    pcie::config_space& p = t.sw1.port_config(2);
    CHECK(p.routes_address(0xE0400000ull));
    CHECK(p.routes_address(0x40BFFFFFFFull));
    CHECK_FALSE(p.routes_address(0xE03FFFFFull));
    CHECK_FALSE(p.routes_address(0x407FFFFFFFull));
    CHECK_FALSE(t.sw0.port_config(3).routes_address(0xE0600000ull));
}

TEST_CASE("a 64-bit pool too small for the prefetchable BARs: enumeration fails with one line naming the BAR") {
    small_tree t;
    CHECK(t.enumerate({mem32_base, 0x10000000ull, mem64_base, 2ull << 30}) ==
          "PCI enumeration: 64-bit memory pool exhausted (BAR2 of 07:00.0 needs 1G)");
}

TEST_CASE("a 32-bit pool too small for the other BARs: enumeration fails with one line naming the BAR") {
    small_tree t;
    CHECK(t.enumerate({mem32_base, 3ull << 20, mem64_base, 1ull << 40}) ==
          "PCI enumeration: 32-bit memory pool exhausted (BAR4 of 06:00.0 needs 64K)");
}

TEST_CASE("a pool that holds the BARs but not a bridge window rounded up to 1 MiB: the error names the bridge") {
    small_tree t;
    // ep0's BAR0 (1 MiB) and BAR4 (64 KiB) fit exactly; 02:00.0's window would end at the next 1 MiB.
    CHECK(t.enumerate({mem32_base, (1ull << 20) + (64 << 10), mem64_base, 1ull << 40}) ==
          "PCI enumeration: 32-bit memory pool exhausted (window of bridge 02:00.0)");
}

TEST_CASE("a 32-bit pool that reaches above 4 GiB is refused with one line, and nothing is enumerated") {
    small_tree t;
    CHECK(t.enumerate({0xFFF00000ull, 2ull << 20, mem64_base, 1ull << 40}) ==
          "PCI enumeration: the 32-bit memory pool must lie below 4 GiB");
    CHECK(t.found.empty());
}

TEST_CASE("every function ends with Memory Space and Bus Master on, and memory decoding is off while a BAR is sized") {
    small_tree t;
    // Records the walker's accesses on their way to the real configuration space.
    struct recorder final : driver::config_access {
        driver::config_access& real;
        std::map<std::uint16_t, std::uint32_t> command;  // the last command written, per function
        int sized_while_decoding = 0, sized = 0;
        explicit recorder(driver::config_access& r) : real(r) {}
        std::uint32_t read(std::uint16_t b, std::uint16_t off, unsigned n) override { return real.read(b, off, n); }
        void write(std::uint16_t b, std::uint16_t off, unsigned n, std::uint32_t v) override {
            if (off == TRN3_PCI_COMMAND) command[b] = v;
            if (off >= TRN3_PCI_BAR(0) && off < TRN3_PCI_BAR(6) && v == 0xFFFFFFFFu) {
                ++sized;
                if (command.count(b) == 0 || (command[b] & TRN3_PCI_COMMAND_MEMORY)) ++sized_while_decoding;
            }
            real.write(b, off, n, v);
        }
    };
    recorder rec(t.cfg());
    std::vector<std::uint32_t> commands;
    t.run([&] {
        t.found = driver::enumerate(rec, pools);
        for (const auto& f : t.found) commands.push_back(t.cfg().read(f.bdf, TRN3_PCI_COMMAND, 2));
    });
    // Three endpoints with three 64-bit BARs (two halves each), and eight bridges whose two BAR
    // slots are unimplemented (they read back 0 and are left alone).
    CHECK(rec.sized == 3 * 3 * 2 + 8 * 2);
    CHECK(rec.sized_while_decoding == 0);
    REQUIRE(commands.size() == 11);
    for (std::uint32_t c : commands)
        CHECK((c & (TRN3_PCI_COMMAND_MEMORY | TRN3_PCI_COMMAND_BUS_MASTER)) ==
              (TRN3_PCI_COMMAND_MEMORY | TRN3_PCI_COMMAND_BUS_MASTER));
}

TEST_CASE(
    "a switch with more than 32 downstream ports: functions 1 of devices 0-6 are found because function 0 says multi-function") {
    tree t(8);
    t.add_switch(t.root_side(), "gen2-320", 40, 8);  // 39 downstream ports: 02:00.0-02:1f.0 and 02:00.1-02:06.1
    REQUIRE(t.enumerate() == "");
    CHECK(t.found.size() == 1 + 1 + 39);
    unsigned fn1 = 0;
    for (const auto& f : t.found)
        if (TRN3_PCI_BDF_BUS(f.bdf) == 2 && TRN3_PCI_BDF_FN(f.bdf) == 1) ++fn1;
    CHECK(fn1 == 7);
    CHECK(t.at(bdf(2, 6, 1)).port_type == TRN3_PCIE_TYPE_DOWNSTREAM);
    check_bridge(t.at(bdf(2, 0, 0)), 3, 3);
    check_bridge(t.at(bdf(2, 0, 1)), 4, 4);  // function 1 right after function 0 of the same device
    check_bridge(t.at(bdf(2, 1, 0)), 5, 5);
    check_bridge(t.at(bdf(1, 0, 0)), 2, 41);
}

TEST_CASE(
    "a hierarchy needing more than 255 buses: enumeration fails with one line naming the bridge where they ran out") {
    tree t(8);
    pcie::pcie_switch& top = t.add_switch(t.root_side(), "gen2-320", 40, 8);
    for (unsigned p = 1; p <= 6; ++p) t.add_switch(t.below(top, p), "gen2-320", 40, 8);  // 41 buses each
    // Bus 2 in walk order: 02:00.0 (a switch: buses 3-43), 02:00.1 (44), 02:01.0 (45-85), 02:01.1 (86), ...,
    // 02:05.0 (213-253), 02:05.1 (254), 02:06.0 (255), 02:06.1: none left.
    CHECK(t.enumerate() == "PCI enumeration: out of bus numbers (more than 255 buses needed at 02:06.1)");
}

TEST_CASE("lspci prints one line per function, indented by depth: ids, kind, buses, windows, BARs, MSI-X and link") {
    small_tree t;
    REQUIRE(t.enumerate() == "");
    // An endpoint's maximum is its link's width (the model sets Link Capabilities when it is attached).
    const std::string ep_link = "Gen6 64GT/s x8 (max Gen6 64GT/s x8) flit DLActive";
    const std::string bars = " BAR0 {:#x} [64-bit 1M] BAR2 {:#x} [64-bit pref 1G] BAR4 {:#x} [64-bit 64K] MSI-X 32  ";
    const std::string expected =
        "00:00.0 [1d0f:7f00] PCI bridge (root port) bus 01-08 mem 0xe0000000-0xe05fffff pref 0x4000000000-0x40bfffffff"
        "  Gen5 32GT/s x16 (max Gen5 32GT/s x16) DLActive\n"
        "  01:00.0 [1d0f:7f10] PCI bridge (upstream) bus 02-08 mem 0xe0000000-0xe05fffff pref 0x4000000000-0x40bfffffff"
        "  Gen6 64GT/s x16 (max Gen6 64GT/s x16) flit DLActive\n"
        "    02:00.0 [1d0f:7f11] PCI bridge (downstream) bus 03-03 mem 0xe0000000-0xe01fffff pref 0x4000000000-0x403fffffff  "
        "Gen6 64GT/s x8 (max Gen6 64GT/s x16) flit DLActive\n"
        "      03:00.0 [1d0f:7ff0] accelerator" +
        fmt::format(bars, 0xE0000000ull, 0x4000000000ull, 0xE0100000ull) + ep_link +
        "\n"
        "    02:01.0 [1d0f:7f11] PCI bridge (downstream) bus 04-07 mem 0xe0200000-0xe05fffff pref 0x4040000000-0x40bfffffff  "
        "Gen6 64GT/s x8 (max Gen6 64GT/s x16) flit DLActive\n"
        "      04:00.0 [1d0f:7f10] PCI bridge (upstream) bus 05-07 mem 0xe0200000-0xe05fffff pref 0x4040000000-0x40bfffffff  "
        "Gen6 64GT/s x8 (max Gen6 64GT/s x8) flit DLActive\n"
        "        05:00.0 [1d0f:7f11] PCI bridge (downstream) bus 06-06 mem 0xe0200000-0xe03fffff pref 0x4040000000-0x407fffffff  "
        "Gen6 64GT/s x8 (max Gen6 64GT/s x8) flit DLActive\n"
        "          06:00.0 [1d0f:7ff0] accelerator" +
        fmt::format(bars, 0xE0200000ull, 0x4040000000ull, 0xE0300000ull) + ep_link + "\n" +
        "        05:01.0 [1d0f:7f11] PCI bridge (downstream) bus 07-07 mem 0xe0400000-0xe05fffff pref 0x4080000000-0x40bfffffff  "
        "Gen6 64GT/s x8 (max Gen6 64GT/s x8) flit DLActive\n"
        "          07:00.0 [1d0f:7ff0] accelerator" +
        fmt::format(bars, 0xE0400000ull, 0x4080000000ull, 0xE0500000ull) + ep_link + "\n" +
        "    02:02.0 [1d0f:7f11] PCI bridge (downstream) bus 08-08 mem closed pref closed  "
        "Gen? (speed code 0) x0 (max Gen6 64GT/s x16)\n";
    CHECK(driver::lspci(t.found) == expected);
}

// ---- Malformed configuration spaces: no model builds these, so the walker
// reads them from memory (pcie::config_space filled by hand).

namespace {

struct in_memory_config final : driver::config_access {
    std::map<std::uint16_t, pcie::config_space> functions;
    unsigned reads = 0;
    std::uint32_t read(std::uint16_t b, std::uint16_t off, unsigned n) override {
        ++reads;
        auto it = functions.find(b);
        if (it == functions.end()) return n == 4 ? 0xFFFFFFFFu : (1u << (8 * n)) - 1;  // no function: all ones
        return it->second.read(off, n);
    }
    void write(std::uint16_t b, std::uint16_t off, unsigned n, std::uint32_t v) override {
        auto it = functions.find(b);
        if (it != functions.end()) it->second.write(off, n, v);
    }
    // Function 00:00.0, a bare accelerator header for the test to complete.
    pcie::config_space& accelerator() {
        pcie::config_space& c = functions[0];
        c.init_type0(TRN3_PCI_VENDOR_AMAZON, TRN3_PCI_DEVICE_TEST_EP, TRN3_PCI_CLASS_ACCELERATOR, 1);
        return c;
    }
};

}  // namespace

TEST_CASE("a capability list that loops ends after 48 entries and the capabilities on it are still found") {
    in_memory_config cfg;
    pcie::config_space& c = cfg.accelerator();
    c.init_pcie_cap(TRN3_PCIE_TYPE_ENDPOINT, TRN3_PCIE_SPEED_GEN6, 16);
    c.add_capability(TRN3_PCI_CAP_ID_MSIX, TRN3_PCI_MSIX_CAP);
    c.init(TRN3_PCI_MSIX_CAP + TRN3_MSIX_CONTROL, 2, 7);  // 8 entries
    c.init(TRN3_PCI_MSIX_CAP + TRN3_PCI_CAP_NEXT, 1,
           TRN3_PCI_PCIE_CAP);  // MSI-X's next pointer back to the PCIe capability
    const std::vector<pci_function> found = driver::enumerate(cfg, pools);
    REQUIRE(found.size() == 1);
    CHECK(found[0].port_type == TRN3_PCIE_TYPE_ENDPOINT);
    CHECK(found[0].max_speed == TRN3_PCIE_SPEED_GEN6);
    CHECK(found[0].msix_vectors == 8);
    CHECK(cfg.reads <
          32 * 2 + 48 + 40);  // bounded: the scan of bus 0, 48 capability headers, the header and PCIe fields
}

TEST_CASE("a 64-bit BAR in the last slot has no upper half: the walker leaves it alone and assigns the others") {
    in_memory_config cfg;
    pcie::config_space& c = cfg.accelerator();
    c.init_bar64(0, 1 << 20, false);
    c.init(TRN3_PCI_BAR(5), 4, TRN3_PCI_BAR_MEM64, 0xFFFFF000u);  // BAR5 says 64-bit
    const std::vector<pci_function> found = driver::enumerate(cfg, pools);
    REQUIRE(found.size() == 1);
    REQUIRE(found[0].bars.size() == 1);
    CHECK(found[0].bars[0].index == 0);
    CHECK(found[0].bars[0].base == mem32_base);
    CHECK(c.read(TRN3_PCI_BAR0 + 20, 4) == TRN3_PCI_BAR_MEM64);  // never sized or assigned
}
