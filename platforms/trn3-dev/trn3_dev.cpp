// trn3-dev: one Trainium3 and its host, from power-on to verified kernels.
//
//   host0 (Graviton4: rc, iommu, ddr) ══ Gen5 x16 ══ bridge (Gen6-to-Gen5) ══ Gen6 x16, 2 retimers ══ chip0.ep
//   chip0: 8 NeuronCores, 4 HBM3E stacks, DMA engine, MCU (boot ROM + firmware), PCIe endpoint
//
// The host's software (driver and runtime, host-compiled, one thread) does
// what a real host does after power-on: waits for its link, enumerates,
// probes the chip (BARs, MSI-X, DMA and notification rings), waits for the
// firmware (the MCU's boot ROM checks it first), shakes hands over the
// mailbox, then loads and runs the reference kernels through the runtime
// (GEMM on core 0, softmax on core 1, attention on core 2, RMSNorm on core
// 3, a GEMM on the LNC=2 pair 4+5), reads the results back and checks them against fp64.
// Then it checks the error paths: a kernel with an illegal instruction
// (error status, core reset, the next kernel on that core succeeds) and DMA
// to host memory outside the IOMMU's mappings (a fault, nothing written).
// The run passes when every step does.
//
//   trn3vp run --platform trn3-dev [--timeline run.json]
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "trn3/chip/trn3_chip.h"
#include "trn3/core/message_link.h"
#include "trn3/driver/pci_enum.h"
#include "trn3/driver/trn3_device.h"
#include "trn3/host/graviton4.h"
#include "trn3/kernels/attention.h"
#include "trn3/kernels/gemm.h"
#include "trn3/kernels/norm.h"
#include "trn3/kernels/reference.h"
#include "trn3/numerics/float_format.h"
#include "trn3/pcie/link.h"
#include "trn3/pcie/rate_bridge.h"
#include "trn3/platforms/host_adapter.h"
#include "trn3/platforms/platform.h"
#include "trn3/runtime/container.h"
#include "trn3/runtime/nrt.h"
#include "trn3/spec/link.h"
#include "trn3/spec/mailbox.h"
#include "trn3/spec/pci.h"

namespace trn3 {
namespace {

using sc_core::sc_time;
using namespace kernels;

std::string build_digest() {
    std::ifstream in(TRN3_FIRMWARE_DIGEST_FILE);
    std::string d;
    in >> d;
    return d;
}


class trn3_dev final : public platform {
public:
    param<std::uint64_t> gemm_m{this, "gemm_m", 512, "GEMM on core 0: M (multiple of 128)"};
    param<std::uint64_t> gemm_n{this, "gemm_n", 1024, "GEMM on core 0: N (multiple of 512)"};
    param<std::uint64_t> gemm_k{this, "gemm_k", 512, "GEMM on core 0: K (multiple of 128)"};
    param<std::uint64_t> seed{this, "seed", 1, "seed of the random inputs"};
    param<double> tolerance{this, "tolerance", 1e-4, "largest accepted error against fp64 (attention: 1e-2)"};
    param<sc_time> boot_timeout{this, "boot_timeout", sc_time(50, sc_core::SC_MS), "longest the driver waits for the firmware"};

    // ---- wiring ----
    delivery_queue queue{"queue"};
    host::graviton4 host0{"host0"};
    pcie::link host_link{"host_link", queue, 1, 2, pcie::link_of(pcie::generation::gen5, 16, 0)};
    pcie::rate_bridge bridge{"bridge"};
    pcie::link chip_link{"chip_link", queue, 3, 4, pcie::link_of(pcie::generation::gen6, 16, 2)};
    chip::trn3_chip chip0{"chip0", {TRN3_FIRMWARE_ELF, TRN3_BOOT_ROM_ELF, build_digest()}};
    // Two of the chip's NeuronLink ports, trained by its firmware: a backplane
    // bundle (x64 + 16 spare lanes, a retimer) and a cross-rack x16 cable
    // (two retimers: the AEC). Their far ends are off this platform.
    pcie::link nl0{"nl0", queue, 5, 6, pcie::link_of(pcie::generation::gen6, 64, 1, 16, false)};
    pcie::link nl1{"nl1", queue, 7, 8, pcie::link_of(pcie::generation::gen6, 16, 2, 0, false)};

