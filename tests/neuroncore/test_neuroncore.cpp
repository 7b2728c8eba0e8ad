#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "../common/test_initiator.h"
#include "rig.h"
#include "trn3/numerics/float_format.h"
#include "trn3/spec/neuroncore.h"

using namespace trn3;
using namespace trn3::kernels;
using isa::engine;
using test::core_rig;

namespace {
std::uint16_t bf16(float v) { return static_cast<std::uint16_t>(numerics::encode(v, numerics::format::bf16)); }
float from_bf16(std::uint16_t c) { return numerics::decode(c, numerics::format::bf16); }
}  // namespace

TEST_CASE("a sequencer loop with a register-relative tile runs without unrolling") {
    core_rig r;
    program p;
    auto& v = p.on(engine::vector);
    v.set_reg(0, 0);
    const std::uint32_t loop = v.here();
    v.memset(with_base_reg(sbuf(dtype::fp32, 0, 128, 0, 1), 0), 7.5f).add_reg(0, 4).branch_lt(0, 32, loop).halt();
    r.run(p);
    CHECK(r.core.status(engine::vector) == neuroncore::engine_status::halted);
    for (unsigned off = 0; off < 32; off += 4) CHECK(r.sbuf_f32(127, off) == 7.5f);
    CHECK(r.sbuf_f32(127, 32) == 0.0f);
    CHECK(p.instructions() == 5);
}

TEST_CASE("engines synchronise only through semaphores") {
    core_rig r;
    program p;
    p.on(engine::gpsimd).iota(sbuf(dtype::fp32, 0, 4, 0, 8), 10, 1.0f, 100.0f).signal(3, 1).halt();
    p.on(engine::vector)
        .tensor_scalar(sbuf(dtype::fp32, 0, 4, 64, 8), sbuf(dtype::fp32, 0, 4, 0, 8), isa::alu::multiply, 2.0f)
        .wait(3, 1)
        .halt();
    r.run(p);
    CHECK(r.sbuf_f32(0, 64) == 20.0f);
    CHECK(r.sbuf_f32(3, 64 + 7 * 4) == 2.0f * (10 + 300 + 7));
    CHECK(r.core.semaphore(3) == 1);
}

TEST_CASE("a bf16 matmul accumulates in fp32 in the documented order, bit for bit") {
    core_rig r;
    std::mt19937 rng(5);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    const unsigned K = 128, M = 16, N = 64;
    std::vector<std::uint16_t> A(K * M), B(K * N);
    for (auto& a : A) a = bf16(nd(rng));
    for (auto& b : B) b = bf16(nd(rng) * 8.0f);
    for (unsigned k = 0; k < K; ++k) {
        std::memcpy(r.core.sbuf(k) + 0, &A[k * M], M * 2);
        std::memcpy(r.core.sbuf(k) + 4096, &B[k * N], N * 2);
    }
    program p;
    p.on(engine::tensor)
        .matmul(psum(dtype::fp32, 0, M, 0, N), sbuf(dtype::bf16, 0, K, 0, M), sbuf(dtype::bf16, 0, K, 4096, N))
        .matmul(psum(dtype::fp32, 0, M, 0, N), sbuf(dtype::bf16, 0, K, 0, M), sbuf(dtype::bf16, 0, K, 4096, N), true)
        .halt();
    r.run(p);
    for (unsigned m = 0; m < M; ++m)
        for (unsigned n = 0; n < N; ++n) {
            float acc = 0;  // acc = fl32(acc + a*b), k = 0..K-1; the product is exact
            for (unsigned k = 0; k < K; ++k) acc += from_bf16(A[k * M + m]) * from_bf16(B[k * N + n]);
            float got;
            std::memcpy(&got, r.core.psum(m) + n * 4, 4);
            REQUIRE(got == acc + acc);  // the second matmul accumulated onto the first
        }
}

