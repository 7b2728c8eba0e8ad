// Structured-sparse matmuls (4:8 and 4:16): the kept values of a compressed
// stationary against a dense moving operand, bf16 and MXFP8 (docs/isa.md,
// "Sparse matmul"; docs/numerics.md rule 23).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "rig.h"
#include "trn3/core/stats.h"
#include "trn3/kernels/reference.h"
#include "trn3/kernels/sparse.h"
#include "trn3/numerics/float_format.h"
#include "trn3/numerics/mx.h"

using namespace trn3;
using namespace trn3::kernels;
using isa::engine;
using test::core_rig;

namespace {
float round_bf16(float v) {
    return numerics::decode(numerics::encode(v, numerics::format::bf16), numerics::format::bf16);
}
void put_bf16(unsigned char* at, float v) {
    const auto c = static_cast<std::uint16_t>(numerics::encode(v, numerics::format::bf16));
    std::memcpy(at, &c, 2);
}
float psum_f32(core_rig& r, unsigned m, std::uint64_t offset) {
    float v;
    std::memcpy(&v, r.core.psum(m) + offset, 4);
    return v;
}

std::vector<float> random_matrix(std::size_t n, float scale, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = round_bf16(nd(rng));
    return v;
}

// bf16 4:G: stationary kept value c in partition c; moving K x N with D = G/4
// values per partition per column (row k in partition k / D, element D n + k % D).
// Also loads the decompressed stationary and the moving operand in the dense
// layout, so the same core can compute the dense matmul for comparison.
struct bf16_case {
    static constexpr unsigned M = 32, N = 48, meta = 60000, dense_a = 20000, dense_b = 30000;
    unsigned K, G, D, P;
    std::vector<float> A, B;  // A pruned, K x M; B K x N
    sparse_matrix S;

