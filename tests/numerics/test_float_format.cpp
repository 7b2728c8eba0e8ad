#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "mpfr_oracle.h"
#include "trn3/numerics/float_format.h"

using namespace trn3::numerics;

namespace {
const format small_formats[] = {format::bf16, format::fp16, format::e4m3fn, format::e5m2, format::e2m1};

bool same_value(float a, float b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return a == b && std::signbit(a) == std::signbit(b);
}

bool is_nan_code(std::uint32_t code, format f) { return std::isnan(decode(code, f)); }
}  // namespace

TEST_CASE("every code of every small format decodes and re-encodes to itself") {
    for (format f : small_formats) {
        const format_info& fi = info(f);
        INFO(fi.name);
        for (std::uint32_t code = 0; code < (1u << fi.bits()); ++code) {
            const float v = decode(code, f);
            const std::uint32_t back = encode(v, f);
            if (is_nan_code(code, f)) CHECK(back == ((code & fi.sign_bit()) | fi.nan_code));  // the canonical NaN
            else CHECK(back == code);
        }
    }
}

TEST_CASE("decoding gives the OCP and IEEE values") {
    CHECK(decode(0x7e, format::e4m3fn) == 448.0f);
    CHECK(std::isnan(decode(0x7f, format::e4m3fn)));
    CHECK(std::isnan(decode(0xff, format::e4m3fn)));
    CHECK(decode(0x78, format::e4m3fn) == 256.0f);  // S.1111.000 is a number in e4m3fn
    CHECK(decode(0x01, format::e4m3fn) == std::ldexp(1.0f, -9));
    CHECK(decode(0x08, format::e4m3fn) == std::ldexp(1.0f, -6));
    CHECK(decode(0x7b, format::e5m2) == 57344.0f);
    CHECK(std::isinf(decode(0x7c, format::e5m2)));
    CHECK(std::isnan(decode(0x7d, format::e5m2)));
    CHECK(decode(0x01, format::e5m2) == std::ldexp(1.0f, -16));
    CHECK(decode(0x7, format::e2m1) == 6.0f);
    CHECK(decode(0x1, format::e2m1) == 0.5f);
    CHECK(decode(0xf, format::e2m1) == -6.0f);
    CHECK(decode(0x7f7f, format::bf16) == bits_float(0x7f7f0000));
    CHECK(decode(0x7bff, format::fp16) == 65504.0f);
    CHECK(std::signbit(decode(0x80, format::e4m3fn)));
}

TEST_CASE("fp32 to e4m3fn: overflow is judged after rounding, 464 ties to 448") {
    CHECK(encode(448.0f, format::e4m3fn) == 0x7e);
    CHECK(encode(464.0f, format::e4m3fn) == 0x7e);
    CHECK(encode(std::nextafter(464.0f, 1e9f), format::e4m3fn) == 0x7f);
    CHECK(encode(-500.0f, format::e4m3fn) == 0xff);
    convert_options sat;
    sat.saturate = true;
    CHECK(encode(500.0f, format::e4m3fn, sat) == 0x7e);
    CHECK(encode(-INFINITY, format::e4m3fn, sat) == 0xfe);
    CHECK(encode(INFINITY, format::e4m3fn) == 0x7f);
    CHECK(encode(-std::nanf(""), format::e4m3fn) == 0xff);
}

TEST_CASE("fp32 to e5m2: 61440 and above overflow to infinity") {
    CHECK(encode(57344.0f, format::e5m2) == 0x7b);
    CHECK(encode(std::nextafter(61440.0f, 0.0f), format::e5m2) == 0x7b);
    CHECK(encode(61440.0f, format::e5m2) == 0x7c);
    CHECK(encode(-INFINITY, format::e5m2) == 0xfc);
    convert_options sat;
    sat.saturate = true;
    CHECK(encode(1e6f, format::e5m2, sat) == 0x7b);
    CHECK(encode(INFINITY, format::e5m2, sat) == 0x7b);
    CHECK(encode(std::nanf(""), format::e5m2) == 0x7e);
}

TEST_CASE("subnormals, ties at the bottom and -0") {
    const float half_min = std::ldexp(1.0f, -10);  // half the smallest e4m3fn subnormal
    CHECK(encode(half_min, format::e4m3fn) == 0x00);  // tie to even: 0
    CHECK(encode(std::nextafter(half_min, 1.0f), format::e4m3fn) == 0x01);
    CHECK(encode(3 * half_min, format::e4m3fn) == 0x02);  // 1.5 ulp ties to 2
    CHECK(encode(-0.0f, format::e4m3fn) == 0x80);
    CHECK(encode(-1e-30f, format::e4m3fn) == 0x80);  // underflow keeps the sign
    CHECK(encode(std::ldexp(1.0f, -149), format::bf16) == 0x0000);  // fp32 subnormal in
    CHECK(encode(std::ldexp(1.0f, -133), format::bf16) == 0x0001);  // bf16 subnormal
    CHECK(encode(0.25f, format::e2m1) == 0x0);  // tie to 0
    CHECK(encode(0.75f, format::e2m1) == 0x2);  // tie to 1.0
    CHECK(encode(5.0f, format::e2m1) == 0x6);  // tie to 4.0
    CHECK(encode(7.0f, format::e2m1) == 0x7);  // saturates: no inf
}

TEST_CASE("fp32 to bf16 matches the round-to-nearest-even bit formula for every non-NaN input tried") {
    std::mt19937 rng(7);
    for (int i = 0; i < 2000000; ++i) {
        std::uint32_t u = rng();
        if (((u >> 23) & 0xff) == 0xff && (u & 0x7fffff)) continue;  // NaN
        const std::uint32_t expect = (u + 0x7fff + ((u >> 16) & 1)) >> 16;
        REQUIRE(encode(bits_float(u), format::bf16) == expect);
    }
}

TEST_CASE("RNE conversion agrees with MPFR at every midpoint, its neighbours and random inputs") {
    std::mt19937 rng(11);
    for (format f : small_formats) {
        const format_info& fi = info(f);
        INFO(fi.name);
        std::vector<float> inputs;
        for (std::uint32_t code = 0; code < fi.max_finite; ++code) {
            const float a = decode(code, f), b = decode(code + 1, f);
            const float mid = a + (b - a) / 2;  // exact: one bit more than the format
            for (float v : {a, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY), b})
                for (float s : {1.0f, -1.0f}) inputs.push_back(s * v);
        }
        const float top = decode(fi.max_finite, f);
        for (float v : {top * 1.03125f, top * 1.0625f, top * 1.125f, top * 2, 3e38f, INFINITY}) inputs.push_back(v);
        for (int i = 0; i < 200000; ++i) inputs.push_back(bits_float(rng()));
        for (float x : inputs) {
            for (bool saturate : {false, true}) {
                convert_options o;
                o.saturate = saturate;
                const float got = decode(encode(x, f, o), f);
                const float want = oracle::round_to(x, f, saturate);
                if (!same_value(got, want)) {
                    INFO("x = " << x << " (0x" << std::hex << float_bits(x) << ") saturate " << saturate);
                    CHECK(got == want);
                }
            }
        }
    }
}
