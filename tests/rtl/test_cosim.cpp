// Co-verification: the same instruction streams on a NeuronCore whose Tensor
// engine is the C++ model and on one whose array is the verilated RTL give
// the same bits in PSUM and SBUF; the check mode finds a difference and
// names its operands; the RTL's cycle counts follow the documented formula.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include "trn3/core/param.h"
#include "trn3/core/sparse_memory.h"
#include "trn3/core/stats.h"
#include "trn3/kernels/builder.h"
#include "trn3/neuroncore/neuroncore.h"
#include "trn3/numerics/float_format.h"
#include "trn3/rtl/systolic_array.h"

using namespace trn3;
using namespace trn3::kernels;
using isa::dtype;
using isa::engine;

namespace {
std::uint64_t stat(const std::string& name) {
    return stats_registry::instance().find(name)->to_json().get<std::uint64_t>();
}

// A NeuronCore with its own device memory, on the back end named.
struct core_on {
    neuroncore::neuroncore core;
    sparse_memory device;
    core_on(const std::string& name, const std::string& backend)
        : core((set(name, backend), name.c_str())), device((name + "_mem").c_str(), byte_count{1ull << 30}) {
        core.mem.bind(device.in);
    }
    static int set(const std::string& name, const std::string& backend) {
        param_registry::instance().set_pending_text(name + ".tensor_engine.backend", backend, "test");
        return 0;
    }
    void start(const program& p) {
        auto pcs =
            p.load([this](std::uint64_t a, const void* d, std::size_t n) { std::memcpy(device.data() + a, d, n); },
                   512u << 20);
        for (unsigned e = 0; e < isa::engine_count; ++e)
            if (!p.on(static_cast<engine>(e)).code().empty()) core.start(static_cast<engine>(e), pcs[e]);
    }
};

// Operand codes of a type, mostly random, with the specials the issue names.
std::uint32_t operand(std::mt19937& rng, dtype t) {
    const auto f = t == dtype::bf16     ? numerics::format::bf16
                   : t == dtype::fp16   ? numerics::format::fp16
                   : t == dtype::e4m3fn ? numerics::format::e4m3fn
                   : t == dtype::e5m2   ? numerics::format::e5m2
                                        : numerics::format::fp32;
    const unsigned pick = rng() % 32;
    const float big = t == dtype::e4m3fn ? 448.0f : t == dtype::e5m2 ? 57344.0f : t == dtype::fp16 ? 65504.0f : 3.0e38f;
    switch (pick) {
    case 0: return numerics::encode(INFINITY, f);
    case 1: return numerics::encode(-INFINITY, f);
    case 2: return numerics::encode(NAN, f);
    case 3: return numerics::encode(-0.0f, f);
    case 4: return numerics::encode(big, f);
    case 5: return numerics::encode(-big, f);
    case 6: return 1;  // the smallest subnormal
    case 7: return numerics::encode(std::ldexp(1.0f, -130), f);  // subnormal or zero
    default: {
        std::normal_distribution<float> nd(0.0f, 2.0f);
        return numerics::encode(nd(rng), f);
    }
    }
}

void fill(core_on& a, core_on& b, unsigned partitions, std::uint64_t offset, unsigned count, dtype t, std::mt19937& rng,
          bool plain = false) {
    const unsigned es = isa::dtype_bytes(t);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (unsigned p = 0; p < partitions; ++p)
        for (unsigned i = 0; i < count; ++i) {
            const std::uint32_t code =
                plain ? numerics::encode(nd(rng), t == dtype::bf16 ? numerics::format::bf16 : numerics::format::fp32)
                      : operand(rng, t);
            std::memcpy(a.core.sbuf(p) + offset + i * es, &code, es);
            std::memcpy(b.core.sbuf(p) + offset + i * es, &code, es);
        }
}

// Runs the program on both cores; compares their PSUM and counts what the
// model's PSUM holds (fp32 view), so a test can show its specials arrived.
struct psum_comparison {
    unsigned differing_partitions = 0, nans = 0, infs = 0, finite_nonzero = 0;
};
psum_comparison run_and_compare(core_on& model, core_on& rtl, const program& p) {
    model.start(p);
    rtl.start(p);
    sc_core::sc_start();
    REQUIRE(model.core.status(engine::tensor) == neuroncore::engine_status::halted);
    REQUIRE(rtl.core.status(engine::tensor) == neuroncore::engine_status::halted);
    // The RTL's cycles agree with the documented formula (within 2%; measured: equal).
    const double cycles = static_cast<double>(stat(std::string(rtl.core.name()) + ".rtl_array_cycles"));
    CHECK(cycles > 0);
    CHECK(cycles == static_cast<double>(stat(std::string(rtl.core.name()) +
                                             ".rtl_formula_cycles")));  // within 2% asked; equal measured
    psum_comparison r;
    for (unsigned part = 0; part < 128; ++part) {
        r.differing_partitions += std::memcmp(model.core.psum(part), rtl.core.psum(part), 16 << 10) != 0;
        for (unsigned i = 0; i < 4096; ++i) {
            float v;
            std::memcpy(&v, model.core.psum(part) + 4 * i, 4);
            r.nans += std::isnan(v);
            r.infs += std::isinf(v);
            r.finite_nonzero += std::isfinite(v) && v != 0.0f;
        }
    }
    return r;
}

// Every Tensor engine array job of one operand type: a full 128 x 128 x 512
// matmul, an odd shape (K 40, M 70, N 33), an accumulate chain of three, a
// bf16 output, and a transpose, each into its own PSUM region; operands
// include NaN, infinities, -0, subnormals and the type's largest values.
void check_type(dtype ty) {
    core_on model("nc_model", "model"), rtl("nc_rtl", "rtl");
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    std::mt19937 rng(21 + static_cast<unsigned>(ty));
    const std::uint64_t a_off = 0, b_off = 4096, es = isa::dtype_bytes(ty);
    fill(model, rtl, 128, a_off, 128, ty, rng);
    fill(model, rtl, 128, b_off, 1024, ty, rng);
    program p;
    auto& t = p.on(engine::tensor);
    t.matmul(psum(dtype::fp32, 0, 128, 0, 512), sbuf(ty, 0, 128, a_off, 128), sbuf(ty, 0, 128, b_off, 512));
    t.matmul(psum(dtype::fp32, 0, 70, 2048, 33), sbuf(ty, 0, 40, a_off, 70), sbuf(ty, 0, 40, b_off, 33));
    for (unsigned i = 0; i < 3; ++i)
        t.matmul(psum(dtype::fp32, 0, 128, 4096, 256), sbuf(ty, 0, 128, a_off, 128),
                 sbuf(ty, 0, 128, b_off + i * 256 * es, 256), i > 0);
    t.matmul(psum(dtype::bf16, 0, 128, 6144, 512), sbuf(ty, 0, 128, a_off, 128),
             sbuf(ty, 0, 128, b_off + 512 * es, 512));
    t.transpose(psum(dtype::fp32, 0, 128, 8192, 128), sbuf(ty, 0, 128, a_off, 128));
    t.halt();
    const psum_comparison r = run_and_compare(model, rtl, p);
    CHECK(stat("nc_rtl.rtl_array_jobs") == 7);
    CHECK(stat("nc_model.rtl_array_jobs") == 0);
    CHECK(r.differing_partitions == 0);
    // The specials did reach the results (the comparison covers them).
    CHECK(r.nans > 0);
    if (ty != dtype::e4m3fn) CHECK(r.infs > 0);  // e4m3fn has no infinity, and its sums stay far below fp32's
}
}  // namespace

