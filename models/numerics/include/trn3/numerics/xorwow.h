// XORWOW (Marsaglia 2003, "Xorshift RNGs", section 3.1): the generator the
// Neuron docs describe for the Vector engine's random numbers, one state per
// lane of six 32-bit words (five xorshift words and a Weyl counter).
//
// Stochastic rounding draws one 32-bit value per element written, so the
// bits a result gets depend on the seed and on the architectural sequence of
// writes, never on simulation scheduling.
#pragma once

#include <array>
#include <cstdint>

namespace trn3::numerics {

class xorwow {
public:
    // Seeds the state from a 64-bit seed with SplitMix64 (any seed, including
    // 0, gives a valid non-zero xorshift state).
    explicit xorwow(std::uint64_t seed = 0) { reseed(seed); }

    void reseed(std::uint64_t seed) {
        for (auto& word : s_) {
            seed += 0x9e3779b97f4a7c15ull;
            std::uint64_t z = seed;
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
            word = static_cast<std::uint32_t>(z ^ (z >> 31));
        }
        if ((s_[0] | s_[1] | s_[2] | s_[3] | s_[4]) == 0) s_[0] = 1;
    }

    std::uint32_t next() {
        std::uint32_t t = s_[4];
        const std::uint32_t s = s_[0];
        s_[4] = s_[3];
        s_[3] = s_[2];
        s_[2] = s_[1];
        s_[1] = s;
        t ^= t >> 2;
        t ^= t << 1;
        t ^= s ^ (s << 4);
        s_[0] = t;
        s_[5] += 362437;
        return t + s_[5];
    }

    // The state, for save and restore (reproducible runs).
    using state = std::array<std::uint32_t, 6>;
    const state& get_state() const { return s_; }
    void set_state(const state& s) { s_ = s; }

private:
    state s_{};  // x, y, z, w, v, d
};

}  // namespace trn3::numerics
