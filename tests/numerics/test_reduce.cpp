// The near-memory reductions (numerics/reduce.h), rule by rule.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "trn3/numerics/float_format.h"
#include "trn3/numerics/reduce.h"

using namespace trn3::numerics;

namespace {
template <typename T>
std::vector<std::uint8_t> bytes_of(const std::vector<T>& v) {
    std::vector<std::uint8_t> b(v.size() * sizeof(T));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}
std::vector<std::uint8_t> codes(const std::vector<float>& v, format f, unsigned es) {
    std::vector<std::uint8_t> b(v.size() * es);
    for (std::size_t i = 0; i < v.size(); ++i) {
        const std::uint32_t c = encode(v[i], f);
        std::memcpy(b.data() + i * es, &c, es);
    }
    return b;
}
std::vector<float> values(const std::vector<std::uint8_t>& b, format f, unsigned es) {
    std::vector<float> v(b.size() / es);
    for (std::size_t i = 0; i < v.size(); ++i) {
        std::uint32_t c = 0;
        std::memcpy(&c, b.data() + i * es, es);
        v[i] = decode(c, f);
    }
    return v;
}
}  // namespace

TEST_CASE("fp32: sum rounds to nearest even, max and min order -0 below +0, a NaN gives NaN") {
    auto dst = bytes_of<float>({1.0f, 1.0f, -0.0f, 0.0f, 3.0f, 2.0f});
    const auto src = bytes_of<float>({0x1p-24f, 0x1.8p-23f, 0.0f, -0.0f, std::nanf(""), 5.0f});
    REQUIRE(reduce_into({reduce_op::sum, reduce_type::fp32}, dst.data(), src.data(), dst.size()));
    std::vector<float> r(6);
    std::memcpy(r.data(), dst.data(), dst.size());
    CHECK(r[0] == 1.0f);  // 1 + 2^-24: the tie goes to even
    CHECK(r[1] == 1.0f + 0x1p-22f);  // 1 + 1.5 x 2^-23 rounds up
    CHECK(r[2] == 0.0f);
    CHECK(std::isnan(r[4]));
    CHECK(r[5] == 7.0f);
    auto mx = bytes_of<float>({-0.0f, 0.0f, 2.0f});
    auto mn = mx;
    const auto other = bytes_of<float>({0.0f, -0.0f, -3.0f});
    REQUIRE(reduce_into({reduce_op::max, reduce_type::fp32}, mx.data(), other.data(), mx.size()));
    REQUIRE(reduce_into({reduce_op::min, reduce_type::fp32}, mn.data(), other.data(), mn.size()));
    std::vector<float> a(3), b(3);
    std::memcpy(a.data(), mx.data(), 12);
    std::memcpy(b.data(), mn.data(), 12);
    CHECK((!std::signbit(a[0]) && !std::signbit(a[1]) && a[2] == 2.0f));
    CHECK((std::signbit(b[0]) && std::signbit(b[1]) && b[2] == -3.0f));
}

TEST_CASE("narrow floats: exact sums stay exact, others round once more to nearest even, overflow as the format says") {
    // bf16: 1 + 1 = 2 exactly; 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even is 1.
    auto bf = codes({1.0f, 1.0f, 3.0f}, format::bf16, 2);
    REQUIRE(reduce_into({reduce_op::sum, reduce_type::bf16}, bf.data(),
                        codes({1.0f, 0x1p-8f, -0.5f}, format::bf16, 2).data(), bf.size()));
    CHECK(values(bf, format::bf16, 2) == std::vector<float>{2.0f, 1.0f, 2.5f});
    // fp16: 65504 + 32 = 65536 rounds to infinity (no saturation).
    auto h = codes({65504.0f, 0.5f}, format::fp16, 2);
    REQUIRE(reduce_into({reduce_op::sum, reduce_type::fp16}, h.data(), codes({32.0f, 0.25f}, format::fp16, 2).data(),
                        h.size()));
    const auto hv = values(h, format::fp16, 2);
    CHECK(std::isinf(hv[0]));
    CHECK(hv[1] == 0.75f);
    // e4m3fn: 448 + 32 overflows to NaN (the format has no infinity); 2 + 1 = 3 exactly.
    auto e4 = codes({448.0f, 2.0f}, format::e4m3fn, 1);
    REQUIRE(reduce_into({reduce_op::sum, reduce_type::e4m3fn}, e4.data(),
                        codes({32.0f, 1.0f}, format::e4m3fn, 1).data(), e4.size()));
    const auto e4v = values(e4, format::e4m3fn, 1);
    CHECK(std::isnan(e4v[0]));
    CHECK(e4v[1] == 3.0f);
    // e5m2 max and min.
    auto e5 = codes({-4.0f, 1.5f}, format::e5m2, 1);
    REQUIRE(reduce_into({reduce_op::max, reduce_type::e5m2}, e5.data(), codes({-6.0f, 2.0f}, format::e5m2, 1).data(),
                        e5.size()));
    CHECK(values(e5, format::e5m2, 1) == std::vector<float>{-4.0f, 2.0f});
}