    explicit trn3_dev(const sc_core::sc_module_name& name) : platform(name), adapter_(host0), device_(adapter_) {
        try {
            gemm({unsigned(gemm_m), unsigned(gemm_n), unsigned(gemm_k)}, {0, 0, 0});
        } catch (const std::invalid_argument& e) {
            throw config_error(std::string(this->name()) + ": " + e.what());
        }
        host0.rc.attach(0, host_link.a());
        bridge.attach(host_link.b(), chip_link.a());
        chip0.ep.attach(chip_link.b());
        chip0.attach_neuronlink(0, nl0);
        chip0.attach_neuronlink(1, nl1);
        host0.run("software", [this] { software(); });
    }

    bool passed() const override { return done_ && failures_.empty(); }

    void report(std::ostream& os) const override {
        os << fmt::format("  {:<64} {:>12} {:>10}\n", "boot and run", "simulated", "wall");
        for (const auto& p : phases_)
            os << fmt::format("  {:<64} {:>9.1f} us {:>8.3f} s\n", p.what, p.simulated * 1e6, p.wall);
        if (!kernels_.str().empty()) os << "kernels (host-observed: launch to notification)\n" << kernels_.str();
        os << checks_.str();
        if (!listing_.empty()) os << "devices\n" << listing_;
        if (!counters_.empty()) os << "counters\n" << counters_;
        for (const auto& f : failures_) os << "  FAILED: " << f << "\n";
        std::istringstream console(chip0.mcu0.console());
        for (std::string line; std::getline(console, line);) os << "  mcu0 console: " << line << "\n";
    }

private:
    host_adapter adapter_;
    driver::trn3_device device_;
    struct phase_record {
        std::string what;
        double simulated, wall;
    };
    std::vector<phase_record> phases_;
    std::chrono::steady_clock::time_point wall0_ = std::chrono::steady_clock::now();
    std::ostringstream kernels_, checks_;
    std::string listing_, counters_;
    std::vector<std::string> failures_;
    bool done_ = false;
    nrt_runtime_t* rt_ = nullptr;

    void phase(const std::string& what) {
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
        phases_.push_back({what, sc_core::sc_time_stamp().to_seconds(), wall});
    }
    bool check(bool ok, const std::string& what) {
        if (ok) checks_ << "  ok: " << what << "\n";
        else failures_.push_back(what);
        return ok;
    }
    bool expect(driver::status s, const std::string& what) {
        if (s != driver::status::ok) failures_.push_back(what + ": " + driver::status_name(s));
        return s == driver::status::ok;
    }

    std::vector<float> random_floats(std::size_t n, float scale, std::uint64_t salt) const {
        std::mt19937_64 rng(seed.get() * 1000003 + salt);
        std::normal_distribution<float> nd(0.0f, scale);
        std::vector<float> v(n);
        for (auto& x : v) x = nd(rng);
        return v;
    }
    // bf16 codes of v (v becomes the values the codes hold).
    static std::vector<std::uint16_t> to_bf16(std::vector<float>& v) {
        std::vector<std::uint16_t> codes(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) {
            codes[i] = static_cast<std::uint16_t>(numerics::encode(v[i], numerics::format::bf16));
            v[i] = numerics::decode(codes[i], numerics::format::bf16);
        }
        return codes;
    }

