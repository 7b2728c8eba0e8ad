#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "rig.h"
#include "trn3/kernels/gemm.h"
#include "trn3/numerics/float_format.h"

using namespace trn3;
using namespace trn3::kernels;

namespace {
struct gemm_case {
    gemm_shape shape;
    std::vector<std::uint32_t> a, b;  // operand codes
    std::vector<float> c;  // result read back
    sc_core::sc_time took;
};

gemm_case run_gemm(const gemm_shape& s, std::uint64_t seed) {
    test::core_rig r;
    gemm_case g{s, {}, {}, {}, {}};
    const auto fmt = s.operands == dtype::bf16 ? numerics::format::bf16 : numerics::format::e4m3fn;
    const unsigned es = isa::dtype_bytes(s.operands);
    std::mt19937 rng(static_cast<std::uint32_t>(seed));
    std::normal_distribution<float> nd(0.0f, 1.0f);
    g.a.resize(static_cast<std::size_t>(s.K) * s.M);
    g.b.resize(static_cast<std::size_t>(s.K) * s.N);
    for (auto& v : g.a) v = numerics::encode(nd(rng), fmt);
    for (auto& v : g.b) v = numerics::encode(nd(rng), fmt);
    const gemm_addresses at{0x0, 0x1000'0000, 0x2000'0000};
    for (std::size_t i = 0; i < g.a.size(); ++i) std::memcpy(r.device.data() + at.a + i * es, &g.a[i], es);
    for (std::size_t i = 0; i < g.b.size(); ++i) std::memcpy(r.device.data() + at.b + i * es, &g.b[i], es);
    program p = gemm(s, at);
    g.took = r.run(p);
    REQUIRE(r.core.all_stopped());
    for (unsigned e = 0; e < isa::engine_count; ++e)
        CHECK(r.core.status(static_cast<isa::engine>(e)) != neuroncore::engine_status::error);
    CHECK(r.core.semaphore(gemm_done_semaphore) == gemm_tiles(s));
    g.c.resize(static_cast<std::size_t>(s.M) * s.N);
    std::memcpy(g.c.data(), r.device.data() + at.c, g.c.size() * 4);
    return g;
}

void check_against_references(const gemm_case& g) {
    const gemm_shape& s = g.shape;
    const auto fmt = s.operands == dtype::bf16 ? numerics::format::bf16 : numerics::format::e4m3fn;
    std::vector<float> A(g.a.size()), B(g.b.size());
    for (std::size_t i = 0; i < A.size(); ++i) A[i] = numerics::decode(g.a[i], fmt);
    for (std::size_t i = 0; i < B.size(); ++i) B[i] = numerics::decode(g.b[i], fmt);
    double worst = 0;
    for (unsigned m = 0; m < s.M; ++m) {
        for (unsigned n = 0; n < s.N; ++n) {
            // The documented order: within a K tile, fl32 adds in k order; the
            // tiles accumulate in PSUM in order (fl32 of tile sum onto psum).
            float psum = 0;
            double exact = 0, magnitude = 0;
            for (unsigned kt = 0; kt < s.K / 128; ++kt) {
                float acc = 0;
                for (unsigned k = kt * 128; k < kt * 128 + 128; ++k) {
                    const float prod =
                        A[static_cast<std::size_t>(k) * s.M + m] * B[static_cast<std::size_t>(k) * s.N + n];
                    acc += prod;
                    exact += static_cast<double>(prod);
                    magnitude += std::fabs(static_cast<double>(prod));
                }
                psum = kt == 0 ? acc : psum + acc;
            }
            const float got = g.c[static_cast<std::size_t>(m) * s.N + n];
            REQUIRE(got == psum);  // bit for bit
            // Against fp64: fp32 summation error is at most about K x 2^-24 x sum|products|.
            const double bound = s.K * std::ldexp(1.0, -24) * magnitude;
            REQUIRE(std::fabs(static_cast<double>(got) - exact) <= bound);
            worst = std::max(worst, std::fabs(static_cast<double>(got) - exact) / (magnitude + 1e-30));
        }
    }
    INFO("worst error relative to sum|products|: " << worst);
    CHECK(worst < 1e-5);
}
}  // namespace

TEST_CASE("a tiled bf16 GEMM (M 256, N 1024, K 384) is bit-exact to the documented order and close to fp64") {
    gemm_case g = run_gemm({256, 1024, 384, dtype::bf16}, 1);
    check_against_references(g);
    // 2 x 3 x ... matmuls of 512 columns; the Tensor engine bounds it below.
    const double tensor_floor = (256 / 128) * (1024 / 512) * (384 / 128) * 512 / 2.4e9;
    CHECK(g.took.to_seconds() > tensor_floor);
}

