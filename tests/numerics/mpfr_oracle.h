// An independent oracle for rounding to small formats: GNU MPFR with the
// format's precision and exponent range, then subnormalised (the recipe of
// MPFR's manual for emulating IEEE formats). Overflow rules are applied here,
// outside MPFR, as the format's spec states them.
#pragma once

#include <mpfr.h>

#include <cmath>
#include <limits>

#include "trn3/numerics/float_format.h"

namespace trn3::numerics::oracle {

struct mpfr_format {
    int precision, emin, emax;  // MPFR conventions: x = m * 2^e, 0.5 <= m < 1
};

inline mpfr_format mpfr_of(format f) {
    switch (f) {
    case format::bf16: return {8, -132, 128};
    case format::fp16: return {11, -23, 16};
    case format::e4m3fn: return {4, -8, 9};
    case format::e5m2: return {3, -15, 16};
    case format::e2m1: return {2, 0, 3};
    default: return {24, -148, 128};
    }
}

// The value `x` rounds to (RNE) in format f, with f's overflow rule.
inline float round_to(float x, format f, bool saturate) {
    const format_info& fi = info(f);
    if (std::isnan(x))
        return fi.has_nan ? std::numeric_limits<float>::quiet_NaN() : std::copysign(decode(fi.max_finite, f), x);
    const float max_finite = decode(fi.max_finite, f);
    auto overflow = [&](float sign_of) {
        if (saturate || (!fi.has_inf && !fi.has_nan)) return std::copysign(max_finite, sign_of);
        if (fi.has_inf) return std::copysign(INFINITY, sign_of);
        return std::numeric_limits<float>::quiet_NaN();
    };
    if (std::isinf(x)) return overflow(x);
    const mpfr_format m = mpfr_of(f);
    const mpfr_exp_t old_emin = mpfr_get_emin(), old_emax = mpfr_get_emax();
    mpfr_t r;
    mpfr_init2(r, m.precision);
    int t = mpfr_set_flt(r, x, MPFR_RNDN);
    mpfr_set_emin(m.emin);
    mpfr_set_emax(m.emax);
    t = mpfr_check_range(r, t, MPFR_RNDN);
    mpfr_subnormalize(r, t, MPFR_RNDN);
    const double y = mpfr_get_d(r, MPFR_RNDN);
    mpfr_set_emin(old_emin);
    mpfr_set_emax(old_emax);
    mpfr_clear(r);
    if (std::isinf(y) || std::fabs(y) > max_finite) return overflow(x);
    return static_cast<float>(y);  // exact: y has at most 11 significant bits
}

}  // namespace trn3::numerics::oracle
