// OCP Microscaling (MX) v1.0: blocks of 32 elements sharing one E8M0 scale.
//
// E8M0 (section 5.4.1): 8 exponent bits, bias 127, value 2^(code - 127) for
// codes 0..254 (2^-127 .. 2^127), 0xFF = NaN; no zero, no sign.
//
// Quantisation (section 6.3, "Conversion from vector of scalar floats"):
//   shared_exp = floor(log2(amax)) - emax_elem, taken from the exponent field
//   of amax (never a floating log2, which is off by one just below a power
//   of two); emax_elem = 8 (e4m3fn), 15 (e5m2), 2 (e2m1).
//   X = 2^shared_exp; P_i = V_i / X rounded to the element format (RNE) with
//   normal numbers saturated to the element's max.
// Our documented choices where the spec leaves them to the implementation:
//   - the all-zero block gets shared_exp -127 (scale code 0x00) and zero elements;
//   - shared_exp below -127 is clamped to -127; above 127 gives a NaN scale;
//   - a block with any NaN or infinity gets a NaN scale (the whole block reads
//     NaN), for every element format;
//   - trn3 mode (Trainium3 quantize_mx) uses shared_exp + 1, so the largest
//     element never saturates.
#pragma once

#include <array>
#include <cstdint>

#include "trn3/numerics/float_format.h"

namespace trn3::numerics {

constexpr unsigned mx_block_size = 32;
constexpr std::uint8_t e8m0_nan = 0xff;

float decode_e8m0(std::uint8_t code);

enum class mx_scale_rule { ocp, trn3 };

struct mx_block {
    std::uint8_t scale = 0;  // E8M0
    std::array<std::uint8_t, mx_block_size> elements{};  // codes in `element_format`
    format element_format = format::e4m3fn;

    float value(unsigned i) const;  // X * P_i (NaN when the scale is NaN)
};

mx_block quantize_mx(const float* values, format element_format, mx_scale_rule rule = mx_scale_rule::ocp);

// The dot product of two blocks, as this platform defines it (section 6.4
// leaves internal precision and order to the implementation): the 32
// products P_A,i x P_B,i exactly, summed exactly, scaled by X_A x X_B
// exactly, then rounded once to fp32 (RNE, overflow to infinity). A NaN
// scale or element makes the result NaN.
float mx_dot(const mx_block& a, const mx_block& b);

// The pieces of mx_dot, for engines that keep elements as integers:
// an element of format f is exactly (integer) x 2^-mx_element_shift(f)
// (9 for e4m3fn, 16 for e5m2, 1 for e2m1), and round_scaled rounds an exact
// integer sum x 2^exp2 once to fp32 (RNE, gradual underflow, overflow to inf).
__extension__ typedef __int128 mx_int128;
int mx_element_shift(format f);
std::int64_t mx_element_integer(std::uint32_t code, format f);  // the integer; NaN/inf codes give 0
float round_scaled(mx_int128 sum, int exp2);

}  // namespace trn3::numerics