    struct tensor {
        nrt_tensor_t* t = nullptr;
        std::uint64_t at() const { return nrt_tensor_get_device_address(t); }
    };
    tensor alloc(std::size_t bytes, const char* name) {
        tensor x;
        if (nrt_tensor_allocate(rt_, bytes, name, &x.t) != NRT_SUCCESS) failures_.push_back(std::string("allocate ") + name);
        return x;
    }
    template <typename T>
    tensor upload(const std::vector<T>& v, const char* name) {
        tensor x = alloc(v.size() * sizeof(T), name);
        if (x.t && nrt_tensor_write(x.t, v.data(), 0, v.size() * sizeof(T)) != NRT_SUCCESS)
            failures_.push_back(std::string("write ") + name);
        return x;
    }
    std::vector<float> download(const tensor& x, std::size_t n) {
        std::vector<float> v(n);
        if (!x.t || nrt_tensor_read(x.t, v.data(), 0, n * 4) != NRT_SUCCESS) failures_.push_back("read back a result");
        return v;
    }
    // Loads and runs `programs` (one per core of the logical core) on
    // cores first..; returns the host-observed time, or a negative value.
    double run(const std::vector<const program*>& programs, int first, const std::string& what, NRT_STATUS want = NRT_SUCCESS,
               std::uint32_t* error = nullptr, const std::vector<std::uint8_t>* container = nullptr) {
        const std::vector<std::uint8_t> packed = container ? *container : runtime::pack(programs);
        nrt_model_t* m = nullptr;
        if (NRT_STATUS s = nrt_load(rt_, packed.data(), packed.size(), first, static_cast<int>(programs.size()), &m);
            s != NRT_SUCCESS) {
            failures_.push_back(fmt::format("{}: load: {}", what, nrt_status_string(s)));
            return -1;
        }
        const sc_time t0 = sc_core::sc_time_stamp();
        const NRT_STATUS s = nrt_execute(m);
        const double seconds = (sc_core::sc_time_stamp() - t0).to_seconds();
        if (error) *error = nrt_get_last_error(m);
        nrt_unload(m);
        if (s != want) {
            failures_.push_back(fmt::format("{}: {} (expected {})", what, nrt_status_string(s), nrt_status_string(want)));
            return -1;
        }
        return seconds;
    }
    void report_kernel(const std::string& what, double seconds, double error, double tol, double flops = 0) {
        std::string rate = flops > 0 ? fmt::format(", {:.1f} TFLOP/s", flops / seconds / 1e12) : std::string();
        kernels_ << fmt::format("  {:<44} {:>9.2f} us{}, error vs fp64 {:.2g}\n", what, seconds * 1e6, rate, error);
        if (error > tol) failures_.push_back(fmt::format("{}: error {:.3g} above {:.3g}", what, error, tol));
    }

    bool gemm_on(const std::vector<int>& cores, unsigned M, unsigned N, unsigned K, const std::string& what) {
        std::vector<program> progs;
        std::vector<std::vector<float>> as, bs;
        std::vector<tensor> cs;
        for (std::size_t i = 0; i < cores.size(); ++i) {
            auto a = random_floats(std::size_t(K) * M, 1.0f, 10 + i), b = random_floats(std::size_t(K) * N, 1.0f, 20 + i);
            tensor ta = upload(to_bf16(a), "a"), tb = upload(to_bf16(b), "b"), tc = alloc(std::size_t(M) * N * 4, "c");
            progs.push_back(gemm({M, N, K}, {ta.at(), tb.at(), tc.at()}));
            as.push_back(std::move(a));
            bs.push_back(std::move(b));
            cs.push_back(tc);
        }
        std::vector<const program*> ptrs;
        for (const auto& p : progs) ptrs.push_back(&p);
        const double s = run(ptrs, cores[0], what);
        if (s < 0) return false;
        double err = 0;
        for (std::size_t i = 0; i < cores.size(); ++i)
            err = std::max(err, reference::max_relative_error(download(cs[i], std::size_t(M) * N),
                                                              reference::gemm(as[i], bs[i], M, N, K), std::sqrt(double(K))));
        report_kernel(what, s, err, tolerance.get(), 2.0 * M * N * K * double(cores.size()));
        return true;
    }