TEST_CASE("bf16 products outside the normal fp32 range take one rounding per step, as std::fma") {
    // Subnormal and huge bf16 operands: a multiply then an add would round
    // the product first; rule 18 rounds once.
    core_rig r;
    const unsigned K = 64, M = 8, N = 16;
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> expo(-80, -60);  // products near and below 2^-126
    std::uniform_int_distribution<int> sig(0, 127);
    std::vector<std::uint16_t> A(K * M), B(K * N);
    auto pick = [&] {
        const float v = std::ldexp(1.0f + sig(rng) / 128.0f, expo(rng)) * (sig(rng) & 1 ? -1.0f : 1.0f);
        return bf16(v);
    };
    for (auto& a : A) a = pick();
    for (auto& b : B) b = pick();
    for (unsigned k = 0; k < K; ++k) {
        std::memcpy(r.core.sbuf(k) + 0, &A[k * M], M * 2);
        std::memcpy(r.core.sbuf(k) + 4096, &B[k * N], N * 2);
    }
    program p;
    p.on(engine::tensor)
        .matmul(psum(dtype::fp32, 0, M, 0, N), sbuf(dtype::bf16, 0, K, 0, M), sbuf(dtype::bf16, 0, K, 4096, N))
        .halt();
    r.run(p);
    unsigned differs_from_two_roundings = 0;
    for (unsigned m = 0; m < M; ++m)
        for (unsigned n = 0; n < N; ++n) {
            float fused = 0, twice = 0;
            for (unsigned k = 0; k < K; ++k) {
                const float a = from_bf16(A[k * M + m]), b = from_bf16(B[k * N + n]);
                fused = std::fma(a, b, fused);
                const float product = a * b;
                twice = twice + product;
            }
            float got;
            std::memcpy(&got, r.core.psum(m) + n * 4, 4);
            if (std::isnan(fused)) {
                std::uint32_t bits;
                std::memcpy(&bits, &got, 4);
                REQUIRE(bits == 0x7fc00000u);  // rule 24
            } else {
                REQUIRE(got == fused);
            }
            differs_from_two_roundings += !(got == twice) && !std::isnan(twice);
        }
    CHECK(differs_from_two_roundings > 0);  // the operands do exercise the difference
}

TEST_CASE("a NaN from inf minus inf reaches PSUM as the one canonical NaN") {
    core_rig r;
    const std::uint16_t inf = bf16(INFINITY), ninf = bf16(-INFINITY), one = bf16(1.0f);
    // Column 0 of A: +inf, -inf; B: 1, 1 -> inf + (-inf) = NaN (x86 gives 0xFFC00000).
    std::memcpy(r.core.sbuf(0), &inf, 2);
    std::memcpy(r.core.sbuf(1), &ninf, 2);
    std::memcpy(r.core.sbuf(0) + 4096, &one, 2);
    std::memcpy(r.core.sbuf(1) + 4096, &one, 2);
    program p;
    p.on(engine::tensor)
        .matmul(psum(dtype::fp32, 0, 1, 0, 1), sbuf(dtype::bf16, 0, 2, 0, 1), sbuf(dtype::bf16, 0, 2, 4096, 1))
        .matmul(psum(dtype::bf16, 0, 1, 64, 1), sbuf(dtype::bf16, 0, 2, 0, 1), sbuf(dtype::bf16, 0, 2, 4096, 1))
        .halt();
    r.run(p);
    std::uint32_t bits;
    std::memcpy(&bits, r.core.psum(0), 4);
    CHECK(bits == 0x7fc00000u);
    std::uint16_t half;
    std::memcpy(&half, r.core.psum(0) + 64, 2);
    CHECK(half == 0x7fc0);
}

TEST_CASE("a matmul takes one cycle per moving column, the fill when idle, and the weights' wait after a short pass") {
    core_rig r;
    program p;
    auto mm = [](stream& s, unsigned n) {
        s.matmul(psum(dtype::fp32, 0, 128, 0, n), sbuf(dtype::bf16, 0, 128, 0, 128), sbuf(dtype::bf16, 0, 128, 256, n));
    };
    auto& t = p.on(engine::tensor);
    mm(t, 512);
    mm(t, 512);
    mm(t, 64);
    mm(t, 512);
    t.halt();
    const sc_core::sc_time took = r.run(p);
    // Fill 2 R + C - 2 = 382 cycles, then 512, 512 back to back; 64; then
    // 512 + 64: the 64-column pass hid only 64 of the R = 128 cycles the next
    // weights take through the one weight port. At 2.4 GHz, each rounded to 1 ps.
    auto at = [](unsigned cycles) { return sc_core::sc_time(cycles / 2.4e9, sc_core::SC_SEC); };
    CHECK(took == at(382 + 512) + at(512) + at(64) + at(512 + 64));
}

