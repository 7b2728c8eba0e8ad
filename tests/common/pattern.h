// Test data: a reproducible byte pattern (xorshift32), different per seed.
#pragma once

#include <cstdint>
#include <vector>

namespace trn3::test {

inline std::vector<std::uint8_t> pattern(std::uint64_t n, unsigned seed) {
    std::vector<std::uint8_t> v(n);
    std::uint32_t x = 2463534242u + seed;
    for (auto& b : v) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        b = static_cast<std::uint8_t>(x);
    }
    return v;
}

}  // namespace trn3::test