TEST_CASE("a tiled fp8 (e4m3fn) GEMM is bit-exact to the documented order and close to fp64") {
    gemm_case g = run_gemm({128, 512, 256, dtype::e4m3fn}, 2);
    check_against_references(g);
}

TEST_CASE("a GEMM streaming A through three buffers past three resident B panels is bit-exact") {
    gemm_shape s{384, 1536, 256, dtype::bf16};
    s.resident_a = false;  // A tiles reloaded for every panel; panel 2 reuses panel 0's buffer
    check_against_references(run_gemm(s, 3));
}

TEST_CASE("a GEMM with every operand reused from SBUF keeps the Tensor engine above 90 percent busy") {
    // M 512, N 2048, K 1024: 128 matmuls of 512 columns. Each B element loads
    // once (its panel stays while A streams) and A stays resident, so DMA
    // hides behind the Tensor engine; a kernel reloading both operands per
    // step was DMA-bound at about 55%.
    gemm_case g = run_gemm({512, 2048, 1024, dtype::bf16}, 4);
    const double tensor_floor = 4.0 * 4 * 8 * 512 / 2.4e9;
    INFO("took " << g.took.to_seconds() * 1e6 << " us, Tensor floor " << tensor_floor * 1e6 << " us");
    CHECK(g.took.to_seconds() < tensor_floor / 0.9);
    CHECK(g.took.to_seconds() > tensor_floor);
}

TEST_CASE("a GEMM shape that does not tile is refused") {
    CHECK_THROWS_AS(gemm({100, 512, 128, dtype::bf16}, {0, 0, 0}), std::invalid_argument);
}

#include "trn3/numerics/mx.h"

TEST_CASE("a tiled MXFP8 GEMM (M 128, N 512, K 1024) is bit-exact to in-order MX group sums") {
    test::core_rig r;
    const unsigned M = 128, N = 512, K = 1024, G = K / 32;
    std::mt19937 rng(8);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    const gemm_addresses at{0x0, 0x1000'0000, 0x2000'0000, 0x3000'0000, 0x3800'0000};
    // Quantise each column's 32-row groups; write codes [K][cols] and scales [G][cols].
    auto quantize = [&](unsigned cols, std::uint64_t codes_at, std::uint64_t scales_at) {
        std::vector<numerics::mx_block> blocks(static_cast<std::size_t>(G) * cols);
        for (unsigned c = 0; c < cols; ++c)
            for (unsigned g = 0; g < G; ++g) {
                float v[32];
                for (float& x : v) x = nd(rng);
                numerics::mx_block b = numerics::quantize_mx(v, numerics::format::e4m3fn);
                r.device.data()[scales_at + static_cast<std::uint64_t>(g) * cols + c] = b.scale;
                for (unsigned i = 0; i < 32; ++i)
                    r.device.data()[codes_at + static_cast<std::uint64_t>(32 * g + i) * cols + c] = b.elements[i];
                blocks[static_cast<std::size_t>(g) * cols + c] = b;
            }
        return blocks;
    };
    auto qa = quantize(M, at.a, at.scales_a);
    auto qb = quantize(N, at.b, at.scales_b);
    r.run(gemm({M, N, K, dtype::e4m3fn, true}, at));
    for (unsigned e = 0; e < isa::engine_count; ++e)
        REQUIRE(r.core.status(static_cast<isa::engine>(e)) != neuroncore::engine_status::error);
    for (unsigned m = 0; m < M; m += 7)
        for (unsigned n = 0; n < N; n += 5) {
            float psum = 0;
            for (unsigned kt = 0; kt < K / 512; ++kt) {
                float tile = 0;
                for (unsigned g = 16 * kt; g < 16 * kt + 16; ++g) {
                    const float d = numerics::mx_dot(qa[static_cast<std::size_t>(g) * M + m],
                                                     qb[static_cast<std::size_t>(g) * N + n]);
                    tile = g == 16 * kt ? d : tile + d;
                }
                psum = kt == 0 ? tile : psum + tile;
            }
            float got;
            std::memcpy(&got, r.device.data() + at.c + (static_cast<std::uint64_t>(m) * N + n) * 4, 4);
            REQUIRE(got == psum);
        }
}
