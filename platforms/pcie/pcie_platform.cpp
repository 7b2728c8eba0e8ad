// pcie: a host and a tree of three switches and four endpoints, enumerated
// by the driver's walker and exercised end to end.
//
//   host cpu ── ecam, mmio ── rc ══ Gen5 x16 ══ gen6-gen5 bridge ══ Gen6 x16 (2 retimers) ══ sw0 (upstream port 0)
//   host_mem (DDR) ── rc.host_mem
//   sw0.1 ══ Gen6 x8 (1 retimer) ══ sw1.0     sw1.1 ══ x8 (1 retimer) ══ ep0     sw1.2 ══ ep1
//   sw0.2 ══ Gen6 x8 (1 retimer) ══ sw2.0     sw2.1 ══ x8 (1 retimer) ══ ep2     sw2.2 ══ ep3
//   each endpoint: BAR0 registers (1 MiB), BAR2 memory (1 GiB), BAR4 MSI-X; a DMA engine the host thread drives
//
// The host waits for nothing: configuration requests to links that are
// still training are answered with Configuration Retry Status and retried.
// It enumerates (bus numbers, BARs, windows), prints an lspci-like listing,
// then checks: host MMIO to device memory; an Unsupported Request (host read
// of an unclaimed address, and a device read of an address outside host
// memory); MSI-X delivery (enabled vector, and a masked one that is sent
// when unmasked); peer to peer from ep0 to ep2 across the three switches;
// ACS request redirect (ep0 -> ep1 through the root); device DMA into host
// memory. The run passes when every check does.
#include <cstring>
#include <memory>
#include <sstream>

#include <fmt/format.h>
#include <tlm_utils/simple_initiator_socket.h>

#include "trn3/core/payload.h"
#include "trn3/core/message_link.h"
#include "trn3/core/sparse_memory.h"
#include "trn3/driver/pci_enum.h"
#include "trn3/pcie/endpoint.h"
#include "trn3/pcie/link.h"
#include "trn3/pcie/pcie_switch.h"
#include "trn3/pcie/rate_bridge.h"
#include "trn3/pcie/root_complex.h"
#include "trn3/platforms/platform.h"

namespace trn3 {
namespace {

using sc_core::sc_time;


class pcie_platform final : public platform {
public:
    param<byte_count> transfer{this, "transfer", byte_count{1 << 20}, "bytes each DMA check moves"};

    explicit pcie_platform(const sc_core::sc_module_name& name) : platform(name) {
        // Host side.
        rc.host_mem.bind(host_mem.in);
        cpu_ecam.bind(rc.ecam);
        cpu_mmio.bind(rc.mmio);
        rc.msi = [this](std::uint32_t data, std::uint16_t requester) {
            msi_log_.push_back({data, requester, sc_core::sc_time_stamp()});
        };
        // Root port 0 -> bridge -> sw0.
        rc.attach(0, host_link.a());
        bridge.attach(host_link.b(), up_link.a());
        sw0.attach(0, up_link.b());
        // sw0 -> sw1, sw2.
        sw0.attach(1, l_sw1.a());
        sw1.attach(0, l_sw1.b());
        sw0.attach(2, l_sw2.a());
        sw2.attach(0, l_sw2.b());
        // Endpoints.
        pcie::pcie_switch* leaf[] = {&sw1, &sw1, &sw2, &sw2};
        for (unsigned i = 0; i < 4; ++i) {
            leaf[i]->attach(1 + i % 2, ep_links[i]->a());
            eps[i]->attach(ep_links[i]->b());
            eps[i]->bar0.bind(regs[i]->in);
            eps[i]->bar2.bind(mems[i]->in);
            engines[i]->bind(eps[i]->dma);
        }
        SC_HAS_PROCESS(pcie_platform);
        SC_THREAD(host);
    }

    bool passed() const override { return done_ && failures_.empty(); }

