// A hash of a name that is the same on every host, compiler and run
// (FNV-1a, 64-bit, its basis mixed with `seed`): what a model seeds its
// random draws with, so that a seed gives the same draws whatever else the
// platform holds.
#pragma once

#include <cstdint>
#include <string_view>

namespace trn3 {

inline std::uint64_t stable_hash(std::string_view text, std::uint64_t seed = 0) {
    std::uint64_t h = 1469598103934665603ull ^ seed;
    for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
    return h;
}

}  // namespace trn3
