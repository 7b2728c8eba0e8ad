// pcie: a host and a tree of three switches and four exerciser endpoints.
//
//   host (bare: ecam, mmio) ── rc ══ Gen5 x16 ══ gen6-gen5 bridge ══ Gen6 x16 (2 retimers) ══ sw0 (upstream port 0)
//   host_mem (DDR) ── rc.host_mem
//   sw0.1 ══ Gen6 x8 (1 retimer) ══ sw1.0     sw1.1 ══ x8 (1 retimer) ══ ep0     sw1.2 ══ ep1
//   sw0.2 ══ Gen6 x8 (1 retimer) ══ sw2.0     sw2.1 ══ x8 (1 retimer) ══ ep2     sw2.2 ══ ep3
//   each endpoint: BAR0 registers (1 MiB), BAR2 memory (1 GiB), BAR4 MSI-X; a DMA socket the bench drives
//
// The platform is a PCIe test bench (apps/pcie_bench.h): the endpoints are
// exercisers and the root has an analyzer. Its host runs the program
// `pcie.app` names (default pcie_checks: enumeration, UR, MSI-X, P2P, ACS).
#include <memory>

#include <fmt/format.h>
#include <tlm_utils/simple_initiator_socket.h>

#include "trn3/apps/pcie_bench.h"
#include "trn3/core/message_link.h"
#include "trn3/core/payload.h"
#include "trn3/core/sparse_memory.h"
#include "trn3/pcie/endpoint.h"
#include "trn3/pcie/link.h"
#include "trn3/pcie/pcie_switch.h"
#include "trn3/pcie/rate_bridge.h"
#include "trn3/pcie/root_complex.h"
#include "trn3/platforms/bare_host.h"
#include "trn3/platforms/host_platform.h"
#include "trn3/spec/host.h"

namespace trn3 {
namespace {

using pcie::generation;
using pcie::link_config;
using pcie::switch_config;

constexpr unsigned exerciser_count = 4;

// An exerciser: an endpoint with register and memory BARs and a DMA socket.
struct exerciser {
    pcie::link link;
    pcie::endpoint ep;
    sparse_memory regs, mem;
    tlm_utils::simple_initiator_socket<exerciser> dma;
    exerciser(unsigned i, delivery_queue& q)
        : link(fmt::format("ep{}_link", i).c_str(), q, 10 + 2 * i, 11 + 2 * i,
               link_config{generation::gen6, 8}.with_retimers(1)),
          ep(fmt::format("ep{}", i).c_str()), regs(fmt::format("regs{}", i).c_str(), byte_count{1 << 20}),
          mem(fmt::format("mem{}", i).c_str(), byte_count{1ull << 30}), dma(fmt::format("engine{}", i).c_str()) {
        ep.attach(link.b());
        ep.bar0.bind(regs.in);
        ep.bar2.bind(mem.in);
        dma.bind(ep.dma);
    }
};

class pcie_platform final : public host_platform, private apps::pcie_bench {
public:
    // Wiring: ids of the link ends follow the tree (port ids, decision 3).
    delivery_queue queue{"queue"};
    sparse_memory host_mem{"host_mem", byte_count{1ull << 30}};
    pcie::root_complex rc{"rc"};
    pcie::rate_bridge bridge{"bridge"};
    // 160-lane switches with only the ports the tree uses: sw0 with x16 ports
    // (its upstream link is x16), sw1 and sw2 with x8 ports.
    pcie::pcie_switch sw0{"sw0", switch_config{"gen1-160"}.with_ports(3).with_port_lanes(16)};
    pcie::pcie_switch sw1{"sw1", switch_config{"gen1-160"}.with_ports(3).with_port_lanes(8)};
    pcie::pcie_switch sw2{"sw2", switch_config{"gen1-160"}.with_ports(3).with_port_lanes(8)};
    pcie::link host_link{"host_link", queue, 1, 2, link_config{generation::gen5, 16}};
    pcie::link up_link{"up_link", queue, 3, 4, link_config{generation::gen6, 16}.with_retimers(2)};
    pcie::link l_sw1{"sw0_sw1", queue, 5, 6, link_config{generation::gen6, 8}.with_retimers(1)};
    pcie::link l_sw2{"sw0_sw2", queue, 7, 8, link_config{generation::gen6, 8}.with_retimers(1)};
    std::vector<std::unique_ptr<exerciser>> eps;
    bare_host host{"host"};

    explicit pcie_platform(const sc_core::sc_module_name& name) : host_platform(name, "pcie_checks") {
        for (unsigned i = 0; i < exerciser_count; ++i) eps.push_back(std::make_unique<exerciser>(i, queue));
        host.cpu_ecam.bind(rc.ecam);
        host.cpu_mmio.bind(rc.mmio);
        rc.host_mem.bind(host_mem.in);
        rc.msi = [this](std::uint32_t data, std::uint16_t requester) {
            msis_.push_back({data, requester, sc_core::sc_time_stamp().value()});
        };
        rc.attach(0, host_link.a());
        bridge.attach(host_link.b(), up_link.a());
        sw0.attach(0, up_link.b());
        sw0.attach(1, l_sw1.a());
        sw1.attach(0, l_sw1.b());
        sw0.attach(2, l_sw2.a());
        sw2.attach(0, l_sw2.b());
        pcie::pcie_switch* leaf[] = {&sw1, &sw1, &sw2, &sw2};
        for (unsigned i = 0; i < exerciser_count; ++i) leaf[i]->attach(1 + i % 2, eps[i]->link.a());

        apps::host_info h;
        h.ops = &host;
        h.pci_windows = {TRN3_BENCH_MMIO32_BASE, TRN3_BENCH_MMIO32_SIZE, TRN3_BENCH_MMIO64_BASE,
                         TRN3_BENCH_MMIO64_SIZE};
        apps::host_system s;
        s.hosts.push_back(h);
        s.pcie = this;
        make_program(std::move(s));
        sc_core::sc_spawn([this] { program().run(0); }, "host_software");
    }

private:
    // ---- the bench -----------------------------------------------------------
    unsigned exercisers() const override { return exerciser_count; }
    apps::bench_response dma(unsigned i, bool write, std::uint64_t address, void* data, std::size_t bytes) override {
        const tlm::tlm_response_status r = access_and_wait(
            eps[i]->dma.operator->(), write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND, address, data, bytes);
        if (r == tlm::TLM_OK_RESPONSE) return apps::bench_response::ok;
        return r == tlm::TLM_ADDRESS_ERROR_RESPONSE ? apps::bench_response::address_error
                                                    : apps::bench_response::other_error;
    }
    void raise_msix(unsigned i, unsigned vector) override { eps[i]->ep.raise_msix(vector); }
    const std::uint8_t* exerciser_memory(unsigned i) const override { return eps[i]->mem.data(); }
    const std::uint8_t* host_memory() const override { return host_mem.data(); }
    const std::vector<apps::msi_record>& msis() const override { return msis_; }
    std::uint64_t config_requests() const override { return rc.config_requests(); }
    std::uint64_t config_retries() const override { return rc.crs_retries(); }
    std::uint64_t reflected() const override { return rc.reflected(); }

    std::vector<apps::msi_record> msis_;
};

const platform_registration reg{"pcie",
                                "a host, three PCIe switches and four endpoints: enumeration, UR, MSI-X, P2P, ACS",
                                [] { return std::make_unique<pcie_platform>("pcie"); }};

}  // namespace
}  // namespace trn3