TEST_CASE("activation, tensor_tensor and reduce compute in fp32 and round to the destination type") {
    core_rig r;
    program p;
    p.on(engine::gpsimd).iota(sbuf(dtype::fp32, 0, 2, 0, 4), 0, 0.5f, 1.0f).signal(0, 1).halt();  // x = p + 0.5 i
    p.on(engine::scalar)
        .activation(sbuf(dtype::bf16, 0, 2, 64, 4), sbuf(dtype::fp32, 0, 2, 0, 4), isa::function::exp, 2.0f, -1.0f)
        .wait(0, 1)
        .signal(1, 1)
        .halt();
    p.on(engine::vector)
        .tensor_tensor(sbuf(dtype::fp32, 0, 2, 128, 4), sbuf(dtype::fp32, 0, 2, 0, 4), sbuf(dtype::fp32, 0, 2, 0, 4),
                       isa::alu::multiply)
        .wait(1, 1)
        .tensor_reduce(sbuf(dtype::fp32, 0, 2, 192, 1), sbuf(dtype::fp32, 0, 2, 128, 4), isa::alu::add)
        .halt();
    r.run(p);
    for (unsigned part = 0; part < 2; ++part) {
        float sum = 0;
        for (unsigned i = 0; i < 4; ++i) {
            const float x = static_cast<float>(part) + 0.5f * static_cast<float>(i);
            std::uint16_t code;
            std::memcpy(&code, r.core.sbuf(part) + 64 + 2 * i, 2);
            CHECK(code == bf16(std::exp(x * 2.0f - 1.0f)));
            sum += x * x;
        }
        CHECK(r.sbuf_f32(part, 192) == sum);
    }
}

