#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "rig.h"
#include "trn3/numerics/mx.h"

using namespace trn3;
using namespace trn3::kernels;
using isa::engine;

namespace {
// Quantises column c of a K x cols fp32 matrix into K/32 MX blocks.
std::vector<numerics::mx_block> quantize_column(const std::vector<float>& v, unsigned K, unsigned cols, unsigned c,
                                                numerics::format f) {
    std::vector<numerics::mx_block> blocks;
    for (unsigned g = 0; g < K / 32; ++g) {
        float block[32];
        for (unsigned i = 0; i < 32; ++i) block[i] = v[static_cast<std::size_t>(32 * g + i) * cols + c];
        blocks.push_back(numerics::quantize_mx(block, f));
    }
    return blocks;
}

// Writes blocks in the MX SBUF layout: element (k, col) in partition k/4 at
// byte base + 4 col + k%4; scale (g, col) in partition g at scale_base + col.
void place(test::core_rig& r, const std::vector<std::vector<numerics::mx_block>>& cols_blocks, std::uint64_t base,
           std::uint64_t scale_base) {
    for (unsigned c = 0; c < cols_blocks.size(); ++c)
        for (unsigned g = 0; g < cols_blocks[c].size(); ++g) {
            r.core.sbuf(g)[scale_base + c] = cols_blocks[c][g].scale;
            for (unsigned i = 0; i < 32; ++i) {
                const unsigned k = 32 * g + i;
                r.core.sbuf(k / 4)[base + 4 * c + k % 4] = cols_blocks[c][g].elements[i];
            }
        }
}

void check_mx(numerics::format fa, isa::dtype ta, numerics::format fb, isa::dtype tb) {
    test::core_rig r;
    const unsigned K = 128, M = 8, N = 24;
    std::mt19937 rng(9);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> A(K * M), B(K * N);
    for (auto& x : A) x = nd(rng) * 3.0f;
    for (auto& x : B) x = nd(rng) * 0.01f;
    std::vector<std::vector<numerics::mx_block>> qa, qb;
    for (unsigned m = 0; m < M; ++m) qa.push_back(quantize_column(A, K, M, m, fa));
    for (unsigned n = 0; n < N; ++n) qb.push_back(quantize_column(B, K, N, n, fb));
    place(r, qa, 0, 60000);
    place(r, qb, 4096, 61000);
    program p;
    p.on(engine::tensor)
        .matmul_mx(psum(isa::dtype::fp32, 0, M, 0, N), sbuf(ta, 0, K / 4, 0, 4 * M), sbuf(tb, 0, K / 4, 4096, 4 * N),
                   60000, 61000)
        .halt();
    r.run(p);
    REQUIRE(r.core.status(engine::tensor) == neuroncore::engine_status::halted);
    double worst = 0;
    for (unsigned m = 0; m < M; ++m)
        for (unsigned n = 0; n < N; ++n) {
            float want = 0;
            double exact = 0, mag = 0;
            for (unsigned g = 0; g < K / 32; ++g) {
                const float d = numerics::mx_dot(qa[m][g], qb[n][g]);
                want = g == 0 ? d : want + d;
                for (unsigned i = 0; i < 32; ++i) {
                    const double prod = static_cast<double>(qa[m][g].value(i)) * qb[n][g].value(i);
                    exact += prod;
                    mag += std::fabs(prod);
                }
            }
            float got;
            std::memcpy(&got, r.core.psum(m) + 4 * n, 4);
            REQUIRE(got == want);
            worst = std::max(worst, std::fabs(got - exact) / mag);
        }
    CHECK(worst < 1e-6);
}
}  // namespace

TEST_CASE("an MXFP8 (e4m3fn) matmul is the in-order fp32 sum of exact MX group dot products") {
    check_mx(numerics::format::e4m3fn, isa::dtype::e4m3fn, numerics::format::e4m3fn, isa::dtype::e4m3fn);
}

TEST_CASE("an MX matmul of e5m2 by e2m1 (MXFP4) follows the same rule") {
    check_mx(numerics::format::e5m2, isa::dtype::e5m2, numerics::format::e2m1, isa::dtype::e2m1);
}

TEST_CASE("an MX matmul takes N cycles for 512-deep K: four times the bf16 work per cycle") {
    test::core_rig r;
    program p;
    auto& t = p.on(engine::tensor);
    for (int i = 0; i < 2; ++i)
        t.matmul_mx(psum(isa::dtype::fp32, 0, 128, 0, 512), sbuf(isa::dtype::e4m3fn, 0, 128, 0, 512),
                    sbuf(isa::dtype::e4m3fn, 0, 128, 4096, 2048), 100000, 101000);
    t.halt();
    const sc_core::sc_time took = r.run(p);
    CHECK(took ==
          sc_core::sc_time((382 + 512) / 2.4e9, sc_core::SC_SEC) + sc_core::sc_time(512 / 2.4e9, sc_core::SC_SEC));
}

