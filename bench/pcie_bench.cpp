// PCIe fabric speed: TLPs and bytes of simulated traffic per wall second
// through a three-switch path, TLP by TLP and as aggregates.
//
//   ep_a ══ x8 (retimer) ══ sw_a ══ x8 ══ sw_b ══ x8 ══ sw_c ══ x8 (retimer) ══ ep_b
//
// ep_a's DMA engine writes a buffer into ep_b's BAR2 (256-B MWr TLPs), then
// reads 4 bytes back (a read does not pass the writes: it ends when they
// have all landed). Each mode runs three rounds; the medians are printed.
//
//   build/release/bench/pcie_bench [--quick]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>

#include "trn3/core/entry.h"
#include "trn3/core/message_link.h"
#include "trn3/core/param.h"
#include "trn3/core/payload.h"
#include "trn3/core/sparse_memory.h"
#include "trn3/pcie/endpoint.h"
#include "trn3/pcie/link.h"
#include "trn3/pcie/pcie_switch.h"
#include "trn3/spec/pci.h"

using namespace trn3;
using sc_core::sc_time;

namespace {

constexpr std::uint64_t base_a = 0x1000000000ull, base_b = 0x2000000000ull;  // 64 GiB apart

pcie::link_config x8(unsigned retimers) {
    pcie::link_config c;
    c.lanes = 8;
    c.retimers = retimers;
    return c;
}

// Port p of a fabric switch leads to the device at `base` on bus `bus`.
void route(pcie::pcie_switch& sw, unsigned p, std::uint64_t base, unsigned bus) {
    pcie::config_space& c = sw.port_config(p);
    const std::uint64_t limit = base + (1ull << 36) - 1;
    c.write(TRN3_PCI_PREF_MEMORY_BASE, 2, static_cast<std::uint32_t>((base >> 16) & 0xFFF0));
    c.write(TRN3_PCI_PREF_MEMORY_LIMIT, 2, static_cast<std::uint32_t>((limit >> 16) & 0xFFF0));
    c.write(TRN3_PCI_PREF_BASE_UPPER, 4, static_cast<std::uint32_t>(base >> 32));
    c.write(TRN3_PCI_PREF_LIMIT_UPPER, 4, static_cast<std::uint32_t>(limit >> 32));
    c.write(TRN3_PCI_PRIMARY_BUS, 4, (bus << 8) | (bus << 16));
}

void place(pcie::endpoint& ep, std::uint64_t base, std::uint16_t bdf) {
    pcie::config_space& c = ep.config();
    for (unsigned bar = 0; bar < 3; ++bar) {
        const std::uint64_t a = base + (std::uint64_t(bar) << 31);
        c.write(static_cast<std::uint16_t>(TRN3_PCI_BAR0 + 8 * bar), 4, static_cast<std::uint32_t>(a));
        c.write(static_cast<std::uint16_t>(TRN3_PCI_BAR0 + 8 * bar + 4), 4, static_cast<std::uint32_t>(a >> 32));
    }
    c.write(TRN3_PCI_COMMAND, 2, TRN3_PCI_COMMAND_MEMORY | TRN3_PCI_COMMAND_BUS_MASTER);
    ep.set_bdf(bdf);
}

struct result {
    double wall, simulated_s, tlps;
};

struct fabric : sc_core::sc_module {
    delivery_queue q{"q"};
    pcie::link la{"la", q, 1, 2, x8(1)}, lab{"lab", q, 3, 4, x8(0)}, lbc{"lbc", q, 5, 6, x8(0)},
        lb{"lb", q, 7, 8, x8(1)};
    pcie::pcie_switch sw_a{"sw_a", pcie::switch_config{"gen1-160"}.fabric()},
        sw_b{"sw_b", pcie::switch_config{"gen1-160"}.fabric()}, sw_c{"sw_c", pcie::switch_config{"gen1-160"}.fabric()};
    pcie::endpoint ep_a{"ep_a"}, ep_b{"ep_b"};
    sparse_memory regs_a{"regs_a", byte_count{1 << 20}}, mem_a{"mem_a", byte_count{1 << 30}};
    sparse_memory regs_b{"regs_b", byte_count{1 << 20}}, mem_b{"mem_b", byte_count{1ull << 30}};
    tlm_utils::simple_initiator_socket<fabric> engine{"engine"};
    std::uint64_t bytes;
    int rounds;
    std::vector<result> results;

