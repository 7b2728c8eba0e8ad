// NeuronCore benchmark: simulated TFLOP/s and % of peak, and the functional
// model's host speed (simulated GFLOP per wall second), on one core with
// device memory.
//
//   build/release/bench/neuroncore_bench [--quick]
//
// Peak of one core: 128 x 128 x 2 FLOP x 2.4 GHz = 78.64 TFLOP/s (bf16, fp8);
// MXFP8/MXFP4 four times that, 314.6 TFLOP/s ("% of peak" below is against
// the bf16 figure, so MX streams show 400%).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "trn3/core/entry.h"
#include "trn3/core/sparse_memory.h"
#include "trn3/kernels/gemm.h"
#include "trn3/neuroncore/neuroncore.h"
#include "trn3/numerics/float_format.h"

using namespace trn3;
using namespace trn3::kernels;

namespace {
constexpr double peak = 128.0 * 128 * 2 * 2.4e9;

struct bench_rig {
    neuroncore::neuroncore core{"nc0"};
    sparse_memory device{"device", byte_count{16ull << 30}};
    bench_rig() { core.mem.bind(device.in); }

    struct result {
        double sim_s, wall_s, flops;
    };
    result run(const program& p) {
        core.reset();
        auto pcs =
            p.load([this](std::uint64_t a, const void* d, std::size_t n) { std::memcpy(device.data() + a, d, n); },
                   12ull << 30);
        const std::uint64_t flops_before = flops();
        const sc_core::sc_time t0 = sc_core::sc_time_stamp();
        auto w0 = std::chrono::steady_clock::now();
        for (unsigned e = 0; e < isa::engine_count; ++e)
            if (!p.on(static_cast<isa::engine>(e)).code().empty()) core.start(static_cast<isa::engine>(e), pcs[e]);
        sc_core::sc_start();
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
        return {(sc_core::sc_time_stamp() - t0).to_seconds(), wall, static_cast<double>(flops() - flops_before)};
    }
    std::uint64_t flops() const {
        return stats_registry::instance().find("nc0.matmul_flops")->to_json().get<std::uint64_t>();
    }
    void fill(std::uint64_t address, std::size_t count, dtype t, std::uint32_t seed) {
        std::mt19937 rng(seed);
        std::normal_distribution<float> nd(0.0f, 1.0f);
        const auto f = t == dtype::bf16 ? numerics::format::bf16 : numerics::format::e4m3fn;
        const unsigned es = isa::dtype_bytes(t);
        for (std::size_t i = 0; i < count; ++i) {
            const std::uint32_t c = numerics::encode(nd(rng), f);
            std::memcpy(device.data() + address + i * es, &c, es);
        }
    }
};

// The chip's eight cores, each with its own device memory, for the
// chip-level figure (2,517 TFLOP/s MXFP8 in the facts sheet).
struct chip_rig {
    static constexpr unsigned cores = 8;
    std::vector<std::unique_ptr<neuroncore::neuroncore>> core;
    std::vector<std::unique_ptr<sparse_memory>> device;
    chip_rig() {
        for (unsigned c = 0; c < cores; ++c) {
            core.push_back(std::make_unique<neuroncore::neuroncore>(fmt::format("chip_nc{}", c).c_str()));
            device.push_back(
                std::make_unique<sparse_memory>(fmt::format("chip_device{}", c).c_str(), byte_count{1ull << 30}));
            core.back()->mem.bind(device.back()->in);
        }
    }
    // Runs the same program on every core at once.
    bench_rig::result run(const program& p) {
        std::uint64_t flops_before = flops();
        for (unsigned c = 0; c < cores; ++c) {
            core[c]->reset();
            auto pcs =
                p.load([&](std::uint64_t a, const void* d, std::size_t n) { std::memcpy(device[c]->data() + a, d, n); },
                       512ull << 20);
            for (unsigned e = 0; e < isa::engine_count; ++e)
                if (!p.on(static_cast<isa::engine>(e)).code().empty())
                    core[c]->start(static_cast<isa::engine>(e), pcs[e]);
        }
        const sc_core::sc_time t0 = sc_core::sc_time_stamp();
        auto w0 = std::chrono::steady_clock::now();
        sc_core::sc_start();
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
        return {(sc_core::sc_time_stamp() - t0).to_seconds(), wall, static_cast<double>(flops() - flops_before)};
    }
    std::uint64_t flops() const {
        std::uint64_t sum = 0;
        for (unsigned c = 0; c < cores; ++c)
            sum += stats_registry::instance()
                       .find(fmt::format("chip_nc{}.matmul_flops", c))
                       ->to_json()
                       .get<std::uint64_t>();
        return sum;
    }
};

// A sequencer loop of back-to-back MXFP8 matmuls on data already in SBUF.
program mx_stream(std::uint32_t repeats) {
    program p;
    auto& s = p.on(isa::engine::tensor);
    s.set_reg(0, 0);
    const std::uint32_t loop = s.here();
    s.matmul_mx(psum(dtype::fp32, 0, 128, 0, 512), sbuf(dtype::e4m3fn, 0, 128, 0, 512),
                sbuf(dtype::e4m3fn, 0, 128, 4096, 2048), 100000, 101000)
        .add_reg(0, 1)
        .branch_lt(0, repeats, loop)
        .halt();
    return p;
}

void print(const char* name, const bench_rig::result& r) {
    std::printf("  %-34s %10.3f us  %8.2f TFLOP/s  %6.1f%% of peak   wall %7.3f s  host %6.2f GFLOP/s\n", name,
                r.sim_s * 1e6, r.flops / r.sim_s / 1e12, r.flops / r.sim_s / peak * 100, r.wall_s,
                r.flops / r.wall_s / 1e9);
}
}  // namespace