TEST_CASE("DMA moves a 2-D region between device memory and SBUF with a cast") {
    core_rig r;
    std::vector<float> src(4 * 8);
    for (unsigned i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 1.25f;
    r.write(0x10000, src.data(), src.size() * 4);
    program p;
    p.on(engine::sync)
        .dma(sbuf(dtype::bf16, 0, 4, 0, 8), hbm(dtype::fp32, 0x10000, 4, 32, 8))
        .signal(0, 1)
        .dma(hbm(dtype::fp32, 0x20000, 4, 64, 8), sbuf(dtype::bf16, 0, 4, 0, 8))
        .wait(0, 1)
        .signal(0, 1)
        .nop()
        .wait(0, 2)
        .halt();
    r.run(p);
    for (unsigned row = 0; row < 4; ++row)
        for (unsigned i = 0; i < 8; ++i) {
            float back;
            std::memcpy(&back, r.device.data() + 0x20000 + row * 64 + i * 4, 4);
            CHECK(back == from_bf16(bf16(src[row * 8 + i])));
        }
}

namespace {
// Runs one faulty instruction on `on` beside a healthy Scalar stream; checks
// that `on` stopped with `code`, raised the interrupt, and Scalar finished.
void expect_error(engine on, std::uint32_t code, const std::function<void(stream&)>& emit) {
    core_rig r;
    program p;
    emit(p.on(on));
    p.on(on).halt();
    p.on(engine::scalar)
        .activation(sbuf(dtype::fp32, 0, 1, 512, 1), sbuf(dtype::fp32, 0, 1, 512, 1), isa::function::copy)
        .halt();
    r.run(p);
    CHECK(r.core.status(on) == neuroncore::engine_status::error);
    CHECK(r.core.error(on) == code);
    CHECK(r.core.error_irq.level());
    CHECK(r.core.status(engine::scalar) == neuroncore::engine_status::halted);
}
}  // namespace

TEST_CASE("a tile past the end of a partition stops the engine with error 2") {
    expect_error(engine::vector, neuroncore::err_out_of_bounds,
                 [](stream& s) { s.memset(sbuf(dtype::fp32, 0, 1, 256 * 1024 - 4, 2), 1); });
}

TEST_CASE("a 40-partition tile starting at partition 32 stops the engine with error 3") {
    expect_error(engine::vector, neuroncore::err_partition,
                 [](stream& s) { s.memset(sbuf(dtype::fp32, 32, 40, 0, 1), 1); });
}

TEST_CASE("GpSimd writing PSUM stops with error 7") {
    expect_error(engine::gpsimd, neuroncore::err_unreachable,
                 [](stream& s) { s.memset(psum(dtype::fp32, 0, 1, 0, 1), 1); });
}

TEST_CASE("a DMA outside device memory stops the issuing engine with error 4") {
    expect_error(engine::sync, neuroncore::err_memory,
                 [](stream& s) { s.dma(sbuf(dtype::fp32, 0, 1, 0, 1), hbm(dtype::fp32, 8ull << 30, 1, 4, 1)); });
}

TEST_CASE("a matmul in the Vector stream stops it with error 1") {
    expect_error(engine::vector, neuroncore::err_illegal, [](stream& s) {
        s.matmul(psum(dtype::fp32, 0, 1, 0, 1), sbuf(dtype::bf16, 0, 1, 0, 1), sbuf(dtype::bf16, 0, 1, 2, 1));
    });
}

TEST_CASE("a matmul whose M differs from its PSUM partitions stops with error 6") {
    expect_error(engine::tensor, neuroncore::err_shape, [](stream& s) {
        s.matmul(psum(dtype::fp32, 0, 2, 0, 1), sbuf(dtype::bf16, 0, 1, 0, 1), sbuf(dtype::bf16, 0, 1, 2, 1));
    });
}

TEST_CASE("software starts engines and reads their state through the control registers") {
    core_rig r;
    program p;
    p.on(engine::vector).memset(sbuf(dtype::fp32, 0, 1, 0, 1), 3.0f).signal(17, 5).halt();
    p.on(engine::scalar).memset(sbuf(dtype::fp32, 0, 1, 1u << 20, 1), 1.0f).halt();  // outside SBUF
    auto pcs = p.load([&](std::uint64_t a, const void* d, std::size_t n) { r.write(a, d, n); }, 0x4000'0000);
    const unsigned vector = static_cast<unsigned>(engine::vector), scalar = static_cast<unsigned>(engine::scalar);
    r.set_reg(TRN3_NC_PC(vector), pcs[vector], 8);
    r.set_reg(TRN3_NC_PC(scalar), pcs[scalar], 8);
    r.set_reg(TRN3_NC_START(vector), TRN3_NC_START_GO);
    r.set_reg(TRN3_NC_START(scalar), TRN3_NC_START_GO);
    sc_core::sc_start(1, sc_core::SC_MS);
    CHECK(r.reg(TRN3_NC_STATUS(vector)) == TRN3_NC_STATUS_HALTED);
    CHECK(r.reg(TRN3_NC_STATUS(scalar)) == TRN3_NC_STATUS_ERROR);
    CHECK(r.reg(TRN3_NC_ERROR(scalar)) == TRN3_NC_ERR_OUT_OF_BOUNDS);
    CHECK(r.reg(TRN3_NC_ERROR_PC(scalar)) == 0);  // the first instruction failed
    CHECK(r.reg(TRN3_NC_SEMAPHORE(17)) == 5);
    CHECK(r.reg(TRN3_NC_IRQ_STATUS) == TRN3_NC_IRQ_ENGINE(scalar));
    CHECK(r.core.error_irq.level());
    r.set_reg(TRN3_NC_IRQ_STATUS, TRN3_NC_IRQ_ENGINE(scalar));  // W1C
    CHECK(!r.core.error_irq.level());
    CHECK(r.sbuf_f32(0, 0) == 3.0f);
}

TEST_CASE("a DMA with a 4-D pattern gathers exactly the elements it names") {
    core_rig r;
    std::vector<float> src(2 * 3 * 4 * 5 * 2);  // 2x3x4x5 taken with stride 2 in the innermost dimension
    for (unsigned i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i);
    r.write(0x10000, src.data(), src.size() * 4);
    program p;
    p.on(engine::sync)
        .dma(sbuf(dtype::fp32, 0, 1, 0, 120),
             with_dims(hbm(dtype::fp32, 0x10000, 1, 0, 1), {{120, 2}, {40, 3}, {10, 4}, {2, 5}}))
        .signal(0, 1)
        .nop()
        .wait(0, 1)
        .halt();
    r.run(p);
    unsigned i = 0;
    for (unsigned a = 0; a < 2; ++a)
        for (unsigned b = 0; b < 3; ++b)
            for (unsigned c = 0; c < 4; ++c)
                for (unsigned d = 0; d < 5; ++d, ++i)
                    CHECK(r.sbuf_f32(0, 4 * i) == static_cast<float>(120 * a + 40 * b + 10 * c + 2 * d));
}

TEST_CASE("a deadlocked kernel ends the simulation and says which engine waits for what") {
    core_rig r;
    program p;
    p.on(engine::vector).memset(sbuf(dtype::fp32, 0, 1, 0, 1), 1.0f).signal(4, 1).halt();
    p.on(engine::tensor).nop().nop().wait(4, 2).halt();  // only one increment will ever come
    r.run(p);
    CHECK(!r.core.all_stopped());
    CHECK(r.core.blocked_report() == "tensor waits for s4 >= 2 (now 1) at instruction 1");
}

TEST_CASE("a register number beyond the 64 a sequencer has stops it with error 1") {
    expect_error(engine::vector, neuroncore::err_illegal, [](stream& s) { s.set_reg(64, 1); });
}

TEST_CASE("a DMA on a queue the core does not have stops the issuing engine with error 1, moving nothing") {
    param_registry::instance().set_pending_text("nc0.dma_queues", "4", "test");
    core_rig r;
    const float v = 5.0f;
    r.write(0x100, &v, 4);
    program p;
    p.on(engine::sync).dma(sbuf(dtype::fp32, 0, 1, 0, 1), hbm(dtype::fp32, 0x100, 1, 4, 1), 9).halt();
    r.run(p);
    CHECK(r.core.error(engine::sync) == neuroncore::err_illegal);
    CHECK(r.sbuf_f32(0, 0) == 0.0f);
}
