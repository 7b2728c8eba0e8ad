// chip_checks: one chip brought up and exercised from power-on, by the first
// host, the way a driver engineer's bring-up script would.
//
// The host waits for its link, enumerates, probes the chip (BARs, MSI-X, DMA
// and notification rings), waits for the firmware (the MCU's boot ROM checks
// it first), shakes hands over the mailbox, then loads and runs the
// reference kernels through the runtime (GEMM on core 0, softmax on core 1,
// attention on core 2, RMSNorm on core 3, a GEMM on the LNC=2 pair 4+5),
// reads the results back and checks them against fp64. Then the error paths:
// a kernel with an illegal instruction (error status, core reset, the next
// kernel on that core succeeds), DMA to host memory outside the IOMMU's
// mappings (a fault, nothing written), an uncorrectable HBM error (poisoned
// read, the firmware's handler, the host told) and a core reset by the
// firmware. It passes when every step does. Other hosts do nothing.
//
// params: chip_checks.gemm_m, gemm_n, gemm_k, seed, tolerance, boot_timeout
#include <chrono>
#include <sstream>

#include <fmt/format.h>
#include <systemc>

#include "chip_checks.h"
#include "root_port.h"
#include "trn3/kernels/gemm.h"
#include "trn3/spec/device.h"
#include "trn3/spec/link.h"
#include "trn3/spec/pci.h"