TEST_CASE("bf16 matmuls, accumulate chains, bf16 outputs and transposes give the same PSUM bits on RTL and model") {
    check_type(dtype::bf16);
}
TEST_CASE("fp16 array jobs give the same PSUM bits on RTL and model") { check_type(dtype::fp16); }
TEST_CASE("e4m3fn array jobs give the same PSUM bits on RTL and model") { check_type(dtype::e4m3fn); }
TEST_CASE("e5m2 array jobs give the same PSUM bits on RTL and model") { check_type(dtype::e5m2); }
TEST_CASE("fp32 array jobs (fused, four cycles a column) give the same PSUM bits on RTL and model") {
    check_type(dtype::fp32);
}

TEST_CASE("the RTL's cycles per pass are 2R + C - 2 + N: the model's fill and column rate") {
    core_on rtl("nc0", "rtl");
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    program p;
    p.on(engine::tensor)
        .matmul(psum(dtype::fp32, 0, 128, 0, 512), sbuf(dtype::bf16, 0, 128, 0, 128),
                sbuf(dtype::bf16, 0, 128, 4096, 512))
        .halt();
    const sc_core::sc_time t0 = sc_core::sc_time_stamp();
    rtl.start(p);
    sc_core::sc_start();
    const double model_cycles = (sc_core::sc_time_stamp() - t0).to_seconds() * 2.4e9;
    const unsigned R = rtl::systolic_array::rows(), C = rtl::systolic_array::cols();
    const double passes = std::ceil(128.0 / R) * std::ceil(128.0 / C);
    const double rtl_cycles = static_cast<double>(stat("nc0.rtl_array_cycles"));
    // The formula for an R x C array, per pass: R cycles of weights, N
    // columns, R + C - 2 to drain.
    INFO("RTL " << rtl_cycles << " cycles on " << R << " x " << C << ", " << passes << " passes");
    CHECK(std::fabs(rtl_cycles - passes * (2 * R + C - 2 + 512)) <= 0.02 * rtl_cycles);
    // The model's time for the chip's 128 x 128 array: 2 x 128 + 128 - 2 + 512.
    CHECK(std::fabs(model_cycles - (382 + 512)) < 0.5);
    if (R == 128 && C == 128) CHECK(std::fabs(rtl_cycles - model_cycles) <= 0.02 * model_cycles);
}

