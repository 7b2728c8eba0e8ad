#include "trn3/numerics/float_format.h"

#include <cmath>

#include "trn3/core/error.h"

namespace trn3::numerics {

const format_info& info(format f) {
    //                              name      E  M  bias  inf    nan    ieee   max      nan      inf
    static const format_info fp32{"fp32", 8, 23, 127, true, true, true, 0x7f7fffff, 0x7fc00000, 0x7f800000};
    static const format_info bf16{"bf16", 8, 7, 127, true, true, true, 0x7f7f, 0x7fc0, 0x7f80};
    static const format_info fp16{"fp16", 5, 10, 15, true, true, true, 0x7bff, 0x7e00, 0x7c00};
    // OCP 8-bit Floating Point v1.0, table 1: E4M3 has no infinities and one
    // NaN mantissa (S.1111.111); E5M2 follows IEEE 754 conventions.
    static const format_info e4m3fn{"e4m3fn", 4, 3, 7, false, true, false, 0x7e, 0x7f, 0};
    static const format_info e5m2{"e5m2", 5, 2, 15, true, true, true, 0x7b, 0x7e, 0x7c};
    // OCP MX v1.0, section 5.3.3: FP4 E2M1 has neither infinities nor NaN.
    static const format_info e2m1{"e2m1", 2, 1, 1, false, false, false, 0x7, 0, 0};
    switch (f) {
    case format::fp32: return fp32;
    case format::bf16: return bf16;
    case format::fp16: return fp16;
    case format::e4m3fn: return e4m3fn;
    case format::e5m2: return e5m2;
    case format::e2m1: return e2m1;
    }
    return fp32;
}

format parse_format(const std::string& name) {
    for (format f : {format::fp32, format::bf16, format::fp16, format::e4m3fn, format::e5m2, format::e2m1})
        if (name == info(f).name) return f;
    throw config_error("unknown number format '" + name + "' (fp32, bf16, fp16, e4m3fn, e5m2, e2m1)");
}

float decode(std::uint32_t code, format f) {
    const format_info& fi = info(f);
    if (f == format::fp32) return bits_float(code);
    const bool negative = code & fi.sign_bit();
    const std::uint32_t mag = code & (fi.sign_bit() - 1);
    const std::uint32_t exp_field = mag >> fi.mantissa_bits;
    const std::uint32_t mant = mag & ((1u << fi.mantissa_bits) - 1);
    const std::uint32_t exp_max = (1u << fi.exponent_bits) - 1;
    float v;
    if (fi.has_nan && (fi.ieee_specials ? (exp_field == exp_max && mant != 0) : mag == fi.nan_code)) {
        v = std::nanf("");
    } else if (fi.has_inf && exp_field == exp_max && mant == 0) {
        v = INFINITY;
    } else if (exp_field == 0) {
        v = std::ldexp(static_cast<float>(mant), 1 - fi.bias - static_cast<int>(fi.mantissa_bits));
    } else {
        v = std::ldexp(static_cast<float>(mant | (1u << fi.mantissa_bits)),
                       static_cast<int>(exp_field) - fi.bias - static_cast<int>(fi.mantissa_bits));
    }
    return negative ? -v : v;
}

namespace {

// The code for an overflowed or infinite magnitude.
std::uint32_t overflow_code(const format_info& fi, bool saturate) {
    if (saturate) return fi.max_finite;
    if (fi.has_inf) return fi.inf_code;
    if (fi.has_nan) return fi.nan_code;
    return fi.max_finite;  // e2m1: nothing else to give
}

// Shifts `sig` right by `shift`, rounding as asked.
std::uint64_t round_shift(std::uint64_t sig, unsigned shift, const convert_options& o) {
    if (shift == 0) return sig;
    if (shift >= 64) return 0;
    const std::uint64_t kept = sig >> shift;
    const std::uint64_t rest = sig & ((1ull << shift) - 1);
    if (o.mode == rounding::nearest_even) {
        const std::uint64_t half = 1ull << (shift - 1);
        if (rest > half || (rest == half && (kept & 1))) return kept + 1;
        return kept;
    }
    // Stochastic: the top r discarded bits plus r random bits; a carry out
    // rounds up. P(up) = (discarded top bits) / 2^r.
    const unsigned r = o.random_bits < shift ? o.random_bits : shift;
    const std::uint64_t top = rest >> (shift - r);
    const std::uint64_t rnd = r == 32 ? o.random : (static_cast<std::uint64_t>(o.random) >> (32 - r));
    return kept + ((top + rnd) >> r);
}

}  // namespace

std::uint32_t encode(float value, format f, const convert_options& o) {
    const format_info& fi = info(f);
    const std::uint32_t u = float_bits(value);
    if (f == format::fp32) return u;
    const std::uint32_t sign = (u >> 31) ? fi.sign_bit() : 0;
    const std::uint32_t exp32 = (u >> 23) & 0xff;
    const std::uint32_t man32 = u & 0x7fffff;
    if (exp32 == 0xff) {
        if (man32 != 0) return fi.has_nan ? (sign | fi.nan_code) : (sign | fi.max_finite);
        return sign | overflow_code(fi, o.saturate);
    }
    if (exp32 == 0 && man32 == 0) return sign;  // +-0
    // value = sig * 2^(e - 23), sig with its implicit bit.
    std::uint64_t sig = exp32 ? (man32 | 0x800000u) : man32;
    int e = exp32 ? static_cast<int>(exp32) - 127 : -126;
    const int emin = 1 - fi.bias;
    const int m = static_cast<int>(fi.mantissa_bits);
    // Bits to drop: 23 - m at a normal exponent, more below the format's emin.
    int shift = 23 - m + (e < emin ? emin - e : 0);
    if (e < emin) e = emin;
    std::uint64_t r = shift >= 0 ? round_shift(sig, static_cast<unsigned>(shift), o) : sig << -shift;
    // Compose: a subnormal keeps exponent field 0; a carry into bit m moves the
    // value to the next binade by the plain addition below.
    std::uint64_t code;
    if (r < (1ull << m)) {
        code = r;  // subnormal (e == emin) or zero
    } else {
        const std::int64_t biased = e + fi.bias;
        code = (static_cast<std::uint64_t>(biased) << m) + (r - (1ull << m));
    }
    if (code > fi.max_finite) return sign | overflow_code(fi, o.saturate);
    return sign | static_cast<std::uint32_t>(code);
}

}  // namespace trn3::numerics
