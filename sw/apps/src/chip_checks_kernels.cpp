// chip_checks: the reference kernels and the error paths (chip_checks.cpp
// has the bring-up and the report).
#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>

#include <fmt/format.h>
#include <systemc>

#include "chip_checks.h"
#include "trn3/kernels/attention.h"
#include "trn3/kernels/gemm.h"
#include "trn3/kernels/reference.h"
#include "trn3/numerics/float_format.h"
#include "trn3/runtime/container.h"
#include "trn3/spec/device.h"

namespace trn3::apps {

using namespace kernels;

namespace {
// bf16 codes of v (v becomes the values the codes hold).
std::vector<std::uint16_t> to_bf16(std::vector<float>& v) {
    std::vector<std::uint16_t> codes(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
        codes[i] = static_cast<std::uint16_t>(numerics::encode(v[i], numerics::format::bf16));
        v[i] = numerics::decode(codes[i], numerics::format::bf16);
    }
    return codes;
}
}  // namespace

std::vector<float> chip_checks::random_floats(std::size_t n, float scale, std::uint64_t salt) const {
    std::mt19937_64 rng(seed.get() * 1000003 + salt);
    std::normal_distribution<float> nd(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = nd(rng);
    return v;
}

chip_checks::tensor chip_checks::alloc(std::size_t bytes, const char* name) {
    tensor x;
    if (nrt_tensor_allocate(rt_, bytes, name, &x.t) != NRT_SUCCESS)
        failures_.push_back(std::string("allocate ") + name);
    else tensors_.push_back(x.t);
    return x;
}

template <typename T>
chip_checks::tensor chip_checks::upload(const std::vector<T>& v, const char* name) {
    tensor x = alloc(v.size() * sizeof(T), name);
    if (x.t && nrt_tensor_write(x.t, v.data(), 0, v.size() * sizeof(T)) != NRT_SUCCESS)
        failures_.push_back(std::string("write ") + name);
    return x;
}

std::vector<float> chip_checks::download(const tensor& x, std::size_t n) {
    std::vector<float> v(n);
    if (!x.t || nrt_tensor_read(x.t, v.data(), 0, n * 4) != NRT_SUCCESS) failures_.push_back("read back a result");
    return v;
}

// Loads and runs `programs` (one per core of the logical core) on cores
// first..; returns the host-observed time, or a negative value.
double chip_checks::run_kernel(const std::vector<const program*>& programs, int first, const std::string& what,
                               NRT_STATUS want, std::uint32_t* error, const std::vector<std::uint8_t>* container) {
    const std::vector<std::uint8_t> packed = container ? *container : runtime::pack(programs);
    nrt_model_t* m = nullptr;
    if (NRT_STATUS s = nrt_load(rt_, packed.data(), packed.size(), first, static_cast<int>(programs.size()), &m);
        s != NRT_SUCCESS) {
        failures_.push_back(fmt::format("{}: load: {}", what, nrt_status_string(s)));
        return -1;
    }
    const sc_core::sc_time t0 = sc_core::sc_time_stamp();
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

void chip_checks::report_kernel(const std::string& what, double seconds, double error, double tol, double flops) {
    std::string rate = flops > 0 ? fmt::format(", {:.1f} TFLOP/s", flops / seconds / 1e12) : std::string();
    kernels_ << fmt::format("  {:<44} {:>9.2f} us{}, error vs fp64 {:.2g}\n", what, seconds * 1e6, rate, error);
    if (error > tol) failures_.push_back(fmt::format("{}: error {:.3g} above {:.3g}", what, error, tol));
}

bool chip_checks::gemm_on(const std::vector<int>& cores, unsigned M, unsigned N, unsigned K, const std::string& what) {
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
    const double s = run_kernel(ptrs, cores[0], what);
    if (s < 0) return false;
    double err = 0;
    for (std::size_t i = 0; i < cores.size(); ++i)
        err =
            std::max(err, reference::max_relative_error(download(cs[i], std::size_t(M) * N),
                                                        reference::gemm(as[i], bs[i], M, N, K), std::sqrt(double(K))));
    report_kernel(what, s, err, tolerance.get(), 2.0 * M * N * K * double(cores.size()));
    return true;
}

void chip_checks::reference_kernels() {
    const unsigned M = unsigned(gemm_m), N = unsigned(gemm_n), K = unsigned(gemm_k);
    gemm_on({0}, M, N, K, fmt::format("nc0: gemm bf16 {}x{}x{}", M, N, K));
    phase("first verified kernel result");
    {
        const rows_shape s{256, 1024};
        auto x = random_floats(std::size_t(s.rows) * s.cols, 3.0f, 3);
        tensor tx = upload(x, "x"), ty = alloc(x.size() * 4, "y");
        const program p = softmax(s, tx.at(), ty.at());
        const double t = run_kernel({&p}, 1, "nc1: softmax 256x1024 fp32");
        if (t >= 0)
            report_kernel(
                "nc1: softmax 256x1024 fp32", t,
                reference::max_relative_error(download(ty, x.size()), reference::softmax(x, s.rows, s.cols), 0.0),
                tolerance.get());
    }
    {
        const rows_shape s{256, 1024};
        auto x = random_floats(std::size_t(s.rows) * s.cols, 3.0f, 8), gamma = random_floats(s.cols, 1.0f, 9);
        tensor tx = upload(x, "x"), tg = upload(gamma, "gamma"), ty = alloc(x.size() * 4, "y");
        const program p = rmsnorm(s, tx.at(), tg.at(), ty.at(), 1e-6f);
        const double t = run_kernel({&p}, 3, "nc3: rmsnorm 256x1024 fp32");
        if (t >= 0)
            report_kernel("nc3: rmsnorm 256x1024 fp32", t,
                          reference::max_relative_error(download(ty, x.size()),
                                                        reference::rmsnorm(x, gamma, s.rows, s.cols, 1e-6), 1e-3),
                          tolerance.get());
    }
    {
        const attention_shape s{256, 128};
        auto q = random_floats(128ull * s.head_dim, 1.0f, 4),
             k = random_floats(std::size_t(s.keys) * s.head_dim, 1.0f, 5),
             v = random_floats(std::size_t(s.keys) * s.head_dim, 1.0f, 6);
        tensor tq = upload(to_bf16(q), "q"), tk = upload(to_bf16(k), "k"), tv = upload(to_bf16(v), "v"),
               to = alloc(128ull * s.head_dim * 4, "o");
        const program p = attention(s, tq.at(), tk.at(), tv.at(), to.at());
        const double t = run_kernel({&p}, 2, "nc2: attention 128x256, head dim 128");
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
}

void chip_checks::error_paths() {
    {
        // An illegal instruction: the first Tensor-engine opcode of a softmax program patched to 0xEE.
        const rows_shape s{128, 512};
        auto x = random_floats(std::size_t(s.rows) * s.cols, 1.0f, 7);
        tensor tx = upload(x, "x"), ty = alloc(x.size() * 4, "y");
        const program good = softmax(s, tx.at(), ty.at());
        std::vector<std::uint8_t> bad = runtime::pack({&good});
        runtime::container_view view;
        runtime::parse(bad.data(), bad.size(), view);
        for (unsigned e = 0; e < isa::engine_count; ++e)
            if (view.streams[0][e].instructions) {
                bad[view.streams[0][e].offset + offsetof(isa::instruction, op)] = 0xEE;
                break;
            }
        std::uint32_t error = 0;
        run_kernel({&good}, 6, "nc6: illegal instruction", NRT_EXEC_ERROR, &error, &bad);
        check(error == 1,
              fmt::format("a kernel with an illegal instruction: NRT_EXEC_ERROR, engine error {} (illegal)", error));
        const double t = run_kernel({&good}, 6, "nc6: the next kernel after the reset");
        check(t >= 0 && reference::max_relative_error(download(ty, x.size()), reference::softmax(x, s.rows, s.cols),
                                                      0.0) <= tolerance.get(),
              "the driver reset the core; the next kernel on it ran and verified");
    }
    {
        // DMA outside the IOMMU's mappings. A read of host memory is answered
        // Unsupported Request: the descriptor fails. A write is posted: the
        // IOMMU drops it and reports the fault to the driver, the device
        // does not hear of it, and the driver fails the transfer. Neither
        // moves a byte.
        const std::vector<std::uint8_t> pattern(4096, 0x5A);
        tensor t = upload(pattern, "guard");
        driver::dma_buffer stray = host_.alloc_unmapped(4096);
        std::memset(stray.cpu, 0xC3, 4096);
        const std::uint64_t faults = iommu_faults_;
        const driver::status in = device_.copy(stray.bus_address, t.at(), 4096, true);
        std::vector<std::uint8_t> back(4096);
        nrt_tensor_read(t.t, back.data(), 0, 4096);
        const driver::status out = device_.copy(stray.bus_address, t.at(), 4096, false);
        bool host_untouched = true;
        for (std::size_t i = 0; i < 4096; ++i) host_untouched = host_untouched && stray.cpu[i] == 0xC3;
        check(in == driver::status::dma_error && back == pattern && iommu_faults_ >= faults + 1,
              "DMA read of host memory outside the IOMMU's mappings: the descriptor fails, device memory unchanged");
        host_.sleep_ns(10000);  // the posted write reaches the IOMMU
        check(
            out == driver::status::dma_error && host_untouched && iommu_faults_ >= faults + 2,
            "DMA write to host memory outside the mappings: dropped by the IOMMU, fault reported, the transfer failed, "
            "host memory unchanged");
        const std::vector<std::uint8_t> again(4096, 0x77);
        check(nrt_tensor_write(t.t, again.data(), 0, 4096) == NRT_SUCCESS, "the DMA queue recovered after the faults");
    }
    {
        // An uncorrectable HBM error: the host injects one through the stack's
        // debug registers (BAR0) and reads the word through BAR2. The read
        // returns poisoned data; the firmware's handler logs it and tells the host.
        const std::uint64_t word = 35ull << 30;  // stack 0, far from every tensor
        host_.mmio_write64(device_.bar0() + TRN3_BAR0_HBM(0) + TRN3_HBM_INJECT_ADDR, word);
        host_.mmio_write64(device_.bar0() + TRN3_BAR0_HBM(0) + TRN3_HBM_INJECT_MASK, 0x3);  // two bits: uncorrectable
        std::uint64_t v = 0;
        host_.mmio_read(device_.bar2() + word, &v, 8);
        const bool handled = host_.wait_until(
            [&] {
                trn3_mbox_telemetry t{};
                return device_.telemetry(t) == driver::status::ok && t.hbm_events >= 1;
            },
            1'000'000, 10'000);
        trn3_mbox_ecc e{};
        const std::uint32_t err = host_.mmio_read32(device_.bar0() + TRN3_CHIP_ERR_STATUS);
        check(handled && device_.ecc_counters(0, e) == driver::status::ok && e.uncorrectable == 1 &&
                  ((std::uint64_t(e.last_error_addr_hi) << 32 | e.last_error_addr_lo) == word) &&
                  (err & TRN3_ERR_HBM(0)) && (err & TRN3_ERR_FIRMWARE),
              "an uncorrectable HBM error: poisoned read, the firmware's handler counted it, the host was told");
        host_.mmio_write32(device_.bar0() + TRN3_CHIP_ERR_STATUS, TRN3_ERR_HBM(0) | TRN3_ERR_FIRMWARE);
    }
    {
        // A NeuronCore reset done by the firmware (mailbox RESET_CORE), then a kernel on that core.
        const driver::status r = device_.firmware_reset_core(6);
        const rows_shape s{128, 512};
        auto x = random_floats(std::size_t(s.rows) * s.cols, 1.0f, 11);
        tensor tx = upload(x, "x"), ty = alloc(x.size() * 4, "y");
        const program p = softmax(s, tx.at(), ty.at());
        const double t = run_kernel({&p}, 6, "nc6: after a firmware reset");
        check(r == driver::status::ok && t >= 0 &&
                  reference::max_relative_error(download(ty, x.size()), reference::softmax(x, s.rows, s.cols), 0.0) <=
                      tolerance.get(),
              "mailbox RESET_CORE: the firmware reset nc6; the next kernel on it verified");
    }
}

}  // namespace trn3::apps
