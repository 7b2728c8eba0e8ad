// Two Graviton4 hosts, each with a Nitro NIC on its root port, the NICs'
// four Ethernet ports on one ToR switch; each host's software runs on its
// own host (tests/nic, tests/fabric).
#pragma once

#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "trn3/driver/nic_device.h"
#include "trn3/driver/pci_enum.h"
#include "trn3/ethernet/eth_switch.h"
#include "trn3/host/graviton4.h"
#include "trn3/nic/nitro_nic.h"
#include "trn3/pcie/link.h"
#include "trn3/platforms/host_adapter.h"

namespace trn3::test {

constexpr std::uint64_t node_a = 0x0A, node_b = 0x0B;
constexpr std::uint32_t pd_a = 7, pd_b = 9;

struct side {
    host::graviton4 host;
    pcie::link link;
    nic::nitro_nic nic;
    host_adapter adapter{host};
    driver::nic_device dev{adapter};
    side(const char* name, delivery_queue& q, std::uint64_t node, std::uint64_t ids)
        : host((std::string(name) + "_host").c_str()),
          link((std::string(name) + "_pcie").c_str(), q, ids, ids + 1, pcie::link_config{pcie::generation::gen5, 16}),
          nic((std::string(name) + "_nic").c_str(), node, ids + 10) {
        host.rc.attach(0, link.a());
        nic.ep.attach(link.b());
    }
    std::vector<driver::pci_function> functions;
    // Enumerates (after the link trains), probes the NIC, makes queue pair 0.
    void bring_up(std::uint32_t pd) {
        enumerate_only();
        REQUIRE(dev.probe(functions) == driver::status::ok);
        REQUIRE(dev.create_qp(0, pd) == driver::status::ok);
    }
    void enumerate_only() {
        auto& cfg = adapter.config();
        while (!(cfg.read(0, TRN3_PCI_PCIE_CAP + TRN3_PCIE_LINK_STATUS, 2) & TRN3_PCIE_LINK_DL_ACTIVE))
            adapter.sleep_ns(1000);
        functions = driver::enumerate(cfg, {0xE0000000ull, 0x10000000ull, 0x100000000000ull, 1ull << 40});
    }
};

struct rig {
    delivery_queue queue{"queue"};
    side a{"a", queue, node_a, 100}, b{"b", queue, node_b, 200};
    ethernet::eth_switch tor{"tor", 4, 300};
    std::vector<std::unique_ptr<message_link>> cables;

    rig() {
        const bandwidth rate{200e9 / 8};
        const sc_core::sc_time cable(10, sc_core::SC_NS);
        for (unsigned p = 0; p < 2; ++p) {
            cables.push_back(std::make_unique<message_link>(("cable_a" + std::to_string(p)).c_str(), queue,
                                                            a.nic.srd.port(p), tor.port(p), cable, rate));
            tor.connect(p, *cables.back());
            cables.push_back(std::make_unique<message_link>(("cable_b" + std::to_string(p)).c_str(), queue,
                                                            b.nic.srd.port(p), tor.port(2 + p), cable, rate));
            tor.connect(2 + p, *cables.back());
        }
        tor.set_route(node_a, {0, 1});
        tor.set_route(node_b, {2, 3});
    }
    // Runs each host's software and the simulation until both return.
    void run(const std::function<void()>& on_a, const std::function<void()>& on_b,
             sc_core::sc_time limit = sc_core::sc_time(50, sc_core::SC_MS)) {
        bool done_a = false, done_b = false;
        a.host.run("software", [&] {
            on_a();
            done_a = true;
            if (done_b) sc_core::sc_stop();
        });
        b.host.run("software", [&] {
            on_b();
            done_b = true;
            if (done_a) sc_core::sc_stop();
        });
        sc_core::sc_start(limit);
        REQUIRE(done_a);
        REQUIRE(done_b);
    }
};

}  // namespace trn3::test