TEST_CASE("check mode replays every Nth array job on the RTL and finds no difference") {
    param_registry::instance().set_pending_text("nc0.tensor_engine.check_every", "2", "test");
    core_on chk("nc0", "check");
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    std::mt19937 rng(5);
    fill(chk, chk, 64, 0, 64, dtype::bf16, rng, true);
    program p;
    auto& t = p.on(engine::tensor);
    for (unsigned i = 0; i < 4; ++i)
        t.matmul(psum(dtype::fp32, 0, 64, 0, 64), sbuf(dtype::bf16, 0, 64, 0, 64), sbuf(dtype::bf16, 0, 64, 0, 64),
                 i > 0);
    t.halt();
    chk.start(p);
    sc_core::sc_start();
    CHECK(stat("nc0.rtl_array_jobs") == 2);
    CHECK(chk.core.rtl_mismatches() == 0);
}

TEST_CASE("check mode counts a difference between RTL and model") {
    param_registry::instance().set_pending_text("nc0.tensor_engine.inject_flip", "2", "test");
    core_on chk("nc0", "check");
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    std::mt19937 rng(6);
    fill(chk, chk, 16, 0, 64, dtype::bf16, rng, true);
    program p;
    auto& t = p.on(engine::tensor);
    for (unsigned i = 0; i < 3; ++i)
        t.matmul(psum(dtype::fp32, 0, 16, 0, 16), sbuf(dtype::bf16, 0, 16, 0, 16), sbuf(dtype::bf16, 0, 16, 0, 16));
    t.halt();
    chk.start(p);
    sc_core::sc_start();
    CHECK(stat("nc0.rtl_array_jobs") == 3);
    CHECK(chk.core.rtl_mismatches() == 1);
}

