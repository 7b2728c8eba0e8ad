// pcie_checks: the PCIe hierarchy walked and exercised end to end, from the
// first host, with the bench's exercisers and analyzer (apps/pcie_bench.h).
//
// The host waits for its root port's link (like an OS, for Data Link Layer
// Link Active) and nothing else: configuration requests to links that are
// still training are answered with Configuration Retry Status and retried.
// It enumerates (bus numbers, BARs, windows), lists the functions, then
// checks: host MMIO to exerciser memory; an Unsupported Request (a host read
// of an unclaimed address, and an exerciser read outside host memory);
// MSI-X delivery (an enabled vector, and a masked one sent when unmasked);
// peer to peer between the first and third exercisers; ACS request and
// completion redirect (first to second through the root); exerciser DMA
// into host memory. It passes when every check does. Expects four
// exercisers, two under each of two leaf switches (the pcie platform).
//
// params: pcie_checks.transfer
#include <cstring>
#include <sstream>

#include <fmt/format.h>
#include <systemc>

#include "root_port.h"
#include "trn3/apps/host_program.h"
#include "trn3/apps/pcie_bench.h"
#include "trn3/core/param.h"
#include "trn3/spec/pci.h"

namespace trn3::apps {
namespace {

using sc_core::sc_time;

class pcie_checks final : public host_program {
public:
    param<byte_count> transfer{nullptr, "pcie_checks.transfer", byte_count{1 << 20}, "bytes each DMA check moves",
                               range<byte_count>{byte_count{1}, byte_count{1ull << 30}}};
    param<sc_core::sc_time> link_timeout{nullptr, "pcie_checks.link_timeout", sc_core::sc_time(10, sc_core::SC_MS),
                                         "longest the host waits for its root port's link"};

    explicit pcie_checks(host_system& s) : sys_(s) {
        if (!s.pcie || s.pcie->exercisers() < 4)
            throw config_error("program pcie_checks needs a platform with four PCIe exercisers (the pcie platform)");
    }

    bool passed() const override { return done_ && failures_.empty(); }
    void report(std::ostream& os) const override {
        os << listing_;
        os << log_.str();
        for (const auto& f : failures_) os << "  FAILED: " << f << "\n";
    }

    void run(unsigned h) override {
        if (h == 0) checks();
        else sys_.stop();
    }

private:
    void expect(bool ok, const std::string& what) {
        if (!ok) failures_.push_back(what);
        else log_ << "  ok: " << what << "\n";
    }
    static std::uint64_t bar(const driver::pci_function& f, int index) {
        for (const auto& b : f.bars)
            if (b.index == index) return b.base;
        return 0;
    }

