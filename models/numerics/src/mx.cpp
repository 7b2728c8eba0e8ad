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

// sum x 2^exp2 rounded once to fp32 (RNE, gradual underflow, overflow to
// infinity), from the exact 128-bit integer.
float round_to_float(int128 sum, int exp2) {
    if (sum == 0) return 0.0f;
    const bool negative = sum < 0;
    const uint128 mag = negative ? static_cast<uint128>(-sum) : static_cast<uint128>(sum);
    const std::uint64_t hi = static_cast<std::uint64_t>(mag >> 64), lo = static_cast<std::uint64_t>(mag);
    const int top = hi ? 127 - __builtin_clzll(hi) : 63 - __builtin_clzll(lo);  // index of the leading one
    const int lead_exp = top + exp2;
    int keep = 24;                                    // fp32 significand bits
    if (lead_exp < -126) keep -= -126 - lead_exp;     // fewer in the subnormal range
    const int shift = top + 1 - keep;                 // bits to drop
    uint128 kept;
    if (shift <= 0) {
        kept = mag;
    } else if (shift > top + 1) {
        kept = 0;                                     // below half the smallest subnormal
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

// floor(log2(|v|)) of a finite non-zero fp32, from its bits.
int exponent_of(float v) {
    const std::uint32_t u = float_bits(v) & 0x7fffffff;
    const int field = static_cast<int>(u >> 23);
    if (field != 0) return field - 127;
    // Subnormal: the position of the leading one.
    return -149 + (31 - __builtin_clz(u));
}
} // namespace

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
    if (a.scale == e8m0_nan || b.scale == e8m0_nan) return std::numeric_limits<float>::quiet_NaN();
    // Each element is an integer times 2^-k for the format's smallest
    // subnormal exponent k (9 for e4m3fn, 16 for e5m2, 1 for e2m1); products
    // are integers times 2^-(ka + kb), summed exactly in 128 bits.
    auto scaled = [](const mx_block& blk, unsigned i, int& k, bool& nan) -> int128 {
        const format_info& fi = info(blk.element_format);
        k = fi.bias - 1 + static_cast<int>(fi.mantissa_bits);
        const float e = decode(blk.elements[i], blk.element_format);
        if (std::isnan(e) || std::isinf(e)) {
            nan = true;
            return 0;
        }
        return static_cast<int128>(std::ldexp(static_cast<double>(e), k));
    };
    int128 sum = 0;
    int ka = 0, kb = 0;
    bool nan = false;
    for (unsigned i = 0; i < mx_block_size; ++i) sum += scaled(a, i, ka, nan) * scaled(b, i, kb, nan);
    if (nan) return std::numeric_limits<float>::quiet_NaN();
    const int exp2 = (static_cast<int>(a.scale) - 127) + (static_cast<int>(b.scale) - 127) - ka - kb;
    return round_to_float(sum, exp2);
}

} // namespace trn3::numerics