TEST_CASE("an MX matmul with K not a multiple of 32 stops the engine with error 6") {
    test::core_rig r;
    program p;
    p.on(engine::tensor)
        .matmul_mx(psum(isa::dtype::fp32, 0, 4, 0, 8), sbuf(isa::dtype::e4m3fn, 0, 4, 0, 16),
                   sbuf(isa::dtype::e4m3fn, 0, 4, 64, 32), 1000, 2000)
        .halt();
    r.run(p);
    CHECK(r.core.error(engine::tensor) == neuroncore::err_shape);
}

TEST_CASE("quantize_mx on the Vector engine feeds matmul_mx directly, with either scale rule") {
    test::core_rig r;
    const unsigned Kp = 16, K = 4 * Kp, M = 4, N = 8;
    std::mt19937 rng(4);
    std::normal_distribution<float> nd(0.0f, 2.0f);
    // fp32 tiles in the MX layout: value (k, col) at partition k/4, element 4 col + k%4.
    std::vector<float> A(K * M), B(K * N);
    for (auto& x : A) x = nd(rng);
    for (auto& x : B) x = nd(rng);
    auto put = [&](const std::vector<float>& v, unsigned cols, std::uint64_t base) {
        for (unsigned k = 0; k < K; ++k)
            for (unsigned c = 0; c < cols; ++c)
                std::memcpy(r.core.sbuf(k / 4) + base + 4 * (4 * c + k % 4), &v[k * cols + c], 4);
    };
    put(A, M, 0);
    put(B, N, 1024);
    program p;
    p.on(engine::vector)
        .quantize_mx(sbuf(isa::dtype::e4m3fn, 0, Kp, 8192, 4 * M), sbuf(isa::dtype::fp32, 0, Kp, 0, 4 * M), 20000)
        .quantize_mx(sbuf(isa::dtype::e4m3fn, 0, Kp, 12288, 4 * N), sbuf(isa::dtype::fp32, 0, Kp, 1024, 4 * N), 21000,
                     true)
        .signal(0, 1)
        .halt();
    p.on(engine::tensor)
        .matmul_mx(psum(isa::dtype::fp32, 0, M, 0, N), sbuf(isa::dtype::e4m3fn, 0, Kp, 8192, 4 * M),
                   sbuf(isa::dtype::e4m3fn, 0, Kp, 12288, 4 * N), 20000, 21000)
        .wait(0, 1)
        .halt();
    r.run(p);
    for (unsigned m = 0; m < M; ++m)
        for (unsigned n = 0; n < N; ++n) {
            float want = 0;
            for (unsigned g = 0; g < K / 32; ++g) {
                float ba[32], bb[32];
                for (unsigned i = 0; i < 32; ++i) {
                    ba[i] = A[(32 * g + i) * M + m];
                    bb[i] = B[(32 * g + i) * N + n];
                }
                const auto qa = numerics::quantize_mx(ba, numerics::format::e4m3fn);
                const auto qb = numerics::quantize_mx(bb, numerics::format::e4m3fn, numerics::mx_scale_rule::trn3);
                if (m == 0) CHECK(r.core.sbuf(g)[21000 + n] == qb.scale);
                if (n == 0) CHECK(r.core.sbuf(g)[20000 + m] == qa.scale);
                const float d = numerics::mx_dot(qa, qb);
                want = g == 0 ? d : want + d;
            }
            float got;
            std::memcpy(&got, r.core.psum(m) + 4 * n, 4);
            REQUIRE(got == want);
        }
}

TEST_CASE("affine_select builds a causal mask") {
    test::core_rig r;
    program p;
    p.on(engine::gpsimd)
        .memset(sbuf(isa::dtype::fp32, 0, 8, 0, 8), 1.0f)
        .affine_select(sbuf(isa::dtype::fp32, 0, 8, 64, 8), sbuf(isa::dtype::fp32, 0, 8, 0, 8), 1.0f, -1.0f, 0,
                       -INFINITY)
        .halt();
    r.run(p);
    for (unsigned row = 0; row < 8; ++row)
        for (unsigned col = 0; col < 8; ++col) {
            float v;
            std::memcpy(&v, r.core.sbuf(row) + 64 + 4 * col, 4);
            if (col <= row) CHECK(v == 1.0f);
            else CHECK(v == -INFINITY);
        }
}

TEST_CASE("the Vector engine transposes up to 32 x 32 and refuses more") {
    test::core_rig r;
    program p;
    p.on(engine::gpsimd).iota(sbuf(isa::dtype::fp32, 0, 32, 0, 32), 0, 1.0f, 100.0f).signal(0, 1).halt();
    p.on(engine::vector)
        .transpose(sbuf(isa::dtype::fp32, 0, 32, 256, 32), sbuf(isa::dtype::fp32, 0, 32, 0, 32))
        .wait(0, 1)
        .transpose(sbuf(isa::dtype::fp32, 0, 64, 512, 33), sbuf(isa::dtype::fp32, 0, 33, 0, 64))
        .halt();
    r.run(p);
    float v;
    std::memcpy(&v, r.core.sbuf(5) + 256 + 4 * 7, 4);
    CHECK(v == 7 * 100.0f + 5);  // dst[5][7] = src[7][5]
    CHECK(r.core.error(engine::vector) == neuroncore::err_shape);
}