TEST_CASE("int32 sums wrap, max and min are signed, and a partial element is refused with nothing changed") {
    auto d = bytes_of<std::int32_t>({std::numeric_limits<std::int32_t>::max(), -5, 7});
    const auto s = bytes_of<std::int32_t>({1, 3, -9});
    REQUIRE(reduce_into({reduce_op::sum, reduce_type::int32}, d.data(), s.data(), d.size()));
    std::vector<std::int32_t> r(3);
    std::memcpy(r.data(), d.data(), 12);
    CHECK(r == std::vector<std::int32_t>{std::numeric_limits<std::int32_t>::min(), -2, -2});
    REQUIRE(reduce_into({reduce_op::max, reduce_type::int32}, d.data(), s.data(), d.size()));
    std::memcpy(r.data(), d.data(), 12);
    CHECK(r == std::vector<std::int32_t>{1, 3, -2});
    const auto before = d;
    CHECK_FALSE(reduce_into({reduce_op::min, reduce_type::int32}, d.data(), s.data(), 10));
    CHECK(d == before);
    CHECK(reduction_of(2, 5).has_value());
    CHECK(reduction_of(3, 0).has_value());  // prod
    CHECK_FALSE(reduction_of(4, 0).has_value());
    CHECK_FALSE(reduction_of(0, 6).has_value());
}

TEST_CASE("prod multiplies: fp32 rounds to nearest even, bf16 rounds again to the format, int32 wraps") {
    auto f = bytes_of<float>({3.0f, 1.0f + 0x1p-23f, -0.0f});
    const auto g = bytes_of<float>({0.125f, 1.0f + 0x1p-23f, 5.0f});
    REQUIRE(reduce_into({reduce_op::prod, reduce_type::fp32}, f.data(), g.data(), f.size()));
    std::vector<float> v(3);
    std::memcpy(v.data(), f.data(), 12);
    CHECK(v[0] == 0.375f);
    CHECK(v[1] == 1.0f + 0x1p-22f);  // 1 + 2^-22 + 2^-46 rounds to 1 + 2^-22
    CHECK((v[2] == 0.0f && std::signbit(v[2])));
    // bf16 1.5 x 1.0078125 = 1.51171875 (exact in fp32), halfway between bf16's 1.5078125 and 1.515625: to even
    std::vector<std::uint16_t> a = {0x3fc0}, b = {0x3f81};
    std::vector<std::uint8_t> ab(2), bb(2);
    std::memcpy(ab.data(), a.data(), 2);
    std::memcpy(bb.data(), b.data(), 2);
    REQUIRE(reduce_into({reduce_op::prod, reduce_type::bf16}, ab.data(), bb.data(), 2));
    std::memcpy(a.data(), ab.data(), 2);
    CHECK(a[0] == 0x3fc2);  // 1.515625
    auto i = bytes_of<std::int32_t>({65536, -3});
    const auto j = bytes_of<std::int32_t>({65536, 7});
    REQUIRE(reduce_into({reduce_op::prod, reduce_type::int32}, i.data(), j.data(), i.size()));
    std::vector<std::int32_t> w(2);
    std::memcpy(w.data(), i.data(), 8);
    CHECK(w == std::vector<std::int32_t>{0, -21});  // 2^32 wraps to 0
}
