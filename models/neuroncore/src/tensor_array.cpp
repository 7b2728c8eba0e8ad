#include "tensor_array.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

namespace trn3::neuroncore {

namespace {
std::uint32_t bits_of(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return std::isnan(f) ? 0x7fc00000u : u;  // rule 24: one NaN
}
}  // namespace

tensor_array::tensor_array(const neuroncore& core)
    : core_(core), rtl_jobs_count_(&core, "rtl_array_jobs", "array jobs run on the RTL systolic array"),
      rtl_cycles_(&core, "rtl_array_cycles", "clock cycles of the RTL systolic array"),
      rtl_formula_cycles_(
          &core, "rtl_formula_cycles",
          "the same array jobs' cycles by the documented formula (passes x (2R + C - 2 + N x cadence))"),
      rtl_mismatches_(&core, "rtl_mismatches", "check mode: RTL results that differ from the model's") {
    if (core.tensor_backend.get() != "model") rtl_ = std::make_unique<rtl::systolic_array>();
    // A waveform file that cannot be written is the user's error, found now
    // rather than after the run (the file is created empty and filled later).
    if (!core.tensor_waveform.get().empty()) write_user_file(core.tensor_waveform.get(), "waveform file", "");
}

tensor_array::~tensor_array() = default;

void tensor_array::on_model(const operands& op, std::vector<float>& acc) {
    const unsigned K = op.K, M = op.M, N = op.N;
    if (op.select) {  // a transpose: acc[m][n] = a[n][m] (b is the identity)
        for (unsigned m = 0; m < M; ++m)
            for (unsigned n = 0; n < N; ++n)
                acc[static_cast<std::size_t>(m) * N + n] = op.a[static_cast<std::size_t>(n) * M + m];
        return;
    }
    std::fill(acc.begin(), acc.end(), 0.0f);
    // k outer, n inner: each output still sums in increasing k (rule 18).
    for (unsigned c = 0; c < K; ++c) {
        for (unsigned m = 0; m < M; ++m) {
            float* out = &acc[static_cast<std::size_t>(m) * N];
            const float av = op.a[static_cast<std::size_t>(c) * M + m];
            const float* brow =
                &op.b[static_cast<std::size_t>(op.k_of ? op.k_of[static_cast<std::size_t>(m) * K + c] : c) * N];
            if (op.fused)
                for (unsigned n = 0; n < N; ++n) out[n] = std::fma(av, brow[n], out[n]);
            else
                for (unsigned n = 0; n < N; ++n) out[n] += av * brow[n];
        }
    }
}

rtl::array_job tensor_array::job_of(const operands& op) {
    rtl::array_job job;
    const unsigned K = op.k_of ? op.b_rows : op.K;
    job.K = K;
    job.M = op.M;
    job.N = op.N;
    job.a.resize(static_cast<std::size_t>(K) * op.M);
    job.b.resize(static_cast<std::size_t>(K) * op.N);
    std::memcpy(job.b.data(), op.b, job.b.size() * 4);
    if (!op.k_of) {
        std::memcpy(job.a.data(), op.a, job.a.size() * 4);
    } else {  // expanded: kept values at their dense K, holes elsewhere
        job.holes.assign(job.a.size(), 1);
        for (unsigned m = 0; m < op.M; ++m)
            for (unsigned c = 0; c < op.K; ++c) {
                const std::size_t at =
                    static_cast<std::size_t>(op.k_of[static_cast<std::size_t>(m) * op.K + c]) * op.M + m;
                std::memcpy(&job.a[at], &op.a[static_cast<std::size_t>(c) * op.M + m], 4);
                job.holes[at] = 0;
            }
    }
    job.select = op.select;
    job.cadence = op.cadence;
    return job;
}

std::vector<float> tensor_array::on_rtl(const rtl::array_job& job) {
    ++rtl_jobs_;  // this job's number, from 1
    const std::string& waveform = core_.tensor_waveform.get();
    if (!waveform.empty() && rtl_jobs_ == core_.tensor_waveform_job.get()) {
        rtl_->trace_next_run(waveform);
        core_.log().info("waveform of RTL array job {} ({} x {} x {}) to {}", rtl_jobs_, job.K, job.M, job.N, waveform);
    }
    const rtl::array_result r = rtl_->run(job);
    ++rtl_jobs_count_;
    rtl_cycles_ += r.cycles;
    // The documented formula for the same job, to compare with the RTL's count.
    const unsigned R = rtl::systolic_array::rows(), C = rtl::systolic_array::cols();
    const unsigned array_rows = job.mx ? job.K / 4 : job.K;
    const std::uint64_t passes = static_cast<std::uint64_t>((job.M + C - 1) / C) * ((array_rows + R - 1) / R);
    rtl_formula_cycles_ += passes * rtl::systolic_array::pass_cycles(job.N, job.cadence);
    std::vector<float> acc(r.acc.size());
    std::memcpy(acc.data(), r.acc.data(), acc.size() * 4);
    if (rtl_jobs_ == core_.tensor_inject_flip.get() && !acc.empty()) {
        std::uint32_t u;
        std::memcpy(&u, &acc[0], 4);
        u ^= 1u;
        std::memcpy(&acc[0], &u, 4);
    }
    return acc;
}

void tensor_array::run(const std::function<void(std::vector<float>&)>& model,
                       const std::function<rtl::array_job()>& job, std::vector<float>& acc) {
    ++array_jobs_;
    const std::string& backend = core_.tensor_backend.get();
    if (backend == "model") return model(acc);
    if (backend == "rtl") {
        acc = on_rtl(job());
        return;
    }
    model(acc);
    if (array_jobs_ % core_.tensor_check_every.get()) return;
    const rtl::array_job j = job();
    const std::vector<float> rtl = on_rtl(j);
    for (std::size_t i = 0; i < acc.size(); ++i)
        if (bits_of(acc[i]) != bits_of(rtl[i])) {
            ++rtl_mismatches_;
            if (rtl_mismatches_.value() == 1) report_mismatch(j, acc, rtl);
            return;
        }
}

void tensor_array::compute(const operands& op, std::vector<float>& acc) {
    run([&](std::vector<float>& out) { on_model(op, out); }, [&] { return job_of(op); }, acc);
}

void tensor_array::report_mismatch(const rtl::array_job& job, const std::vector<float>& model,
                                   const std::vector<float>& rtl) {
    std::size_t i = 0;
    while (bits_of(model[i]) == bits_of(rtl[i])) ++i;
    const unsigned m = static_cast<unsigned>(i / job.N), n = static_cast<unsigned>(i % job.N);
    const unsigned digits = job.mx ? 2 : 8;
    std::string operands;
    for (unsigned k = 0; k < job.K; ++k)
        operands += fmt::format("{}{:0{}x}*{:0{}x}", k ? " " : "", job.a[static_cast<std::size_t>(k) * job.M + m],
                                digits, job.b[static_cast<std::size_t>(k) * job.N + n], digits);
    std::string scales;
    for (unsigned g = 0; job.mx && g < job.K / 32; ++g)
        scales += fmt::format("{}{:02x}*{:02x}", g ? " " : "; block scales ",
                              job.scales_a[static_cast<std::size_t>(g) * job.M + m],
                              job.scales_b[static_cast<std::size_t>(g) * job.N + n]);
    core_.log().error("RTL check: array job {} ({} x {} x {}{}) differs at output ({}, {}): model {:08x}, RTL {:08x}; "
                      "operands a[k][{}]*b[k][{}] for k = 0..{}: {}{}",
                      array_jobs_, job.K, job.M, job.N,
                      job.select ? ", transpose"
                      : job.mx   ? ", MX"
                                 : "",
                      m, n, bits_of(model[i]), bits_of(rtl[i]), m, n, job.K - 1, operands, scales);
}

}  // namespace trn3::neuroncore
