// Small floating-point formats, bit-exact: fp32, bf16, fp16, OCP FP8
// (e4m3fn, e5m2) and OCP MX FP4 (e2m1).
//
// Every format here is narrower than fp32, so decoding is exact and a value
// is converted from fp32 with one rounding. The rules (docs/numerics.md, each
// with its spec clause):
//  - rounding is round-to-nearest-even (RNE) or stochastic (SR), applied to
//    the magnitude; overflow is judged after rounding;
//  - subnormals are kept (gradual underflow), in and out;
//  - -0 keeps its sign; NaN stays NaN (the format's canonical quiet NaN with
//    the input's sign) where the format has one;
//  - overflow, and infinity on input, give: saturate mode -> +-max finite;
//    non-saturating mode -> +-inf where the format has infinities, else NaN
//    (e4m3fn), else +-max (e2m1, which has neither).
#pragma once

#include <cstdint>
#include <string>

namespace trn3::numerics {

enum class format { fp32, bf16, fp16, e4m3fn, e5m2, e2m1 };

struct format_info {
    const char* name;
    unsigned exponent_bits;
    unsigned mantissa_bits;
    int bias;
    bool has_inf;  // IEEE-style: all-ones exponent, zero mantissa
    bool has_nan;
    bool ieee_specials;  // all-ones exponent reserved for inf/NaN (fp32, bf16, fp16, e5m2)
    std::uint32_t max_finite;  // code of the largest finite magnitude
    std::uint32_t nan_code;  // canonical NaN (positive); 0 when there is none
    std::uint32_t inf_code;  // +inf; 0 when there is none
    unsigned bits() const { return 1 + exponent_bits + mantissa_bits; }
    std::uint32_t sign_bit() const { return 1u << (exponent_bits + mantissa_bits); }
};

const format_info& info(format f);
format parse_format(const std::string& name);  // throws config_error

enum class rounding { nearest_even, stochastic };

struct convert_options {
    rounding mode = rounding::nearest_even;
    bool saturate = false;
    // Stochastic rounding: `random` supplies the bits; the top `random_bits`
    // of it are added just below the destination's last kept bit.
    std::uint32_t random = 0;
    unsigned random_bits = 16;
};

// The code of `value` in format f (in the low bits of the result).
std::uint32_t encode(float value, format f, const convert_options& options = {});
// The exact value of a code.
float decode(std::uint32_t code, format f);

inline std::uint32_t float_bits(float v) {
    std::uint32_t u;
    __builtin_memcpy(&u, &v, 4);
    return u;
}
inline float bits_float(std::uint32_t u) {
    float v;
    __builtin_memcpy(&v, &u, 4);
    return v;
}

}  // namespace trn3::numerics