    void report(std::ostream& os) const override {
        os << listing_;
        os << log_.str();
        for (const auto& f : failures_) os << "  FAILED: " << f << "\n";
    }

private:
    // Wiring: ids of the link ends follow the tree (port ids, decision 3).
    delivery_queue queue{"queue"};
    sparse_memory host_mem{"host_mem", byte_count{1ull << 30}};
    pcie::root_complex rc{"rc"};
    pcie::rate_bridge bridge{"bridge"};
    // 160-lane switches with only the ports the tree uses: sw0 with x16 ports
    // (its upstream link is x16), sw1 and sw2 with x8 ports.
    pcie::pcie_switch sw0{"sw0", "gen1-160", 0, 3, 16}, sw1{"sw1", "gen1-160", 0, 3, 8}, sw2{"sw2", "gen1-160", 0, 3, 8};
    pcie::link host_link{"host_link", queue, 1, 2, pcie::link_of(pcie::generation::gen5, 16, 0)};
    pcie::link up_link{"up_link", queue, 3, 4, pcie::link_of(pcie::generation::gen6, 16, 2)};
    pcie::link l_sw1{"sw0_sw1", queue, 5, 6, pcie::link_of(pcie::generation::gen6, 8, 1)};
    pcie::link l_sw2{"sw0_sw2", queue, 7, 8, pcie::link_of(pcie::generation::gen6, 8, 1)};
    std::vector<std::unique_ptr<pcie::link>> ep_links = make_links();
    std::vector<std::unique_ptr<pcie::endpoint>> eps = make<pcie::endpoint>("ep");
    std::vector<std::unique_ptr<sparse_memory>> regs = make_memories("regs", 1 << 20);
    std::vector<std::unique_ptr<sparse_memory>> mems = make_memories("mem", 1ull << 30);
    std::vector<std::unique_ptr<tlm_utils::simple_initiator_socket<pcie_platform>>> engines = make_engines();
    tlm_utils::simple_initiator_socket<pcie_platform> cpu_ecam{"cpu_ecam"}, cpu_mmio{"cpu_mmio"};

    static std::vector<std::unique_ptr<pcie::link>> make_links_impl(delivery_queue& q) {
        std::vector<std::unique_ptr<pcie::link>> v;
        for (unsigned i = 0; i < 4; ++i)
            v.push_back(std::make_unique<pcie::link>(fmt::format("ep{}_link", i).c_str(), q, 10 + 2 * i, 11 + 2 * i,
                                                     pcie::link_of(pcie::generation::gen6, 8, 1)));
        return v;
    }
    std::vector<std::unique_ptr<pcie::link>> make_links() { return make_links_impl(queue); }
    template <typename T>
    static std::vector<std::unique_ptr<T>> make(const char* stem) {
        std::vector<std::unique_ptr<T>> v;
        for (unsigned i = 0; i < 4; ++i) v.push_back(std::make_unique<T>(fmt::format("{}{}", stem, i).c_str()));
        return v;
    }
    static std::vector<std::unique_ptr<sparse_memory>> make_memories(const char* stem, std::uint64_t size) {
        std::vector<std::unique_ptr<sparse_memory>> v;
        for (unsigned i = 0; i < 4; ++i)
            v.push_back(std::make_unique<sparse_memory>(fmt::format("{}{}", stem, i).c_str(), byte_count{size}));
        return v;
    }
    static std::vector<std::unique_ptr<tlm_utils::simple_initiator_socket<pcie_platform>>> make_engines() {
        std::vector<std::unique_ptr<tlm_utils::simple_initiator_socket<pcie_platform>>> v;
        for (unsigned i = 0; i < 4; ++i)
            v.push_back(std::make_unique<tlm_utils::simple_initiator_socket<pcie_platform>>(fmt::format("engine{}", i).c_str()));
        return v;
    }

    // ---- the host's software -------------------------------------------------
    tlm::tlm_response_status io(tlm_utils::simple_initiator_socket<pcie_platform>& s, tlm::tlm_command cmd,
                                std::uint64_t address, void* data, std::uint64_t n) {
        tlm::tlm_generic_payload tx;
        sc_time delay;
        set_access(tx, cmd, address, static_cast<unsigned char*>(data), static_cast<unsigned>(n));
        s->b_transport(tx, delay);
        wait(delay);
        return tx.get_response_status();
    }
    struct ecam_access final : driver::config_access {
        explicit ecam_access(pcie_platform& p) : p_(p) {}
        std::uint32_t read(std::uint16_t bdf, std::uint16_t offset, unsigned bytes) override {
            std::uint32_t v = 0;
            p_.io(p_.cpu_ecam, tlm::TLM_READ_COMMAND, (std::uint64_t(bdf) << 12) | offset, &v, bytes);
            return v;
        }
        void write(std::uint16_t bdf, std::uint16_t offset, unsigned bytes, std::uint32_t value) override {
            p_.io(p_.cpu_ecam, tlm::TLM_WRITE_COMMAND, (std::uint64_t(bdf) << 12) | offset, &value, bytes);
        }
        pcie_platform& p_;
    };
    void expect(bool ok, const std::string& what) {
        if (!ok) failures_.push_back(what);
        else log_ << "  ok: " << what << "\n";
    }
    std::uint64_t bar(const driver::pci_function& f, int index) const {
        for (const auto& b : f.bars)
            if (b.index == index) return b.base;
        return 0;
    }

