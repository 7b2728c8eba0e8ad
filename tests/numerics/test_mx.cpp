#include <catch2/catch.hpp>

#include <mpfr.h>

#include <cmath>
#include <random>

#include "trn3/numerics/mx.h"

using namespace trn3::numerics;

namespace {
std::array<float, 32> filled(float v) {
    std::array<float, 32> a;
    a.fill(v);
    return a;
}
}  // namespace

TEST_CASE("e8m0 decodes powers of two from 2^-127 to 2^127, and 0xFF is NaN") {
    CHECK(decode_e8m0(127) == 1.0f);
    CHECK(decode_e8m0(0) == std::ldexp(1.0f, -127));
    CHECK(decode_e8m0(254) == std::ldexp(1.0f, 127));
    CHECK(std::isnan(decode_e8m0(0xff)));
}

TEST_CASE("the shared exponent comes from the exponent field of the largest magnitude") {
    auto v = filled(0.0f);
    v[3] = -3.0f;  // floor(log2 3) = 1; e4m3fn emax 8: shared -7
    v[9] = 0.5f;
    mx_block b = quantize_mx(v.data(), format::e4m3fn);
    CHECK(b.scale == 127 - 7);
    CHECK(b.value(3) == -3.0f);
    CHECK(b.value(9) == 0.5f);
    // Just below a power of two: a floating log2 rounds to 0 here; the field says -1.
    v = filled(0.0f);
    v[0] = std::nextafter(1.0f, 0.0f);
    CHECK(quantize_mx(v.data(), format::e4m3fn).scale == 127 - 1 - 8);
    CHECK(quantize_mx(v.data(), format::e5m2).scale == 127 - 1 - 15);
    CHECK(quantize_mx(v.data(), format::e2m1).scale == 127 - 1 - 2);
}

TEST_CASE("the all-zero block has scale 2^-127 and zero elements") {
    auto v = filled(0.0f);
    mx_block b = quantize_mx(v.data(), format::e5m2);
    CHECK(b.scale == 0);
    for (unsigned i = 0; i < 32; ++i) CHECK(b.value(i) == 0.0f);
}

TEST_CASE("a block holding NaN or infinity gets a NaN scale and reads NaN") {
    for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
        auto v = filled(1.0f);
        v[17] = bad;
        for (format f : {format::e4m3fn, format::e5m2, format::e2m1}) {
            mx_block b = quantize_mx(v.data(), f);
            CHECK(b.scale == e8m0_nan);
            CHECK(std::isnan(b.value(0)));
        }
    }
}

TEST_CASE("elements that round above the element max saturate, and the trn3 rule leaves headroom instead") {
    auto v = filled(1.0f);
    v[5] = 1.875f;  // / 2^-8 = 480 > 448: saturates under the OCP rule
    mx_block ocp = quantize_mx(v.data(), format::e4m3fn, mx_scale_rule::ocp);
    CHECK(ocp.elements[5] == 0x7e);
    CHECK(ocp.value(5) == 1.75f);
    mx_block trn3 = quantize_mx(v.data(), format::e4m3fn, mx_scale_rule::trn3);
    CHECK(trn3.scale == ocp.scale + 1);
    CHECK(trn3.value(5) == 1.875f);  // 240 x 2^-7: exact
}

TEST_CASE("tiny blocks clamp the shared exponent at -127") {
    auto v = filled(std::ldexp(1.0f, -140));
    mx_block b = quantize_mx(v.data(), format::e5m2);
    CHECK(b.scale == 0);
    CHECK(b.value(0) == std::ldexp(1.0f, -140));  // 2^-13 x 2^-127: an e5m2 subnormal
}

TEST_CASE("the MX dot product is the exact sum rounded once to fp32") {
    std::mt19937 rng(3);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (format f : {format::e4m3fn, format::e5m2, format::e2m1}) {
        INFO(info(f).name);
        for (int trial = 0; trial < 300; ++trial) {
            std::array<float, 32> va, vb;
            const float sa = std::ldexp(1.0f, static_cast<int>(rng() % 60) - 30);
            for (unsigned i = 0; i < 32; ++i) {
                va[i] = normal(rng) * sa * (i % 7 == 0 ? 1000.0f : 1.0f);
                vb[i] = normal(rng);
            }
            mx_block a = quantize_mx(va.data(), f), b = quantize_mx(vb.data(), f);
            // Oracle: MPFR at 256 bits holds the sum exactly; one rounding to float.
            mpfr_t acc, term;
            mpfr_init2(acc, 256);
            mpfr_init2(term, 256);
            mpfr_set_zero(acc, 1);
            for (unsigned i = 0; i < 32; ++i) {
                mpfr_set_flt(term, a.value(i), MPFR_RNDN);
                mpfr_mul_d(term, term, static_cast<double>(b.value(i)), MPFR_RNDN);
                mpfr_add(acc, acc, term, MPFR_RNDN);
            }
            const float want = mpfr_get_flt(acc, MPFR_RNDN);
            mpfr_clear(acc);
            mpfr_clear(term);
            REQUIRE(mx_dot(a, b) == want);
        }
    }
}

TEST_CASE("the MX dot product of a block with a NaN scale is NaN") {
    auto v = filled(1.0f);
    mx_block a = quantize_mx(v.data(), format::e4m3fn);
    v[0] = std::nanf("");
    mx_block b = quantize_mx(v.data(), format::e4m3fn);
    CHECK(mx_dot(a, a) == 32.0f);
    CHECK(std::isnan(mx_dot(a, b)));
}