    bf16_case(core_rig& r, unsigned group, unsigned k) : K(k), G(group), D(group / 4), P(k / (group / 4)) {
        A = random_matrix(static_cast<std::size_t>(K) * M, 1.0f, 3);
        B = random_matrix(static_cast<std::size_t>(K) * N, 4.0f, 4);
        prune_4_of(A, K, M, G);
        S = compress_4_of(A, K, M, G);
        for (unsigned c = 0; c < S.kept; ++c)
            for (unsigned m = 0; m < M; ++m) {
                put_bf16(r.core.sbuf(c) + 2 * m, S.values[c * M + m]);
                r.core.sbuf(c)[meta + m] = S.positions[c * M + m];
            }
        for (unsigned kk = 0; kk < K; ++kk)
            for (unsigned n = 0; n < N; ++n) put_bf16(r.core.sbuf(kk / D) + 4096 + 2 * (D * n + kk % D), B[kk * N + n]);
        for (unsigned kk = 0; kk < K; ++kk) {
            for (unsigned m = 0; m < M; ++m) put_bf16(r.core.sbuf(kk) + dense_a + 2 * m, A[kk * M + m]);
            for (unsigned n = 0; n < N; ++n) put_bf16(r.core.sbuf(kk) + dense_b + 2 * n, B[kk * N + n]);
        }
    }
    stream& sparse(stream& t, std::uint64_t psum_offset) const {
        return t
            .matmul(psum(dtype::fp32, 0, M, psum_offset, N), sbuf(dtype::bf16, 0, S.kept, 0, M),
                    sbuf(dtype::bf16, 0, P, 4096, D * N))
            .sparse(G == 8 ? isa::sparsity::s4_8 : isa::sparsity::s4_16, meta);
    }
    stream& dense(stream& t, std::uint64_t psum_offset) const {
        return t.matmul(psum(dtype::fp32, 0, M, psum_offset, N), sbuf(dtype::bf16, 0, K, dense_a, M),
                        sbuf(dtype::bf16, 0, K, dense_b, N));
    }
};

void check_bf16(unsigned group) {
    core_rig r;
    const bf16_case c(r, group, 128);
    program p;
    auto& t = p.on(engine::tensor);
    c.sparse(t, 0);
    c.dense(t, 4096).halt();
    r.run(p);
    REQUIRE(r.core.status(engine::tensor) == neuroncore::engine_status::halted);
    const auto exact = reference::gemm(c.A, c.B, c.M, c.N, c.K);
    for (unsigned m = 0; m < c.M; ++m)
        for (unsigned n = 0; n < c.N; ++n) {
            float want = 0;  // in increasing K over the kept values only
            for (unsigned k = 0; k < c.K; ++k)
                if (c.A[k * c.M + m] != 0.0f) want += c.A[k * c.M + m] * c.B[k * c.N + n];
            const float got = psum_f32(r, m, 4 * n);
            REQUIRE(got == want);
            REQUIRE(got == psum_f32(r, m, 4096 + 4 * n));  // the dense matmul of the decompressed stationary
            REQUIRE(std::fabs(got - exact[m * c.N + n]) <= 1e-5 * (std::fabs(exact[m * c.N + n]) + 16.0));
        }
}

// MXFP8 (e4m3fn) 4:16 or 4:8 over K dense values: kept value c of column m in
// partition c / 4 at element 4 m + c % 4 (its position byte at meta + 4 m + c % 4);
// moving row k in partition k / D at element D n + k % D, D = G.
void check_mx(unsigned group) {
    core_rig r;
    const unsigned K = 512, M = 16, N = 24, D = group, P = K / D, blocks = K / 32;
    const std::uint32_t meta = 50000, sa = 60000, sb = 61000, dense_a = 20000, dense_b = 30000, dsa = 62000,
                        dsb = 63000;
    std::vector<float> A = random_matrix(static_cast<std::size_t>(K) * M, 3.0f, 7),
                       B = random_matrix(static_cast<std::size_t>(K) * N, 0.01f, 8);
    prune_4_of(A, K, M, group);
    const sparse_matrix S = compress_4_of(A, K, M, group);
    auto quantize = [&](const std::vector<float>& v, unsigned cols, unsigned col) {
        std::vector<numerics::mx_block> out;
        for (unsigned g = 0; g < blocks; ++g) {
            float block[32];
            for (unsigned i = 0; i < 32; ++i) block[i] = v[static_cast<std::size_t>(32 * g + i) * cols + col];
            out.push_back(numerics::quantize_mx(block, numerics::format::e4m3fn));
        }
        return out;
    };
    std::vector<std::vector<numerics::mx_block>> qa, qb;
    for (unsigned m = 0; m < M; ++m) qa.push_back(quantize(A, M, m));
    for (unsigned n = 0; n < N; ++n) qb.push_back(quantize(B, N, n));
    for (unsigned m = 0; m < M; ++m)
        for (unsigned g = 0; g < blocks; ++g) {
            r.core.sbuf(g)[sa + m] = r.core.sbuf(g)[dsa + m] = qa[m][g].scale;
            for (unsigned i = 0; i < 32; ++i)
                r.core.sbuf((32 * g + i) / 4)[dense_a + 4 * m + i % 4] = qa[m][g].elements[i];
        }
    for (unsigned c = 0; c < S.kept; ++c)
        for (unsigned m = 0; m < M; ++m) {
            const unsigned k = c / 4 * group + S.positions[c * M + m];
            r.core.sbuf(c / 4)[4 * m + c % 4] = qa[m][k / 32].elements[k % 32];
            r.core.sbuf(c / 4)[meta + 4 * m + c % 4] = S.positions[c * M + m];
        }
    for (unsigned n = 0; n < N; ++n)
        for (unsigned g = 0; g < blocks; ++g) {
            r.core.sbuf(g)[sb + n] = r.core.sbuf(g)[dsb + n] = qb[n][g].scale;
            for (unsigned i = 0; i < 32; ++i) {
                const unsigned k = 32 * g + i;
                r.core.sbuf(k / D)[4096 + D * n + k % D] = qb[n][g].elements[i];
                r.core.sbuf(k / 4)[dense_b + 4 * n + k % 4] = qb[n][g].elements[i];
            }
        }
    program p;
    p.on(engine::tensor)
        .matmul_mx(psum(dtype::fp32, 0, M, 0, N), sbuf(dtype::e4m3fn, 0, S.kept / 4, 0, 4 * M),
                   sbuf(dtype::e4m3fn, 0, P, 4096, D * N), sa, sb)
        .sparse(group == 8 ? isa::sparsity::s4_8 : isa::sparsity::s4_16, meta)
        .matmul_mx(psum(dtype::fp32, 0, M, 4096, N), sbuf(dtype::e4m3fn, 0, K / 4, dense_a, 4 * M),
                   sbuf(dtype::e4m3fn, 0, K / 4, dense_b, 4 * N), dsa, dsb)
        .halt();
    r.run(p);
    REQUIRE(r.core.status(engine::tensor) == neuroncore::engine_status::halted);
    unsigned nonzero = 0;
    for (unsigned m = 0; m < M; ++m)
        for (unsigned n = 0; n < N; ++n) {
            float want = 0;
            for (unsigned g = 0; g < blocks; ++g) {
                const float d = numerics::mx_dot(qa[m][g], qb[n][g]);
                want = g == 0 ? d : want + d;
            }
            const float got = psum_f32(r, m, 4 * n);
            REQUIRE(got == want);
            REQUIRE(got == psum_f32(r, m, 4096 + 4 * n));
            nonzero += got != 0.0f;
        }
    CHECK(nonzero == M * N);
}

void put_meta_and_run(core_rig& r, std::vector<std::uint8_t> positions, std::uint32_t want_error) {
    // One column, one group of 4 kept values in partitions 0-3, 4:8.
    for (unsigned c = 0; c < 4; ++c) r.core.sbuf(c)[60000] = positions[c];
    program p;
    p.on(engine::tensor)
        .matmul(psum(dtype::fp32, 0, 1, 0, 8), sbuf(dtype::bf16, 0, 4, 0, 1), sbuf(dtype::bf16, 0, 4, 4096, 16))
        .sparse(isa::sparsity::s4_8, 60000)
        .halt();
    r.run(p);
    CHECK(r.core.error(engine::tensor) == want_error);
}
}  // namespace

