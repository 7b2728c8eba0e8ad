#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "rig.h"
#include "trn3/kernels/mx_quantize.h"
#include "trn3/numerics/float_format.h"
#include "trn3/numerics/mx.h"

using namespace trn3;
using namespace trn3::kernels;

namespace {
// Quantizes a bf16 X [K][M] on the core and compares every code and scale
// with the numerics library's quantize_mx of the same 32-value blocks.
void check_quantize(unsigned K, unsigned M, dtype codes, numerics::format f, bool trn3_rule) {
    test::core_rig r;
    constexpr std::uint64_t x = 0x0, q = 0x1000'0000, sc = 0x2000'0000;
    std::mt19937 rng(K + M);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> v(static_cast<std::size_t>(K) * M);
    for (std::size_t i = 0; i < v.size(); ++i) {
        // Blocks of very different magnitudes (one octave per row group and column).
        const int e = (i / M / 32 * 7 + i % M * 3) % 41 - 20;
        const auto c = static_cast<std::uint16_t>(numerics::encode(std::ldexp(nd(rng), e), numerics::format::bf16));
        std::memcpy(r.device.data() + x + 2 * i, &c, 2);
        v[i] = numerics::decode(c, numerics::format::bf16);
    }
    r.run(mx_quantize({K, M, codes, trn3_rule}, x, q, sc));
    for (unsigned e = 0; e < isa::engine_count; ++e)
        REQUIRE(r.core.status(static_cast<isa::engine>(e)) != neuroncore::engine_status::error);
    const auto rule = trn3_rule ? numerics::mx_scale_rule::trn3 : numerics::mx_scale_rule::ocp;
    std::size_t mismatches = 0;
    for (unsigned m = 0; m < M; ++m)
        for (unsigned g = 0; g < K / 32; ++g) {
            float block[32];
            for (unsigned i = 0; i < 32; ++i) block[i] = v[static_cast<std::size_t>(32 * g + i) * M + m];
            const numerics::mx_block want = numerics::quantize_mx(block, f, rule);
            mismatches += r.device.data()[sc + static_cast<std::uint64_t>(g) * M + m] != want.scale;
            for (unsigned i = 0; i < 32; ++i)
                mismatches += r.device.data()[q + static_cast<std::uint64_t>(32 * g + i) * M + m] != want.elements[i];
        }
    CHECK(mismatches == 0);
}
}  // namespace

TEST_CASE("MX quantize writes MXFP8 codes and scales byte for byte as the numerics library (OCP rule)") {
    // 2 K tiles x 2 column tiles (512 and 128 columns): both buffers, a short last tile.
    check_quantize(1024, 640, dtype::e4m3fn, numerics::format::e4m3fn, false);
}

TEST_CASE("MX quantize writes MXFP4 codes with the Trainium3 scale rule byte for byte") {
    check_quantize(512, 256, dtype::e2m1, numerics::format::e2m1, true);
}

TEST_CASE("MX quantize overlaps loads, quantizing and stores over its tiles") {
    // 8 tiles take less than 8 times one tile's time: the two buffers overlap.
    test::core_rig r;  // one core, two programs one after the other
    const double t1 = r.run_from_reset(mx_quantize({512, 512}, 0, 0x1000'0000, 0x2000'0000)).to_seconds();
    const double t8 = r.run_from_reset(mx_quantize({4096, 512}, 0, 0x1000'0000, 0x2000'0000)).to_seconds();
    CHECK(r.core.semaphore(mx_quantize_done_semaphore) == 2 * 8);  // codes and scales stored, per tile
    INFO("one tile " << t1 * 1e6 << " us, eight " << t8 * 1e6 << " us");
    CHECK(t8 < 8 * t1 * 0.8);
    CHECK(t8 > 2 * t1);
}

TEST_CASE(
    "MX quantize's waits: a load waits for the quantize two tiles back, a quantize for its load and its buffers") {
    // K 2,048 x M 512: four tiles of 512 x 512.
    const program p = mx_quantize({2048, 512}, 0, 0x1000'0000, 0x2000'0000);
    const auto& sync = p.on(isa::engine::sync).code();
    const auto& vec = p.on(isa::engine::vector).code();
    REQUIRE(sync.size() == 4 + 1);
    std::vector<const isa::instruction*> quantizes, nops;
    for (const auto& i : vec) {
        if (i.op == static_cast<std::uint8_t>(isa::opcode::quantize_mx)) quantizes.push_back(&i);
        if (i.op == static_cast<std::uint8_t>(isa::opcode::nop)) nops.push_back(&i);
    }
    REQUIRE(quantizes.size() == 4);
    REQUIRE(nops.size() == 2 + 1);  // tiles 2 and 3 wait for their output buffers; the end waits for every store
    for (unsigned t = 0; t < 4; ++t) {
        INFO("tile " << t);
        CHECK(sync[t].wait_sem == (t >= 2 ? 1 : isa::no_semaphore));
        if (t >= 2) CHECK(sync[t].wait_value == t - 1);
        CHECK(quantizes[t]->wait_sem == 0);
        CHECK(quantizes[t]->wait_value == t + 1);
    }
    CHECK(nops[0]->wait_sem == mx_quantize_done_semaphore);
    CHECK(nops[0]->wait_value == 2);  // tile 0's codes and scales stored
    CHECK(nops[1]->wait_value == 4);
    CHECK(nops[2]->wait_value == 2 * 4);
}

TEST_CASE("an MX quantize shape or type the kernel cannot run is refused") {
    CHECK_THROWS_AS(mx_quantize({500, 128}, 0, 0, 0), std::invalid_argument);
    CHECK_THROWS_AS(mx_quantize({512, 100}, 0, 0, 0), std::invalid_argument);
    CHECK_THROWS_AS(mx_quantize({512, 128, dtype::bf16}, 0, 0, 0), std::invalid_argument);
}
