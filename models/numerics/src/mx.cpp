#include "trn3/numerics/mx.h"

#include <cmath>
#include <limits>

#include "trn3/core/error.h"

namespace trn3::numerics {

// 128-bit integers (a GCC/Clang extension) hold an MX dot product exactly.
__extension__ typedef __int128 int128;
__extension__ typedef unsigned __int128 uint128;

float decode_e8m0(std::uint8_t code) {
    if (code == e8m0_nan) return std::numeric_limits<float>::quiet_NaN();
    return std::ldexp(1.0f, static_cast<int>(code) - 127);
}

namespace {
int emax_of(format f) {
    switch (f) {
    case format::e4m3fn: return 8;
    case format::e5m2: return 15;
    case format::e2m1: return 2;
    default: throw config_error(std::string("MX elements must be e4m3fn, e5m2 or e2m1, not ") + info(f).name);
    }
}

}  // namespace

float round_scaled(mx_int128 sum, int exp2) {
    if (sum == 0) return 0.0f;
    const bool negative = sum < 0;
    const uint128 mag = negative ? static_cast<uint128>(-sum) : static_cast<uint128>(sum);
    const std::uint64_t hi = static_cast<std::uint64_t>(mag >> 64), lo = static_cast<std::uint64_t>(mag);
    const int top = hi ? 127 - __builtin_clzll(hi) : 63 - __builtin_clzll(lo);  // index of the leading one
    const int lead_exp = top + exp2;
    int keep = 24;  // fp32 significand bits
    if (lead_exp < -126) keep -= -126 - lead_exp;  // fewer in the subnormal range
    const int shift = top + 1 - keep;  // bits to drop
    uint128 kept;
    if (shift <= 0) {
        kept = mag;
    } else if (shift > top + 1) {
        kept = 0;  // below half the smallest subnormal
    } else {
        kept = mag >> shift;
        const uint128 rest = mag - (kept << shift);
        const uint128 half = static_cast<uint128>(1) << (shift - 1);
        if (rest > half || (rest == half && (kept & 1))) ++kept;
    }
    // kept has at most 25 bits: exact in double; the power of two is exact;
    // the narrowing to float is exact or overflows to infinity.
    const double v = std::ldexp(static_cast<double>(static_cast<std::uint64_t>(kept)), exp2 + (shift > 0 ? shift : 0));
    const float f = static_cast<float>(v);
    return negative ? -f : f;
}

int mx_element_shift(format f) {
    const format_info& fi = info(f);
    return fi.bias - 1 + static_cast<int>(fi.mantissa_bits);
}

std::int64_t mx_element_integer(std::uint32_t code, format f) {
    const float e = decode(code, f);
    if (std::isnan(e) || std::isinf(e)) return 0;
    return static_cast<std::int64_t>(std::ldexp(static_cast<double>(e), mx_element_shift(f)));
}

namespace {

// floor(log2(|v|)) of a finite non-zero fp32, from its bits.
int exponent_of(float v) {
    const std::uint32_t u = float_bits(v) & 0x7fffffff;
    const int field = static_cast<int>(u >> 23);
    if (field != 0) return field - 127;
    // Subnormal: the position of the leading one.
    return -149 + (31 - __builtin_clz(u));
}
}  // namespace

float mx_block::value(unsigned i) const {
    const float x = decode_e8m0(scale);
    return x * decode(elements[i], element_format);
}

mx_block quantize_mx(const float* v, format element_format, mx_scale_rule rule) {
    mx_block b;
    b.element_format = element_format;
    const int emax = emax_of(element_format);
    float amax = 0;
    for (unsigned i = 0; i < mx_block_size; ++i) {
        if (!std::isfinite(v[i])) {
            b.scale = e8m0_nan;
            return b;
        }
        amax = std::max(amax, std::fabs(v[i]));
    }
    int shared = amax == 0 ? -127 : exponent_of(amax) - emax + (rule == mx_scale_rule::trn3 ? 1 : 0);
    if (shared > 127) {
        b.scale = e8m0_nan;
        return b;
    }
    if (shared < -127) shared = -127;
    b.scale = static_cast<std::uint8_t>(shared + 127);
    convert_options o;
    o.saturate = true;
    for (unsigned i = 0; i < mx_block_size; ++i) {
        // V / X with X a power of two: exact unless it underflows fp32, which
        // double avoids before the single rounding to the element format.
        const double q = std::ldexp(static_cast<double>(v[i]), -shared);
        const float qf = static_cast<float>(q);
        // qf is exact whenever the element format can hold the value more
        // finely than fp32's subnormals can, which is always the case here:
        // element subnormals stop at 2^-9 (e4m3fn), 2^-16 (e5m2), 2^-1 (e2m1).
        b.elements[i] = static_cast<std::uint8_t>(encode(qf, element_format, o));
    }
    return b;
}

float mx_dot(const mx_block& a, const mx_block& b) {
    constexpr float nan = std::numeric_limits<float>::quiet_NaN();
    if (a.scale == e8m0_nan || b.scale == e8m0_nan) return nan;
    int128 sum = 0;
    for (unsigned i = 0; i < mx_block_size; ++i) {
        if (!std::isfinite(decode(a.elements[i], a.element_format)) ||
            !std::isfinite(decode(b.elements[i], b.element_format)))
            return nan;
        sum += static_cast<int128>(mx_element_integer(a.elements[i], a.element_format)) *
               mx_element_integer(b.elements[i], b.element_format);
    }
    const int exp2 = (static_cast<int>(a.scale) - 127) + (static_cast<int>(b.scale) - 127) -
                     mx_element_shift(a.element_format) - mx_element_shift(b.element_format);
    return round_scaled(sum, exp2);
}

}  // namespace trn3::numerics