    void software() {
        // Power-on: the links train, the MCU boots; the host waits for its root port's link.
        phase("power on");
        auto& cfg = adapter_.config();
        while (!(cfg.read(0, TRN3_PCI_PCIE_CAP + TRN3_PCIE_LINK_STATUS, 2) & TRN3_PCIE_LINK_DL_ACTIVE))
            adapter_.sleep_ns(1000);
        phase("root port link up (Gen5 x16)");
        std::vector<driver::pci_function> fns;
        try {
            fns = driver::enumerate(cfg, {0xE0000000ull, 0x10000000ull, 0x100000000000ull, 1ull << 40});
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

        // The reference kernels.
        const unsigned M = unsigned(gemm_m), N = unsigned(gemm_n), K = unsigned(gemm_k);
        gemm_on({0}, M, N, K, fmt::format("nc0: gemm bf16 {}x{}x{}", M, N, K));
        phase("first verified kernel result");
        {
            const rows_shape s{256, 1024};
            auto x = random_floats(std::size_t(s.rows) * s.cols, 3.0f, 3);
            tensor tx = upload(x, "x"), ty = alloc(x.size() * 4, "y");
            const program p = softmax(s, tx.at(), ty.at());
            const double t = run({&p}, 1, "nc1: softmax 256x1024 fp32");
            if (t >= 0)
                report_kernel("nc1: softmax 256x1024 fp32", t,
                              reference::max_relative_error(download(ty, x.size()), reference::softmax(x, s.rows, s.cols), 0.0),
                              tolerance.get());
        }
        {
            const rows_shape s{256, 1024};
            auto x = random_floats(std::size_t(s.rows) * s.cols, 3.0f, 8), gamma = random_floats(s.cols, 1.0f, 9);
            tensor tx = upload(x, "x"), tg = upload(gamma, "gamma"), ty = alloc(x.size() * 4, "y");
            const program p = rmsnorm(s, tx.at(), tg.at(), ty.at(), 1e-6f);
            const double t = run({&p}, 3, "nc3: rmsnorm 256x1024 fp32");
            if (t >= 0)
                report_kernel("nc3: rmsnorm 256x1024 fp32", t,
                              reference::max_relative_error(download(ty, x.size()),
                                                            reference::rmsnorm(x, gamma, s.rows, s.cols, 1e-6), 1e-3),
                              tolerance.get());
        }
        {
            const attention_shape s{256, 128};
            auto q = random_floats(128ull * s.head_dim, 1.0f, 4), k = random_floats(std::size_t(s.keys) * s.head_dim, 1.0f, 5),
                 v = random_floats(std::size_t(s.keys) * s.head_dim, 1.0f, 6);
            tensor tq = upload(to_bf16(q), "q"), tk = upload(to_bf16(k), "k"), tv = upload(to_bf16(v), "v"),
                   to = alloc(128ull * s.head_dim * 4, "o");
            const program p = attention(s, tq.at(), tk.at(), tv.at(), to.at());
            const double t = run({&p}, 2, "nc2: attention 128x256, head dim 128");
            if (t >= 0) {
                const auto want = reference::attention(q, k, v, 128, s.keys, s.head_dim);
                double scale = 0;
                for (double w : want) scale = std::max(scale, std::fabs(w));
                report_kernel("nc2: attention 128x256, head dim 128", t,
                              reference::max_relative_error(download(to, 128ull * s.head_dim), want, scale),
                              std::max(tolerance.get(), 1e-2));
            }
        }
        gemm_on({4, 5}, 256, 512, 256, "nc4+nc5 (LNC=2): gemm bf16 256x512x256 each");
        phase("all kernels verified");

        // Error paths.
        {
            // An illegal instruction: the first Tensor-engine opcode of a softmax program patched to 0xEE.
            const rows_shape s{128, 512};
            auto x = random_floats(std::size_t(s.rows) * s.cols, 1.0f, 7);
            tensor tx = upload(x, "x"), ty = alloc(x.size() * 4, "y");
            const program good = softmax(s, tx.at(), ty.at());
            std::vector<std::uint8_t> bad = runtime::pack({&good});
            runtime::container_view view;
            runtime::parse(bad.data(), bad.size(), view);
            for (unsigned e = 0; e < 5; ++e)
                if (view.streams[0][e].instructions) {
                    bad[view.streams[0][e].offset + offsetof(isa::instruction, op)] = 0xEE;
                    break;
                }
            std::uint32_t error = 0;
            run({&good}, 6, "nc6: illegal instruction", NRT_EXEC_ERROR, &error, &bad);
            check(error == 1, fmt::format("a kernel with an illegal instruction: NRT_EXEC_ERROR, engine error {} (illegal)", error));
            const double t = run({&good}, 6, "nc6: the next kernel after the reset");
            check(t >= 0 && reference::max_relative_error(download(ty, x.size()), reference::softmax(x, s.rows, s.cols), 0.0) <=
                                tolerance.get(),
                  "the driver reset the core; the next kernel on it ran and verified");
        }
        {
            // DMA outside the IOMMU's mappings. A read of host memory is answered
            // Unsupported Request: the descriptor fails. A write is posted: the
            // IOMMU drops it and reports the fault to the driver, the device
            // does not hear of it. Neither moves a byte.
            const std::vector<std::uint8_t> pattern(4096, 0x5A);
            tensor t = upload(pattern, "guard");
            driver::dma_buffer stray = adapter_.alloc_unmapped(4096);
            std::memset(stray.cpu, 0xC3, 4096);
            const std::uint64_t faults = host0.iommu0.faults();
            const driver::status in = device_.copy(stray.bus_address, t.at(), 4096, true);
            std::vector<std::uint8_t> back(4096);
            nrt_tensor_read(t.t, back.data(), 0, 4096);
            const driver::status out = device_.copy(stray.bus_address, t.at(), 4096, false);
            bool host_untouched = true;
            for (std::size_t i = 0; i < 4096; ++i) host_untouched = host_untouched && stray.cpu[i] == 0xC3;
            check(in == driver::status::dma_error && back == pattern && host0.iommu0.faults() >= faults + 1,
                  "DMA read of host memory outside the IOMMU's mappings: the descriptor fails, device memory unchanged");
            adapter_.sleep_ns(10000);  // the posted write reaches the IOMMU
            check(out == driver::status::ok && host_untouched && host0.iommu0.faults() >= faults + 2,
                  "DMA write to host memory outside the mappings: dropped by the IOMMU, fault reported, host memory unchanged");
            const std::vector<std::uint8_t> again(4096, 0x77);
            check(nrt_tensor_write(t.t, again.data(), 0, 4096) == NRT_SUCCESS, "the DMA queue recovered after the faults");
        }
        {
            // An uncorrectable HBM error: the host injects one through the stack's
            // debug registers (BAR0) and reads the word through BAR2. The read
            // returns poisoned data; the firmware's handler logs it and tells the host.
            const std::uint64_t word = 35ull << 30;  // stack 0, far from every tensor
            adapter_.mmio_write64(device_.bar0() + TRN3_BAR0_HBM(0) + 0x30, word);
            adapter_.mmio_write64(device_.bar0() + TRN3_BAR0_HBM(0) + 0x38, 0x3);  // two bits: uncorrectable
            std::uint64_t v = 0;
            adapter_.mmio_read(device_.bar2() + word, &v, 8);
            const bool handled = adapter_.wait_until(
                [&] {
                    trn3_mbox_telemetry t{};
                    return device_.telemetry(t) == driver::status::ok && t.hbm_events >= 1;
                },
                1'000'000, 10'000);
            trn3_mbox_ecc e{};
            const std::uint32_t err = adapter_.mmio_read32(device_.bar0() + TRN3_CHIP_ERR_STATUS);
            check(handled && device_.ecc_counters(0, e) == driver::status::ok && e.uncorrectable == 1 &&
                      ((std::uint64_t(e.last_error_addr_hi) << 32 | e.last_error_addr_lo) == word) &&
                      (err & TRN3_ERR_HBM(0)) && (err & TRN3_ERR_FIRMWARE),
                  "an uncorrectable HBM error: poisoned read, the firmware's handler counted it, the host was told");
            adapter_.mmio_write32(device_.bar0() + TRN3_CHIP_ERR_STATUS, TRN3_ERR_HBM(0) | TRN3_ERR_FIRMWARE);
        }
        {
            // A NeuronCore reset done by the firmware (mailbox RESET_CORE), then a kernel on that core.
            const driver::status r = device_.firmware_reset_core(6);
            const rows_shape s{128, 512};
            auto x = random_floats(std::size_t(s.rows) * s.cols, 1.0f, 11);
            tensor tx = upload(x, "x"), ty = alloc(x.size() * 4, "y");
            const program p = softmax(s, tx.at(), ty.at());
            const double t = run({&p}, 6, "nc6: after a firmware reset");
            check(r == driver::status::ok && t >= 0 &&
                      reference::max_relative_error(download(ty, x.size()), reference::softmax(x, s.rows, s.cols), 0.0) <=
                          tolerance.get(),
                  "mailbox RESET_CORE: the firmware reset nc6; the next kernel on it verified");
        }
        chip_state("at the end");
        counters_ = device_.counters();
        finish();
    }

    // What the firmware reports: telemetry, each NeuronLink port, each stack's ECC counters.
    void chip_state(const std::string& when) {
        trn3_mbox_telemetry t{};
        if (!expect(device_.telemetry(t), "mailbox TELEMETRY")) return;
        checks_ << fmt::format("  firmware telemetry {}: uptime {} us, HBM ready {:#x}, NeuronLink ports {:#x} up {:#x} "
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
            if (e.corrected || e.uncorrectable || e.train_status != 2)
                checks_ << fmt::format("    hbm{}: trained {}, ECC corrected {}, uncorrectable {}, last error at {:#x}\n", s,
                                       e.train_status == 2 ? "yes" : "no", e.corrected, e.uncorrectable,
                                       (std::uint64_t(e.last_error_addr_hi) << 32) | e.last_error_addr_lo);
        }
    }

    void finish() {
        if (rt_) nrt_close(rt_);
        rt_ = nullptr;
        done_ = true;
        sc_core::sc_stop();
    }
};

const platform_registration registration{
    "trn3-dev", "one Trainium3 and its host: power-on, firmware, driver, runtime, reference kernels verified",
    [] { return std::make_unique<trn3_dev>("trn3dev"); }};

} // namespace
} // namespace trn3