TEST_CASE("a waveform of a chosen array job is written as VCD") {
    const std::string path = "test_cosim_waveform.vcd";
    std::remove(path.c_str());
    param_registry::instance().set_pending_text("nc0.tensor_engine.waveform", path, "test");
    param_registry::instance().set_pending_text("nc0.tensor_engine.waveform_job", "2", "test");
    core_on rtl("nc0", "rtl");
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    program p;
    auto& t = p.on(engine::tensor);
    t.matmul(psum(dtype::fp32, 0, 8, 0, 8), sbuf(dtype::bf16, 0, 8, 0, 8), sbuf(dtype::bf16, 0, 8, 0, 8));
    t.matmul(psum(dtype::fp32, 0, 8, 0, 20), sbuf(dtype::bf16, 0, 8, 0, 8), sbuf(dtype::bf16, 0, 8, 0, 20));
    t.halt();
    rtl.start(p);
    sc_core::sc_start();
    std::ifstream in(path);
    REQUIRE(in.good());
    std::stringstream text;
    text << in.rdbuf();
    CHECK(text.str().find("$enddefinitions") != std::string::npos);
    text.seekg(0);
    CHECK(text.str().find("out_valid") != std::string::npos);
    // The second job (20 columns) was recorded, not the first (8): two dumps
    // per clock cycle, from time 0.
    std::uint64_t last = 0;
    std::string line;
    while (std::getline(text, line))
        if (!line.empty() && line[0] == '#') last = std::stoull(line.substr(1));
    CHECK(last + 1 == 2 * rtl::systolic_array::pass_cycles(20));
}

namespace {
// MX element codes: mostly finite, now and then NaN or infinity; scales
// mostly near 2^0, now and then NaN (0xFF) or at the ends of E8M0.
std::uint8_t mx_code(std::mt19937& rng, dtype t) {
    std::uint8_t c = static_cast<std::uint8_t>(rng());
    const bool special = (t == dtype::e4m3fn && (c & 0x7f) == 0x7f) || (t == dtype::e5m2 && ((c >> 2) & 0x1f) == 0x1f);
    if (special && rng() % 64) c &= 0xbb;  // keep one in 64 of them
    return c;
}
std::uint8_t mx_scale(std::mt19937& rng) {
    const unsigned r = rng() % 400;
    if (r == 0) return 0xff;
    if (r == 1) return 0;
    if (r == 2) return 254;
    if (r < 6) return static_cast<std::uint8_t>(rng() % 40 + (rng() % 2 ? 1 : 200));  // far scales: tiny or huge blocks
    return static_cast<std::uint8_t>(120 + rng() % 15);
}

void check_mx(dtype ta, dtype tb) {
    core_on model("nc_model", "model"), rtl("nc_rtl", "rtl");
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    std::mt19937 rng(31 + 7 * static_cast<unsigned>(ta) + static_cast<unsigned>(tb));
    auto put = [&](unsigned partition, std::uint64_t offset, std::uint8_t v) {
        model.core.sbuf(partition)[offset] = v;
        rtl.core.sbuf(partition)[offset] = v;
    };
    for (unsigned part = 0; part < 128; ++part) {
        for (unsigned i = 0; i < 512; ++i) put(part, i, mx_code(rng, ta));
        for (unsigned i = 0; i < 2048; ++i) put(part, 4096 + i, mx_code(rng, tb));
    }
    for (unsigned g = 0; g < 16; ++g) {
        for (unsigned m = 0; m < 128; ++m) put(g, 100000 + m, mx_scale(rng));
        for (unsigned n = 0; n < 512; ++n) put(g, 101000 + n, mx_scale(rng));
    }
    program p;
    auto& t = p.on(engine::tensor);
    // Full size (K 512), an odd shape (K 96, M 40, N 17), an accumulate pair, bf16 out.
    t.matmul_mx(psum(dtype::fp32, 0, 128, 0, 512), sbuf(ta, 0, 128, 0, 512), sbuf(tb, 0, 128, 4096, 2048), 100000,
                101000);
    t.matmul_mx(psum(dtype::fp32, 0, 40, 2048, 17), sbuf(ta, 0, 24, 0, 160), sbuf(tb, 0, 24, 4096, 68), 100000, 101000);
    for (unsigned i = 0; i < 2; ++i)
        t.matmul_mx(psum(dtype::fp32, 0, 128, 4096, 256), sbuf(ta, 0, 128, 0, 512),
                    sbuf(tb, 0, 128, 4096 + 1024 * i, 1024), 100000, 101000 + 256 * i, i > 0);
    t.matmul_mx(psum(dtype::bf16, 0, 128, 6144, 512), sbuf(ta, 0, 128, 0, 512), sbuf(tb, 0, 128, 4096, 2048), 100000,
                101000);
    t.halt();
    const psum_comparison r = run_and_compare(model, rtl, p);
    CHECK(stat("nc_rtl.rtl_array_jobs") == 5);
    CHECK(r.differing_partitions == 0);
    CHECK(r.nans > 0);
    CHECK(r.finite_nonzero > 1000);
}
}  // namespace