    fabric(const sc_core::sc_module_name& n, std::uint64_t bytes_per_round, int round_count)
        : sc_core::sc_module(n), bytes(bytes_per_round), rounds(round_count) {
        ep_a.attach(la.a());
        sw_a.attach(0, la.b());
        sw_a.attach(1, lab.a());
        sw_b.attach(0, lab.b());
        sw_b.attach(1, lbc.a());
        sw_c.attach(0, lbc.b());
        sw_c.attach(1, lb.a());
        ep_b.attach(lb.b());
        for (auto* sw : {&sw_a, &sw_b, &sw_c}) {
            route(*sw, 0, base_a, 1);
            route(*sw, 1, base_b, 2);
        }
        ep_a.bar0.bind(regs_a.in);
        ep_a.bar2.bind(mem_a.in);
        ep_b.bar0.bind(regs_b.in);
        ep_b.bar2.bind(mem_b.in);
        engine.bind(ep_a.dma);
        place(ep_a, base_a, 0x0100);
        place(ep_b, base_b, 0x0200);
        SC_HAS_PROCESS(fabric);
        SC_THREAD(run);
    }
    void io(tlm::tlm_command cmd, std::uint64_t a, unsigned char* d, std::uint64_t n) {
        tlm::tlm_generic_payload tx;
        sc_time delay;
        set_access(tx, cmd, a, d, static_cast<unsigned>(n));
        engine->b_transport(tx, delay);
        wait(delay);
        if (tx.get_response_status() != tlm::TLM_OK_RESPONSE) std::fprintf(stderr, "DMA error\n");
    }
    void run() {
        wait(sc_time(200, sc_core::SC_US));  // links trained
        std::vector<unsigned char> buf(bytes, 0xA5);
        const std::uint64_t chunk = std::min<std::uint64_t>(bytes, 1 << 20);
        for (int r = 0; r < rounds; ++r) {
            const auto w0 = std::chrono::steady_clock::now();
            const sc_time t0 = sc_core::sc_time_stamp();
            for (std::uint64_t off = 0; off < bytes; off += chunk)
                io(tlm::TLM_WRITE_COMMAND, base_b + (1ull << 31) + (off % (1ull << 30)), buf.data() + off, chunk);
            unsigned char flush[4];
            io(tlm::TLM_READ_COMMAND, base_b + (1ull << 31), flush, 4);
            const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
            results.push_back({wall, (sc_core::sc_time_stamp() - t0).to_seconds(), double(bytes) / 256});
        }
        sc_core::sc_stop();
    }
};

}  // namespace

int sc_main(int argc, char** argv) {
    const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
    const bool per_tlp = argc > 2 && std::string(argv[2]) == "--tlp";
    const std::uint64_t bytes = quick ? (4ull << 20) : per_tlp ? (64ull << 20) : (1ull << 30);
    if (per_tlp) param_registry::instance().set_pending_text("bench.ep_a.aggregate", "false", "bench");
    fabric f("bench", bytes, quick ? 1 : 3);
    sc_core::sc_start();
    std::vector<result> r = f.results;
    if (r.empty()) return 1;
    std::sort(r.begin(), r.end(), [](const result& x, const result& y) { return x.wall < y.wall; });
    const result& m = r[r.size() / 2];
    std::printf("three-switch path, %s, %llu MiB per round (median of %zu):\n", per_tlp ? "TLP by TLP" : "aggregated",
                static_cast<unsigned long long>(bytes >> 20), r.size());
    std::printf("  simulated %.3f ms at %.2f GB/s; wall %.3f s\n", m.simulated_s * 1e3,
                double(bytes) / m.simulated_s / 1e9, m.wall);
    std::printf("  %.2f M TLPs per wall second, %.2f GB of simulated traffic per wall second\n", m.tlps / m.wall / 1e6,
                double(bytes) / m.wall / 1e9);
    return 0;
}

int main(int argc, char** argv) { return systemc_entry(argc, argv); }
