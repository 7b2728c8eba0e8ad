#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "rig.h"
#include "trn3/kernels/attention.h"
#include "trn3/kernels/reference.h"
#include "trn3/numerics/float_format.h"

using namespace trn3;
using namespace trn3::kernels;

namespace {
// bf16 inputs written to device memory; returns their exact values.
std::vector<float> put_bf16(test::core_rig& r, std::uint64_t at, std::size_t n, std::mt19937& rng) {
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<std::uint16_t>(numerics::encode(nd(rng), numerics::format::bf16));
        std::memcpy(r.device.data() + at + 2 * i, &c, 2);
        v[i] = numerics::decode(c, numerics::format::bf16);
    }
    return v;
}

void check_attention(unsigned keys, unsigned D) {
    test::core_rig r;
    std::mt19937 rng(keys * 1000 + D);
    auto q = put_bf16(r, 0x0, 128 * D, rng);
    auto k = put_bf16(r, 0x100000, keys * D, rng);
    auto v = put_bf16(r, 0x200000, keys * D, rng);
    r.run(attention({keys, D}, 0x0, 0x100000, 0x200000, 0x300000));
    for (unsigned e = 0; e < isa::engine_count; ++e)
        REQUIRE(r.core.status(static_cast<isa::engine>(e)) != neuroncore::engine_status::error);
    std::vector<float> o(128 * D);
    std::memcpy(o.data(), r.device.data() + 0x300000, o.size() * 4);
    const auto want = reference::attention(q, k, v, 128, keys, D);
    double scale = 0;
    for (double x : want) scale = std::max(scale, std::fabs(x));
    const double err = reference::max_relative_error(o, want, scale);
    INFO("error relative to max |O|: " << err);
    WARN("attention keys " << keys << " D " << D << ": error relative to max |O| " << err);
    // P is rounded to bf16 (2^-9 relative) before P V: errors of a few 1e-3.
    CHECK(err < 1e-2);
    CHECK(err > 0);  // a result equal to fp64 everywhere would mean P was never rounded
}
}  // namespace

TEST_CASE("attention with 128 keys and head dimension 64 matches fp64 within bf16 rounding of P") {
    check_attention(128, 64);
}

TEST_CASE("attention with 512 keys and head dimension 128 accumulates four P^T V chunks") { check_attention(512, 128); }

TEST_CASE("flash attention over 1280 keys (blocks of 512, 512, 256) matches fp64 with an online softmax") {
    check_attention(1280, 64);
}

TEST_CASE("flash attention over 2048 keys and head dimension 128 rescales O by four blocks' maxima") {
    check_attention(2048, 128);
}

TEST_CASE("flash attention runs one scores matmul per block and one P V matmul per 128 keys") {
    // Every block runs one scores matmul and one P V matmul per 128 keys:
    // 1280 keys, 3 blocks, 10 chunks of 128.
    const program p = attention({1280, 64}, 0, 0x100000, 0x200000, 0x300000);
    unsigned matmuls = 0, transposes = 0;
    for (const auto& i : p.on(isa::engine::tensor).code()) {
        matmuls += i.op == static_cast<std::uint8_t>(isa::opcode::matmul);
        transposes += i.op == static_cast<std::uint8_t>(isa::opcode::transpose);
    }
    CHECK(matmuls == 3 + 10);
    CHECK(transposes == 10);
}

TEST_CASE("an attention shape the kernel cannot tile is refused") {
    CHECK_THROWS_AS(attention({200, 64}, 0, 0, 0, 0), std::invalid_argument);
    CHECK_THROWS_AS(attention({128, 256}, 0, 0, 0, 0), std::invalid_argument);
    CHECK_THROWS_AS(attention({640, 0}, 0, 0, 0, 0), std::invalid_argument);
    CHECK_THROWS_AS(attention({attention_max_keys + 128, 64}, 0, 0, 0, 0), std::invalid_argument);
}