TEST_CASE("MXFP8 (e4m3fn) matmuls give the same PSUM bits on RTL and model") { check_mx(dtype::e4m3fn, dtype::e4m3fn); }
TEST_CASE("MX matmuls of e5m2 by e2m1 (MXFP4) give the same PSUM bits on RTL and model") {
    check_mx(dtype::e5m2, dtype::e2m1);
}
TEST_CASE("MX matmuls of e2m1 by e5m2 give the same PSUM bits on RTL and model") { check_mx(dtype::e2m1, dtype::e5m2); }
TEST_CASE("MX matmuls of e5m2 by e5m2 (products up to 2^64) give the same PSUM bits on RTL and model") {
    check_mx(dtype::e5m2, dtype::e5m2);
}

TEST_CASE("an MX block that underflows to -0 stays -0 on RTL and model: the first block is not added to +0") {
    core_on model("nc_model", "model"), rtl("nc_rtl", "rtl");
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    // K 32 (one block): a = 1.0 (e4m3fn 0x38) in K 0, b = -1.0 (0xb8); both
    // scales 2^-126, so the block is -2^-252: fl32 gives -0.
    for (core_on* c : {&model, &rtl}) {
        c->core.sbuf(0)[0] = 0x38;
        c->core.sbuf(0)[64] = 0xb8;
        c->core.sbuf(0)[1000] = 1;
        c->core.sbuf(0)[1001] = 1;
    }
    program p;
    p.on(engine::tensor)
        .matmul_mx(psum(dtype::fp32, 0, 1, 0, 1), sbuf(dtype::e4m3fn, 0, 8, 0, 4), sbuf(dtype::e4m3fn, 0, 8, 64, 4),
                   1000, 1001)
        .halt();
    model.start(p);
    rtl.start(p);
    sc_core::sc_start();
    std::uint32_t m, r;
    std::memcpy(&m, model.core.psum(0), 4);
    std::memcpy(&r, rtl.core.psum(0), 4);
    CHECK(m == 0x80000000u);
    CHECK(r == 0x80000000u);
}