    void host() {
        ecam_access cfg(*this);
        const sc_time t0 = sc_core::sc_time_stamp();
        // Like an OS, wait for the root port's link (Data Link Layer Link Active) before scanning.
        while (!(cfg.read(0, TRN3_PCI_PCIE_CAP + TRN3_PCIE_LINK_STATUS, 2) & TRN3_PCIE_LINK_DL_ACTIVE))
            wait(sc_time(1, sc_core::SC_US));
        log_ << fmt::format("  root port link up after {:.1f} us\n", (sc_core::sc_time_stamp() - t0).to_seconds() * 1e6);
        const sc_time t1 = sc_core::sc_time_stamp();
        std::vector<driver::pci_function> fns;
        try {
            fns = driver::enumerate(cfg, {0xE0000000ull, 0x10000000ull, 0x4000000000ull, 1ull << 40});
        } catch (const std::exception& e) {
            failures_.push_back(std::string("enumeration: ") + e.what());
            sc_core::sc_stop();
            return;
        }
        listing_ = driver::lspci(fns);
        log_ << fmt::format("  enumerated {} functions in {:.1f} us ({} configuration requests, {} retried while links trained)\n",
                            fns.size(), (sc_core::sc_time_stamp() - t1).to_seconds() * 1e6, rc.config_requests(), rc.crs_retries());
        std::vector<const driver::pci_function*> ep;
        for (const auto& f : fns)
            if (!f.bridge) ep.push_back(&f);
        expect(fns.size() == 14 && ep.size() == 4,
               fmt::format("found the root port, 3 switches (3 upstream and 6 downstream ports), 4 endpoints: {} functions",
                           fns.size()));
        if (ep.size() != 4) {
            sc_core::sc_stop();
            return;
        }
        const std::uint64_t n = transfer.get().bytes;
        // Host MMIO into ep0's memory.
        std::uint64_t word = 0x0123456789ABCDEFull, back = 0;
        io(cpu_mmio, tlm::TLM_WRITE_COMMAND, bar(*ep[0], 2) + 0x100, &word, 8);
        io(cpu_mmio, tlm::TLM_READ_COMMAND, bar(*ep[0], 2) + 0x100, &back, 8);
        expect(back == word && std::memcmp(mems[0]->data() + 0x100, &word, 8) == 0, "host MMIO write and read of ep0's BAR2");
        // Unsupported Requests.
        std::uint32_t ur = 0;
        io(cpu_mmio, tlm::TLM_READ_COMMAND, bar(*ep[0], 4) + 0x20000, &ur, 4);
        const std::uint32_t rp_status = cfg.read(0, TRN3_PCI_STATUS, 2);
        expect(ur == 0xFFFFFFFFu && (rp_status & TRN3_PCI_STATUS_REC_MASTER_ABORT),
               "host read of an unclaimed address: all ones, root port status Received Master Abort (UR)");
        std::vector<std::uint8_t> buf(64);
        const auto dma_ur = io(*engines[0], tlm::TLM_READ_COMMAND, 0x3000000000ull, buf.data(), buf.size());
        expect(dma_ur == tlm::TLM_ADDRESS_ERROR_RESPONSE, "device read outside host memory: Unsupported Request");
        // MSI-X on ep1: vector 5 enabled, vector 6 masked until later.
        const std::uint64_t table = bar(*ep[1], 4);
        auto program = [&](unsigned v, std::uint32_t data, bool masked) {
            std::uint32_t e[4] = {static_cast<std::uint32_t>(TRN3_MSI_WINDOW_BASE), 0, data, masked ? 1u : 0u};
            io(cpu_mmio, tlm::TLM_WRITE_COMMAND, table + v * TRN3_MSIX_ENTRY_SIZE, e, 16);
        };
        program(5, 0xC0DE0005, false);
        program(6, 0xC0DE0006, true);
        cfg.write(ep[1]->bdf, TRN3_PCI_MSIX_CAP + TRN3_MSIX_CONTROL, 2, TRN3_MSIX_ENABLE);
        wait(sc_time(1, sc_core::SC_US));
        const sc_time raised = sc_core::sc_time_stamp();
        eps[1]->raise_msix(5);
        eps[1]->raise_msix(6);
        wait(sc_time(2, sc_core::SC_US));
        std::uint64_t pba = 0;
        io(cpu_mmio, tlm::TLM_READ_COMMAND, table + pcie::endpoint::msix_pba_offset, &pba, 8);
        const bool one_sent = msi_log_.size() == 1 && msi_log_[0].data == 0xC0DE0005 && msi_log_[0].requester == ep[1]->bdf;
        expect(one_sent && pba == (1u << 6), "MSI-X: vector 5 delivered with ep1's requester id, masked vector 6 pending");
        program(6, 0xC0DE0006, false);
        wait(sc_time(2, sc_core::SC_US));
        expect(msi_log_.size() == 2 && msi_log_[1].data == 0xC0DE0006, "MSI-X: vector 6 delivered when unmasked");
        if (!msi_log_.empty())
            log_ << fmt::format("  MSI-X latency (raise -> host): {:.1f} ns\n", (msi_log_[0].at - raised).to_seconds() * 1e9);
        // Peer to peer ep0 -> ep2 across sw1, sw0, sw2.
        std::vector<std::uint8_t> data(n), readback(n);
        for (std::uint64_t i = 0; i < n; ++i) data[i] = static_cast<std::uint8_t>(i * 7 + 3);
        const sc_time p2p_start = sc_core::sc_time_stamp();
        const auto w = io(*engines[0], tlm::TLM_WRITE_COMMAND, bar(*ep[2], 2), data.data(), n);
        const auto r = io(*engines[0], tlm::TLM_READ_COMMAND, bar(*ep[2], 2), readback.data(), n);
        const double p2p_s = (sc_core::sc_time_stamp() - p2p_start).to_seconds();
        expect(w == tlm::TLM_OK_RESPONSE && r == tlm::TLM_OK_RESPONSE && readback == data &&
                   std::memcmp(mems[2]->data(), data.data(), n) == 0,
               fmt::format("peer to peer ep0 -> ep2 through three switches: {} written and read back", format_byte_count(transfer.get())));
        log_ << fmt::format("  p2p write + read of {} B: {:.3f} us ({:.1f} GB/s each way)\n", n, p2p_s * 1e6, 2.0 * n / p2p_s / 1e9);
        // ACS request redirect on ep0's port of sw1: ep0 -> ep1 goes through the root.
        // (and Upstream Forwarding on sw0's port above sw1, which sees it next).
        const driver::pci_function& ep0_port = fns[static_cast<std::size_t>(ep[0]->parent)];
        const driver::pci_function& sw1_up = fns[static_cast<std::size_t>(ep0_port.parent)];
        const driver::pci_function& sw0_port = fns[static_cast<std::size_t>(sw1_up.parent)];
        // ep1's completions are redirected too, so they come back through the root as well.
        const driver::pci_function& ep1_port = fns[static_cast<std::size_t>(ep[1]->parent)];
        cfg.write(ep0_port.bdf, TRN3_PCI_ACS_CAP + TRN3_ACS_CONTROL, 2, TRN3_ACS_REQUEST_REDIRECT);
        cfg.write(ep1_port.bdf, TRN3_PCI_ACS_CAP + TRN3_ACS_CONTROL, 2, TRN3_ACS_COMPLETION_REDIRECT);
        cfg.write(sw0_port.bdf, TRN3_PCI_ACS_CAP + TRN3_ACS_CONTROL, 2, TRN3_ACS_UPSTREAM_FORWARDING);
        const std::uint64_t before = rc.reflected();
        std::uint64_t tag = 0xACE5ACE5ACE5ACE5ull;
        io(*engines[0], tlm::TLM_WRITE_COMMAND, bar(*ep[1], 2) + 0x40, &tag, 8);
        std::uint64_t got = 0;
        io(*engines[0], tlm::TLM_READ_COMMAND, bar(*ep[1], 2) + 0x40, &got, 8);
        expect(got == tag && rc.reflected() >= before + 3,
               "ACS request and completion redirect: ep0 -> ep1 (write, read, completion) through the root and back");
        cfg.write(ep0_port.bdf, TRN3_PCI_ACS_CAP + TRN3_ACS_CONTROL, 2, 0);
        cfg.write(ep1_port.bdf, TRN3_PCI_ACS_CAP + TRN3_ACS_CONTROL, 2, 0);
        // Device DMA into host memory.
        const auto hw = io(*engines[3], tlm::TLM_WRITE_COMMAND, 0x100000, data.data(), n);
        wait(sc_time(10, sc_core::SC_US));  // posted: let the last TLPs land
        expect(hw == tlm::TLM_OK_RESPONSE && std::memcmp(host_mem.data() + 0x100000, data.data(), n) == 0,
               "ep3 DMA write into host memory");
        done_ = true;
        sc_core::sc_stop();
    }

    struct msi_record {
        std::uint32_t data;
        std::uint16_t requester;
        sc_time at;
    };
    std::vector<msi_record> msi_log_;
    std::string listing_;
    std::ostringstream log_;
    std::vector<std::string> failures_;
    bool done_ = false;
};

const platform_registration reg{"pcie", "a host, three PCIe switches and four endpoints: enumeration, UR, MSI-X, P2P, ACS",
                                [] { return std::make_unique<pcie_platform>("pcie"); }};

} // namespace
} // namespace trn3