namespace trn3::apps {

chip_checks::chip_checks(host_system& s)
    : sys_(s), host_(*s.hosts.at(0).ops), device_(host_), track_(s.name, "host0 software") {
    if (s.hosts[0].chips.empty())
        throw config_error("program chip_checks needs a host with a Trainium3 (" + s.name + " has none)");
    try {
        kernels::gemm({unsigned(gemm_m), unsigned(gemm_n), unsigned(gemm_k)}, {0, 0, 0});
    } catch (const std::invalid_argument& e) {
        throw config_error(std::string("chip_checks: ") + e.what());
    }
    host_.on_iommu_fault([this](std::uint16_t, std::uint64_t, bool) { ++iommu_faults_; });
}

void chip_checks::report(std::ostream& os) const {
    os << fmt::format("  {:<64} {:>12} {:>10}\n", "boot and run", "simulated", "wall");
    for (const auto& p : phases_)
        os << fmt::format("  {:<64} {:>9.1f} us {:>8.3f} s\n", p.what, p.simulated * 1e6, p.wall);
    if (!kernels_.str().empty()) os << "kernels (host-observed: launch to notification)\n" << kernels_.str();
    os << checks_.str();
    if (!listing_.empty()) os << "devices\n" << listing_;
    if (!counters_.empty()) os << "counters\n" << counters_;
    for (const auto& f : failures_) os << "  FAILED: " << f << "\n";
}

void chip_checks::run(unsigned h) {
    if (h == 0) bring_up();
    if (++hosts_done_ == sys_.hosts.size()) sys_.stop();
}

void chip_checks::phase(const std::string& what) {
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
    phases_.push_back({what, sc_core::sc_time_stamp().to_seconds(), wall});
    track_.mark(what);
}

bool chip_checks::check(bool ok, const std::string& what) {
    if (ok) checks_ << "  ok: " << what << "\n";
    else failures_.push_back(what);
    return ok;
}

bool chip_checks::expect(driver::status s, const std::string& what) {
    if (s != driver::status::ok) failures_.push_back(what + ": " + driver::status_name(s));
    return s == driver::status::ok;
}

void chip_checks::bring_up() {
    // Power-on: the links train, the MCU boots; the host waits for its root port's link.
    phase("power on");
    auto& cfg = host_.config();
    if (!wait_root_port_link(host_, 0, static_cast<std::uint64_t>(link_timeout.get().to_seconds() * 1e9))) {
        failures_.push_back("the root port's link did not come up within " + link_timeout.get().to_string());
        return finish();
    }
    phase("root port link up (Gen5 x16)");
    std::vector<driver::pci_function> fns;
    try {
        fns = driver::enumerate(cfg, sys_.hosts[0].pci_windows);
    } catch (const std::exception& e) {
        failures_.push_back(std::string("enumeration: ") + e.what());
        return finish();
    }
    listing_ = driver::lspci(fns);
    phase(fmt::format("enumerated ({} functions)", fns.size()));
    if (!expect(device_.probe(fns), "probe")) return finish();
    phase("driver probed the chip (BARs, MSI-X, rings)");
    const driver::status boot = device_.wait_boot(static_cast<std::uint64_t>(boot_timeout.get().to_seconds() * 1e9));
    if (!expect(boot, "firmware")) return finish();
    phase("firmware running (boot ROM verified the image)");
    driver::firmware_info fw;
    if (!expect(device_.handshake(fw), "mailbox handshake")) return finish();
    phase(fmt::format("mailbox handshake (firmware {}.{} '{}')", fw.version >> 16, fw.version & 0xFFFF, fw.build));
    chip_state("after boot");
    if (nrt_init(&device_, &rt_) != NRT_SUCCESS) {
        failures_.push_back("runtime init");
        return finish();
    }
    reference_kernels();
    error_paths();
    chip_state("at the end");
    counters_ = device_.counters();
    finish();
}

// What the firmware reports: telemetry, each NeuronLink port, each stack's ECC counters.
void chip_checks::chip_state(const std::string& when) {
    trn3_mbox_telemetry t{};
    if (!expect(device_.telemetry(t), "mailbox TELEMETRY")) return;
    checks_ << fmt::format(
        "  firmware telemetry {}: uptime {} us, HBM ready {:#x}, NeuronLink ports {:#x} up {:#x} "
        "degraded {:#x}, ECC corrected {} uncorrectable {}, events: HBM {} link {}, core resets {}\n",
        when, t.uptime_us, t.hbm_ready, t.ports_present, t.ports_up, t.ports_degraded, t.corrected_total,
        t.uncorrectable_total, t.hbm_events, t.link_events, t.core_resets);
    for (unsigned p = 0; p < TRN3_NEURONLINK_PORTS; ++p) {
        if (!(t.ports_present & (1u << p))) continue;
        trn3_mbox_link l{};
        if (!expect(device_.link_status(p, l), "mailbox LINK_STATUS")) return;
        checks_ << fmt::format("    nl{}: {} x{} of x{}, {} failed lanes, {} spares in use, {} trainings{}\n", p,
                               (l.status & TRN3_LINK_STATUS_UP) ? "up" : "DOWN", TRN3_LINK_STATUS_WIDTH(l.status),
                               TRN3_LINK_LANES_CONFIGURED(l.lanes), TRN3_LINK_LANES_FAILED(l.lanes),
                               TRN3_LINK_LANES_SPARES_USED(l.lanes), l.trainings,
                               (l.status & TRN3_LINK_STATUS_DEGRADED) ? ", DEGRADED" : "");
    }
    for (unsigned s = 0; s < TRN3_DEV_HBM_STACKS; ++s) {
        trn3_mbox_ecc e{};
        if (!expect(device_.ecc_counters(s, e), "mailbox ECC_COUNTERS")) return;
        if (e.corrected || e.uncorrectable || e.train_status != TRN3_HBM_TRAIN_READY)
            checks_ << fmt::format("    hbm{}: trained {}, ECC corrected {}, uncorrectable {}, last error at {:#x}\n",
                                   s, e.train_status == TRN3_HBM_TRAIN_READY ? "yes" : "no", e.corrected,
                                   e.uncorrectable, (std::uint64_t(e.last_error_addr_hi) << 32) | e.last_error_addr_lo);
    }
}

void chip_checks::finish() {
    // Device memory back to the driver, before the runtime goes (no check
    // runs after this one: nothing is placed anew in what is freed).
    for (nrt_tensor_t*& t : tensors_) nrt_tensor_free(&t);
    tensors_.clear();
    if (rt_) nrt_close(rt_);
    rt_ = nullptr;
    done_ = true;
}

const program_registration chip_checks_registration{
    "chip_checks", "one chip from power-on: firmware, driver, runtime, reference kernels verified, error paths",
    [](host_system& s) { return std::make_unique<chip_checks>(s); }};

}  // namespace trn3::apps