namespace {
// Four distinct sorted positions of a group of G.
std::array<std::uint8_t, 4> kept_positions(std::mt19937& rng, unsigned G) {
    std::vector<std::uint8_t> all(G);
    for (unsigned i = 0; i < G; ++i) all[i] = static_cast<std::uint8_t>(i);
    std::shuffle(all.begin(), all.end(), rng);
    std::array<std::uint8_t, 4> k{all[0], all[1], all[2], all[3]};
    std::sort(k.begin(), k.end());
    return k;
}

// A sparse matmul (plain or MX) with random kept values and positions, and
// moving operands full of specials (a pruned position's infinity must not
// reach the result), on both back ends.
void check_sparse(bool mx, isa::sparsity sp) {
    core_on model("nc_model", "model"), rtl("nc_rtl", "rtl");
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    const unsigned G = isa::sparsity_group(sp), V = mx ? 4 : 1, D = V * G / 4, P = mx ? 32 : 64, M = 48, N = 40;
    const dtype t = mx ? dtype::e4m3fn : dtype::bf16;
    std::mt19937 rng(77 + G + V);
    auto put = [&](unsigned part, std::uint64_t offset, const void* v, unsigned bytes) {
        std::memcpy(model.core.sbuf(part) + offset, v, bytes);
        std::memcpy(rtl.core.sbuf(part) + offset, v, bytes);
    };
    const unsigned es = isa::dtype_bytes(t);
    for (unsigned part = 0; part < P; ++part) {
        // Kept values plain; moving values with a special one time in 128.
        std::normal_distribution<float> nd(0.0f, 1.0f);
        for (unsigned j = 0; j < V * M; ++j) {
            const std::uint32_t code = mx ? mx_code(rng, t) : numerics::encode(nd(rng), numerics::format::bf16);
            put(part, es * j, &code, es);
        }
        for (unsigned j = 0; j < D * N; ++j) {
            const std::uint32_t code = mx            ? mx_code(rng, t)
                                       : rng() % 128 ? numerics::encode(nd(rng), numerics::format::bf16)
                                                     : operand(rng, t);
            put(part, 8192 + es * j, &code, es);
        }
    }
    // Positions: a group is 4 kept values (plain: 4 partitions; MX: one).
    for (unsigned c0 = 0; c0 < V * P; c0 += 4)
        for (unsigned m = 0; m < M; ++m) {
            const auto k = kept_positions(rng, G);
            for (unsigned i = 0; i < 4; ++i) {
                const unsigned c = c0 + i;
                put(c / V, 60000 + V * m + c % V, &k[i], 1);
            }
        }
    for (unsigned g = 0; g < 64; ++g) {
        for (unsigned m = 0; m < M; ++m) {
            const std::uint8_t sc = mx_scale(rng);
            put(g, 100000 + m, &sc, 1);
        }
        for (unsigned n = 0; n < N; ++n) {
            const std::uint8_t sc = mx_scale(rng);
            put(g, 101000 + n, &sc, 1);
        }
    }
    program p;
    auto& s = p.on(engine::tensor);
    const auto dst = psum(dtype::fp32, 0, M, 0, N);
    if (mx) s.matmul_mx(dst, sbuf(t, 0, P, 0, V * M), sbuf(t, 0, P, 8192, D * N), 100000, 101000);
    else s.matmul(dst, sbuf(t, 0, P, 0, M), sbuf(t, 0, P, 8192, D * N));
    s.sparse(sp, 60000).halt();
    const psum_comparison r = run_and_compare(model, rtl, p);
    CHECK(stat("nc_rtl.rtl_array_jobs") == 1);
    CHECK(r.differing_partitions == 0);
    CHECK(r.finite_nonzero > M * N / 2);
}
}  // namespace

TEST_CASE("4:8 sparse bf16 matmuls give the same PSUM bits on RTL (weights expanded, holes skipped) and model") {
    check_sparse(false, isa::sparsity::s4_8);
}
TEST_CASE("4:16 sparse bf16 matmuls give the same PSUM bits on RTL and model") {
    check_sparse(false, isa::sparsity::s4_16);
}
TEST_CASE("4:16 sparse MXFP8 matmuls give the same PSUM bits on RTL and model") {
    check_sparse(true, isa::sparsity::s4_16);
}
TEST_CASE("4:8 sparse MXFP8 matmuls give the same PSUM bits on RTL and model") {
    check_sparse(true, isa::sparsity::s4_8);
}