int sc_main(int argc, char** argv) {
    const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
    bench_rig rig;
    chip_rig chip;
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    std::printf("NeuronCore-v4, one core, peak %.2f TFLOP/s (bf16/fp8)\n", peak / 1e12);

    // A long stream of back-to-back 128x128x512 matmuls on data already in
    // SBUF, as a sequencer loop.
    for (dtype t : {dtype::bf16, dtype::e4m3fn}) {
        program p;
        auto& s = p.on(isa::engine::tensor);
        s.set_reg(0, 0);
        const std::uint32_t loop = s.here();
        s.matmul(psum(dtype::fp32, 0, 128, 0, 512), sbuf(t, 0, 128, 0, 128), sbuf(t, 0, 128, 1024, 512))
            .add_reg(0, 1)
            .branch_lt(0, quick ? 100 : 2000, loop)
            .halt();
        print(t == dtype::bf16 ? "matmul stream bf16 (128x128x512)" : "matmul stream fp8 (128x128x512)", rig.run(p));
    }

    // MXFP8: 512-deep K per matmul (4 values per partition), same N cycles;
    // then the same stream on all eight cores of a chip at once.
    print("matmul stream MXFP8 (K512 x128x512)", rig.run(mx_stream(quick ? 10 : 100)));
    print("chip: 8 cores, MXFP8 stream", chip.run(mx_stream(quick ? 4 : 100)));

    // Structured sparsity: the same N cycles per matmul for G/4 times the
    // dense K (FLOPs counted dense-equivalent). Positions 0-3 in every group.
    struct sparse_stream {
        const char* name;
        bool mx;
        isa::sparsity s;
    };
    for (const sparse_stream& ss : {sparse_stream{"matmul stream bf16 4:16 (K512)", false, isa::sparsity::s4_16},
                                    sparse_stream{"matmul stream MXFP8 4:8 (K1024)", true, isa::sparsity::s4_8},
                                    sparse_stream{"matmul stream MXFP8 4:16 (K2048)", true, isa::sparsity::s4_16}}) {
        const unsigned V = ss.mx ? 4 : 1, D = V * isa::sparsity_group(ss.s) / 4;
        for (unsigned part = 0; part < 128; ++part)
            for (unsigned j = 0; j < 128 * V; ++j)
                rig.core.sbuf(part)[150000 + j] = static_cast<std::uint8_t>(ss.mx ? j % 4 : part % 4);
        const dtype t = ss.mx ? dtype::e4m3fn : dtype::bf16;
        program p;
        auto& s = p.on(isa::engine::tensor);
        s.set_reg(0, 0);
        const std::uint32_t loop = s.here();
        const auto dst = psum(dtype::fp32, 0, 128, 0, 512);
        const auto stationary = sbuf(t, 0, 128, 0, 128 * V), moving = sbuf(t, 0, 128, 4096, 512 * D);
        if (ss.mx) s.matmul_mx(dst, stationary, moving, 100000, 101000);
        else s.matmul(dst, stationary, moving);
        s.sparse(ss.s, 150000).add_reg(0, 1).branch_lt(0, quick ? 10 : (ss.mx ? 100 : 500), loop).halt();
        print(ss.name, rig.run(p));
    }

    // Tiled GEMMs from device memory.
    const gemm_shape shapes[] = {{512, 1024, 512, dtype::bf16},
                                 {1024, 2048, 1024, dtype::bf16},
                                 {1024, 2048, 1024, dtype::e4m3fn},
                                 {1024, 2048, 1024, dtype::e4m3fn, true},
                                 {1024, 2048, 4096, dtype::e4m3fn, true}};
    for (const gemm_shape& s : shapes) {
        if (quick && s.M > 512) continue;
        const gemm_addresses at{0, 4ull << 30, 8ull << 30, 10ull << 30, 11ull << 30};
        rig.fill(at.a, static_cast<std::size_t>(s.K) * s.M, s.operands, 1);
        rig.fill(at.b, static_cast<std::size_t>(s.K) * s.N, s.operands, 2);
        if (s.mx) {  // scales near 2^0 (codes around 127): values of unit scale
            std::memset(rig.device.data() + at.scales_a, 127, static_cast<std::size_t>(s.K / 32) * s.M);
            std::memset(rig.device.data() + at.scales_b, 127, static_cast<std::size_t>(s.K / 32) * s.N);
        }
        char name[64];
        std::snprintf(name, sizeof name, "gemm %s M%u N%u K%u",
                      s.mx                        ? "mxfp8"
                      : s.operands == dtype::bf16 ? "bf16"
                                                  : "fp8",
                      s.M, s.N, s.K);
        print(name, rig.run(gemm(s, at)));
    }
    return 0;
}

int main(int argc, char** argv) { return systemc_entry(argc, argv); }
