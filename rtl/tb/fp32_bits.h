// fp32 values and their bit patterns, for the standalone testbenches.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace trn3::rtl_tb {

inline std::uint32_t bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
inline float value(std::uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
// The bits a PE must produce for fma(a, b, c): NaN is the one canonical NaN.
inline std::uint32_t fma_bits(float a, float b, float c) {
    const float r = std::fma(a, b, c);
    return std::isnan(r) ? 0x7fc00000u : bits(r);
}

}  // namespace trn3::rtl_tb