    void checks() {
        driver::host_ops& host = *sys_.hosts[0].ops;
        pcie_bench& bench = *sys_.pcie;
        driver::config_access& cfg = host.config();
        const sc_time t0 = sc_core::sc_time_stamp();
        if (!wait_root_port_link(host, 0, static_cast<std::uint64_t>(link_timeout.get().to_seconds() * 1e9))) {
            failures_.push_back("the root port's link did not come up within " + link_timeout.get().to_string());
            return sys_.stop();
        }
        log_ << fmt::format("  root port link up after {:.1f} us\n",
                            (sc_core::sc_time_stamp() - t0).to_seconds() * 1e6);
        const sc_time t1 = sc_core::sc_time_stamp();
        std::vector<driver::pci_function> fns;
        try {
            fns = driver::enumerate(cfg, sys_.hosts[0].pci_windows);
        } catch (const std::exception& e) {
            failures_.push_back(std::string("enumeration: ") + e.what());
            return sys_.stop();
        }
        listing_ = driver::lspci(fns);
        log_ << fmt::format(
            "  enumerated {} functions in {:.1f} us ({} configuration requests, {} retried while links trained)\n",
            fns.size(), (sc_core::sc_time_stamp() - t1).to_seconds() * 1e6, bench.config_requests(),
            bench.config_retries());
        std::vector<const driver::pci_function*> ep;
        for (const auto& f : fns)
            if (!f.bridge) ep.push_back(&f);
        expect(fns.size() == 14 && ep.size() == 4,
               fmt::format(
                   "found the root port, 3 switches (3 upstream and 6 downstream ports), 4 endpoints: {} functions",
                   fns.size()));
        if (ep.size() != 4) return sys_.stop();
        host_mmio(host, bench, *ep[0]);
        unsupported(host, bench, cfg, *ep[0]);
        msix(host, bench, cfg, *ep[1]);
        const std::uint64_t n = transfer.get().bytes;
        std::vector<std::uint8_t> data(n);
        for (std::uint64_t i = 0; i < n; ++i) data[i] = static_cast<std::uint8_t>(i * 7 + 3);
        peer_to_peer(bench, *ep[2], data);
        acs_redirect(bench, cfg, fns, *ep[0], *ep[1]);
        // Exerciser DMA into host memory.
        const auto hw = bench.dma(3, true, 0x100000, data.data(), n);
        host.sleep_ns(10'000);  // posted: let the last TLPs land
        expect(hw == bench_response::ok && std::memcmp(bench.host_memory() + 0x100000, data.data(), n) == 0,
               "ep3 DMA write into host memory");
        done_ = true;
        sys_.stop();
    }

    void host_mmio(driver::host_ops& host, pcie_bench& bench, const driver::pci_function& ep0) {
        std::uint64_t word = 0x0123456789ABCDEFull, back = 0;
        host.mmio_write(bar(ep0, 2) + 0x100, &word, 8);
        host.mmio_read(bar(ep0, 2) + 0x100, &back, 8);
        expect(back == word && std::memcmp(bench.exerciser_memory(0) + 0x100, &word, 8) == 0,
               "host MMIO write and read of ep0's BAR2");
    }

    void unsupported(driver::host_ops& host, pcie_bench& bench, driver::config_access& cfg,
                     const driver::pci_function& ep0) {
        std::uint32_t ur = 0;
        host.mmio_read(bar(ep0, 4) + 0x20000, &ur, 4);
        const std::uint32_t rp_status = cfg.read(0, TRN3_PCI_STATUS, 2);
        expect(ur == 0xFFFFFFFFu && (rp_status & TRN3_PCI_STATUS_REC_MASTER_ABORT),
               "host read of an unclaimed address: all ones, root port status Received Master Abort (UR)");
        std::vector<std::uint8_t> buf(64);
        const auto dma_ur = bench.dma(0, false, 0x3000000000ull, buf.data(), buf.size());
        expect(dma_ur == bench_response::address_error, "device read outside host memory: Unsupported Request");
    }

    // MSI-X on ep1: vector 5 enabled, vector 6 masked until later.
    void msix(driver::host_ops& host, pcie_bench& bench, driver::config_access& cfg, const driver::pci_function& ep1) {
        const std::uint64_t table = bar(ep1, 4);
        auto program = [&](unsigned v, std::uint32_t data, bool masked) {
            std::uint32_t e[4] = {static_cast<std::uint32_t>(TRN3_MSI_WINDOW_BASE), 0, data, masked ? 1u : 0u};
            host.mmio_write(table + v * TRN3_MSIX_ENTRY_SIZE, e, 16);
        };
        program(5, 0xC0DE0005, false);
        program(6, 0xC0DE0006, true);
        cfg.write(ep1.bdf, TRN3_PCI_MSIX_CAP + TRN3_MSIX_CONTROL, 2, TRN3_MSIX_ENABLE);
        host.sleep_ns(1000);
        const sc_time raised = sc_core::sc_time_stamp();
        bench.raise_msix(1, 5);
        bench.raise_msix(1, 6);
        host.sleep_ns(2000);
        std::uint64_t pba = 0;
        host.mmio_read(table + TRN3_EP_MSIX_PBA_OFFSET, &pba, 8);
        const auto& msis = bench.msis();
        const bool one_sent = msis.size() == 1 && msis[0].data == 0xC0DE0005 && msis[0].requester == ep1.bdf;
        expect(one_sent && pba == (1u << 6),
               "MSI-X: vector 5 delivered with ep1's requester id, masked vector 6 pending");
        program(6, 0xC0DE0006, false);
        host.sleep_ns(2000);
        expect(msis.size() == 2 && msis[1].data == 0xC0DE0006, "MSI-X: vector 6 delivered when unmasked");
        if (!msis.empty())
            log_ << fmt::format("  MSI-X latency (raise -> host): {:.1f} ns\n",
                                (sc_time::from_value(msis[0].at_ps) - raised).to_seconds() * 1e9);
    }

    // Peer to peer ep0 -> ep2 across sw1, sw0, sw2.
    void peer_to_peer(pcie_bench& bench, const driver::pci_function& ep2, std::vector<std::uint8_t>& data) {
        const std::uint64_t n = data.size();
        std::vector<std::uint8_t> readback(n);
        const sc_time start = sc_core::sc_time_stamp();
        const auto w = bench.dma(0, true, bar(ep2, 2), data.data(), n);
        const auto r = bench.dma(0, false, bar(ep2, 2), readback.data(), n);
        const double s = (sc_core::sc_time_stamp() - start).to_seconds();
        expect(w == bench_response::ok && r == bench_response::ok && readback == data &&
                   std::memcmp(bench.exerciser_memory(2), data.data(), n) == 0,
               fmt::format("peer to peer ep0 -> ep2 through three switches: {} written and read back",
                           format_byte_count(transfer.get())));
        log_ << fmt::format("  p2p write + read of {} B: {:.3f} us ({:.1f} GB/s each way)\n", n, s * 1e6,
                            2.0 * n / s / 1e9);
    }

    // ACS request redirect on ep0's port of sw1: ep0 -> ep1 goes through the
    // root (and Upstream Forwarding on sw0's port above sw1, which sees it
    // next); ep1's completions are redirected too, so they come back through
    // the root as well.
    void acs_redirect(pcie_bench& bench, driver::config_access& cfg, const std::vector<driver::pci_function>& fns,
                      const driver::pci_function& ep0, const driver::pci_function& ep1) {
        const driver::pci_function& ep0_port = fns[static_cast<std::size_t>(ep0.parent)];
        const driver::pci_function& sw1_up = fns[static_cast<std::size_t>(ep0_port.parent)];
        const driver::pci_function& sw0_port = fns[static_cast<std::size_t>(sw1_up.parent)];
        const driver::pci_function& ep1_port = fns[static_cast<std::size_t>(ep1.parent)];
        cfg.write(ep0_port.bdf, TRN3_PCI_ACS_CAP + TRN3_ACS_CONTROL, 2, TRN3_ACS_REQUEST_REDIRECT);
        cfg.write(ep1_port.bdf, TRN3_PCI_ACS_CAP + TRN3_ACS_CONTROL, 2, TRN3_ACS_COMPLETION_REDIRECT);
        cfg.write(sw0_port.bdf, TRN3_PCI_ACS_CAP + TRN3_ACS_CONTROL, 2, TRN3_ACS_UPSTREAM_FORWARDING);
        const std::uint64_t before = bench.reflected();
        std::uint64_t tag = 0xACE5ACE5ACE5ACE5ull;
        bench.dma(0, true, bar(ep1, 2) + 0x40, &tag, 8);
        std::uint64_t got = 0;
        bench.dma(0, false, bar(ep1, 2) + 0x40, &got, 8);
        expect(got == tag && bench.reflected() >= before + 3,
               "ACS request and completion redirect: ep0 -> ep1 (write, read, completion) through the root and back");
        cfg.write(ep0_port.bdf, TRN3_PCI_ACS_CAP + TRN3_ACS_CONTROL, 2, 0);
        cfg.write(ep1_port.bdf, TRN3_PCI_ACS_CAP + TRN3_ACS_CONTROL, 2, 0);
    }

    host_system& sys_;
    std::string listing_;
    std::ostringstream log_;
    std::vector<std::string> failures_;
    bool done_ = false;
};

const program_registration registration{
    "pcie_checks", "walk a PCIe tree and check MMIO, UR, MSI-X, peer to peer, ACS and DMA with exercisers",
    [](host_system& s) { return std::make_unique<pcie_checks>(s); }};

}  // namespace
}  // namespace trn3::apps