TEST_CASE("a 4:8 sparse bf16 matmul sums the kept products in K order, as the dense matmul of its expansion") {
    check_bf16(8);
}

TEST_CASE("a 4:16 sparse bf16 matmul keeps 4 of every 16 K values, bit-exact") { check_bf16(16); }

TEST_CASE("a 4:16 sparse MXFP8 matmul is the in-order sum of MX block dot products over the kept values") {
    check_mx(16);
}

TEST_CASE("a 4:8 sparse MXFP8 matmul follows the same rule") { check_mx(8); }

TEST_CASE("a sparse matmul never reads a pruned moving value: an infinity there leaves the result finite") {
    core_rig r;
    const bf16_case c(r, 8, 128);
    // Row k of B is pruned in column 0 of A: put +inf there for moving column 5.
    unsigned k = 0;
    while (c.A[k * c.M + 0] != 0.0f) ++k;
    put_bf16(r.core.sbuf(k / c.D) + 4096 + 2 * (c.D * 5 + k % c.D), INFINITY);
    put_bf16(r.core.sbuf(k) + bf16_case::dense_b + 2 * 5, INFINITY);
    program p;
    auto& t = p.on(engine::tensor);
    c.sparse(t, 0);
    c.dense(t, 4096).halt();
    r.run(p);
    CHECK(std::isfinite(psum_f32(r, 0, 4 * 5)));
    CHECK(std::isnan(psum_f32(r, 0, 4096 + 4 * 5)));  // dense: 0 x inf
}

TEST_CASE("a 4:16 MXFP8 matmul takes N cycles for 2048 dense K: 16 times the bf16 work, counted as dense FLOPs") {
    core_rig r;
    for (unsigned p = 0; p < 128; ++p)
        for (unsigned j = 0; j < 512; ++j)
            r.core.sbuf(p)[70000 + j] = static_cast<std::uint8_t>(j % 4);  // positions 0-3
    program p;
    auto& t = p.on(engine::tensor);
    for (int i = 0; i < 2; ++i)
        t.matmul_mx(psum(dtype::fp32, 0, 128, 0, 512), sbuf(dtype::e4m3fn, 0, 128, 0, 512),
                    sbuf(dtype::e4m3fn, 0, 128, 4096, 8192), 100000, 101000)
            .sparse(isa::sparsity::s4_16, 70000);
    t.halt();
    const sc_core::sc_time took = r.run(p);
    REQUIRE(r.core.status(engine::tensor) == neuroncore::engine_status::halted);
    CHECK(took ==
          sc_core::sc_time((382 + 512) / 2.4e9, sc_core::SC_SEC) + sc_core::sc_time(512 / 2.4e9, sc_core::SC_SEC));
    CHECK(stats_registry::instance().find("nc0.matmul_flops")->to_json().get<std::uint64_t>() ==
          2ull * 2 * 2048 * 128 * 512);
}

TEST_CASE("increasing sparsity positions inside the group run") {
    core_rig r;
    put_meta_and_run(r, {0, 2, 5, 7}, neuroncore::err_none);
}

TEST_CASE("a repeated sparsity position stops the engine with error 8") {
    core_rig r;
    put_meta_and_run(r, {0, 2, 2, 7}, neuroncore::err_sparsity);
}

TEST_CASE("a sparsity position past its group of 8 stops the engine with error 8") {
    core_rig r;
    put_meta_and_run(r, {0, 2, 5, 8}, neuroncore::err_sparsity);
}

TEST_CASE("pruning keeps the four largest magnitudes per group, and compression round-trips") {
    std::vector<float> m = {1, -9, 3, 0.5f, 7, -2, 2, 8,  // one column of 16 rows: two groups of 8
                            0, 0,  0, 0,    0, 0,  0, 6};
    prune_4_of(m, 16, 1, 8);
    CHECK(m == std::vector<float>{0, -9, 3, 0, 7, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 6});
    const sparse_matrix s = compress_4_of(m, 16, 1, 8);
    CHECK(s.positions == std::vector<std::uint8_t>{1, 2, 4, 7, 0, 1, 2, 7});
    CHECK(s.values == std::vector<float>{-9, 3, 7, 8, 0, 0, 0, 6});
    CHECK(decompress(s) == m);
    m[0] = 1;
    CHECK_THROWS_WITH(compress_4_of(m, 16, 1, 8), Catch::Contains("more than 4 non-zero"));
}
