#include <catch2/catch.hpp>

#include <cmath>

#include "trn3/numerics/float_format.h"
#include "trn3/numerics/xorwow.h"

using namespace trn3::numerics;

namespace {
std::uint32_t sr(float v, format f, xorwow& rng) {
    convert_options o;
    o.mode = rounding::stochastic;
    o.random = rng.next();
    return encode(v, f, o);
}
}  // namespace

TEST_CASE("xorwow follows Marsaglia's recurrence and its state can be saved and restored") {
    xorwow a(42);
    xorwow::state saved = a.get_state();
    const std::uint32_t first = a.next();
    // One step by hand: t = v; t ^= t>>2; t ^= t<<1; t ^= x ^ (x<<4); d += 362437; out = t + d.
    std::uint32_t t = saved[4];
    t ^= t >> 2;
    t ^= t << 1;
    t ^= saved[0] ^ (saved[0] << 4);
    CHECK(first == t + saved[5] + 362437u);
    xorwow b;
    b.set_state(saved);
    CHECK(b.next() == first);
}

TEST_CASE("stochastic rounding is exactly reproducible for one seed and differs for another") {
    auto run = [](std::uint64_t seed) {
        xorwow rng(seed);
        std::vector<std::uint32_t> codes;
        for (int i = 0; i < 1000; ++i) codes.push_back(sr(1.0f + static_cast<float>(i) * 1e-4f, format::bf16, rng));
        return codes;
    };
    CHECK(run(3) == run(3));
    CHECK(run(3) != run(4));
}

TEST_CASE("stochastic rounding is unbiased: the mean over many draws is the input") {
    xorwow rng(99);
    for (format f : {format::bf16, format::e4m3fn, format::e5m2, format::fp16}) {
        INFO(info(f).name);
        // 0.3 ulp above 1.0, and a value in the subnormal range of the format.
        const float ulp = std::ldexp(1.0f, -static_cast<int>(info(f).mantissa_bits));
        const float min_subnormal = decode(1, f);
        const std::pair<float, float> cases[] = {{1.0f + 0.3f * ulp, ulp}, {0.7f * min_subnormal, min_subnormal}};
        for (auto [x, gap] : cases) {
            const int n = 200000;
            double sum = 0;
            for (int i = 0; i < n; ++i) sum += decode(sr(x, f, rng), f);
            // Each draw is one of the two neighbours `gap` apart: the mean's
            // standard deviation is at most gap / (2 sqrt(n)); allow 5 sigma
            // plus the 2^-16 resolution of the random bits.
            CHECK(std::fabs(sum / n - x) < 5 * 0.5 * gap / std::sqrt(n) + gap * std::ldexp(1.0, -16));
        }
    }
}

TEST_CASE("stochastic rounding leaves representable values alone") {
    xorwow rng(5);
    for (int i = 0; i < 10000; ++i) CHECK(sr(1.5f, format::e4m3fn, rng) == encode(1.5f, format::e4m3fn));
}

TEST_CASE("adding 0.5 to 1024 in fp16 2048 times: RNE stays at 1024, SR reaches about 2048") {
    std::uint32_t rne = encode(1024.0f, format::fp16);
    std::uint32_t srx = rne;
    xorwow rng(2024);
    for (int i = 0; i < 2048; ++i) {
        rne = encode(decode(rne, format::fp16) + 0.5f, format::fp16);
        srx = sr(decode(srx, format::fp16) + 0.5f, format::fp16, rng);
    }
    CHECK(decode(rne, format::fp16) == 1024.0f);
    CHECK(decode(srx, format::fp16) == Approx(2048.0f).margin(120));  // 1024 + Binomial(2048, 1/2): sigma 23
}

TEST_CASE("stochastic rounding overflows by the same rules as RNE") {
    xorwow rng(8);
    convert_options o;
    o.mode = rounding::stochastic;
    o.random = 0xffffffff;  // rounds up whenever the top 16 discarded bits are not all zero
    CHECK(encode(462.0f, format::e4m3fn, o) == 0x7f);  // 448 + 0.4375 ulp rounds up to 480: overflow
    o.saturate = true;
    CHECK(encode(462.0f, format::e4m3fn, o) == 0x7e);
    o.saturate = false;
    o.random = 0;  // never rounds up
    CHECK(encode(462.0f, format::e4m3fn, o) == 0x7e);
    o.saturate = false;
    CHECK(encode(std::nanf(""), format::bf16, o) == 0x7fc0);
}
